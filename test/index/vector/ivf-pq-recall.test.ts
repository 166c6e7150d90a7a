/**
 * Recall of IvfPqIndex with default parameters against exact search, at 100 000 × 128.
 *
 * Data: 200 Gaussian clusters with a 12-dimensional latent shape plus isotropic noise and
 * per-cluster norm scaling in [0.8, 1.2] (fixtures.ts), rows shuffled, fed as 8 192-row chunks.
 * Queries: 100 data rows plus noise. Each metric trains its own model with trainIvfPq defaults
 * (256 partitions, 16 sub-vectors) and searches with the defaults (k 10, nprobes 20,
 * refineFactor 40). One fixture per metric is built lazily and shared by that metric's serial
 * tests; recall and timings are printed with t.log (`npx ava --verbose`).
 */
import test from 'ava';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { type Metric } from '../../../src/index/vector/distance.js';
import { flatKnn, type KnnResult } from '../../../src/index/vector/flat-knn.js';
import { IvfPqIndex } from '../../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq, type IvfPqModel } from '../../../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../../../src/index/vector/vector-source.js';
import { chunksOf, clusteredVectors, queriesNear, recallOf } from './fixtures.js';

const N = 100_000;
const DIM = 128;
const K = 10;
const data = clusteredVectors({ n: N, dim: DIM, clusters: 200, seed: 1234, normSpread: 0.2 });
const source = new VectorSource(DIM, chunksOf(data, DIM, 8192));
const queries = queriesNear(data, DIM, 100, 77);

interface Fixture {
  model: IvfPqModel;
  index: IvfPqIndex;
  exact: KnnResult[];
  trainMs: number;
  addMs: number;
}
const fixtures = new Map<Metric, Fixture>();
function fixture(metric: Metric): Fixture {
  let f = fixtures.get(metric);
  if (!f) {
    let t0 = performance.now();
    const model = trainIvfPq(source, { metric });
    const trainMs = performance.now() - t0;
    t0 = performance.now();
    const index = new IvfPqIndex(model);
    for (const c of source.chunks) index.add(c);
    const addMs = performance.now() - t0;
    const exact = queries.map((q) => flatKnn(source, q, { k: K, metric }));
    f = { model, index, exact, trainMs, addMs };
    fixtures.set(metric, f);
  }
  return f;
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

for (const metric of ['l2', 'cosine', 'dot'] as const) {
  test.serial(`${metric}: recall@10 ≥ 0.95 with default training and search parameters`, (t) => {
    const f = fixture(metric);
    t.is(f.model.partitions, 256);
    t.is(f.model.subVectors, 16);
    t.is(f.index.rowCount, N);
    const recalls: number[] = [];
    const lat: number[] = [];
    queries.forEach((q, i) => {
      const t0 = performance.now();
      const r = f.index.search(q, { k: K, source });
      lat.push(performance.now() - t0);
      t.is(r.positions.length, K);
      recalls.push(recallOf(r, f.exact[i]));
    });
    lat.sort((a, b) => a - b);
    const recall = mean(recalls);
    t.log(
      `${metric}: recall@10 ${recall.toFixed(4)}; train ${f.trainMs.toFixed(0)} ms, add ${f.addMs.toFixed(0)} ms ` +
        `(${((N / f.addMs) * 1000).toFixed(0)} rows/s), search p50 ${lat[lat.length >> 1].toFixed(2)} ms`,
    );
    t.true(recall >= 0.95, `recall@10 ${recall}`);
  });

  test.serial(`${metric}: results are identical after toArrow → IPC → fromArrow`, (t) => {
    const f = fixture(metric);
    const model = structuredClone(f.model);
    const restored = IvfPqIndex.fromArrow(model, tableFromIPC(tableToIPC(f.index.toArrow(), 'file')));
    for (const q of queries) {
      const a = f.index.search(q, { k: K, source });
      const b = restored.search(q, { k: K, source });
      t.deepEqual(b.positions, a.positions);
      t.deepEqual(b.distances, a.distances);
    }
  });

  test.serial(`${metric}: a 1% prefilter still returns k passing rows`, (t) => {
    const f = fixture(metric);
    const allowed = (pos: number) => pos % 100 === 7;
    const recalls: number[] = [];
    let identical = 0;
    const qs = queries.slice(0, 50);
    for (const q of qs) {
      const r = f.index.search(q, { k: K, allowed, source });
      t.is(r.positions.length, K);
      t.true(Array.from(r.positions).every(allowed));
      const ex = flatKnn(source, q, { k: K, metric, allowed });
      const rec = recallOf(r, ex);
      recalls.push(rec);
      if (rec === 1) identical++;
    }
    const recall = mean(recalls);
    t.log(`${metric}: 1% filter recall@10 ${recall.toFixed(4)}, identical to flatKnn for ${identical}/${qs.length} queries`);
    t.true(identical >= qs.length / 2, `identical for ${identical}/${qs.length}`);
    t.true(recall >= 0.8, `filtered recall ${recall}`);
  });

  test.serial(`${metric}: maxPosition hides later rows`, (t) => {
    const f = fixture(metric);
    const maxPosition = 60_000;
    const recalls: number[] = [];
    for (const q of queries.slice(0, 50)) {
      const r = f.index.search(q, { k: K, maxPosition, source });
      t.is(r.positions.length, K);
      t.true(Array.from(r.positions).every((p) => p < maxPosition));
      recalls.push(recallOf(r, flatKnn(source, q, { k: K, metric, maxPosition })));
    }
    t.log(`${metric}: maxPosition recall@10 ${mean(recalls).toFixed(4)}`);
    t.true(mean(recalls) >= 0.9);
  });
}

test.serial('dot is a meaningful test: its answers differ from l2 and vary across queries', (t) => {
  const dot = fixture('dot').exact;
  const l2 = queries.map((q) => flatKnn(source, q, { k: K, metric: 'l2' }));
  const overlap = mean(dot.map((d, i) => recallOf(d, l2[i])));
  const distinctTop1 = new Set(dot.map((d) => d.positions[0])).size;
  t.log(`dot vs l2 top-10 overlap ${overlap.toFixed(3)}; distinct dot top-1 rows ${distinctTop1}/${queries.length}`);
  t.true(overlap < 0.5, `overlap ${overlap}`);
  t.true(distinctTop1 >= queries.length / 2);
});
