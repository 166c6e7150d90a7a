/**
 * Seeded synthetic vector data for the vector-index tests and bench/index-vector.bench.ts.
 *
 * `clusteredVectors`: `clusters` Gaussian clusters in `dim` dimensions. Centres are N(0, 1) per
 * dimension; each cluster has a low-rank shape (a `latentDim`-dimensional random subspace with
 * per-cluster spread) plus isotropic noise, like real embeddings whose neighbourhoods have a low
 * intrinsic dimension. With `normSpread` > 0 every cluster is scaled by its own factor in
 * [1 − normSpread, 1 + normSpread], so vector norms vary (this makes `dot` differ from `cosine`
 * and `l2`). Rows are shuffled so cluster members are spread over all positions.
 *
 * `queriesNear`: data rows picked at random plus a little Gaussian noise.
 */
import { nearestSmall, Rng } from '../../../src/index/vector/kmeans.js';
import { l2Between } from '../../../src/index/vector/distance.js';
import { type Metric, vectorNorm } from '../../../src/index/vector/distance.js';
import type { KnnResult } from '../../../src/index/vector/flat-knn.js';

export interface ClusterParams {
  n: number;
  dim: number;
  clusters: number;
  seed: number;
  /** Intrinsic dimension of each cluster (default 12). */
  latentDim?: number;
  /** Std along each latent direction, ×(0.5..1.5) per cluster and direction (default 1.5). */
  spread?: number;
  /** Isotropic noise std per dimension (default 0.05). */
  noise?: number;
  /** Per-cluster norm scaling in [1 − normSpread, 1 + normSpread] (default 0). */
  normSpread?: number;
}

