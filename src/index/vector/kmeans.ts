/**
 * k-means for IVF partitioning and PQ codebooks: k-means++ seeding with a seeded PRNG, Lloyd
 * iterations, and empty-cluster repair. Squared-L2 throughout (cosine callers normalise first).
 *
 * Cost is dominated by nearest-centroid searches; all shortcuts below are exact (the result is
 * always a nearest centroid):
 * - k-means++: a new centre c can only capture x if ‖c − c(x)‖ < 2‖x − c(x)‖ (triangle
 *   inequality), so most points skip the distance computation once a few dozen centres exist.
 * - `NearestCentroids` for dim > 16 (IVF): Orchard's method with restarts. The other centroids
 *   are listed by distance from the current best g; any c_j with ‖c_g − c_j‖ > 2‖x − c_g‖ cannot
 *   be closer than c_g, so the scan of g's list stops there, and moves to a closer centroid as
 *   soon as one is found. Lloyd iterations start from the previous assignment; cold searches
 *   start from the nearest centroid in a 16-dimensional random projection. Distances are
 *   abandoned once their partial sum exceeds the best (every 32 dimensions).
 * - dim ≤ 16 (PQ sub-vectors): a tight brute-force argmin of ‖c‖² − 2 x·c, with width-8
 *   sub-vectors encoded two at a time (`nearestSmallMany`).
 */
import { dotBetween, l2Between } from './distance.js';

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

/** Dimensions of the random projection used to guess a starting centroid. */
const PROJ_DIM = 16;

function project(proj: Float32Array, L: number, x: Float32Array, xo: number, dim: number, out: Float32Array, oo: number): void {
  for (let r = 0; r < L; r++) out[oo + r] = dotBetween(proj, r * dim, x, xo, dim);
}

