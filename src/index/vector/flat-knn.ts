/**
 * Exact (brute-force) k-nearest-neighbour search over a `VectorSource` — the MemTable's
 * unindexed tail and the fallback when there is no vector index (lance-memwal.md §10 pitfall 11:
 * same output shape as the index, ordered by distance, true prefilter, range before the cut).
 *
 * Semantics:
 * - Distances as in `distance.ts` (smaller is closer); results ordered by distance ascending,
 *   ties by position ascending.
 * - Null vectors and non-finite distances (NaN / ±Infinity, e.g. vectors holding NaN) are skipped.
 * - `maxPosition` is an exclusive visibility cutoff; `allowed(pos)` is a prefilter evaluated
 *   before ranking (only called when given); `distanceRange = [lower, upper)` is applied to each
 *   distance before the top-k cut, so a range never under-fills the result.
 *
 * Speed: one specialised loop per metric over each chunk's flat `Float32Array`, four
 * accumulators, no per-row calls (toolchain.md §3.4); `cosine` reads the vector norms the source
 * caches per chunk, so it costs the same as `dot`. For `l2` the partial sum is compared with
 * the current k-th distance every 32 dimensions and the row is abandoned once it cannot enter:
 * partial sums of non-negative terms only grow, so this is exact, and the distance of a row that
 * is kept is computed in exactly the same order as `l2At`.
 */
import { type Metric, vectorNorm } from './distance.js';
import { TopK } from './top-k.js';
import type { VectorSource } from './vector-source.js';

/** Result rows ordered by distance ascending (ties by position). */
export interface KnnResult {
  positions: Uint32Array;
  distances: Float32Array;
  /** IVF-PQ searches: how many partitions were probed (all of them when a filter or a large refine needed it). */
  partitionsProbed?: number;
}

export interface FlatKnnOptions {
  k: number;
  metric: Metric;
  /** Prefilter: only rows for which this returns true can be returned. */
  allowed?: (pos: number) => boolean;
  /** Exclusive visibility cutoff: rows at positions ≥ maxPosition are ignored. */
  maxPosition?: number;
  /** [lower inclusive, upper exclusive], applied before the top-k cut. */
  distanceRange?: readonly [lower: number, upper: number];
}

export function checkQuery(query: Float32Array, dim: number, k: number): void {
  if (query.length !== dim) throw new Error(`query has ${query.length} dimensions, the vectors have ${dim}`);
  if (!Number.isInteger(k) || k < 0) throw new Error(`k must be a non-negative integer, got ${k}`);
}

export function flatKnn(source: VectorSource, query: Float32Array, opts: FlatKnnOptions): KnnResult {
  const { k, metric, allowed } = opts;
  const dim = source.dim;
  checkQuery(query, dim, k);
  const heap = new TopK(k);
  if (k === 0) return heap.toResult();
  const lower = opts.distanceRange?.[0] ?? -Infinity;
  const upper = opts.distanceRange?.[1] ?? Infinity;
  const maxPos = opts.maxPosition ?? Infinity;
  const qNorm = metric === 'cosine' ? vectorNorm(query) : 0;
  const chunks = source.chunks;
  for (let ci = 0; ci < chunks.length; ci++) {
    const c = chunks[ci];
    if (c.start >= maxPos) break;
    const n = Math.min(c.count, maxPos - c.start);
    switch (metric) {
      case 'l2':
        scanL2(query, dim, c.data, n, c.start, c.validity, c.bitOffset, allowed, lower, upper, heap);
        break;
      case 'dot':
        scanDot(query, dim, c.data, n, c.start, c.validity, c.bitOffset, allowed, lower, upper, heap);
        break;
      case 'cosine':
        scanCosine(query, qNorm, dim, c.data, source.normsOf(ci), n, c.start, c.validity, c.bitOffset, allowed, lower, upper, heap);
        break;
      default:
        throw new Error(`unknown metric ${String(metric)}`);
    }
  }
  return heap.toResult();
}

const BLOCK = 32;

