/**
 * (Layer 1: the expression evaluator's distance functions and the vector index both use these;
 * src/index/vector/distance.ts re-exports them.)
 *
 * Vector distances, as Lance defines them (smaller is closer for every metric):
 * - `l2`:     squared Euclidean distance, Σ (a_i − b_i)²;
 * - `cosine`: 1 − a·b / (‖a‖ ‖b‖) (1 when either vector is all zeros);
 * - `dot`:    1 − a·b.
 *
 * Kernels take the flat Float32Array of many vectors and an offset, so the hot loops never
 * build per-row objects; four accumulators let V8 overlap the multiply-adds (it does not
 * auto-vectorise), measured ~1.7× faster than a single accumulator (toolchain.md §3.4).
 */
export type Metric = 'l2' | 'cosine' | 'dot';

export const METRICS: readonly Metric[] = ['l2', 'cosine', 'dot'];

export function l2At(q: Float32Array, data: Float32Array, off: number, dim: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    const d0 = q[i] - data[off + i];
    const d1 = q[i + 1] - data[off + i + 1];
    const d2 = q[i + 2] - data[off + i + 2];
    const d3 = q[i + 3] - data[off + i + 3];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < dim; i++) {
    const d = q[i] - data[off + i];
    s0 += d * d;
  }
  return s0 + s1 + s2 + s3;
}

export function dotAt(q: Float32Array, data: Float32Array, off: number, dim: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    s0 += q[i] * data[off + i];
    s1 += q[i + 1] * data[off + i + 1];
    s2 += q[i + 2] * data[off + i + 2];
    s3 += q[i + 3] * data[off + i + 3];
  }
  for (; i < dim; i++) s0 += q[i] * data[off + i];
  return s0 + s1 + s2 + s3;
}

/** Σ x_i² of the vector at `off` (same accumulation order as `dotAt(x, x)`). */
export function normSqAt(data: Float32Array, off: number, dim: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    const a0 = data[off + i], a1 = data[off + i + 1], a2 = data[off + i + 2], a3 = data[off + i + 3];
    s0 += a0 * a0;
    s1 += a1 * a1;
    s2 += a2 * a2;
    s3 += a3 * a3;
  }
  for (; i < dim; i++) s0 += data[off + i] * data[off + i];
  return s0 + s1 + s2 + s3;
}

export function normAt(data: Float32Array, off: number, dim: number): number {
  return Math.sqrt(normSqAt(data, off, dim));
}

/** Distance of `q` (with precomputed norm `qNorm` for cosine) to the vector at `off`. */
export function distanceAt(metric: Metric, q: Float32Array, qNorm: number, data: Float32Array, off: number, dim: number): number {
  switch (metric) {
    case 'l2':
      return l2At(q, data, off, dim);
    case 'dot':
      return 1 - dotAt(q, data, off, dim);
    case 'cosine': {
      const n = normAt(data, off, dim) * qNorm;
      return n === 0 ? 1 : 1 - dotAt(q, data, off, dim) / n;
    }
  }
}

export function vectorNorm(q: Float32Array): number {
  return normAt(q, 0, q.length);
}

/** Squared L2 distance between `a[ao..ao+dim)` and `b[bo..bo+dim)` (four accumulators). */
export function l2Between(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    const d0 = a[ao + i] - b[bo + i];
    const d1 = a[ao + i + 1] - b[bo + i + 1];
    const d2 = a[ao + i + 2] - b[bo + i + 2];
    const d3 = a[ao + i + 3] - b[bo + i + 3];
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < dim; i++) {
    const d = a[ao + i] - b[bo + i];
    s0 += d * d;
  }
  return s0 + s1 + s2 + s3;
}

/** Dot product of `a[ao..ao+dim)` and `b[bo..bo+dim)` (four accumulators). */
export function dotBetween(a: Float32Array, ao: number, b: Float32Array, bo: number, dim: number): number {
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  let i = 0;
  for (; i + 3 < dim; i += 4) {
    s0 += a[ao + i] * b[bo + i];
    s1 += a[ao + i + 1] * b[bo + i + 1];
    s2 += a[ao + i + 2] * b[bo + i + 2];
    s3 += a[ao + i + 3] * b[bo + i + 3];
  }
  for (; i < dim; i++) s0 += a[ao + i] * b[bo + i];
  return s0 + s1 + s2 + s3;
}