export function clusteredVectors(p: ClusterParams): Float32Array {
  const { n, dim, clusters, seed } = p;
  const latentDim = p.latentDim ?? 12;
  const spread = p.spread ?? 1.5;
  const noise = p.noise ?? 0.05;
  const normSpread = p.normSpread ?? 0;
  const rng = new Rng(seed);
  const centres = new Float32Array(clusters * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = rng.gaussian();
  // Per cluster: latent basis (latentDim × dim, random Gaussian / √dim ⇒ ≈ unit rows), scales.
  const basis = new Float32Array(clusters * latentDim * dim);
  const invSqrt = 1 / Math.sqrt(dim);
  for (let i = 0; i < basis.length; i++) basis[i] = rng.gaussian() * invSqrt;
  const latentScale = new Float32Array(clusters * latentDim);
  for (let i = 0; i < latentScale.length; i++) latentScale[i] = spread * (0.5 + rng.next());
  const scale = new Float32Array(clusters);
  for (let c = 0; c < clusters; c++) scale[c] = 1 + normSpread * (2 * rng.next() - 1);
  const data = new Float32Array(n * dim);
  const z = new Float64Array(latentDim);
  for (let i = 0; i < n; i++) {
    const c = rng.int(clusters);
    const o = i * dim;
    for (let t = 0; t < latentDim; t++) z[t] = rng.gaussian() * latentScale[c * latentDim + t];
    for (let d = 0; d < dim; d++) {
      let v = centres[c * dim + d] + noise * rng.gaussian();
      for (let t = 0; t < latentDim; t++) v += z[t] * basis[(c * latentDim + t) * dim + d];
      data[o + d] = v * scale[c];
    }
  }
  return data;
}

/** `count` queries: random rows of `data` plus N(0, noise²) per dimension. */
export function queriesNear(data: Float32Array, dim: number, count: number, seed: number, noise = 0.05): Float32Array[] {
  const rng = new Rng(seed);
  const n = data.length / dim;
  const out: Float32Array[] = [];
  for (let q = 0; q < count; q++) {
    const r = rng.int(n);
    const v = new Float32Array(dim);
    for (let d = 0; d < dim; d++) v[d] = data[r * dim + d] + noise * rng.gaussian();
    out.push(v);
  }
  return out;
}

/** Naive reference KNN: every distance, full sort by (distance, position). */
export function naiveKnn(
  rows: (Float32Array | null)[],
  query: Float32Array,
  opts: { k: number; metric: Metric; firstPosition?: number; allowed?: (pos: number) => boolean; maxPosition?: number; distanceRange?: [number, number] },
): { positions: number[]; distances: number[] } {
  const first = opts.firstPosition ?? 0;
  const qNorm = vectorNorm(query);
  const all: { pos: number; d: number }[] = [];
  rows.forEach((v, i) => {
    const pos = first + i;
    if (v === null) return;
    if (opts.maxPosition !== undefined && pos >= opts.maxPosition) return;
    if (opts.allowed && !opts.allowed(pos)) return;
    // Independent formulation (plain loops, double precision).
    let dot = 0, vv = 0, l2 = 0;
    for (let d = 0; d < v.length; d++) {
      dot += query[d] * v[d];
      vv += v[d] * v[d];
      l2 += (query[d] - v[d]) ** 2;
    }
    let dist: number;
    if (opts.metric === 'l2') dist = l2;
    else if (opts.metric === 'dot') dist = 1 - dot;
    else dist = vv === 0 || qNorm === 0 ? 1 : 1 - dot / (Math.sqrt(vv) * qNorm);
    if (!Number.isFinite(dist)) return;
    if (opts.distanceRange && (dist < opts.distanceRange[0] || dist >= opts.distanceRange[1])) return;
    all.push({ pos, d: dist });
  });
  all.sort((a, b) => a.d - b.d || a.pos - b.pos);
  const top = all.slice(0, opts.k);
  return { positions: top.map((r) => r.pos), distances: top.map((r) => r.d) };
}

/** |A ∩ B| / |B| over position lists (B = the exact answer). */
export function recallOf(approx: KnnResult, exact: KnnResult): number {
  if (exact.positions.length === 0) return approx.positions.length === 0 ? 1 : 0;
  const want = new Set(exact.positions);
  let hit = 0;
  for (const p of approx.positions) if (want.has(p)) hit++;
  return hit / exact.positions.length;
}


/** A VectorSource over `data` cut into chunks of `chunkRows` rows (positions from `first`). */
export function chunksOf(data: Float32Array, dim: number, chunkRows: number, first = 0): { start: number; count: number; data: Float32Array; validity: null; bitOffset: number }[] {
  const n = data.length / dim;
  const out = [];
  for (let s = 0; s < n; s += chunkRows) {
    const count = Math.min(chunkRows, n - s);
    out.push({ start: first + s, count, data: data.subarray(s * dim, (s + count) * dim), validity: null, bitOffset: 0 });
  }
  return out;
}

/**
 * Centroids and rows built for ties (the nearest-centroid kernels' hardest case): small integer
 * coordinates, every third centroid a copy of the one before, and the first 100 rows midpoints
 * of two centroids — exact in even rows, one ulp off in one coordinate in odd ones.
 */
export function tiedData(rng: Rng, k: number, dim: number, n: number): { c: Float32Array; x: Float32Array } {
  const c = Float32Array.from({ length: k * dim }, () => rng.int(5) - 2);
  for (let j = 1; j < k; j += 3) c.copyWithin(j * dim, (j - 1) * dim, j * dim);
  const x = Float32Array.from({ length: n * dim }, () => rng.int(5) - 2);
  for (let i = 0; i < Math.min(100, n); i++) {
    const a = rng.int(k);
    const b = rng.int(k);
    for (let d = 0; d < dim; d++) {
      let v = (c[a * dim + d]! + c[b * dim + d]!) / 2;
      if (i % 2 === 1 && d === 0) v = Math.fround(v + (v === 0 ? 1e-7 : v * 2 ** -23));
      x[i * dim + d] = v;
    }
  }
  return { c, x };
}

/** The exact reference: smallest reference distance, lowest index on ties. */
export function refNearest(x: Float32Array, xo: number, c: Float32Array, norms: Float64Array, k: number, dim: number): number {
  if (dim <= 16) return nearestSmall(x, xo, c, norms, k, dim);
  let best = 0;
  let bestD = Infinity;
  for (let j = 0; j < k; j++) {
    const d = l2Between(x, xo, c, j * dim, dim);
    if (d < bestD) {
      bestD = d;
      best = j;
    }
  }
  return best;
}

/**
 * `n` rows near the `k` centroids `c` (dim values each): each row a random centroid plus
 * Gaussian noise, wide (σ 3) in every third row and narrow (σ 0.3) otherwise — close calls
 * between neighbouring centroids, and far rows.
 */
export function rowsNearCentroids(rng: Rng, c: Float32Array, k: number, dim: number, n: number): Float32Array {
  const x = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) {
    const b = rng.int(k);
    const s = i % 3 === 0 ? 3 : 0.3;
    for (let d = 0; d < dim; d++) x[i * dim + d] = c[b * dim + d]! + s * rng.gaussian();
  }
  return x;
}