function scanL2(
  q: Float32Array,
  dim: number,
  data: Float32Array,
  n: number,
  start: number,
  validity: Uint8Array | null,
  bitOffset: number,
  allowed: ((pos: number) => boolean) | undefined,
  lower: number,
  upper: number,
  heap: TopK,
): void {
  const dim4 = dim & ~3;
  const k = heap.k;
  const hd = heap.dist;
  let bound = heap.size < k ? upper : Math.min(hd[0], upper);
  for (let i = 0, off = 0; i < n; i++, off += dim) {
    if (validity !== null) {
      const b = bitOffset + i;
      if ((validity[b >> 3] & (1 << (b & 7))) === 0) continue;
    }
    if (allowed !== undefined && !allowed(start + i)) continue;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    let j = 0;
    for (;;) {
      const e = j + BLOCK < dim4 ? j + BLOCK : dim4;
      for (; j < e; j += 4) {
        const d0 = q[j] - data[off + j];
        const d1 = q[j + 1] - data[off + j + 1];
        const d2 = q[j + 2] - data[off + j + 2];
        const d3 = q[j + 3] - data[off + j + 3];
        s0 += d0 * d0;
        s1 += d1 * d1;
        s2 += d2 * d2;
        s3 += d3 * d3;
      }
      if (j >= dim4 || s0 + s1 + s2 + s3 >= bound) break;
    }
    if (j < dim4) continue; // abandoned: cannot enter
    for (; j < dim; j++) {
      const d = q[j] - data[off + j];
      s0 += d * d;
    }
    const d = s0 + s1 + s2 + s3;
    if (d - d !== 0 || d < lower || d >= upper) continue;
    heap.offer(d, start + i);
    bound = heap.size < k ? upper : Math.min(hd[0], upper);
  }
}

function scanDot(
  q: Float32Array,
  dim: number,
  data: Float32Array,
  n: number,
  start: number,
  validity: Uint8Array | null,
  bitOffset: number,
  allowed: ((pos: number) => boolean) | undefined,
  lower: number,
  upper: number,
  heap: TopK,
): void {
  const dim4 = dim & ~3;
  const k = heap.k;
  const hd = heap.dist;
  let bound = heap.size < k ? upper : Math.min(hd[0], upper);
  for (let i = 0, off = 0; i < n; i++, off += dim) {
    if (validity !== null) {
      const b = bitOffset + i;
      if ((validity[b >> 3] & (1 << (b & 7))) === 0) continue;
    }
    if (allowed !== undefined && !allowed(start + i)) continue;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    let j = 0;
    for (; j < dim4; j += 4) {
      s0 += q[j] * data[off + j];
      s1 += q[j + 1] * data[off + j + 1];
      s2 += q[j + 2] * data[off + j + 2];
      s3 += q[j + 3] * data[off + j + 3];
    }
    for (; j < dim; j++) s0 += q[j] * data[off + j];
    const d = 1 - (s0 + s1 + s2 + s3);
    if (d - d !== 0 || d < lower || d > bound || d >= upper) continue;
    heap.offer(d, start + i);
    bound = heap.size < k ? upper : Math.min(hd[0], upper);
  }
}

function scanCosine(
  q: Float32Array,
  qNorm: number,
  dim: number,
  data: Float32Array,
  norms: Float64Array,
  n: number,
  start: number,
  validity: Uint8Array | null,
  bitOffset: number,
  allowed: ((pos: number) => boolean) | undefined,
  lower: number,
  upper: number,
  heap: TopK,
): void {
  const dim4 = dim & ~3;
  const k = heap.k;
  const hd = heap.dist;
  let bound = heap.size < k ? upper : Math.min(hd[0], upper);
  for (let i = 0, off = 0; i < n; i++, off += dim) {
    if (validity !== null) {
      const b = bitOffset + i;
      if ((validity[b >> 3] & (1 << (b & 7))) === 0) continue;
    }
    if (allowed !== undefined && !allowed(start + i)) continue;
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    let j = 0;
    for (; j < dim4; j += 4) {
      s0 += q[j] * data[off + j];
      s1 += q[j + 1] * data[off + j + 1];
      s2 += q[j + 2] * data[off + j + 2];
      s3 += q[j + 3] * data[off + j + 3];
    }
    for (; j < dim; j++) s0 += q[j] * data[off + j];
    // Same expression as distanceAt('cosine'): ‖x‖ comes from the source's cached norms.
    const nn = norms[i] * qNorm;
    const d = nn === 0 ? 1 : 1 - (s0 + s1 + s2 + s3) / nn;
    if (d - d !== 0 || d < lower || d > bound || d >= upper) continue;
    heap.offer(d, start + i);
    bound = heap.size < k ? upper : Math.min(hd[0], upper);
  }
}
