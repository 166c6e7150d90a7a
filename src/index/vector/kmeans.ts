/**
 * k-means for IVF partitioning and PQ codebooks: k-means++ seeding with a seeded PRNG, Lloyd
 * iterations, and empty-cluster repair. Squared-L2 throughout (cosine callers normalise first).
 *
 * Cost is dominated by nearest-centroid searches, all exact (the result is always a nearest
 * centroid, the lowest index among equally near ones):
 * - k-means++: a new centre c can only capture x if ‖c − c(x)‖ < 2‖x − c(x)‖ (triangle
 *   inequality), so most points skip the distance computation once a few dozen centres exist.
 *   With WebAssembly SIMD the per-centre loop runs in the kernel (`SimdSeeding`), with the same
 *   float64 operations in the same order.
 * - `NearestCentroids` (Lloyd assignment, IVF assignment and PQ encoding of the index): the
 *   WebAssembly SIMD kernel of simd-kernels.ts computes ‖c‖² − 2x·c for blocks of rows against
 *   all centroids (blocked, f32) and certifies its argmin against its rounding error bound; the
 *   rare close calls (and everything, without WebAssembly SIMD) are decided by the exact
 *   float64 reference below, so both paths give identical results.
 * - Lloyd for dim > 16: Hamerly's bounds (`HamerlyBounds`) skip points that provably keep their
 *   centroid; only the others are searched.
 */
import { l2Between, normSqAt } from './distance.js';
import {
  argminStaged,
  argminStaged16,
  certifyTolerance,
  copyColumns,
  MAX_CERTIFIED_NORM,
  SimdMatrix,
  SimdSeeding,
  stagedDistances,
  stagedSeconds,
  stagedTolerance,
  stageRows,
  stageRows16,
  STAGE_ROWS,
  type StagedRows,
  type StagedRows16,
} from './simd-kernels.js';

// ---- PRNG ------------------------------------------------------------------------------------

/** Seeded PRNG (mulberry32): `next()` in [0, 1), `int(n)` in [0, n), `gaussian()` ~ N(0, 1). */
export class Rng {
  private s: number;
  private spare = NaN;

