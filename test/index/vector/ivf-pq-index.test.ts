import test from 'ava';
import { RecordBatch, Schema, Table, tableFromIPC, tableToIPC } from 'apache-arrow';
import { METRICS, type Metric } from '../../../src/index/vector/distance.js';
import { flatKnn } from '../../../src/index/vector/flat-knn.js';
import { IvfPqIndex } from '../../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq, type IvfPqModel } from '../../../src/index/vector/ivf-pq-model.js';
import { VectorSource, type VectorChunk } from '../../../src/index/vector/vector-source.js';
import { clusteredVectors, queriesNear, recallOf } from './fixtures.js';

const DIM = 32;
const N = 4000;
const FIRST = 50;

/** 4 000 clustered vectors at positions 50.., in 3 chunks, with some nulls and NaN rows. */
function fixture() {
  const data = clusteredVectors({ n: N, dim: DIM, clusters: 24, seed: 21, normSpread: 0.3 });
  const chunks: VectorChunk[] = [];
  let nulls = 0;
  let nans = 0;
  for (const [s, e] of [[0, 1500], [1500, 1501], [1501, N]]) {
    const count = e - s;
    const validity = new Uint8Array(Math.ceil(count / 8)).fill(0xff);
    for (let i = 0; i < count; i++) {
      if ((s + i) % 97 === 3) {
        validity[i >> 3] &= ~(1 << (i & 7));
        nulls++;
      } else if ((s + i) % 89 === 4) {
        data[(s + i) * DIM + 5] = NaN;
        nans++;
      }
    }
    chunks.push({ start: FIRST + s, count, data: data.subarray(s * DIM, e * DIM), validity, bitOffset: 0 });
  }
  return { data, source: new VectorSource(DIM, chunks), nulls, nans };
}

const fx = fixture();
const models = new Map<Metric, IvfPqModel>();
const indexes = new Map<Metric, IvfPqIndex>();
function indexFor(metric: Metric): IvfPqIndex {
  let idx = indexes.get(metric);
  if (!idx) {
    const model = trainIvfPq(fx.source, { metric, partitions: 16, iterations: 6, seed: 5 });
    models.set(metric, model);
    idx = new IvfPqIndex(model);
    for (const c of fx.source.chunks) idx.add(c);
    indexes.set(metric, idx);
  }
  return idx;
}
const queries = queriesNear(fx.data.map((v) => (Number.isNaN(v) ? 0 : v)), DIM, 20, 8);

test('null and non-finite vectors are not indexed', (t) => {
  const idx = indexFor('l2');
  t.is(idx.rowCount, N - fx.nulls - fx.nans);
  t.is(idx.skippedRows, fx.nans);
  const sizes = idx.partitionSizes();
  t.is(sizes.reduce((a, b) => a + b, 0), idx.rowCount);
});