function nearestByScan(x: Float32Array, xo: number, c: Float32Array, k: number, dim: number): number {
  let best = 0;
  let bestD = Infinity;
  for (let j = 0; j < k; j++) {
    const d = l2Bounded(x, xo, c, j * dim, dim, bestD);
    if (d < bestD) {
      bestD = d;
      best = j;
    }
  }
  return best;
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

/** Largest k for which the k × k sorted-neighbour tables are built (≈ 10 MB at 1024). */
const ORCHARD_MAX_K = 1024;

/** Exact nearest-centroid search over k centroids of `dim` values (row-major). */
export class NearestCentroids {
  /** Squared distance from the last `nearest` query to its result. */
  lastDistance = 0;
  private readonly order: Uint16Array | null; // k × (k − 1): other centroids by distance from row
  private readonly orderDist: Float64Array | null; // the matching (non-squared) distances
  private readonly proj: Float32Array | null = null;
  private readonly projCentroids: Float32Array | null = null;
  private readonly projX: Float32Array | null = null;
  private readonly visited: Uint32Array;
  private stamp = 0;

  /** Small dims: ‖c_j‖², for the brute-force argmin of ‖c_j‖² − 2 x·c_j. */
  private readonly norms: Float64Array | null;

  constructor(readonly centroids: Float32Array, readonly k: number, readonly dim: number) {
    if (centroids.length < k * dim) throw new Error('centroid array too short');
    this.norms = null;
    this.visited = new Uint32Array(k);
    if (dim <= SMALL_DIM) {
      // PQ sub-vectors: a tight brute-force loop beats any pruning at this size.
      this.norms = squaredNorms(centroids, k, dim);
    }
    if (dim <= SMALL_DIM || k <= 16 || k > ORCHARD_MAX_K) {
      this.order = null;
      this.orderDist = null;
      return;
    }
    const m = k - 1;
    const dist = new Float64Array(k * k);
    for (let a = 0; a < k; a++) {
      for (let b = a + 1; b < k; b++) {
        const d = Math.sqrt(l2Between(centroids, a * dim, centroids, b * dim, dim));
        dist[a * k + b] = d;
        dist[b * k + a] = d;
      }
    }
    this.order = new Uint16Array(k * m);
    this.orderDist = new Float64Array(k * m);
    const idx = new Uint16Array(m);
    for (let a = 0; a < k; a++) {
      let t = 0;
      for (let b = 0; b < k; b++) if (b !== a) idx[t++] = b;
      const row = a * k;
      idx.sort((x, y) => dist[row + x] - dist[row + y] || x - y);
      this.order.set(idx, a * m);
      for (let t2 = 0; t2 < m; t2++) this.orderDist[a * m + t2] = dist[row + idx[t2]];
    }
    // A random projection to PROJ_DIM dimensions, for a cheap first guess without a hint.
    const L = Math.min(PROJ_DIM, dim);
    this.proj = new Float32Array(L * dim);
    const rng = new Rng(0x5eed);
    for (let i = 0; i < this.proj.length; i++) this.proj[i] = rng.gaussian();
    this.projCentroids = new Float32Array(k * L);
    for (let j = 0; j < k; j++) project(this.proj, L, centroids, j * dim, dim, this.projCentroids, j * L);
    this.projX = new Float32Array(L);
  }

  /** Index of a centroid nearest to `x[xo..xo+dim)`; `guess` (optional) speeds up the search. */
  nearest(x: Float32Array, xo: number, guess = -1): number {
    const { centroids, k, dim, order, orderDist, norms } = this;
    if (norms !== null) {
      const best = nearestSmall(x, xo, centroids, norms, k, dim);
      this.lastDistance = l2Between(x, xo, centroids, best * dim, dim);
      return best;
    }
    if (order === null || orderDist === null) {
      let best = 0;
      let bestD = Infinity;
      for (let j = 0; j < k; j++) {
        const d = l2Bounded(x, xo, centroids, j * dim, dim, bestD);
        if (d < bestD) {
          bestD = d;
          best = j;
        }
      }
      this.lastDistance = bestD;
      return best;
    }
    // Visit stamps: a centroid's distance is computed at most once per query.
    let stamp = ++this.stamp;
    if (stamp === 0xffffffff) {
      this.visited.fill(0);
      this.stamp = stamp = 1;
    }
    const visited = this.visited;
    let g = guess;
    let gD = Infinity;
    if (g < 0 || g >= k) {
      // Guess: nearest centroid in the projected space.
      const L = this.projX!.length;
      project(this.proj!, L, x, xo, dim, this.projX!, 0);
      g = nearestByScan(this.projX!, 0, this.projCentroids!, k, L);
      visited[g] = stamp;
      gD = l2Between(x, xo, centroids, g * dim, dim);
    } else {
      visited[g] = stamp;
      gD = l2Between(x, xo, centroids, g * dim, dim);
    }
    if (!(gD < Infinity)) {
      // Non-finite input: no meaningful nearest centroid.
      this.lastDistance = gD;
      return g < 0 ? 0 : g;
    }
    // Orchard with restarts: scan g's neighbour list while ‖c_g − c_j‖ ≤ 2‖x − c_g‖ (beyond
    // that, c_j cannot be closer than c_g); on finding a closer centroid, move there and rescan.
    // Every visited centroid was no closer than the g of its time, so none beats the final g.
    const m = k - 1;
    for (;;) {
      const limit = 2 * Math.sqrt(gD);
      const base = g * m;
      let moved = false;
      for (let t = 0; t < m; t++) {
        if (orderDist[base + t] > limit) break;
        const j = order[base + t];
        if (visited[j] === stamp) continue;
        visited[j] = stamp;
        const d = l2Bounded(x, xo, centroids, j * dim, dim, gD);
        if (d < gD) {
          gD = d;
          g = j;
          moved = true;
          break;
        }
      }
      if (!moved) break;
    }
    const best = g;
    const bestD = gD;
    this.lastDistance = bestD;
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
    repairEmpty(data, dim, k, counts, sums, assign, dist);
    for (let c = 0; c < k; c++) {
      const cnt = counts[c];
      if (cnt === 0) continue; // only when there are fewer distinct points than clusters
      const so = c * dim;
      const inv = 1 / cnt;
      for (let d = 0; d < dim; d++) centroids[so + d] = sums[so + d] * inv;
    }
    // Assignment step.
    let changed = 0;
    if (dim <= SMALL_DIM) {
      const norms = squaredNorms(centroids, k, dim);
      const next = scratchAssign.length >= n ? scratchAssign : (scratchAssign = new Int32Array(n));
      nearestSmallMany(data, 0, dim, n, centroids, norms, k, dim, next, 0, 1);
      for (let i = 0; i < n; i++) {
        const c = next[i];
        if (c !== assign[i]) {
          assign[i] = c;
          changed++;
        }
        dist[i] = l2Between(data, i * dim, centroids, c * dim, dim);
      }
    } else {
      const nc = new NearestCentroids(centroids, k, dim);
      for (let i = 0; i < n; i++) {
        const c = nc.nearest(data, i * dim, assign[i]);
        if (c !== assign[i]) {
          assign[i] = c;
          changed++;
        }
        dist[i] = nc.lastDistance;
      }
    }
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
  const cc = new Float64Array(k); // squared distance from the new centre to each earlier one
  for (let c = 1; c < k; c++) {
    let pick = -1;
    if (total > 0) {
      let target = rng.next() * total;
      for (let i = 0; i < n; i++) {
        target -= dist[i];
        if (target < 0 && dist[i] > 0) {
          pick = i;
          break;
        }
      }
      if (pick < 0) for (let i = n - 1; i >= 0; i--) if (dist[i] > 0) { pick = i; break; }
    }
    if (pick < 0) pick = rng.int(n); // all points coincide with seeds: duplicates are unavoidable
    const co = c * dim;
    centroids.set(data.subarray(pick * dim, pick * dim + dim), co);
    for (let j = 0; j < c; j++) cc[j] = l2Between(centroids, co, centroids, j * dim, dim);
    total = 0;
    for (let i = 0; i < n; i++) {
      const di = dist[i];
      // ‖c − c(x)‖ ≥ 2‖x − c(x)‖ ⇒ ‖x − c‖ ≥ ‖x − c(x)‖: cannot capture x.
      if (cc[assign[i]] < 4 * di) {
        const d = l2Bounded(data, i * dim, centroids, co, dim, di);
        if (d < di) {
          dist[i] = d;
          assign[i] = c;
        }
      }
      total += dist[i];
    }
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
  }
}
