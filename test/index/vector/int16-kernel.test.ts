/**
 * The 16-bit integer nearest-centroid kernel (simd-kernels.wat `quantize16` / `row_norms` /
 * `nearest16`), which serves matrices of INT16_MIN_DIM or more dimensions (the IVF coarse
 * assignment; k-means on whole vectors): rows and centroids are quantised to i16, dot products
 * are exact in i32, and a nearest column is only returned when the quantisation and rounding
 * margin T proves it the exact reference's; everything else is re-checked. So every result must
 * equal the exact reference (lowest index on ties), whatever the data — tested here against the
 * reference and the f32 kernel, with counters showing which kernel judged the rows, and the
 * margin itself checked against exactly computed values.
 */
import test from 'ava';
import { NearestCentroids, nearestStats, Rng, squaredNorms } from '../../../src/index/vector/kmeans.js';
import {
  argminStaged16,
  INT16_MIN_DIM,
  setInt16KernelEnabled,
  setSimdKernelsEnabled,
  SimdMatrix,
  stagedDistances,
  stagedTolerance,
  stageRows16,
  STAGE_ROWS,
} from '../../../src/index/vector/simd-kernels.js';
import { clusteredVectors, refNearest, rowsNearCentroids, tiedData } from './fixtures.js';

function withSetting<T>(set: (on: boolean) => boolean, on: boolean, fn: () => T): T {
  const prev = set(on);
  try {
    return fn();
  } finally {
    set(prev);
  }
}

interface Ways {
  int16: Int32Array;
  f32: Int32Array;
  js: Int32Array;
  ref: Int32Array;
  /** Rows the 16-bit kernel judged in the int16 run. */
  int16Rows: number;
}

/** nearestMany with the 16-bit kernel, the f32 kernel, the JS scans, and the reference. */
function fourWays(c: Float32Array, k: number, dim: number, x: Float32Array, n: number): Ways {
  const run = (): Int32Array => {
    const out = new Int32Array(n);
    const nc = new NearestCentroids(c, k, dim);
    nc.nearestMany(x, 0, dim, n, out);
    nc.dispose();
    return out;
  };
  const before = nearestStats.int16Rows;
  const int16 = run();
  const int16Rows = nearestStats.int16Rows - before;
  const f32 = withSetting(setInt16KernelEnabled, false, run);
  const js = withSetting(setSimdKernelsEnabled, false, run);
  const ref = new Int32Array(n);
  const norms = squaredNorms(c, k, dim);
  for (let i = 0; i < n; i++) ref[i] = refNearest(x, i * dim, c, norms, k, dim);
  return { int16, f32, js, ref, int16Rows };
}

test('matrices of 32 or more dimensions are judged by the 16-bit kernel, exactly as the reference', (t) => {
  t.is(INT16_MIN_DIM, 32);
  const rng = new Rng(11);
  const shapes: [number, number, number][] = [
    [256, 128, 300],
    [256, 32, 300],
    [100, 33, 130], // odd dim: the last pair is padded
    [64, 65, 77], // rows not a multiple of the 2-row tile
    [37, 127, 70], // k not a multiple of 16
    [300, 768, 70], // several slices of 256 pairs
    [17, 600, 65],
  ];
  for (const [k, dim, n] of shapes) {
    const c = Float32Array.from({ length: k * dim }, () => rng.gaussian());
    const x = rowsNearCentroids(rng, c, k, dim, n);
    const w = fourWays(c, k, dim, x, n);
    t.is(w.int16Rows, n, `k=${k} dim=${dim}: every row judged by the 16-bit kernel`);
    t.deepEqual(w.int16, w.ref, `16-bit k=${k} dim=${dim}`);
    t.deepEqual(w.f32, w.ref, `f32 k=${k} dim=${dim}`);
    t.deepEqual(w.js, w.ref, `js k=${k} dim=${dim}`);
  }
  // Below the threshold the f32 kernel judges.
  const c = Float32Array.from({ length: 64 * 16 }, () => rng.gaussian());
  const x = Float32Array.from({ length: 50 * 16 }, () => rng.gaussian());
  const w = fourWays(c, 64, 16, x, 50);
  t.is(w.int16Rows, 0);
  t.deepEqual(w.int16, w.ref);
});

test('clustered data of uneven norms (the coarse assignment\'s case) matches the reference', (t) => {
  const dim = 128;
  const data = clusteredVectors({ n: 3000, dim, clusters: 40, seed: 5, normSpread: 0.6 });
  const k = 256;
  const c = data.slice(0, k * dim); // centroids are data rows: many rows sit right next to one
  const n = 3000 - k;
  const x = data.subarray(k * dim);
  const w = fourWays(c, k, dim, x, n);
  t.is(w.int16Rows, n);
  t.deepEqual(w.int16, w.ref);
  t.deepEqual(w.f32, w.ref);
});

test('ties and near ties under the coarser 16-bit margin are re-checked to the exact nearest', (t) => {
  const rng = new Rng(13);
  const before = nearestStats.rechecked;
  for (const [k, dim] of [[64, 32], [200, 128], [48, 63]] as const) {
    const n = 300;
    const { c, x } = tiedData(rng, k, dim, n);
    const w = fourWays(c, k, dim, x, n);
    t.is(w.int16Rows, n);
    t.deepEqual(w.int16, w.ref, `k=${k} dim=${dim}`);
  }
  t.true(nearestStats.rechecked > before, 'the exact re-check ran');
});