for (const metric of METRICS) {
  test(`${metric}: probing every partition with a full refine equals flatKnn`, (t) => {
    const idx = indexFor(metric);
    for (const q of queries) {
      const exact = flatKnn(fx.source, q, { k: 10, metric });
      const got = idx.search(q, { k: 10, nprobes: 16, refineFactor: 1000, source: fx.source });
      t.deepEqual(Array.from(got.positions), Array.from(exact.positions));
      t.deepEqual(Array.from(got.distances), Array.from(exact.distances)); // bit-identical exact distances
    }
  });

  test(`${metric}: defaults give good recall; refineFactor 0 returns sorted ADC distances`, (t) => {
    const idx = indexFor(metric);
    let recall = 0;
    for (const q of queries) {
      const exact = flatKnn(fx.source, q, { k: 10, metric });
      const got = idx.search(q, { k: 10, source: fx.source });
      t.is(got.positions.length, 10);
      recall += recallOf(got, exact);
      const adc = idx.search(q, { k: 10, refineFactor: 0 });
      t.is(adc.positions.length, 10);
      for (let i = 1; i < 10; i++) t.true(adc.distances[i - 1] <= adc.distances[i]);
    }
    t.true(recall / queries.length >= 0.9, `recall ${recall / queries.length}`);
  });

  test(`${metric}: maxPosition, filter and range are applied before the top-k cut`, (t) => {
    const idx = indexFor(metric);
    for (const q of queries.slice(0, 8)) {
      const maxPosition = FIRST + 1700;
      const r1 = idx.search(q, { k: 10, maxPosition, source: fx.source });
      t.is(r1.positions.length, 10);
      t.true(Array.from(r1.positions).every((p) => p < maxPosition));
      const ex1 = flatKnn(fx.source, q, { k: 10, metric, maxPosition });
      t.deepEqual(Array.from(idx.search(q, { k: 10, maxPosition, nprobes: 16, refineFactor: 1000, source: fx.source }).positions), Array.from(ex1.positions));

      // Only 1 row in 50 passes; nprobes 1 must still yield k rows by probing further partitions.
      const allowed = (p: number) => p % 50 === 7;
      const r2 = idx.search(q, { k: 10, nprobes: 1, allowed, source: fx.source });
      t.is(r2.positions.length, 10);
      t.true(Array.from(r2.positions).every(allowed));
      const r2adc = idx.search(q, { k: 10, nprobes: 1, refineFactor: 0, allowed });
      t.is(r2adc.positions.length, 10);

      // A range whose lower bound excludes the ~200 nearest rows still fills k.
      const all = flatKnn(fx.source, q, { k: 400, metric });
      const lower = (all.distances[199] + all.distances[200]) / 2;
      const range: [number, number] = [lower, Infinity];
      const r3 = idx.search(q, { k: 10, distanceRange: range, source: fx.source });
      t.is(r3.positions.length, 10, 'range fills k');
      t.true(Array.from(r3.distances).every((d) => d >= lower));
      const ex3 = flatKnn(fx.source, q, { k: 10, metric, distanceRange: range });
      t.deepEqual(Array.from(idx.search(q, { k: 10, distanceRange: range, nprobes: 16, refineFactor: 1000, source: fx.source }).positions), Array.from(ex3.positions));
      // Upper bound only: results are the nearest rows below it.
      const upper = (all.distances[4] + all.distances[5]) / 2;
      const r4 = idx.search(q, { k: 10, distanceRange: [-Infinity, upper], nprobes: 16, refineFactor: 1000, source: fx.source });
      t.deepEqual(Array.from(r4.positions), Array.from(all.positions.subarray(0, 5)));
      // ADC-only search applies the range to the returned (ADC) distances.
      const r5 = idx.search(q, { k: 10, refineFactor: 0, distanceRange: [0.9 * all.distances[20], Infinity] });
      t.true(Array.from(r5.distances).every((d) => d >= 0.9 * all.distances[20]));
    }
  });

  test(`${metric}: toArrow → IPC → fromArrow gives identical results`, (t) => {
    const idx = indexFor(metric);
    const table = idx.toArrow();
    t.deepEqual(table.schema.fields.map((f) => `${f.name}:${String(f.type)}`), ['partition:Uint32', 'position:Uint32', `code:FixedSizeBinary[${models.get(metric)!.subVectors}]`]);
    t.is(table.numRows, idx.rowCount);
    const back = IvfPqIndex.fromArrow(models.get(metric)!, tableFromIPC(tableToIPC(table, 'file')));
    t.is(back.rowCount, idx.rowCount);
    t.deepEqual(back.partitionSizes(), idx.partitionSizes());
    for (const q of queries) {
      for (const opts of [{ k: 10 }, { k: 7, refineFactor: 0 }, { k: 5, distanceRange: [0.5, Infinity] as [number, number] }, { k: 3, allowed: (p: number) => p % 7 === 0 }]) {
        t.deepEqual(back.search(q, { ...opts, source: fx.source }), idx.search(q, { ...opts, source: fx.source }));
      }
    }
    // Without the error-bound metadata (e.g. a table written by another tool) range pruning is
    // disabled but results stay correct; unranged searches are unchanged.
    const bare = new Table(table.batches.map((b) => new RecordBatch(new Schema(table.schema.fields), b.data)));
    t.is(bare.schema.metadata.size, 0);
    const noMeta = IvfPqIndex.fromArrow(models.get(metric)!, bare);
    for (const q of queries.slice(0, 5)) {
      t.deepEqual(noMeta.search(q, { k: 10, source: fx.source }), idx.search(q, { k: 10, source: fx.source }));
      const range: [number, number] = [flatKnn(fx.source, q, { k: 30, metric }).distances[29], Infinity];
      const ex = flatKnn(fx.source, q, { k: 10, metric, distanceRange: range });
      const got = noMeta.search(q, { k: 10, distanceRange: range, nprobes: 16, refineFactor: 1000, source: fx.source });
      t.deepEqual(Array.from(got.positions), Array.from(ex.positions));
    }
  });
}

test('index and search argument errors', (t) => {
  const idx = indexFor('l2');
  t.throws(() => idx.search(new Float32Array(DIM), { k: 5 }), { message: /needs the vector source/ });
  t.throws(() => idx.search(new Float32Array(3), { k: 5, source: fx.source }), { message: /dimensions/ });
  t.throws(() => idx.search(new Float32Array(DIM), { k: -1, source: fx.source }), { message: /k must be/ });
  t.deepEqual(idx.search(new Float32Array(DIM), { k: 0, source: fx.source }).positions.length, 0);
  t.is(idx.search(new Float32Array(DIM).fill(NaN), { k: 3, source: fx.source }).positions.length, 0);
  const empty = new IvfPqIndex(models.get('l2')!);
  t.is(empty.search(queries[0], { k: 5, source: fx.source }).positions.length, 0);
  t.is(empty.toArrow().numRows, 0);
  t.throws(() => empty.add({ start: 2 ** 32 - 1, count: 2, data: new Float32Array(2 * DIM), validity: null, bitOffset: 0 }), { message: /32 bits/ });
  const wrong = idx.toArrow();
  const m = models.get('l2')!;
  t.throws(() => IvfPqIndex.fromArrow({ ...m, subVectors: m.subVectors * 2, subDim: m.subDim / 2, codebooks: new Float32Array(m.codebooks.length) }, wrong), { message: /FixedSizeBinary/ });
});

test('incremental adds in many small chunks equal one bulk add', (t) => {
  const model = trainIvfPq(fx.source, { metric: 'cosine', partitions: 16, iterations: 3 });
  const bulk = new IvfPqIndex(model);
  for (const c of fx.source.chunks) bulk.add(c);
  const inc = new IvfPqIndex(model);
  for (const c of fx.source.chunks) {
    for (let s = 0; s < c.count; s += 37) {
      const count = Math.min(37, c.count - s);
      // Re-slice with the validity bitmap offset carried in bitOffset.
      inc.add({ start: c.start + s, count, data: c.data.subarray(s * DIM, (s + count) * DIM), validity: c.validity, bitOffset: c.bitOffset + s });
    }
  }
  t.deepEqual(inc.toArrow().getChild('position')!.toArray(), bulk.toArrow().getChild('position')!.toArray());
  t.deepEqual(inc.toArrow().getChild('code')!.data[0].values, bulk.toArrow().getChild('code')!.data[0].values);
});
