import test from 'ava';
import { Field, FixedSizeList, Float32, Float64, makeData, makeVector, RecordBatch, Schema, Struct, Table } from 'apache-arrow';
import { type Metric, METRICS } from '../../../src/index/vector/distance.js';
import { flatKnn, type FlatKnnOptions } from '../../../src/index/vector/flat-knn.js';
import { Rng } from '../../../src/index/vector/kmeans.js';
import { TopK } from '../../../src/index/vector/top-k.js';
import { VectorSource, type VectorChunk } from '../../../src/index/vector/vector-source.js';
import { naiveKnn } from './fixtures.js';

/** Rows with nulls, NaN / Infinity vectors, zero vectors and exact duplicates, in two chunks with a gap. */
function awkwardSource(dim: number, seed: number) {
  const rng = new Rng(seed);
  const rows: (Float32Array | null)[] = []; // indexed by position - FIRST
  const FIRST = 10;
  const specs = [
    { start: FIRST, count: 300 },
    { start: FIRST + 420, count: 380 }, // positions 310..429 do not exist
  ];
  const chunks: VectorChunk[] = [];
  for (const { start, count } of specs) {
    const data = new Float32Array(count * dim);
    const bitOffset = 3;
    const validity = new Uint8Array(Math.ceil((count + bitOffset) / 8)).fill(0xff);
    while (rows.length < start - FIRST) rows.push(null);
    for (let i = 0; i < count; i++) {
      const v = data.subarray(i * dim, i * dim + dim);
      for (let d = 0; d < dim; d++) v[d] = rng.gaussian() * (1 + (i % 3));
      if (i % 17 === 5) {
        const b = bitOffset + i;
        validity[b >> 3] &= ~(1 << (b & 7));
        v.fill(0.5); // garbage under a null must be ignored
        rows.push(null);
        continue;
      }
      if (i % 41 === 7) v[i % dim] = NaN;
      if (i % 43 === 8) v[(i + 1) % dim] = Infinity;
      if (i % 53 === 9) v.fill(0);
      if (i % 29 === 11 && i > 40) v.set(data.subarray((i - 29) * dim, (i - 28) * dim)); // duplicate of an earlier row
      rows.push(Float32Array.from(v));
    }
    chunks.push({ start, count, data, validity, bitOffset });
  }
  return { source: new VectorSource(dim, chunks), rows, first: FIRST };
}

function assertSameKnn(t: import('ava').ExecutionContext, got: { positions: Uint32Array; distances: Float32Array }, want: { positions: number[]; distances: number[] }, label: string) {
  t.deepEqual(Array.from(got.positions), want.positions, label);
  for (let i = 0; i < want.distances.length; i++) {
    const w = want.distances[i];
    t.true(Math.abs(got.distances[i] - w) <= 1e-5 * Math.max(1, Math.abs(w)), `${label}: distance ${i} ${got.distances[i]} vs ${w}`);
  }
}

for (const dim of [13, 128]) {
  test(`flatKnn equals a naive full sort (dim ${dim}; nulls, NaN/Infinity, zeros, duplicates, gaps)`, (t) => {
    const { source, rows, first } = awkwardSource(dim, dim);
    const rng = new Rng(99);
    for (const metric of METRICS) {
      for (let qi = 0; qi < 4; qi++) {
        const q = new Float32Array(dim);
        for (let d = 0; d < dim; d++) q[d] = rng.gaussian();
        if (qi === 3) q.set(rows.find((r) => r !== null && r.every(Number.isFinite) && r.some((x) => x !== 0))!); // exact hit
        const all = naiveKnn(rows, q, { k: 10_000, metric, firstPosition: first });
        // A range cut between two existing distances (so rounding cannot flip membership).
        const lo = (all.distances[20] + all.distances[21]) / 2;
        const hi = (all.distances[200] + all.distances[201]) / 2;
        const cases: [string, Omit<FlatKnnOptions, 'metric'>][] = [
          ['k=10', { k: 10 }],
          ['k=1', { k: 1 }],
          ['k=0', { k: 0 }],
          ['k > rows', { k: 5000 }],
          ['range', { k: 25, distanceRange: [lo, hi] }],
          ['range wider than k', { k: 500, distanceRange: [lo, hi] }],
          ['maxPosition', { k: 15, maxPosition: first + 457 }],
          ['maxPosition in gap', { k: 15, maxPosition: first + 350 }],
          ['filter', { k: 12, allowed: (p) => p % 3 === 1 }],
          ['all', { k: 12, allowed: (p) => p % 2 === 0, maxPosition: first + 600, distanceRange: [lo, Infinity] }],
        ];
        for (const [name, o] of cases) {
          const want = naiveKnn(rows, q, { ...o, metric, firstPosition: first, distanceRange: o.distanceRange as [number, number] | undefined });
          const got = flatKnn(source, q, { ...o, metric });
          assertSameKnn(t, got, want, `${metric} q${qi} ${name}`);
        }
      }
    }
  });
}

