/**
 * Data of the search benchmark (bench/search.bench.ts): rows `id Int64` (primary key),
 * `year Int32` (uniform 2000–2024), `body Utf8` (8–40 words from a Zipf vocabulary) and
 * `vector FixedSizeList<Float32>[dim]` drawn from a clustered model; query vectors come from the
 * same model with fresh draws (they are not data rows), query words from the corpus frequency.
 *
 * - Vocabulary: VOCAB distinct pseudo-words (syllable strings, as the FTS bench's generator in
 *   test/index/fts/synthetic.ts) with Zipf(s = 1) rank frequencies: the top word is ~9 % of all
 *   tokens; a document has 8–40 words (uniform).
 * - Vectors: `clusters` Gaussian clusters of uneven size (log-normal weights, σ = 1: the largest
 *   clusters hold ~10× the rows of the median one). A cluster is a centre (N(0, 1) per dimension)
 *   plus a Gaussian over a random `latentDim`-dimensional subspace (per-direction std
 *   `spread`·(0.5..1.5)) plus isotropic Gaussian noise — the low intrinsic dimension of real
 *   embedding neighbourhoods. A query picks a cluster by weight and draws fresh latent
 *   coordinates and noise.
 *
 * Self-contained (its own seeded PRNG) so the data does not move when test fixtures change.
 * Columns are generated as typed arrays; batches are built zero-copy from slices of them.
 */
import { Field, FixedSizeList, Float32, Int32, Int64, makeData, RecordBatch, Schema, Struct, Utf8 } from 'apache-arrow';