test('rows it cannot quantise or certify (NaN, ±Infinity, zero, one dominant value, extreme magnitudes) get the exact answer', (t) => {
  const rng = new Rng(17);
  const k = 96;
  const dim = 48;
  const c = Float32Array.from({ length: k * dim }, () => rng.gaussian());
  const n = 70;
  const x = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const o = i * dim;
    for (let d = 0; d < dim; d++) x[o + d] = c[(i % k) * dim + d] + 0.5 * rng.gaussian();
    switch (i % 10) {
      case 0:
        x[o + 5] = NaN;
        break;
      case 1:
        x[o + 7] = Infinity;
        break;
      case 2:
        x[o + 3] = -Infinity;
        break;
      case 3:
        x.fill(0, o, o + dim);
        break;
      case 4:
        x[o + 11] = 1e6; // every other value quantises to 0
        break;
      case 5:
        for (let d = 0; d < dim; d++) x[o + d] *= 1e-30; // scale below 2⁻⁶⁰
        break;
      case 6:
        for (let d = 0; d < dim; d++) x[o + d] = Math.fround(x[o + d] * 1e25); // beyond the certified norm
        break;
      default:
    }
  }
  const w = fourWays(c, k, dim, x, n);
  t.is(w.int16Rows, n);
  t.deepEqual(w.int16, w.js);
  t.deepEqual(w.f32, w.js);
  // The finite rows also equal the float64 reference.
  for (let i = 0; i < n; i++) if (i % 10 > 2) t.is(w.int16[i], w.ref[i], `row ${i}`);
});

test('matrices of extreme magnitudes have no 16-bit copy and stay exact on the f32 kernel', (t) => {
  const rng = new Rng(19);
  for (const scale of [1e-37, 1e30]) {
    const k = 40;
    const dim = 64;
    const c = Float32Array.from({ length: k * dim }, () => Math.fround(scale * rng.gaussian()));
    const x = Float32Array.from({ length: 60 * dim }, () => Math.fround(scale * rng.gaussian()));
    const w = fourWays(c, k, dim, x, 60);
    t.is(w.int16Rows, 0, `scale ${scale}`);
    t.deepEqual(w.int16, w.ref, `scale ${scale}`);
  }
});

test('the 16-bit path switched off between staging and judging still answers exactly (f32 kernel)', (t) => {
  const rng = new Rng(23);
  const k = 128;
  const dim = 96;
  const c = Float32Array.from({ length: k * dim }, () => rng.gaussian());
  const x = Float32Array.from({ length: STAGE_ROWS * dim }, () => rng.gaussian());
  const nc = new NearestCentroids(c, k, dim);
  const staged = nc.stage(x, 0, dim, STAGE_ROWS, dim);
  t.truthy(staged && 'q' in staged, 'staged in 16 bits');
  const out = new Int32Array(STAGE_ROWS);
  const before = nearestStats.int16Rows;
  withSetting(setInt16KernelEnabled, false, () => nc.nearestMany(x, 0, dim, STAGE_ROWS, out, 0, 1, staged));
  t.is(nearestStats.int16Rows, before, 'the f32 kernel judged them');
  const norms = squaredNorms(c, k, dim);
  for (let i = 0; i < STAGE_ROWS; i++) t.is(out[i], refNearest(x, i * dim, c, norms, k, dim));
  nc.dispose();
});

test('the margin bounds the 16-bit values\' error: |F̂_j − (‖c_j‖²/2 − x·c_j)| ≤ T/4 for every row and column', (t) => {
  const rng = new Rng(29);
  let worst = 0;
  for (const [k, dim, mag] of [[256, 128, 1], [64, 33, 1e-3], [100, 768, 50], [48, 64, 1e8]] as const) {
    const c = Float32Array.from({ length: k * dim }, () => Math.fround(mag * rng.gaussian()));
    // Rows with very different magnitudes and one row with a dominant value.
    const x = Float32Array.from({ length: STAGE_ROWS * dim }, (_, i) => Math.fround(mag * (i < 8 * dim ? 10 : 1) * rng.gaussian()));
    x[20 * dim + 3] = 1000 * mag;
    const norms = squaredNorms(c, k, dim);
    const m = SimdMatrix.create(c, 0, k, dim, norms);
    t.truthy(m && m.int16, `k=${k} dim=${dim}: the 16-bit copy exists`);
    const st = stageRows16(x, 0, dim, STAGE_ROWS, dim, dim)!;
    argminStaged16(m!, st, 0, STAGE_ROWS);
    for (let r = 0; r < STAGE_ROWS; r++) {
      const T = stagedTolerance(r);
      t.true(T > 0 && T < Infinity, `row ${r}: a finite margin`);
      const f = stagedDistances(r);
      for (let j = 0; j < k; j++) {
        let dot = 0;
        for (let d = 0; d < dim; d++) dot += x[r * dim + d] * c[j * dim + d];
        const exact = norms[j] / 2 - dot;
        const err = Math.abs(f[j] - exact);
        worst = Math.max(worst, err / (T / 4));
        if (!(err <= T / 4)) t.fail(`k=${k} dim=${dim} row ${r} column ${j}: |F̂ − F| ${err} > T/4 ${T / 4}`);
      }
    }
    m!.dispose();
  }
  t.log(`largest error as a share of T/4: ${worst.toFixed(3)}`);
  t.true(worst > 0.01, 'the margin is not vacuous (errors reach a visible share of it)');
});