test('flatKnn breaks distance ties by position and skips non-finite distances', (t) => {
  const dim = 4;
  const v = [
    [1, 0, 0, 0],
    [0, 1, 0, 0],
    [1, 0, 0, 0], // tie with position 0
    [NaN, 0, 0, 0],
    [1, 0, 0, 0], // tie
    [0, 0, 0, 0],
  ];
  const data = Float32Array.from(v.flat());
  const src = new VectorSource(dim, [{ start: 100, count: v.length, data, validity: null, bitOffset: 0 }]);
  const q = Float32Array.of(1, 0, 0, 0);
  const r = flatKnn(src, q, { k: 2, metric: 'l2' });
  t.deepEqual(Array.from(r.positions), [100, 102]);
  const all = flatKnn(src, q, { k: 10, metric: 'l2' });
  t.deepEqual(Array.from(all.positions), [100, 102, 104, 105, 101]);
  const cos = flatKnn(src, q, { k: 10, metric: 'cosine' });
  t.deepEqual(Array.from(cos.positions), [100, 102, 104, 101, 105]); // zero vector: cosine distance 1, tie with 101 → position order
  t.deepEqual(Array.from(cos.distances), [0, 0, 0, 1, 1]);
  const nanQ = flatKnn(src, Float32Array.of(NaN, 0, 0, 0), { k: 3, metric: 'dot' });
  t.is(nanQ.positions.length, 0);
  t.throws(() => flatKnn(src, new Float32Array(3), { k: 1, metric: 'l2' }), { message: /dimensions/ });
});

test('TopK keeps the k smallest (distance, id) pairs in any offer order', (t) => {
  const rng = new Rng(5);
  for (let round = 0; round < 50; round++) {
    const k = 1 + rng.int(20);
    const n = rng.int(200);
    const items = Array.from({ length: n }, (_, i) => ({ d: rng.int(30), id: i }));
    const shuffled = [...items].sort(() => rng.next() - 0.5);
    const heap = new TopK(k);
    for (const it of shuffled) heap.offer(it.d, it.id);
    const want = [...items].sort((a, b) => a.d - b.d || a.id - b.id).slice(0, k);
    const got = heap.toResult();
    t.deepEqual(Array.from(got.positions), want.map((w) => w.id));
    t.deepEqual(heap.sorted().ids, want.map((w) => w.id));
  }
});

// ---- VectorSource ----------------------------------------------------------------------------

function fslTable(dim: number, n: number, nullEvery: number): { table: Table; values: Float32Array } {
  const values = new Float32Array(n * dim).map((_, i) => i);
  const nullBitmap = new Uint8Array(Math.ceil(n / 8));
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (i % nullEvery === 2) nulls++;
    else nullBitmap[i >> 3] |= 1 << (i & 7);
  }
  const type = new FixedSizeList(dim, new Field('item', new Float32(), true));
  const vec = makeData({ type, length: n, nullCount: nulls, nullBitmap, child: makeData({ type: new Float32(), length: n * dim, data: values }) });
  const id = makeData({ type: new Float32(), length: n, data: new Float32Array(n) });
  const fields = [new Field('id', new Float32()), new Field('v', type, true)];
  const batch = new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length: n, children: [id, vec] }));
  return { table: new Table([batch]), values };
}

test('VectorSource.fromArrow is zero-copy and honours slices and the list validity offset', (t) => {
  const dim = 4;
  const { table, values } = fslTable(dim, 40, 5);
  const sliced = table.slice(7, 33); // rows 7..32; its list data has offset 7, its child values start at row 7
  const batches = [...sliced.batches, ...table.slice(0, 3).batches];
  const src = VectorSource.fromArrow(batches, 1, 1000);
  t.is(src.dim, dim);
  t.is(src.rowCount, 26 + 3);
  t.is(src.endPosition, 1029);
  t.is(src.chunks[0].data.buffer, values.buffer, 'zero copy');
  for (let i = 0; i < 26; i++) {
    const row = 7 + i;
    const loc = src.locate(1000 + i);
    if (row % 5 === 2) {
      t.is(loc, null, `row ${row} is null`);
      continue;
    }
    t.truthy(loc);
    t.is(loc!.data[loc!.offset], row * dim);
    t.is(loc!.data[loc!.offset + dim - 1], row * dim + dim - 1);
  }
  t.is(src.locate(1026)!.data[src.locate(1026)!.offset], 0); // second batch row 0
  t.is(src.locate(1028), null); // row 2 is null
  t.is(src.locate(999), null);
  t.is(src.locate(1029), null);
  // flatKnn over the sliced source finds the exact row and never a null row.
  const q = Float32Array.from({ length: dim }, (_, d) => 10 * dim + d);
  const r = flatKnn(src, q, { k: 26 + 3, metric: 'l2' });
  t.is(r.positions[0], 1003);
  for (const p of r.positions) t.not(src.locate(p), null);
});

test('VectorSource rejects overlapping chunks and non-Float32 vectors; gaps locate to null', (t) => {
  const src = new VectorSource(2, [{ start: 5, count: 2, data: new Float32Array(4), validity: null, bitOffset: 0 }]);
  t.throws(() => src.append({ start: 6, count: 1, data: new Float32Array(2), validity: null, bitOffset: 0 }), { message: /overlaps/ });
  t.throws(() => src.append({ start: 9, count: 2, data: new Float32Array(3), validity: null, bitOffset: 0 }), { message: /needs/ });
  src.append({ start: 10, count: 1, data: Float32Array.of(7, 8), validity: null, bitOffset: 0 });
  t.is(src.locate(8), null);
  t.deepEqual(src.locate(10), { data: Float32Array.of(7, 8), offset: 0 });
  const type = new FixedSizeList(2, new Field('item', new Float64(), false));
  const f64 = makeVector(makeData({ type, length: 1, child: makeData({ type: new Float64(), length: 2, data: new Float64Array(2) }) }));
  const table = new Table({ v: f64 });
  t.throws(() => VectorSource.fromArrow(table.batches, 0), { message: /FixedSizeList<Float32>/ });
});