/** Seeded PRNG (mulberry32) with Gaussian draws (Box–Muller). */
export class Rng {
  private a: number;
  private spare = NaN;
  constructor(seed: number) {
    this.a = (Math.trunc(seed) ^ 0x5bd1e995) >>> 0;
  }
  next(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    let t = this.a;
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

/** Index into a cumulative distribution (binary search). */
function pick(cdf: Float64Array, u: number): number {
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function cdfOf(weights: ArrayLike<number>): Float64Array {
  const cdf = new Float64Array(weights.length);
  let sum = 0;
  for (let i = 0; i < weights.length; i++) cdf[i] = sum += weights[i];
  for (let i = 0; i < cdf.length; i++) cdf[i] /= sum;
  return cdf;
}

// ---- words -----------------------------------------------------------------------------------

const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'do', 'gu', 'be', 'fi', 'ho', 'ja', 'xo', 'wy', 'ce', 'qu'];

export class ZipfVocabulary {
  readonly words: string[] = [];
  private readonly cdf: Float64Array;
  constructor(size: number, s: number, seed: number) {
    const rng = new Rng(seed);
    const seen = new Set<string>();
    while (this.words.length < size) {
      const n = 2 + rng.int(3);
      let w = '';
      for (let i = 0; i < n; i++) w += SYL[rng.int(SYL.length)];
      if (rng.next() < 0.3) w += 'x';
      if (!seen.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    this.cdf = cdfOf(Array.from({ length: size }, (_, i) => 1 / Math.pow(i + 1, s)));
  }
  /** A word drawn by corpus frequency. */
  sample(rng: Rng): string {
    return this.words[pick(this.cdf, rng.next())];
  }
  document(rng: Rng, minWords: number, maxWords: number): string {
    const n = minWords + rng.int(maxWords - minWords + 1);
    let s = this.sample(rng);
    for (let i = 1; i < n; i++) s += ' ' + this.sample(rng);
    return s;
  }
}

// ---- vectors ---------------------------------------------------------------------------------

export interface ClusterModelParams {
  dim: number;
  clusters: number;
  seed: number;
  latentDim?: number;
  /** Std of the cluster centres per dimension (default 1). */
  centreStd?: number;
  spread?: number;
  noise?: number;
  /** σ of the log-normal cluster weights (0: equal sizes). */
  weightSigma?: number;
}

export class ClusterModel {
  readonly dim: number;
  readonly clusters: number;
  private readonly latentDim: number;
  private readonly noise: number;
  private readonly centres: Float32Array;
  private readonly basis: Float32Array;
  private readonly latentScale: Float32Array;
  private readonly cdf: Float64Array;
  readonly weights: Float64Array;
  private readonly z: Float64Array;

  constructor(p: ClusterModelParams) {
    this.dim = p.dim;
    this.clusters = p.clusters;
    this.latentDim = p.latentDim ?? 16;
    this.noise = p.noise ?? 0.1;
    const spread = p.spread ?? 1.0;
    const rng = new Rng(p.seed);
    this.centres = new Float32Array(p.clusters * p.dim);
    const centreStd = p.centreStd ?? 1;
    for (let i = 0; i < this.centres.length; i++) this.centres[i] = centreStd * rng.gaussian();
    const inv = 1 / Math.sqrt(p.dim);
    this.basis = new Float32Array(p.clusters * this.latentDim * p.dim);
    for (let i = 0; i < this.basis.length; i++) this.basis[i] = rng.gaussian() * inv;
    this.latentScale = new Float32Array(p.clusters * this.latentDim);
    for (let i = 0; i < this.latentScale.length; i++) this.latentScale[i] = spread * (0.5 + rng.next());
    const sigma = p.weightSigma ?? 1.0;
    this.weights = Float64Array.from({ length: p.clusters }, () => Math.exp(sigma * rng.gaussian()));
    this.cdf = cdfOf(this.weights);
    this.z = new Float64Array(this.latentDim);
  }

  /** Draws one vector into `out[offset .. offset + dim)`; returns its cluster. */
  sample(rng: Rng, out: Float32Array, offset: number): number {
    const { dim, latentDim, z } = this;
    const c = pick(this.cdf, rng.next());
    for (let t = 0; t < latentDim; t++) z[t] = rng.gaussian() * this.latentScale[c * latentDim + t];
    for (let d = 0; d < dim; d++) {
      let v = this.centres[c * dim + d] + this.noise * rng.gaussian();
      for (let t = 0; t < latentDim; t++) v += z[t] * this.basis[(c * latentDim + t) * dim + d];
      out[offset + d] = v;
    }
    return c;
  }
}

// ---- rows ------------------------------------------------------------------------------------

export const YEAR_MIN = 2000;
export const YEAR_MAX = 2024;

export function searchSchema(dim: number): Schema {
  return new Schema([
    new Field('id', new Int64(), false),
    new Field('year', new Int32(), true),
    new Field('body', new Utf8(), true),
    new Field('vector', new FixedSizeList(dim, new Field('item', new Float32(), true)), true),
  ]);
}

/** Column-wise rows: `ids[i]`, `years[i]`, `bodies[i]`, `vectors[i·dim ..]`. */
export interface Rows {
  dim: number;
  ids: BigInt64Array;
  years: Int32Array;
  bodies: string[];
  vectors: Float32Array;
}

export interface RowGenerator {
  vocab: ZipfVocabulary;
  model: ClusterModel;
  minWords: number;
  maxWords: number;
}

/** Rows for the given keys (fresh draws from `rng`). */
export function makeRows(gen: RowGenerator, rng: Rng, keys: ArrayLike<number>): Rows {
  const n = keys.length;
  const dim = gen.model.dim;
  const rows: Rows = { dim, ids: new BigInt64Array(n), years: new Int32Array(n), bodies: new Array(n), vectors: new Float32Array(n * dim) };
  for (let i = 0; i < n; i++) {
    rows.ids[i] = BigInt(keys[i]);
    rows.years[i] = YEAR_MIN + rng.int(YEAR_MAX - YEAR_MIN + 1);
    rows.bodies[i] = gen.vocab.document(rng, gen.minWords, gen.maxWords);
    gen.model.sample(rng, rows.vectors, i * dim);
  }
  return rows;
}

const encoder = new TextEncoder();

/** Rows `[start, end)` as one RecordBatch of `schema` (ids, years, vectors zero-copy). */
export function rowsBatch(schema: Schema, rows: Rows, start: number, end: number): RecordBatch {
  const n = end - start;
  const dim = rows.dim;
  // Utf8 by hand: ASCII words, so one byte a character.
  let bytes = 0;
  for (let i = start; i < end; i++) bytes += rows.bodies[i].length;
  const offsets = new Int32Array(n + 1);
  const values = new Uint8Array(bytes);
  let o = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = o;
    o += encoder.encodeInto(rows.bodies[start + i], values.subarray(o)).written;
  }
  offsets[n] = o;
  const [idF, yearF, bodyF, vecF] = schema.fields;
  const children = [
    makeData({ type: idF.type as Int64, length: n, nullCount: 0, data: rows.ids.subarray(start, end) }),
    makeData({ type: yearF.type as Int32, length: n, nullCount: 0, data: rows.years.subarray(start, end) }),
    makeData({ type: bodyF.type as Utf8, length: n, nullCount: 0, valueOffsets: offsets, data: values }),
    makeData({
      type: vecF.type as FixedSizeList,
      length: n,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: n * dim, nullCount: 0, data: rows.vectors.subarray(start * dim, end * dim) }),
    }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }));
}

/** `count` distinct keys out of `0 .. n-1` (partial Fisher–Yates), in random order. */
export function distinctKeys(rng: Rng, n: number, count: number): Int32Array {
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = 0; i < count; i++) {
    const j = i + rng.int(n - i);
    const t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  return perm.slice(0, count);
}

// ---- exact search (the oracle) ---------------------------------------------------------------

/**
 * The live rows by key (`0 .. n-1`), kept in memory beside the table: the ground truth of
 * vector recall is an exact top-k (squared L2, plain loops) over these.
 */
