/**
 * Recall tests that can only pass if the IVF-PQ index itself works, not because the data is easy:
 * - uneven clusters (three groups of 10, 40 and 150 clusters holding 70 %, 20 % and 10 % of the
 *   rows, each group with its own norm spread) and queries that are NOT near data rows (midpoints
 *   of two random rows of different clusters);
 * - recall must rise with nprobes (a search that probed everything, or fell back to brute force,
 *   would be flat);
 * - ADC distances obey the reconstruction-error bound the index keeps per partition: with
 *   d = ‖q − x‖, |√d_adc − d| ≤ ‖r − r̂‖ ≤ the partition's bound (triangle inequality).
 */
import test from 'ava';
import { Rng } from '../../../src/index/vector/kmeans.js';
import { flatKnn } from '../../../src/index/vector/flat-knn.js';
import { IvfPqIndex } from '../../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../../../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../../../src/index/vector/vector-source.js';
import { chunksOf, clusteredVectors, recallOf } from './fixtures.js';

const DIM = 64;
const K = 10;
const groups = [
  clusteredVectors({ n: 14_000, dim: DIM, clusters: 10, seed: 11, normSpread: 0.1 }),
  clusteredVectors({ n: 4_000, dim: DIM, clusters: 40, seed: 12, normSpread: 0.4 }),
  clusteredVectors({ n: 2_000, dim: DIM, clusters: 150, seed: 13, normSpread: 0.8 }),
];
const data = new Float32Array(groups.reduce((n, g) => n + g.length, 0));
groups.reduce((o, g) => (data.set(g, o), o + g.length), 0);
const N = data.length / DIM;
const source = new VectorSource(DIM, chunksOf(data, DIM, 4096));
const rng = new Rng(2024);
const queries = Array.from({ length: 60 }, () => {
  const a = rng.int(N);
  const b = rng.int(N);
  return Float32Array.from({ length: DIM }, (_, d) => 0.5 * (data[a * DIM + d] + data[b * DIM + d]));
});
const model = trainIvfPq(source, { metric: 'l2' });
const index = new IvfPqIndex(model);
for (const c of source.chunks) index.add(c);
const exact = queries.map((q) => flatKnn(source, q, { k: K, metric: 'l2' }));
const recallAt = (nprobes: number, refineFactor = 40) =>
  exact.reduce((s, e, i) => s + recallOf(index.search(queries[i], { k: K, nprobes, refineFactor, source }), e), 0) / queries.length;

test('hard queries on uneven clusters: recall@10 ≥ 0.9 with default search parameters', (t) => {
  const r = recallAt(20);
  t.log(`N ${N}, ${model.partitions} partitions, recall@10 ${r.toFixed(3)}`);
  t.true(r >= 0.9, `recall ${r}`);
});

test('recall rises with nprobes (the index, not a full scan, answers)', (t) => {
  const probes = [1, 2, 4, 8, 16, 32, 64];
  const recalls = probes.map((p) => recallAt(p, 10));
  t.log(probes.map((p, i) => `nprobes ${p}: ${recalls[i].toFixed(3)}`).join(', '));
  for (let i = 1; i < recalls.length; i++) t.true(recalls[i] >= recalls[i - 1] - 0.02, `nprobes ${probes[i]} vs ${probes[i - 1]}`);
  t.true(recalls[0] + 0.15 < recalls[recalls.length - 1], 'probing more partitions must find more true neighbours');
  // Without refinement the ranking is by ADC alone: partitions still matter.
  const probed = index.search(queries[0], { k: K, nprobes: 1, refineFactor: 0, source }).partitionsProbed;
  t.is(probed, 1);
});

test('ADC distances stay within the per-partition reconstruction-error bound', (t) => {
  const bounds = JSON.parse(index.toArrow().schema.metadata.get('quiver.ivf_pq.max_reconstruction_error') ?? '[]') as number[];
  const maxBound = Math.max(...bounds);
  t.true(bounds.length === model.partitions && maxBound > 0);
  let worst = 0;
  let sumRel = 0;
  let count = 0;
  for (const q of queries.slice(0, 20)) {
    const adc = index.search(q, { k: 50, nprobes: 8, refineFactor: 0 });
    for (let i = 0; i < adc.positions.length; i++) {
      const pos = adc.positions[i];
      let d = 0;
      for (let j = 0; j < DIM; j++) d += (q[j] - data[pos * DIM + j]) ** 2;
      const gap = Math.abs(Math.sqrt(Math.max(0, adc.distances[i])) - Math.sqrt(d));
      worst = Math.max(worst, gap);
      sumRel += gap / Math.sqrt(d);
      count++;
    }
  }
  t.log(`worst |√adc − d| ${worst.toFixed(4)} (bound ${maxBound.toFixed(4)}), mean relative ${(sumRel / count).toFixed(4)}`);
  t.true(worst <= maxBound * (1 + 1e-3) + 1e-3, `worst ${worst} > bound ${maxBound}`);
  t.true(sumRel / count < 0.1, 'ADC distances are close to exact ones on average');
});