  constructor(seed: number) {
    this.s = (Math.trunc(seed) ^ 0x9e3779b9) >>> 0;
  }

  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  gaussian(): number {
    if (this.spare === this.spare) {
      const v = this.spare;
      this.spare = NaN;
      return v;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
}

// ---- nearest centroid ------------------------------------------------------------------------

/** Squared L2 with early exit: returns a value ≥ `bound` (not the full distance) once exceeded. */
export function l2Bounded(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number, bound: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const dim4 = dim & ~3;
  let i = 0;
  for (;;) {
    const e = i + 32 < dim4 ? i + 32 : dim4;
    for (; i < e; i += 4) {
      const d0 = a[ao + i] - b[bo + i];
      const d1 = a[ao + i + 1] - b[bo + i + 1];
      const d2 = a[ao + i + 2] - b[bo + i + 2];
      const d3 = a[ao + i + 3] - b[bo + i + 3];
      s0 += d0 * d0;
      s1 += d1 * d1;
      s2 += d2 * d2;
      s3 += d3 * d3;
    }
    if (i >= dim4) break;
    const p = s0 + s1 + s2 + s3;
    if (p >= bound) return p;
  }
  for (; i < dim; i++) {
    const d = a[ao + i] - b[bo + i];
    s0 += d * d;
  }
  return s0 + s1 + s2 + s3;
}

/** Dimensions up to which nearest-centroid search is a plain brute-force loop. */
const SMALL_DIM = 16;

/**
 * argmin_j ‖c_j‖² − 2 x·c_j (= argmin ‖x − c_j‖²) for small `dim`, with x held in locals for the
 * common sub-vector widths 8 and 4. Non-finite x yields 0.
 */
export function nearestSmall(x: Float32Array, xo: number, c: Float32Array, norms: Float64Array, k: number, dim: number): number {
  let best = 0;
  let bestD = Infinity;
  if (dim === 8) {
    const x0 = 2 * x[xo], x1 = 2 * x[xo + 1], x2 = 2 * x[xo + 2], x3 = 2 * x[xo + 3];
    const x4 = 2 * x[xo + 4], x5 = 2 * x[xo + 5], x6 = 2 * x[xo + 6], x7 = 2 * x[xo + 7];
    for (let j = 0, o = 0; j < k; j++, o += 8) {
      const d = norms[j] - (x0 * c[o] + x1 * c[o + 1] + x2 * c[o + 2] + x3 * c[o + 3]) - (x4 * c[o + 4] + x5 * c[o + 5] + x6 * c[o + 6] + x7 * c[o + 7]);
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
  } else if (dim === 4) {
    const x0 = 2 * x[xo], x1 = 2 * x[xo + 1], x2 = 2 * x[xo + 2], x3 = 2 * x[xo + 3];
    for (let j = 0, o = 0; j < k; j++, o += 4) {
      const d = norms[j] - (x0 * c[o] + x1 * c[o + 1] + x2 * c[o + 2] + x3 * c[o + 3]);
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
  } else {
    for (let j = 0, o = 0; j < k; j++, o += dim) {
      let ip = 0;
      for (let t = 0; t < dim; t++) ip += x[xo + t] * c[o + t];
      const d = norms[j] - 2 * ip;
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
  }
  return best;
}

/**
 * The value `nearestSmall` minimises for codeword j, computed the same way (same operations in
 * the same order), so re-checks agree with it exactly.
 */
function smallDistance(x: Float32Array, xo: number, c: Float32Array, norms: Float64Array, j: number, dim: number): number {
  const o = j * dim;
  if (dim === 8) {
    const x0 = 2 * x[xo], x1 = 2 * x[xo + 1], x2 = 2 * x[xo + 2], x3 = 2 * x[xo + 3];
    const x4 = 2 * x[xo + 4], x5 = 2 * x[xo + 5], x6 = 2 * x[xo + 6], x7 = 2 * x[xo + 7];
    return norms[j] - (x0 * c[o] + x1 * c[o + 1] + x2 * c[o + 2] + x3 * c[o + 3]) - (x4 * c[o + 4] + x5 * c[o + 5] + x6 * c[o + 6] + x7 * c[o + 7]);
  }
  if (dim === 4) {
    const x0 = 2 * x[xo], x1 = 2 * x[xo + 1], x2 = 2 * x[xo + 2], x3 = 2 * x[xo + 3];
    return norms[j] - (x0 * c[o] + x1 * c[o + 1] + x2 * c[o + 2] + x3 * c[o + 3]);
  }
  let ip = 0;
  for (let t = 0; t < dim; t++) ip += x[xo + t] * c[o + t];
  return norms[j] - 2 * ip;
}

/**
 * Nearest of k codewords (`c`, k × dim, squared norms `norms`) for `count` small vectors at
 * `x[xo + i·stride ..)`, written to `out[oo + i·os]`. Width-8 vectors go two at a time through
 * one pass over the codebook (each codeword load serves both), ≈1.5× faster than one at a time.
 */
export function nearestSmallMany(
  x: Float32Array,
  xo: number,
  stride: number,
  count: number,
  c: Float32Array,
  norms: Float64Array,
  k: number,
  dim: number,
  out: Uint8Array | Int32Array,
  oo: number,
  os: number,
): void {
  let i = 0;
  if (dim === 8) {
    for (; i + 1 < count; i += 2) {
      const a = xo + i * stride;
      const b = a + stride;
      const x0 = 2 * x[a], x1 = 2 * x[a + 1], x2 = 2 * x[a + 2], x3 = 2 * x[a + 3];
      const x4 = 2 * x[a + 4], x5 = 2 * x[a + 5], x6 = 2 * x[a + 6], x7 = 2 * x[a + 7];
      const y0 = 2 * x[b], y1 = 2 * x[b + 1], y2 = 2 * x[b + 2], y3 = 2 * x[b + 3];
      const y4 = 2 * x[b + 4], y5 = 2 * x[b + 5], y6 = 2 * x[b + 6], y7 = 2 * x[b + 7];
      let bx = 0, bxD = Infinity, by = 0, byD = Infinity;
      for (let j = 0, o = 0; j < k; j++, o += 8) {
        const c0 = c[o], c1 = c[o + 1], c2 = c[o + 2], c3 = c[o + 3];
        const c4 = c[o + 4], c5 = c[o + 5], c6 = c[o + 6], c7 = c[o + 7];
        const nj = norms[j];
        const dx = nj - (x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3) - (x4 * c4 + x5 * c5 + x6 * c6 + x7 * c7);
        const dy = nj - (y0 * c0 + y1 * c1 + y2 * c2 + y3 * c3) - (y4 * c4 + y5 * c5 + y6 * c6 + y7 * c7);
        if (dx < bxD) {
          bxD = dx;
          bx = j;
        }
        if (dy < byD) {
          byD = dy;
          by = j;
        }
      }
      out[oo + i * os] = bx;
      out[oo + (i + 1) * os] = by;
    }
  }
  for (; i < count; i++) out[oo + i * os] = nearestSmall(x, xo + i * stride, c, norms, k, dim);
}

/** ‖c_j‖² for each of k codewords. */
export function squaredNorms(c: Float32Array, k: number, dim: number): Float64Array {
  const norms = new Float64Array(k);
  for (let j = 0; j < k; j++) {
    let s = 0;
    for (let t = 0; t < dim; t++) s += c[j * dim + t] * c[j * dim + t];
    norms[j] = s;
  }
  return norms;
}

/** Counters of `NearestCentroids` kernel use (for benchmarks and tests). */
export const nearestStats = { kernelRows: 0, rechecked: 0, int16Rows: 0 };

/**
 * Exact nearest-centroid search over k centroids of `dim` values (row-major): the centroid with
 * the smallest reference distance, the lowest index on ties. The reference distance is the
 * float64 value the JS scans compute: for dim ≤ 16 the `nearestSmall` expression ‖c_j‖² − 2x·c_j
 * (with ‖c_j‖² from `squaredNorms`), above that `l2Between` (‖x − c_j‖², four accumulators).
 *
 * With WebAssembly SIMD the centroids are also held by the kernel (simd-kernels.ts), which finds
 * and certifies the nearest for blocks of rows; a row it cannot certify (another centroid within
 * its rounding error bound) is decided here from the reference distances of just the centroids
 * within that bound. Without it, or when disabled, the JS scans run. Both give the same index.
 * Call `dispose()` when done to return the kernel memory at once (otherwise it is reclaimed
 * when the object is garbage-collected).
 */
export class NearestCentroids {
  /** Squared distance (`l2Between`) from the last `nearest` query to its result. */
  lastDistance = 0;
  /** ‖c_j‖² (float64, `squaredNorms`). */
  private readonly norms: Float64Array;
  private simd: SimdMatrix | null;
  private readonly one = new Int32Array(1);
  /** Whether the last `argmin` ran the 16-bit kernel (its re-check uses that kernel's margins). */
  private lastInt16 = false;

  constructor(readonly centroids: Float32Array, readonly k: number, readonly dim: number) {
    if (centroids.length < k * dim) throw new Error('centroid array too short');
    this.norms = squaredNorms(centroids, k, dim);
    this.simd = SimdMatrix.create(centroids, 0, k, dim, this.norms);
  }

  /** True when the SIMD kernel serves this instance. */
  get accelerated(): boolean {
    return this.simd !== null;
  }

  /** Releases the kernel memory now; later calls use the JS scans. */
  dispose(): void {
    this.simd?.dispose();
    this.simd = null;
  }

  /**
   * Index of a centroid nearest to `x[xo..xo+dim)` (sets `lastDistance`). `guess` is accepted
   * for compatibility and ignored: the result does not depend on it.
   */
  nearest(x: Float32Array, xo: number, guess = -1): number {
    const out = this.one;
    this.nearestMany(x, xo, this.dim, 1, out, 0, 1);
    const best = out[0];
    this.lastDistance = l2Between(x, xo, this.centroids, best * this.dim, this.dim);
    return best;
  }

  /**
   * Stages `count ≤ STAGE_ROWS` rows `x[xo + i·stride ..)` of `width` values for `nearestMany`
   * of this instance, or of any with the same dim (the PQ sub-spaces of one block of residuals):
   * quantised to i16 when the 16-bit kernel serves this matrix, else as f32; null without the
   * kernel. `x` must not change while they are staged.
   */
  stage(x: Float32Array, xo: number, stride: number, count: number, width: number): StagedRows | StagedRows16 | null {
    const simd = this.simd;
    if (simd === null) return null;
    if (simd.int16) {
      const st = stageRows16(x, xo, stride, count, width, this.dim);
      if (st !== null) return st;
    }
    return stageRows(x, xo, stride, count, width);
  }

  /**
   * Nearest centroid of each of `count` rows `x[xo + i·stride ..)` (dim values each), written to
   * `out[oo + i·os]`. `staged` (optional): the same rows already staged for the kernel
   * (`stage`), this matrix's columns starting at `col` of each staged row — as when one
   * staged block of residuals is PQ-encoded sub-space by sub-space.
   */
  nearestMany(
    x: Float32Array,
    xo: number,
    stride: number,
    count: number,
    out: Uint8Array | Int32Array,
    oo = 0,
    os = 1,
    staged: StagedRows | StagedRows16 | null = null,
    col = 0,
  ): void {
    const simd = this.simd;
    if (simd === null) {
      this.scanMany(x, xo, stride, count, out, oo, os);
      return;
    }
    if (staged !== null && count <= staged.count) {
      this.fromKernel(this.argmin(staged, col, count), this.lastInt16, x, xo, stride, count, out, oo, os);
      return;
    }
    for (let b = 0; b < count; b += STAGE_ROWS) {
      const n = Math.min(STAGE_ROWS, count - b);
      const bo = xo + b * stride;
      const st = this.stage(x, bo, stride, n, this.dim);
      if (st === null) this.scanMany(x, bo, stride, n, out, oo + b * os, os);
      else this.fromKernel(this.argmin(st, 0, n), this.lastInt16, x, bo, stride, n, out, oo + b * os, os);
    }
  }

  /**
   * The kernel's verdicts for staged rows: the 16-bit kernel for rows staged in 16 bits (sets
   * `lastInt16`), else the f32 kernel (16-bit staging holds the f32 rows too, so a path switched
   * off since staging still has its rows).
   */
  private argmin(staged: StagedRows | StagedRows16, col: number, count: number): Int32Array {
    const simd = this.simd!;
    this.lastInt16 = 'q' in staged && simd.int16;
    return this.lastInt16 ? argminStaged16(simd, staged as StagedRows16, col, count) : argminStaged(simd, staged, col, count);
  }

  /**
   * Copies centroids `idx[io + i·is]` (i < count) to `out[oo + i·os ..)` — from the kernel's copy
   * when there is one (in cache right after a `nearestMany`), else from `centroids`; the values
   * are the same.
   */
  copyCentroids(idx: Uint8Array | Int32Array, io: number, is: number, count: number, out: Float32Array, oo: number, os: number): void {
    if (this.simd !== null) {
      copyColumns(this.simd, idx, io, is, count, out, oo, os);
      return;
    }
    const { centroids, dim } = this;
    for (let i = 0; i < count; i++) {
      const src = idx[io + i * is] * dim;
      const dst = oo + i * os;
      for (let d = 0; d < dim; d++) out[dst + d] = centroids[src + d];
    }
  }

  /**
   * Like `nearestMany` for rows `x[xo + i·stride ..)` (i < count) into `out[i]`, also writing
   * `lowerSq[i]`: a lower bound of ‖x − c_j‖² over every centroid j other than the result (0 when
   * unknown: rows the kernel could not certify, and dim ≤ 16 without the kernel). For Hamerly's
   * bounds in k-means.
   */
  nearestWithLower(x: Float32Array, xo: number, stride: number, count: number, out: Int32Array, lowerSq: Float64Array): void {
    const { dim } = this;
    const simd = this.simd;
    if (simd === null) {
      for (let i = 0; i < count; i++) {
        if (dim > SMALL_DIM) {
          out[i] = this.scan2(x, xo + i * stride);
          // l2Between sums non-negative terms: relative error ≤ (dim + 3)·2⁻⁵³.
          lowerSq[i] = this.lastSecond * (1 - (dim + 4) * 2 ** -52);
        } else {
          out[i] = this.scan(x, xo + i * stride);
          lowerSq[i] = 0;
        }
      }
      return;
    }
    for (let b = 0; b < count; b += STAGE_ROWS) {
      const n = Math.min(STAGE_ROWS, count - b);
      const bo = xo + b * stride;
      const st = stageRows(x, bo, stride, n, dim);
      if (st === null) {
        for (let i = 0; i < n; i++) {
          out[b + i] = this.scan(x, bo + i * stride);
          lowerSq[b + i] = 0;
        }
        continue;
      }
      const res = argminStaged(simd, st, 0, n);
      const sec = stagedSeconds(n);
      nearestStats.kernelRows += n;
      for (let i = 0; i < n; i++) {
        const ro = bo + i * stride;
        let j = res[i];
        if (j < 0) {
          nearestStats.rechecked++;
          j = this.recheck(x, ro, i);
          lowerSq[b + i] = 0;
        } else {
          // Every other column has 2F̂_j ≥ 2·second, and D_j ≥ 2F̂_j − T/2 (see simd-kernels.wat);
          // ‖x − c_j‖² = ‖x‖² + D_j. T also covers the float64 roundings here.
          const xSq = normSqAt(x, ro, dim);
          const t = certifyTolerance(Math.sqrt(xSq) * (1 + 2 ** -30), simd.cmax, dim);
          const lb = xSq * (1 - 2 ** -40) + 2 * sec[i] - t;
          lowerSq[b + i] = lb > 0 ? lb : 0;
        }
        out[b + i] = j;
      }
    }
  }

  /** Second smallest reference distance of the last `scan2` (dim > 16). */
  private lastSecond = Infinity;

  /** `scan` for dim > 16 that also finds the exact second smallest l2Between distance. */
  private scan2(x: Float32Array, xo: number): number {
    const { centroids, k, dim } = this;
    let best = 0;
    let bestD = Infinity;
    let secondD = Infinity;
    for (let j = 0; j < k; j++) {
      // Below secondD the value is the full distance (l2Bounded stops only once it reaches it).
      const d = l2Bounded(x, xo, centroids, j * dim, dim, secondD);
      if (d < bestD) {
        secondD = bestD;
        bestD = d;
        best = j;
      } else if (d < secondD) {
        secondD = d;
      }
    }
    this.lastSecond = secondD;
    return best;
  }

  /** Kernel results: certified indexes, −1 re-checked exactly (`int16`: from `argminStaged16`). */
  private fromKernel(
    res: Int32Array,
    int16: boolean,
    x: Float32Array,
    xo: number,
    stride: number,
    count: number,
    out: Uint8Array | Int32Array,
    oo: number,
    os: number,
  ): void {
    nearestStats.kernelRows += count;
    if (int16) nearestStats.int16Rows += count;
    for (let i = 0; i < count; i++) {
      let j = res[i];
      if (j < 0) {
        nearestStats.rechecked++;
        j = int16 ? this.recheck16(x, xo + i * stride, i) : this.recheck(x, xo + i * stride, i);
      }
      out[oo + i * os] = j;
    }
  }

  /**
   * Staged row `r` (= x at xo) that the kernel could not certify: every centroid whose kernel
   * value is within the certification margin of the smallest is a candidate (no other can be the
   * nearest); the candidates' reference distances decide, lowest index on ties.
   */
  private recheck(x: Float32Array, xo: number, r: number): number {
    const xNorm = Math.sqrt(normSqAt(x, xo, this.dim)) * (1 + 2 ** -30);
    if (!(xNorm <= MAX_CERTIFIED_NORM)) return this.scan(x, xo);
    return this.recheckWithin(x, xo, r, certifyTolerance(xNorm, this.simd!.cmax, this.dim));
  }

  /** `recheck` for a row of the last `argminStaged16`, with the margin it was judged by. */
  private recheck16(x: Float32Array, xo: number, r: number): number {
    if (!this.simd!.int16) return this.scan(x, xo);
    return this.recheckWithin(x, xo, r, stagedTolerance(r));
  }

  /** The candidates within margin `t` (2F̂ units) of the smallest kernel value decide; else an exact scan. */
  private recheckWithin(x: Float32Array, xo: number, r: number, t: number): number {
    const { k } = this;
    const f = stagedDistances(r); // F_j ≈ (‖c_j‖² − 2x·c_j)/2, f32
    let m = Infinity;
    for (let j = 0; j < k; j++) if (f[j] < m) m = f[j];
    if (!(m > -Infinity && m < Infinity && t < Infinity)) return this.scan(x, xo);
    let best = -1;
    let bestD = Infinity;
    for (let j = 0; j < k; j++) {
      if (!(2 * (f[j] - m) <= t)) continue;
      const d = this.refDistance(x, xo, j);
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
    return best < 0 ? this.scan(x, xo) : best;
  }

  /** The reference distance of x to centroid j (see the class comment). */
  private refDistance(x: Float32Array, xo: number, j: number): number {
    const { centroids: c, dim } = this;
    if (dim > SMALL_DIM) return l2Between(x, xo, c, j * dim, dim);
    return smallDistance(x, xo, c, this.norms, j, dim);
  }

  /** The JS path: exact scans in the reference distance. */
  private scanMany(x: Float32Array, xo: number, stride: number, count: number, out: Uint8Array | Int32Array, oo: number, os: number): void {
    if (this.dim <= SMALL_DIM) {
      nearestSmallMany(x, xo, stride, count, this.centroids, this.norms, this.k, this.dim, out, oo, os);
      return;
    }
    for (let i = 0; i < count; i++) out[oo + i * os] = this.scan(x, xo + i * stride);
  }

  private scan(x: Float32Array, xo: number): number {
    const { centroids, k, dim } = this;
    if (dim <= SMALL_DIM) return nearestSmall(x, xo, centroids, this.norms, k, dim);
    let best = 0;
    let bestD = Infinity;
    for (let j = 0; j < k; j++) {
      const d = l2Bounded(x, xo, centroids, j * dim, dim, bestD);
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
    return best;
  }
}

// ---- k-means ---------------------------------------------------------------------------------

export interface KMeansOptions {
  /** Lloyd iterations after seeding (default 10); stops early once no assignment changes. */
  iterations?: number;
  seed?: number;
  rng?: Rng;
}

export interface KMeansResult {
  centroids: Float32Array; // k × dim
  /** Centroid of each input point (nearest among the final centroids). */
  assignments: Int32Array;
  iterations: number;
}

/**
 * Clusters `n` points of `data` (row-major, n × dim, all finite) into `k ≤ n` clusters.
 */
export function kmeans(data: Float32Array, n: number, dim: number, k: number, opts: KMeansOptions = {}): KMeansResult {
  if (!Number.isInteger(k) || k < 1) throw new Error(`k-means needs k ≥ 1, got ${k}`);
  if (n < k) throw new Error(`k-means needs at least k = ${k} points, got ${n}`);
  const rng = opts.rng ?? new Rng(opts.seed ?? 42);
  const iterations = opts.iterations ?? 10;
  const centroids = new Float32Array(k * dim);
  const assign = new Int32Array(n);
  const dist = new Float64Array(n); // squared distance to the assigned centroid
  seedPlusPlus(data, n, dim, k, rng, centroids, assign, dist);

  const sums = new Float64Array(k * dim);
  const counts = new Int32Array(k);
  let scratchAssign = new Int32Array(0);
  const bounds = dim > SMALL_DIM && boundsEnabled ? new HamerlyBounds(n, k, dim, dist) : null;
  let it = 0;
  for (; it < iterations; it++) {
    // Update step.
    sums.fill(0);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const c = assign[i];
      counts[c]++;
      const so = c * dim;
      const xo = i * dim;
      for (let d = 0; d < dim; d++) sums[so + d] += data[xo + d];
    }
    bounds?.remember(centroids);
    repairEmpty(data, dim, k, counts, sums, assign, dist, bounds);
    for (let c = 0; c < k; c++) {
      const cnt = counts[c];
      if (cnt === 0) continue; // only when there are fewer distinct points than clusters
      const so = c * dim;
      const inv = 1 / cnt;
      for (let d = 0; d < dim; d++) centroids[so + d] = sums[so + d] * inv;
    }
    // Assignment step.
    let changed = 0;
    const next = scratchAssign.length >= n ? scratchAssign : (scratchAssign = new Int32Array(n));
    const nc = new NearestCentroids(centroids, k, dim);
    if (bounds === null) nc.nearestMany(data, 0, dim, n, next, 0, 1);
    else bounds.assign(nc, data, centroids, assign, next);
    nc.dispose();
    for (let i = 0; i < n; i++) {
      const c = next[i];
      if (c !== assign[i]) {
        assign[i] = c;
        changed++;
      }
      dist[i] = l2Between(data, i * dim, centroids, c * dim, dim);
    }
    bounds?.tighten(dist);
    if (changed === 0) {
      it++;
      break;
    }
  }
  return { centroids, assignments: assign, iterations: it };
}

/** k-means++ seeding; leaves every point assigned to its nearest seed with that distance. */
function seedPlusPlus(
  data: Float32Array,
  n: number,
  dim: number,
  k: number,
  rng: Rng,
  centroids: Float32Array,
  assign: Int32Array,
  dist: Float64Array,
): void {
  const first = rng.int(n);
  centroids.set(data.subarray(first * dim, first * dim + dim), 0);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const d = l2Between(data, i * dim, centroids, 0, dim);
    dist[i] = d;
    assign[i] = 0;
    total += d;
  }
  // With the kernel the per-centre update loop runs in WebAssembly on copies of the points,
  // dist, assign and cc (the same float64 operations in the same order, so the same seeds).
  const sk = SimdSeeding.create(data, n, dim, k);
  if (sk !== null) {
    sk.dist.set(dist.subarray(0, n));
    sk.assign.set(assign.subarray(0, n));
  }
  const dst = sk === null ? dist : sk.dist;
  const asg = sk === null ? assign : sk.assign;
  const cc = sk === null ? new Float64Array(k) : sk.cc; // squared distance from the new centre to each earlier one
  for (let c = 1; c < k; c++) {
    let pick = -1;
    if (total > 0) {
      let target = rng.next() * total;
      for (let i = 0; i < n; i++) {
        target -= dst[i];
        if (target < 0 && dst[i] > 0) {
          pick = i;
          break;
        }
      }
      if (pick < 0) for (let i = n - 1; i >= 0; i--) if (dst[i] > 0) { pick = i; break; }
    }
    if (pick < 0) pick = rng.int(n); // all points coincide with seeds: duplicates are unavoidable
    const co = c * dim;
    centroids.set(data.subarray(pick * dim, pick * dim + dim), co);
    for (let j = 0; j < c; j++) cc[j] = l2Between(centroids, co, centroids, j * dim, dim);
    if (sk !== null) {
      total = sk.update(centroids, co, c);
      continue;
    }
    total = 0;
    for (let i = 0; i < n; i++) {
      const di = dst[i];
      // ‖c − c(x)‖ ≥ 2‖x − c(x)‖ ⇒ ‖x − c‖ ≥ ‖x − c(x)‖: cannot capture x.
      if (cc[asg[i]] < 4 * di) {
        const d = l2Bounded(data, i * dim, centroids, co, dim, di);
        if (d < di) {
          dst[i] = d;
          asg[i] = c;
        }
      }
      total += dst[i];
    }
  }
  if (sk !== null) {
    dist.set(sk.dist);
    assign.set(sk.assign);
  }
}

/**
 * Gives each empty cluster the point farthest from its centroid (taken from a cluster with more
 * than one point), so no centroid is wasted.
 */
function repairEmpty(
  data: Float32Array,
  dim: number,
  k: number,
  counts: Int32Array,
  sums: Float64Array,
  assign: Int32Array,
  dist: Float64Array,
  bounds: HamerlyBounds | null = null,
): void {
  let empty = 0;
  for (let c = 0; c < k; c++) if (counts[c] === 0) empty++;
  if (empty === 0) return;
  const n = assign.length;
  const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => dist[b] - dist[a] || a - b);
  let t = 0;
  for (let c = 0; c < k; c++) {
    if (counts[c] !== 0) continue;
    while (t < n && (counts[assign[idx[t]]] <= 1 || dist[idx[t]] === 0)) t++;
    if (t >= n) return; // fewer distinct points than clusters
    const i = idx[t++];
    const donor = assign[i];
    const xo = i * dim;
    for (let d = 0; d < dim; d++) {
      sums[donor * dim + d] -= data[xo + d];
      sums[c * dim + d] = data[xo + d];
    }
    counts[donor]--;
    counts[c] = 1;
    assign[i] = c;
    dist[i] = 0;
    bounds?.forget(i);
  }
}

let boundsEnabled = true;

/** Turns Hamerly's bounds in k-means off (every point searched every iteration) or on; returns the previous setting. Tests. */
export function setKmeansBoundsEnabled(on: boolean): boolean {
  const prev = boundsEnabled;
  boundsEnabled = on;
  return prev;
}

const UP = 1 + 1e-9;
const DOWN = 1 - 1e-9;

/**
 * Hamerly's bounds for the Lloyd assignment step (dim > 16): per point an upper bound u of the
 * distance to its centroid and a lower bound l of the distance to every other centroid. When the
 * centroids move by δ_j, u grows by δ of its centroid and l shrinks by the largest δ; a point with
 * u < l (after tightening u to the exact distance if needed) keeps its centroid — it is strictly
 * nearer than all others, so the exact search would return it too — and only the rest are
 * searched. Bounds carry a 1e-9 relative margin, far above the float64 rounding of the distances,
 * so the assignments equal a full exact search's.
 */
class HamerlyBounds {
  private readonly upper: Float64Array;
  private readonly lower: Float64Array; // 0: unknown
  private readonly prev: Float32Array;
  private readonly delta: Float64Array;
  private readonly rows: Float32Array;
  private readonly list: Int32Array;
  private readonly res = new Int32Array(STAGE_ROWS);
  private readonly lb = new Float64Array(STAGE_ROWS);

  constructor(readonly n: number, readonly k: number, readonly dim: number, dist: Float64Array) {
    this.upper = new Float64Array(n);
    this.lower = new Float64Array(n);
    this.prev = new Float32Array(k * dim);
    this.delta = new Float64Array(k);
    this.rows = new Float32Array(STAGE_ROWS * dim);
    this.list = new Int32Array(n);
    this.tighten(dist);
  }

  /** The centroids before an update step. */
  remember(centroids: Float32Array): void {
    this.prev.set(centroids.subarray(0, this.k * this.dim));
  }

  /** Point i was moved to another cluster outside the search (empty-cluster repair). */
  forget(i: number): void {
    this.upper[i] = 0;
    this.lower[i] = 0;
  }

  /** Exact distances to the assigned centroids (squared). */
  tighten(dist: Float64Array): void {
    for (let i = 0; i < this.n; i++) this.upper[i] = Math.sqrt(dist[i]) * UP;
  }

  /** The assignment step: next[i] = the exact nearest centroid of point i. */
  assign(nc: NearestCentroids, data: Float32Array, centroids: Float32Array, assign: Int32Array, next: Int32Array): void {
    const { n, k, dim, upper, lower, prev, delta, list, rows, res, lb } = this;
    let dmax = 0;
    for (let j = 0; j < k; j++) {
      const d = Math.sqrt(l2Between(centroids, j * dim, prev, j * dim, dim)) * UP;
      delta[j] = d;
      if (d > dmax) dmax = d;
    }
    let m = 0;
    for (let i = 0; i < n; i++) {
      const a = assign[i];
      let u = upper[i] + delta[a];
      const l = lower[i] - dmax;
      lower[i] = l;
      if (!(u < l)) {
        u = Math.sqrt(l2Between(data, i * dim, centroids, a * dim, dim)) * UP;
        if (!(u < l)) list[m++] = i;
      }
      upper[i] = u;
      next[i] = a;
    }
    for (let t0 = 0; t0 < m; t0 += STAGE_ROWS) {
      const cnt = Math.min(STAGE_ROWS, m - t0);
      for (let t = 0; t < cnt; t++) {
        const i = list[t0 + t];
        rows.set(data.subarray(i * dim, i * dim + dim), t * dim);
      }
      nc.nearestWithLower(rows, 0, dim, cnt, res, lb);
      for (let t = 0; t < cnt; t++) {
        const i = list[t0 + t];
        next[i] = res[t];
        lower[i] = Math.sqrt(lb[t]) * DOWN;
      }
    }
    this.searched += m;
  }

  /** Points searched so far (for tests). */
  searched = 0;
}
