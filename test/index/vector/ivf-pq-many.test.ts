/**
 * `IvfPqIndex.searchMany`: several indexes sharing one model (a table's MemTables and
 * generations) searched with one partition ranking, one lookup table and one candidate pool.
 * Splitting the rows over parts must give the same answer as one index over all of them (same
 * ADC distances, same pool), and `remapped` must keep a subset searchable under new positions.
 */
import test from 'ava';
import { Rng } from '../../../src/index/vector/kmeans.js';
import { IvfPqIndex } from '../../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../../../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../../../src/index/vector/vector-source.js';
import { chunksOf, clusteredVectors } from './fixtures.js';

const DIM = 32;
const N = 12_000;
const data = clusteredVectors({ n: N, dim: DIM, clusters: 30, seed: 5, normSpread: 0.3 });
const all = new VectorSource(DIM, chunksOf(data, DIM, 2048));
const model = trainIvfPq(all, { metric: 'l2', partitions: 64 });
const whole = new IvfPqIndex(model);
for (const c of all.chunks) whole.add(c);

// The same rows split into three parts, each with its own positions from 0.
const cuts = [0, 5_000, 9_000, N];
const parts = cuts.slice(0, -1).map((from, j) => {
  const slice = data.subarray(from * DIM, cuts[j + 1] * DIM);
  const source = new VectorSource(DIM, chunksOf(slice, DIM, 1000));
  const index = new IvfPqIndex(model);
  for (const c of source.chunks) index.add(c);
  return { index, source, from };
});
const rng = new Rng(77);
const queries = Array.from({ length: 30 }, () => Float32Array.from({ length: DIM }, (_, d) => data[rng.int(N) * DIM + d] + 0.3 * rng.gaussian()));

function globalIds(r: { parts: Uint32Array; positions: Uint32Array }): number[] {
  return Array.from(r.positions, (p, i) => parts[r.parts[i]].from + p);
}

test('rows split over parts give the same results as one index over all rows', (t) => {
  for (const refineFactor of [0, 10]) {
    for (const q of queries) {
      const one = whole.search(q, { k: 10, nprobes: 8, refineFactor, source: all });
      const many = IvfPqIndex.searchMany(parts.map(({ index, source }) => ({ index, source })), q, { k: 10, nprobes: 8, refineFactor });
      t.deepEqual(globalIds(many), Array.from(one.positions));
      t.deepEqual(Array.from(many.distances), Array.from(one.distances));
      t.is(many.partitionsProbed, one.partitionsProbed);
    }
  }
});

test('one candidate pool for all parts: a filter on one part fills the pool from the others', (t) => {
  // Part 1 allows nothing, part 2 only even positions (mask), part 0 only odd positions (function).
  const masks = parts.map(({ source }) => new Uint8Array(source.rowCount));
  for (let i = 0; i < masks[2].length; i += 2) masks[2][i] = 1;
  const oddOnly = (pos: number) => pos % 2 === 1;
  for (const q of queries.slice(0, 10)) {
    const r = IvfPqIndex.searchMany(
      [
        { index: parts[0].index, source: parts[0].source, allowed: oddOnly },
        { index: parts[1].index, source: parts[1].source, allowedMask: masks[1] },
        { index: parts[2].index, source: parts[2].source, allowedMask: masks[2] },
      ],
      q,
      { k: 10 },
    );
    t.is(r.positions.length, 10);
    for (let i = 0; i < r.positions.length; i++) {
      t.not(r.parts[i], 1);
      if (r.parts[i] === 0) t.is(r.positions[i] % 2, 1);
      if (r.parts[i] === 2) t.is(r.positions[i] % 2, 0);
    }
    for (let i = 1; i < r.distances.length; i++) t.true(r.distances[i] >= r.distances[i - 1]);
  }
});

test('parts must share the model', (t) => {
  const other = trainIvfPq(all, { metric: 'l2', partitions: 16 });
  const q = queries[0];
  t.throws(() => IvfPqIndex.searchMany([{ index: whole, source: all }, { index: new IvfPqIndex(other), source: all }], q, { k: 5 }), { message: /same model/ });
});

test('remapped keeps a subset under new positions with the same codes', (t) => {
  // Keep every third row, renumbered densely; drop the rest.
  const map = new Int32Array(N).fill(-1);
  const kept: number[] = [];
  for (let i = 0; i < N; i += 3) {
    map[i] = kept.length;
    kept.push(i);
  }
  const sub = new Float32Array(kept.length * DIM);
  kept.forEach((row, j) => sub.set(data.subarray(row * DIM, (row + 1) * DIM), j * DIM));
  const subSource = new VectorSource(DIM, chunksOf(sub, DIM, 1500));
  const rebuilt = new IvfPqIndex(model);
  for (const c of subSource.chunks) rebuilt.add(c);
  const remapped = whole.remapped(map);
  // The same in steps (a flush's way): pauses between slices of partitions, the same index.
  const steps = whole.remappedSteps(map, 500);
  let pauses = 0;
  let r = steps.next();
  for (; !r.done; r = steps.next()) pauses++;
  const stepped = r.value;
  t.true(pauses >= 3, `paused ${pauses} times`);
  for (const got of [remapped, stepped]) {
    t.is(got.rowCount, kept.length);
    t.deepEqual(got.partitionSizes(), rebuilt.partitionSizes());
    for (const q of queries) {
      for (const refineFactor of [0, 10]) {
        const a = got.search(q, { k: 10, refineFactor, source: subSource });
        const b = rebuilt.search(q, { k: 10, refineFactor, source: subSource });
        t.deepEqual(Array.from(a.positions), Array.from(b.positions));
        t.deepEqual(Array.from(a.distances), Array.from(b.distances));
      }
    }
  }
});

test('the generated ADC kernel (byte masks) and the byte-wise loop (filter functions) agree', (t) => {
  const mask = new Uint8Array(N);
  for (let i = 0; i < N; i++) mask[i] = i % 3 === 0 ? 0 : 1;
  const fn = (pos: number) => mask[pos] === 1;
  for (const q of queries) {
    const viaKernel = IvfPqIndex.searchMany([{ index: whole, source: all, allowedMask: mask }], q, { k: 10, refineFactor: 10 });
    const viaLoop = whole.search(q, { k: 10, refineFactor: 10, allowed: fn, source: all });
    t.deepEqual(Array.from(viaKernel.positions), Array.from(viaLoop.positions));
    t.deepEqual(Array.from(viaKernel.distances), Array.from(viaLoop.distances));
    // Without refinement the ADC sums are added in a different order: equal to rounding.
    const adcKernel = IvfPqIndex.searchMany([{ index: whole, allowedMask: mask, maxPosition: 9000 }], q, { k: 10, refineFactor: 0 });
    const adcLoop = whole.search(q, { k: 10, refineFactor: 0, allowed: fn, maxPosition: 9000 });
    t.deepEqual(Array.from(adcKernel.positions), Array.from(adcLoop.positions));
    adcKernel.distances.forEach((d, i) => t.true(Math.abs(d - adcLoop.distances[i]) <= 1e-5 * Math.max(1, Math.abs(d))));
    for (const p of adcKernel.positions) t.true(p < 9000 && p % 3 !== 0);
  }
});
