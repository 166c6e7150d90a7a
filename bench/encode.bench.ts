/**
 * IVF-PQ write-path encoding benchmark (`npm run bench:encode`, issue 7): `IvfPqIndex.add` of
 * clustered vectors, one thread, split into coarse assignment (nearest of P centroids) and PQ
 * encoding of the residuals (nearest of 256 codewords per sub-vector).
 *
 * Cases (each: train a model with trainIvfPq on the rows, 256 partitions, metric l2):
 * - 128-dim, 16 sub-vectors (subDim 8), N rows;
 * - 768-dim, 96 sub-vectors (subDim 8) and 48 sub-vectors (subDim 16), N768 rows.
 * Data: bench/search-data.ts's ClusterModel (200 uneven clusters, 16-dim latent shape + noise).
 *
 * Per case: training time, then (best of REPEAT runs) `add` of all rows in 8 192-row chunks into a
 * fresh index (rows/s, µs/row), the coarse assignment alone and the PQ encoding alone (µs/row,
 * through the same `NearestCentroids.nearestMany` calls `add` makes, blocks of 64 rows), the
 * kernel in use (wasm-simd or js) and how many rows the SIMD kernel left to the exact re-check.
 * Times are process CPU time (the machine is shared; wall time is noisier).
 *
 * Knobs: N=100000 N768=20000 REPEAT=3 CASES=128x16,768x96,768x48 KERNEL=simd|js (js: the pure-JS
 * path, as without WebAssembly SIMD).
 */
import { IvfPqIndex } from '../src/index/vector/ivf-pq-index.js';
import { PQ_CODEWORDS, trainIvfPq, type IvfPqModel } from '../src/index/vector/ivf-pq-model.js';
import { VectorSource, type VectorChunk } from '../src/index/vector/vector-source.js';
import { NearestCentroids, nearestStats } from '../src/index/vector/kmeans.js';
import { setSimdKernelsEnabled, simdAvailable, stageRows } from '../src/index/vector/simd-kernels.js';
import { envList, envNumber } from './env.js';
import { ClusterModel, Rng } from './lib/data.js';

const N = envNumber('N', 100_000);
const N768 = envNumber('N768', 20_000);
const REPEAT = Math.max(1, envNumber('REPEAT', 3));
const CASES = envList('CASES', '128x16,768x96,768x48');
const KERNEL = process.env.KERNEL ?? 'simd';
if (KERNEL === 'js') setSimdKernelsEnabled(false);
const CHUNK = 8192;
const BLOCK = 64;

function vectors(n: number, dim: number, seed: number): Float32Array {
  const model = new ClusterModel({ dim, clusters: 200, seed });
  const rng = new Rng(seed + 1);
  const out = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) model.sample(rng, out, i * dim);
  return out;
}

function chunks(data: Float32Array, dim: number): VectorChunk[] {
  const n = data.length / dim;
  const out: VectorChunk[] = [];
  for (let s = 0; s < n; s += CHUNK) {
    const count = Math.min(CHUNK, n - s);
    out.push({ start: s, count, data: data.subarray(s * dim, (s + count) * dim), validity: null, bitOffset: 0 });
  }
  return out;
}

const cpuMs = (): number => process.cpuUsage().user / 1000;

function best(fn: () => void): number {
  let bestMs = Infinity;
  for (let r = 0; r < REPEAT; r++) {
    const t0 = cpuMs();
    fn();
    bestMs = Math.min(bestMs, cpuMs() - t0);
  }
  return bestMs;
}

/** Coarse assignment of every row, in blocks of 64 as `add` does it. */
function coarse(nc: NearestCentroids, data: Float32Array, dim: number, n: number, out: Int32Array): void {
  for (let b0 = 0; b0 < n; b0 += BLOCK) nc.nearestMany(data, b0 * dim, dim, Math.min(BLOCK, n - b0), out, b0, 1);
}

/** PQ encoding of residuals (n × dim) in blocks of 64 rows, as `add` does it. */
function encode(model: IvfPqModel, pq: NearestCentroids[], resid: Float32Array, n: number, codes: Uint8Array): void {
  const { dim, subVectors: M, subDim } = model;
  for (let b0 = 0; b0 < n; b0 += BLOCK) {
    const count = Math.min(BLOCK, n - b0);
    const staged = pq[0].accelerated ? stageRows(resid, b0 * dim, dim, count, dim) : null;
    for (let s = 0; s < M; s++) pq[s].nearestMany(resid, b0 * dim + s * subDim, dim, count, codes, b0 * M + s, M, staged, s * subDim);
  }
}

function runCase(name: string): void {
  const [dimS, mS] = name.split('x');
  const dim = Number(dimS);
  const M = Number(mS);
  const n = dim === 128 ? N : N768;
  const tg = performance.now();
  const data = vectors(n, dim, 7 + dim);
  const genMs = performance.now() - tg;
  const source = new VectorSource(dim, chunks(data, dim));
  const t0 = cpuMs();
  const model = trainIvfPq(source, { metric: 'l2', partitions: 256, subVectors: M, seed: 1 });
  const trainMs = cpuMs() - t0;

  // Full add.
  nearestStats.kernelRows = nearestStats.rechecked = 0;
  let rows = 0;
  const addMs = best(() => {
    const index = new IvfPqIndex(model);
    for (const c of source.chunks) index.add(c);
    rows = index.rowCount;
  });

  // Coarse assignment alone.
  const nc = new NearestCentroids(model.centroids, model.partitions, dim);
  const parts = new Int32Array(n);
  const coarseMs = best(() => coarse(nc, data, dim, n, parts));

  // PQ encoding alone (residuals precomputed).
  const resid = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const o = i * dim;
    const co = parts[i] * dim;
    for (let d = 0; d < dim; d++) resid[o + d] = data[o + d] - model.centroids[co + d];
  }
  const cbSize = PQ_CODEWORDS * model.subDim;
  const pq = Array.from({ length: M }, (_, s) => new NearestCentroids(model.codebooks.subarray(s * cbSize, (s + 1) * cbSize), PQ_CODEWORDS, model.subDim));
  const codes = new Uint8Array(n * M);
  const pqMs = best(() => encode(model, pq, resid, n, codes));
  const recheck = nearestStats.kernelRows > 0 ? `${((100 * nearestStats.rechecked) / nearestStats.kernelRows).toFixed(3)}% re-checked` : 'no kernel';

  const us = (ms: number) => ((ms * 1000) / n).toFixed(2);
  console.log(
    `${name.padEnd(7)} n=${n} subDim=${model.subDim}  add ${Math.round((rows / addMs) * 1000).toLocaleString('en-US').padStart(8)} rows/s ` +
      `${us(addMs).padStart(7)} µs/row | coarse ${us(coarseMs).padStart(7)} µs/row | pq ${us(pqMs).padStart(7)} µs/row | ` +
      `train ${(trainMs / 1000).toFixed(2)} s | ${recheck} (data ${(genMs / 1000).toFixed(1)} s)`,
  );
}

console.log(`encode bench: node ${process.version}, kernel ${simdAvailable() ? 'wasm-simd' : 'js'}, best of ${REPEAT}, CPU time`);
for (const c of CASES) runCase(c);
