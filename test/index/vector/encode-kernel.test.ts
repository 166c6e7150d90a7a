/**
 * The nearest-centroid kernel of the IVF-PQ write path (issue 7): the WebAssembly SIMD kernel
 * and the pure-JS path give identical results, both equal to the exact reference (smallest
 * float64 distance, lowest index on ties) — on random data, on data full of exact ties, near
 * ties, huge and tiny values; IVF-PQ codes and k-means models do not depend on the path; and the
 * embedded binary is the assembled simd-kernels.wat.
 */
import test from 'ava';
import { tableToIPC } from 'apache-arrow';
import { assembleSimdKernels } from '../../../scripts/gen-simd-wasm.js';
import { IvfPqIndex } from '../../../src/index/vector/ivf-pq-index.js';
import { PQ_CODEWORDS, trainIvfPq, type IvfPqModel } from '../../../src/index/vector/ivf-pq-model.js';
import { kmeans, NearestCentroids, nearestStats, Rng, setKmeansBoundsEnabled, squaredNorms } from '../../../src/index/vector/kmeans.js';
import { SIMD_KERNELS_WASM_BASE64 } from '../../../src/index/vector/simd-kernels.wasm.js';
import { setSimdKernelsEnabled, simdAvailable, stageRows, STAGE_ROWS } from '../../../src/index/vector/simd-kernels.js';
import { VectorSource } from '../../../src/index/vector/vector-source.js';
import { chunksOf, clusteredVectors, queriesNear, refNearest, rowsNearCentroids, tiedData } from './fixtures.js';

function withSimd<T>(on: boolean, fn: () => T): T {
  const prev = setSimdKernelsEnabled(on);
  try {
    return fn();
  } finally {
    setSimdKernelsEnabled(prev);
  }
}

/** nearestMany with the kernel, without it, and the reference, for n rows of x (stride dim). */
function threeWays(c: Float32Array, k: number, dim: number, x: Float32Array, n: number) {
  const simd = new Int32Array(n);
  const js = new Int32Array(n);
  const ref = new Int32Array(n);
  const ncS = new NearestCentroids(c, k, dim);
  ncS.nearestMany(x, 0, dim, n, simd);
  const accelerated = ncS.accelerated;
  ncS.dispose();
  withSimd(false, () => {
    const ncJ = new NearestCentroids(c, k, dim);
    if (ncJ.accelerated) throw new Error('kernel should be off');
    ncJ.nearestMany(x, 0, dim, n, js);
  });
  const norms = squaredNorms(c, k, dim);
  for (let i = 0; i < n; i++) ref[i] = refNearest(x, i * dim, c, norms, k, dim);
  return { simd, js, ref, accelerated };
}

test('the WebAssembly SIMD kernel loads on this Node', (t) => {
  t.true(simdAvailable());
});

test('the embedded binary is simd-kernels.wat assembled (run scripts/gen-simd-wasm.ts after editing it)', async (t) => {
  const built = await assembleSimdKernels();
  t.deepEqual(Buffer.from(SIMD_KERNELS_WASM_BASE64, 'base64'), Buffer.from(built));
});

test('kernel and JS path agree with the exact reference on random data of many shapes', (t) => {
  const rng = new Rng(3);
  const shapes: [number, number, number][] = [
    [256, 128, 300],
    [256, 8, 500],
    [256, 16, 300],
    [256, 4, 300],
    [100, 20, 200],
    [37, 5, 101], // k not a multiple of 16: padding columns
    [17, 3, 65],
    [1, 64, 33],
    [300, 768, 70], // several 128-dimension slices
    [256, 130, 67], // a slice of 2
  ];
  for (const [k, dim, n] of shapes) {
    const c = Float32Array.from({ length: k * dim }, () => rng.gaussian());
    const x = rowsNearCentroids(rng, c, k, dim, n);
    const r = threeWays(c, k, dim, x, n);
    t.true(r.accelerated, `k=${k} dim=${dim} should use the kernel`);
    t.deepEqual(r.simd, r.ref, `kernel k=${k} dim=${dim}`);
    t.deepEqual(r.js, r.ref, `js k=${k} dim=${dim}`);
  }
});

