/**
 * The generated ADC kernel reads the mask early (before the distance) or late (only for rows
 * within the bound): both write the same rows with the same sums, so the late read — which skips
 * most mask reads once a search's pool is full — changes no answer.
 */
import test from 'ava';
import { adcKernel } from '../../../src/index/vector/adc-kernel.js';
import { mulberry32 } from '../../helpers/rng.js';

test('the kernel writes the same rows and sums with the mask read early or late, for any bound', (t) => {
  const rnd = mulberry32(7);
  const M = 16;
  const n = 500;
  const kernel = adcKernel(M)!;
  t.truthy(kernel);
  const positions = Uint32Array.from({ length: n }, (_, i) => i * 3 + (i % 2));
  const codes = Uint8Array.from({ length: n * M }, () => Math.floor(rnd() * 256));
  const words = new Uint32Array(codes.buffer);
  const lut = Float32Array.from({ length: M * 256 }, () => rnd());
  const terms = Float32Array.from({ length: n }, () => rnd() - 0.5);
  const mask = Uint8Array.from({ length: 3 * n + 2 }, () => (rnd() < 0.3 ? 0 : 1));
  for (const bound of [Infinity, 7.5, 8, 8.5, -1]) {
    for (const withTerms of [true, false]) {
      const run = (late: boolean) => {
        const out = new Float64Array(n);
        const rows = new Int32Array(n);
        const m = kernel(n, positions, words, lut, mask, 1400, 0.25, withTerms ? terms : undefined, bound, out, rows, new Int32Array(1), late);
        return { rows: Array.from(rows.subarray(0, m)), sums: Array.from(out.subarray(0, m)) };
      };
      const early = run(false);
      const late = run(true);
      t.deepEqual(late, early, `bound ${bound}`);
      for (const r of late.rows) t.true(mask[positions[r]] === 1 && positions[r] < 1400);
    }
  }
});

test('searchMany answers the same whether a mostly-passing mask is read late (allowedCount given) or early', async (t) => {
  const { IvfPqIndex } = await import('../../../src/index/vector/ivf-pq-index.js');
  const { trainIvfPq } = await import('../../../src/index/vector/ivf-pq-model.js');
  const { VectorSource } = await import('../../../src/index/vector/vector-source.js');
  const { chunksOf, clusteredVectors } = await import('./fixtures.js');
  const DIM = 32;
  const N = 8000;
  const data = clusteredVectors({ n: N, dim: DIM, clusters: 20, seed: 9, normSpread: 0.3 });
  const source = new VectorSource(DIM, chunksOf(data, DIM, 1000));
  const index = new IvfPqIndex(trainIvfPq(source, { metric: 'l2', partitions: 48 }));
  for (const c of source.chunks) index.add(c);
  const rnd = mulberry32(3);
  for (const passing of [0.95, 0.6, 0.1]) {
    const mask = Uint8Array.from({ length: N }, () => (rnd() < passing ? 1 : 0));
    const allowedCount = mask.reduce((n, v) => n + v, 0);
    for (let q = 0; q < 20; q++) {
      const query = Float32Array.from({ length: DIM }, (_, d) => data[Math.floor(rnd() * N) * DIM + d] + 0.2 * (rnd() - 0.5));
      for (const refineFactor of [0, 10]) {
        const early = IvfPqIndex.searchMany([{ index, source, allowedMask: mask }], query, { k: 10, refineFactor, nprobes: 4 });
        const late = IvfPqIndex.searchMany([{ index, source, allowedMask: mask, allowedCount }], query, { k: 10, refineFactor, nprobes: 4 });
        t.deepEqual(Array.from(late.positions), Array.from(early.positions));
        t.deepEqual(Array.from(late.distances), Array.from(early.distances));
        t.is(late.partitionsProbed, early.partitionsProbed);
      }
    }
  }
});