export class LiveRows {
  readonly vectors: Float32Array;
  readonly years: Int32Array;
  constructor(
    readonly n: number,
    readonly dim: number,
  ) {
    this.vectors = new Float32Array(n * dim);
    this.years = new Int32Array(n);
  }
  /** Upserts `rows` (their ids are keys < n). */
  apply(rows: Rows): void {
    for (let i = 0; i < rows.ids.length; i++) {
      const key = Number(rows.ids[i]);
      this.years[key] = rows.years[i];
      this.vectors.set(rows.vectors.subarray(i * this.dim, (i + 1) * this.dim), key * this.dim);
    }
  }
  /**
   * Exact top-k keys by squared L2 distance, without and with `year >= minYear`, in one pass.
   * Ties (equal float distances) are broken by key.
   */
  exactTopK(query: Float32Array, k: number, minYear: number): { all: number[]; filtered: number[] } {
    const all = new TopK(k);
    const filtered = new TopK(k);
    const { vectors, dim, years } = this;
    for (let key = 0, o = 0; key < this.n; key++, o += dim) {
      let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (let d = 0; d < dim; d += 4) {
        const a = query[d] - vectors[o + d];
        const b = query[d + 1] - vectors[o + d + 1];
        const c = query[d + 2] - vectors[o + d + 2];
        const e = query[d + 3] - vectors[o + d + 3];
        s0 += a * a;
        s1 += b * b;
        s2 += c * c;
        s3 += e * e;
      }
      const dist = s0 + s1 + s2 + s3;
      all.offer(key, dist);
      if (years[key] >= minYear) filtered.offer(key, dist);
    }
    return { all: all.keys(), filtered: filtered.keys() };
  }
}

class TopK {
  private readonly ids: number[] = [];
  private readonly dists: number[] = [];
  constructor(private readonly k: number) {}
  offer(id: number, d: number): void {
    const n = this.ids.length;
    if (n === this.k && d >= this.dists[n - 1]) return;
    let i = n === this.k ? n - 1 : n;
    while (i > 0 && this.dists[i - 1] > d) {
      if (i < this.k) {
        this.ids[i] = this.ids[i - 1];
        this.dists[i] = this.dists[i - 1];
      }
      i--;
    }
    this.ids[i] = id;
    this.dists[i] = d;
  }
  keys(): number[] {
    return [...this.ids];
  }
}

/**
 * The generator of bench:search's rows (and of the dev harnesses that rebuild its table): a
 * Zipf vocabulary of 50 000 words, 8–40 words a body, 256 uneven clusters in `dim` dimensions.
 */
export function searchRowGenerator(dim: number): RowGenerator {
  return {
    vocab: new ZipfVocabulary(50_000, 1.0, 11),
    model: new ClusterModel({ dim, clusters: 256, seed: 12, centreStd: 0.3, spread: 1.0, noise: 0.3, latentDim: 16, weightSigma: 1.0 }),
    minWords: 8,
    maxWords: 40,
  };
}

/** Puts `rows[start, end)` into `table` in `putRows`-row puts, up to `inflight` outstanding. */
export async function putRowRange(table: { schema: Schema; put(b: RecordBatch): Promise<void> }, rows: Rows, start: number, end: number, putRows = 5000, inflight = 4): Promise<void> {
  const pending = new Set<Promise<void>>();
  for (let s = start; s < end; s += putRows) {
    const p: Promise<void> = table.put(rowsBatch(table.schema, rows, s, Math.min(end, s + putRows))).then(() => void pending.delete(p));
    pending.add(p);
    if (pending.size >= inflight) await Promise.race(pending);
  }
  await Promise.all(pending);
}

/**
 * bench:search's table shape, for the dev harnesses: `n` rows in ten flushed generations (the
 * IVF-PQ, FTS and scalar indexes created after the first tenth), then 5 % of the keys upserted
 * into the MemTable, and the background index work settled. `onPart` is told each flushed part.
 */
export async function buildSearchTable(table: SearchTable, gen: RowGenerator, n: number, onPart?: (part: number) => void, generations: 1 | 10 = 10): Promise<void> {
  const base = makeRows(gen, new Rng(1000 + n), Int32Array.from({ length: n }, (_, i) => i));
  const tenth = Math.ceil(n / 10);
  for (let part = 0; part < 10; part++) {
    await putRowRange(table, base, part * tenth, Math.min(n, (part + 1) * tenth));
    if (part === 0) for (const [c, type] of [['vector', 'ivf_pq'], ['body', 'fts'], ['year', 'scalar']] as const) await table.createIndex(c, { type });
    // Ten generations: a flush after each tenth; one: only after the last.
    if (generations === 10 || part === 9) await table.flush();
    onPart?.(part);
  }
  const ups = makeRows(gen, new Rng(3000 + n), distinctKeys(new Rng(2000 + n), n, Math.round(n * 0.05)));
  await putRowRange(table, ups, 0, ups.ids.length);
  await table.settleIndexes();
}

/** What `buildSearchTable` needs of a table. */
export interface SearchTable {
  schema: Schema;
  put(b: RecordBatch): Promise<void>;
  createIndex(column: string, opts: { type: 'ivf_pq' | 'fts' | 'scalar' }): Promise<unknown>;
  flush(): Promise<void>;
  settleIndexes(): Promise<unknown>;
}