test('exact ties go to the lowest index, near ties to the exact nearest (re-checked)', (t) => {
  const rng = new Rng(5);
  const before = nearestStats.rechecked;
  for (const [k, dim] of [[64, 8], [64, 16], [48, 24], [200, 128]] as const) {
    // Many rows equidistant from several centroids, so only the tie rule decides.
    const n = 300;
    const { c, x } = tiedData(rng, k, dim, n);
    const r = threeWays(c, k, dim, x, n);
    t.deepEqual(r.simd, r.ref, `kernel k=${k} dim=${dim}`);
    t.deepEqual(r.js, r.ref, `js k=${k} dim=${dim}`);
  }
  t.true(nearestStats.rechecked > before, 'the exact re-check ran');
});

test('huge, tiny and mixed magnitudes stay exact (rows beyond the certified range are re-checked)', (t) => {
  const rng = new Rng(7);
  for (const [scale, dim] of [[1e12, 8], [1e17, 8], [1e17, 40], [1e-20, 8], [1e-38, 16], [1e-3, 128]] as const) {
    const k = 64;
    const n = 80;
    const c = Float32Array.from({ length: k * dim }, () => Math.fround(scale * rng.gaussian()));
    const x = Float32Array.from({ length: n * dim }, (_, i) => Math.fround((i % 5 === 0 ? 1e6 : 1) * scale * rng.gaussian()));
    const r = threeWays(c, k, dim, x, n);
    t.deepEqual(r.simd, r.ref, `kernel scale=${scale} dim=${dim}`);
    t.deepEqual(r.js, r.ref, `js scale=${scale} dim=${dim}`);
  }
});

test('sub-spaces of one staged block (the PQ path) match the reference', (t) => {
  const rng = new Rng(9);
  const subDim = 8;
  const M = 6;
  const width = subDim * M;
  const books = Array.from({ length: M }, () => Float32Array.from({ length: 256 * subDim }, () => rng.gaussian()));
  const ncs = books.map((b) => new NearestCentroids(b, 256, subDim));
  const x = Float32Array.from({ length: STAGE_ROWS * width }, () => rng.gaussian());
  const staged = stageRows(x, 0, width, STAGE_ROWS, width);
  t.not(staged, null);
  const codes = new Uint8Array(STAGE_ROWS * M);
  for (let s = 0; s < M; s++) ncs[s].nearestMany(x, s * subDim, width, STAGE_ROWS, codes, s, M, staged, s * subDim);
  for (let s = 0; s < M; s++) {
    const norms = squaredNorms(books[s], 256, subDim);
    for (let i = 0; i < STAGE_ROWS; i++) t.is(codes[i * M + s], refNearest(x, i * width + s * subDim, books[s], norms, 256, subDim));
  }
  // The codewords copied back from the kernel's copy are the codebook's.
  const out = new Float32Array(STAGE_ROWS * width);
  for (let s = 0; s < M; s++) ncs[s].copyCentroids(codes, s, M, STAGE_ROWS, out, s * subDim, width);
  for (let i = 0; i < STAGE_ROWS; i++) {
    for (let s = 0; s < M; s++) {
      const j = codes[i * M + s];
      t.deepEqual(out.subarray(i * width + s * subDim, i * width + (s + 1) * subDim), books[s].subarray(j * subDim, (j + 1) * subDim));
    }
  }
  for (const nc of ncs) nc.dispose();
});

/** Partition and codes of each row as the former encoder chose them (exact, lowest index on ties). */
function referenceCodes(model: IvfPqModel, data: Float32Array, n: number): { part: Int32Array; codes: Uint8Array } {
  const { dim, partitions: P, subVectors: M, subDim, centroids, codebooks } = model;
  const cNorms = squaredNorms(centroids, P, dim);
  const part = new Int32Array(n);
  const codes = new Uint8Array(n * M);
  const r = new Float32Array(dim);
  for (let i = 0; i < n; i++) {
    const p = refNearest(data, i * dim, centroids, cNorms, P, dim);
    part[i] = p;
    for (let d = 0; d < dim; d++) r[d] = data[i * dim + d] - centroids[p * dim + d];
    for (let s = 0; s < M; s++) {
      const cb = codebooks.subarray(s * PQ_CODEWORDS * subDim, (s + 1) * PQ_CODEWORDS * subDim);
      codes[i * M + s] = refNearest(r, s * subDim, cb, squaredNorms(cb, PQ_CODEWORDS, subDim), PQ_CODEWORDS, subDim);
    }
  }
  return { part, codes };
}

test('IVF-PQ indexes are identical with and without the kernel, and equal the reference encoding', (t) => {
  const dim = 64;
  const n = 3000;
  const data = clusteredVectors({ n, dim, clusters: 30, seed: 13, normSpread: 0.2 });
  const source = new VectorSource(dim, chunksOf(data, dim, 700));
  const queries = queriesNear(data, dim, 5, 3);
  for (const subVectors of [8, 4, 2]) {
    // subDim 8, 16 and 32 (the last uses the l2Between reference).
    const model = trainIvfPq(source, { metric: 'l2', partitions: 40, subVectors, iterations: 4, seed: 2 });
    const build = () => {
      const idx = new IvfPqIndex(model);
      for (const c of source.chunks) idx.add(c);
      return idx;
    };
    const a = build();
    const b = withSimd(false, build);
    t.deepEqual(tableToIPC(a.toArrow()), tableToIPC(b.toArrow()), `subVectors ${subVectors}: codes and error bounds`);
    for (const q of queries) {
      // ADC distances include the per-row l2 terms.
      t.deepEqual(a.search(q, { k: 20, nprobes: 40, refineFactor: 0 }), withSimd(false, () => b.search(q, { k: 20, nprobes: 40, refineFactor: 0 })));
    }
    const ref = referenceCodes(model, data, n);
    const table = a.toArrow();
    const partCol = table.getChild('partition')!.toArray() as Uint32Array;
    const posCol = table.getChild('position')!.toArray() as Uint32Array;
    const codeVals = table.getChild('code')!.data.map((d) => d.values as Uint8Array);
    const codeBytes = new Uint8Array(codeVals.reduce((s, v) => s + v.length, 0));
    let o = 0;
    for (const v of codeVals) {
      codeBytes.set(v, o);
      o += v.length;
    }
    let same = 0;
    for (let r = 0; r < posCol.length; r++) {
      const i = posCol[r];
      if (partCol[r] !== ref.part[i]) continue;
      let ok = true;
      for (let s = 0; s < subVectors; s++) if (codeBytes[r * subVectors + s] !== ref.codes[i * subVectors + s]) ok = false;
      if (ok) same++;
    }
    t.is(same, n, `subVectors ${subVectors}: every row encoded as the reference encodes it`);
  }
});

test('k-means models depend neither on the kernel nor on Hamerly\'s bounds', (t) => {
  const cases: [number, number, number][] = [[3000, 32, 40], [4000, 8, 256], [2000, 16, 100], [1500, 3, 20], [2500, 96, 64]];
  for (const [n, dim, k] of cases) {
    const data = clusteredVectors({ n, dim, clusters: 25, seed: 17 });
    const a = kmeans(data, n, dim, k, { seed: 4, iterations: 8 });
    const b = withSimd(false, () => kmeans(data, n, dim, k, { seed: 4, iterations: 8 }));
    t.deepEqual(a, b, `n=${n} dim=${dim} k=${k}`);
    const prev = setKmeansBoundsEnabled(false);
    try {
      t.deepEqual(kmeans(data, n, dim, k, { seed: 4, iterations: 8 }), a, `no bounds: n=${n} dim=${dim} k=${k}`);
    } finally {
      setKmeansBoundsEnabled(prev);
    }
  }
  // Duplicate points (exact ties, empty clusters repaired) with bounds on and off.
  const dup = new Float32Array(600 * 24);
  for (let i = 0; i < 600; i++) for (let d = 0; d < 24; d++) dup[i * 24 + d] = ((i % 37) * (d + 1)) % 5;
  const a = kmeans(dup, 600, 24, 50, { seed: 1, iterations: 6 });
  const prev = setKmeansBoundsEnabled(false);
  try {
    t.deepEqual(kmeans(dup, 600, 24, 50, { seed: 1, iterations: 6 }), a);
  } finally {
    setKmeansBoundsEnabled(prev);
  }
  t.deepEqual(withSimd(false, () => kmeans(dup, 600, 24, 50, { seed: 1, iterations: 6 })), a);
});
