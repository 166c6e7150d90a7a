/**
 * In-memory IVF-PQ vector index over row positions (lance-memwal.md §5.3, with the §10 pitfall 11
 * fixes: true prefilter, results ordered by distance, distance range applied before the top-k
 * cut, and no under-fill when a filter is selective).
 *
 * Layout: per partition, an append-only `Uint32Array` of row positions and a row-major
 * `Uint8Array` of PQ codes (`subVectors` bytes a row), both grown by doubling. A row is assigned
 * to its nearest centroid (on the unit-normalised vector for `cosine`) and the residual
 * vector − centroid is PQ-encoded. Null vectors and vectors holding NaN/±Infinity are not
 * indexed (no finite distance exists for them). Each partition also records the largest
 * reconstruction error ‖x − x̂‖ of its rows, which bounds the ADC error (used for range pruning).
 *
 * Search (asymmetric distance computation, ADC):
 * 1. Rank partitions: `l2` by ‖q − c‖², `cosine` by ‖q̂ − c‖², `dot` by −q·c (nearest first).
 * 2. The ADC distance of a row with code (c_1..c_M) in partition p is
 *    `base_p + term_row + Σ_s LUT[s][c_s]`, with one LUT per query, shared by all partitions:
 *    - `l2`:  ‖q − c_p − r̂‖² = ‖q − c_p‖² + (‖r̂‖² + 2 c_p·r̂) − 2 q·r̂, so base_p = ‖q − c_p‖²,
 *             term_row = ‖r̂‖² + 2 c_p·r̂ (query-independent, computed from the code when the row
 *             is added) and LUT = −2 q_s·cb_sj — no per-partition table has to be built;
 *    - `dot`: 1 − q·(c_p + r̂): base_p = 1 − q·c_p, term 0, LUT = −q_s·cb_sj;
 *    - `cosine`: the same with the unit-normalised query (rows were indexed normalised).
 * 3. Rows at positions ≥ `maxPosition` or rejected by `allowed` are skipped before ranking (true
 *    prefilter). The best k × refineFactor rows by ADC are kept. If fewer than that many rows
 *    (the candidate pool; k without refine) passed the filter after `nprobes` partitions,
 *    further partitions are probed, nearest first, until the pool is full or every partition
 *    was probed — so a selective filter still returns k rows (whenever k rows pass at all) and
 *    keeps its recall (1% filter at 100k: recall@10 0.99 instead of 0.93 when stopping at k).
 * 4. Refine (refineFactor > 0): exact distances from `source` (bit-identical to `flatKnn`), then
 *    `distanceRange` (lower inclusive, upper exclusive) and non-finite filtering, then the top-k
 *    cut. With a range, rows whose ADC distance is provably outside it (using the partition's
 *    reconstruction-error bound) are dropped before ranking, so the candidate pool is spent on
 *    rows that can still qualify; if the refined pool still leaves fewer than k rows, the next
 *    pool (rows ranked after it by ADC) from the same partitions is refined, then further
 *    partitions are probed. With refineFactor 0 the ADC distances are returned and the range is
 *    applied to them.
 *
 * `toArrow()` / `fromArrow(model, table)` round-trip the codes (`partition Uint32, position
 * Uint32, code FixedSizeBinary(subVectors)`, rows grouped by partition in insertion order; the
 * per-partition error bounds travel as schema metadata), so results after a round trip are
 * identical.
 */
import { Field, FixedSizeBinary, makeData, RecordBatch, Schema, Struct, Table, Type, Uint32 } from 'apache-arrow';
import { distanceAt, dotBetween, l2Between, normSqAt, vectorNorm } from './distance.js';
import { checkQuery, type KnnResult } from './flat-knn.js';
import { type EncodedRows, IvfPqEncoder } from './ivf-pq-encoder.js';
import { PQ_CODEWORDS, normaliseInPlace, validateIvfPqModel, type IvfPqModel } from './ivf-pq-model.js';
import { adcKernel } from './adc-kernel.js';
import { TopK } from './top-k.js';
import type { VectorChunk, VectorSource } from './vector-source.js';
import { runSteps } from '../../util/steps.js';

export const DEFAULT_NPROBES = 20;

/**
 * Work done by IVF-PQ searches in this process, for tests and benchmarks (a counter, not a
 * timing): `codes` ADC codes read (rows of the probed partitions, before the filter), `refined`
 * candidates re-ranked by exact distance.
 */
export const ivfPqSearchStats = { searches: 0, codes: 0, refined: 0 };
/**
 * Default re-ranking pool = k × 40. Measured at 100k × 128 (bench/index-vector.bench.ts): recall
 * is limited by PQ ranking, not by probing, and exact re-ranking is cheap next to the code scan.
 * k × 10 left recall@10 at 0.95 (dot, clustered data with varied norms), 0.92 (l2) and 0.62
 * (cosine) on isotropic clusters; k × 40 reaches ≥ 0.98 on all six dataset × metric cases for
 * ≈ 0.1–0.3 ms more per query (p50 ≤ 1 ms).
 */
export const DEFAULT_REFINE_FACTOR = 40;

export interface IvfPqSearchOptions {
  k: number;
  /** Partitions to probe (default 20); more are probed while a filter leaves the candidate pool short. */
  nprobes?: number;
  /** Candidates re-ranked exactly = k × refineFactor (default 40); 0 returns ADC distances. */
  refineFactor?: number;
  /** Prefilter: only rows for which this returns true can be returned. */
  allowed?: (pos: number) => boolean;
  /** Exclusive visibility cutoff: rows at positions ≥ maxPosition are ignored. */
  maxPosition?: number;
  /** [lower inclusive, upper exclusive], applied before the top-k cut. */
  distanceRange?: readonly [lower: number, upper: number];
  /** The indexed vectors, for exact re-ranking (needed when refineFactor > 0). */
  source?: VectorSource;
}

const INITIAL_CAPACITY = 16;
const META_MAX_ERROR = 'quiver.ivf_pq.max_reconstruction_error';

export class IvfPqIndex {
  readonly model: IvfPqModel;
  private readonly sizes: Uint32Array;
  private readonly positions: Uint32Array[];
  private readonly codes: Uint8Array[];
  /** Largest ‖x − x̂‖ per partition (in the normalised space for cosine). */
  private readonly maxError: Float64Array;
  private rows = 0;
  private skipped = 0;
  /** l2 only: per row ‖r̂‖² + 2 c_p·r̂ (derived from the code, so it survives a round trip). */
  private readonly terms: Float32Array[];
  /** l2 only: max |term| per partition, for the rounding tolerance of range pruning. */
  private readonly maxAbsTerm: Float64Array;
  /** ‖codeword‖², subspace s codeword j at s·256 + j (the model's encoder's). */
  private readonly cbNormsFlat: Float64Array;

  constructor(model: IvfPqModel) {
    validateIvfPqModel(model);
    this.model = model;
    const P = model.partitions;
    this.sizes = new Uint32Array(P);
    this.positions = Array.from({ length: P }, () => new Uint32Array(0));
    this.codes = Array.from({ length: P }, () => new Uint8Array(0));
    this.maxError = new Float64Array(P);
    this.terms = Array.from({ length: P }, () => new Float32Array(0));
    this.maxAbsTerm = new Float64Array(P);
    this.cbNormsFlat = IvfPqEncoder.of(model).cbNormsFlat;
  }

  /** Number of indexed rows. */
  get rowCount(): number {
    return this.rows;
  }

  /** Rows given to `add` that were not indexed because a value was NaN or ±Infinity. */
  get skippedRows(): number {
    return this.skipped;
  }

  /** Rows per partition (a copy). */
  partitionSizes(): Uint32Array {
    return this.sizes.slice();
  }

  /** Indexes every non-null, finite vector of the chunk under its row position. */
  add(chunk: VectorChunk): void {
    this.applyEncoded(IvfPqEncoder.of(this.model).encode(chunk));
  }

  /**
   * Appends rows encoded by an `IvfPqEncoder` of this index's model (here or on another thread:
   * the result is the same as `add` of their chunk).
   */
  applyEncoded(rows: EncodedRows): void {
    const M = this.model.subVectors;
    const { positions, partitions, codes, terms, errors } = rows;
    for (let r = 0; r < rows.count; r++) {
      const p = partitions[r];
      if (errors[r] > this.maxError[p]) this.maxError[p] = errors[r];
      this.append(p, positions[r], codes, r * M, terms[r]);
    }
    this.skipped += rows.skipped;
  }

  /** l2 term of a row of partition p with codes at `codes[off ..)`: Σ_s ‖r̂_s‖² + 2 c_p·r̂_s. */
  private termOf(p: number, codes: Uint8Array, off: number): number {
    const { subVectors: M, subDim, dim, centroids, codebooks } = this.model;
    let term = 0;
    for (let s = 0; s < M; s++) {
      const code = codes[off + s];
      term += this.cbNormsFlat[s * PQ_CODEWORDS + code] + 2 * dotBetween(centroids, p * dim + s * subDim, codebooks, (s * PQ_CODEWORDS + code) * subDim, subDim);
    }
    return term;
  }

  /** Appends a row; `term` is its l2 term (computed from the codes when omitted). */
  private append(p: number, pos: number, codes: Uint8Array, codeOffset: number, term?: number): void {
    const M = this.model.subVectors;
    const n = this.sizes[p];
    let positions = this.positions[p];
    const l2 = this.model.metric === 'l2';
    if (n === positions.length) {
      const cap = Math.max(INITIAL_CAPACITY, positions.length * 2);
      const np = new Uint32Array(cap);
      np.set(positions);
      const nc = new Uint8Array(cap * M);
      nc.set(this.codes[p]);
      this.positions[p] = positions = np;
      this.codes[p] = nc;
      if (l2) {
        const nt = new Float32Array(cap);
        nt.set(this.terms[p]);
        this.terms[p] = nt;
      }
    }
    positions[n] = pos;
    const c = this.codes[p];
    const o = n * M;
    for (let s = 0; s < M; s++) c[o + s] = codes[codeOffset + s];
    if (l2) {
      const t = term ?? this.termOf(p, codes, codeOffset);
      this.terms[p][n] = t;
      const a = Math.abs(t);
      if (a > this.maxAbsTerm[p]) this.maxAbsTerm[p] = a;
    }
    this.sizes[p] = n + 1;
    this.rows++;
  }

  /**
   * A new index over a subset of the rows under new positions, without re-encoding:
   * `newPosition[old]` is the row's position in the new source, or −1 to drop it. Codes, terms
   * and error bounds are copied (the bounds stay valid: a subset's largest error is at most the
   * whole's). Rows at or past `newPosition.length` are dropped. The map must keep the order of
   * positions (a flush's dedup does), so each partition stays in position order.
   */
  remapped(newPosition: Int32Array): IvfPqIndex {
    return runSteps(this.remappedSteps(newPosition));
  }

  /**
   * `remapped` in steps that pause (yield) after about `sliceRows` rows: a flush of 200 000 rows
   * spent ~29 ms of one event-loop turn here (256 partitions' arrays made fresh).
   */
  *remappedSteps(newPosition: Int32Array, sliceRows = Infinity): Generator<void, IvfPqIndex, void> {
    const out = new IvfPqIndex(this.model);
    let work = 0;
    const M = this.model.subVectors;
    const l2 = this.model.metric === 'l2';
    const limit = newPosition.length;
    for (let p = 0; p < this.sizes.length; p++) {
      const n = this.sizes[p];
      const positions = this.positions[p];
      let kept = 0;
      for (let i = 0; i < n; i++) if (positions[i] < limit && newPosition[positions[i]] >= 0) kept++;
      if (kept === 0) continue;
      const np = new Uint32Array(kept);
      const nc = new Uint8Array(kept * M);
      const nt = l2 ? new Float32Array(kept) : new Float32Array(0);
      const codes = this.codes[p];
      const terms = this.terms[p];
      let o = 0;
      let maxAbs = 0;
      // Codes are copied a run of kept rows at a time (one copy per run, not one per row).
      let runFrom = -1;
      let runAt = 0;
      for (let i = 0; i < n; i++) {
        const old = positions[i];
        const to = old < limit ? newPosition[old] : -1;
        if (to < 0) {
          if (runFrom >= 0) nc.set(codes.subarray(runFrom * M, i * M), runAt * M);
          runFrom = -1;
          continue;
        }
        if (runFrom < 0) {
          runFrom = i;
          runAt = o;
        }
        np[o] = to;
        if (l2) {
          nt[o] = terms[i];
          const a = Math.abs(terms[i]);
          if (a > maxAbs) maxAbs = a;
        }
        o++;
      }
      if (runFrom >= 0) nc.set(codes.subarray(runFrom * M, n * M), runAt * M);
      out.positions[p] = np;
      out.codes[p] = nc;
      out.terms[p] = nt;
      out.sizes[p] = kept;
      out.maxError[p] = this.maxError[p];
      out.maxAbsTerm[p] = maxAbs;
      out.rows += kept;
      if ((work += n) >= sliceRows) {
        work = 0;
        yield;
      }
    }
    return out;
  }

  // ---- search --------------------------------------------------------------------------------

  /** The k nearest rows of this index (see the file comment for the algorithm). */
  search(query: Float32Array, opts: IvfPqSearchOptions): KnnResult {
    const r = IvfPqIndex.searchMany([{ index: this, source: opts.source, allowed: opts.allowed, maxPosition: opts.maxPosition }], query, opts);
    const out: KnnResult = { positions: r.positions, distances: r.distances };
    if (r.partitionsProbed !== undefined) out.partitionsProbed = r.partitionsProbed;
    return out;
  }

  /**
   * The k nearest rows across several indexes built with the *same model* (the MemTables and
   * generations of a table): the partition ranking and the ADC lookup table are computed once,
   * every part's probed partitions feed one candidate pool of k × refineFactor rows, and only that
   * pool is re-ranked exactly — so a query over eleven sources re-ranks 400 vectors, not 4 400.
   * ADC distances are comparable across the parts because they share centroids and codebooks.
   * Results are ordered by (distance, part, position).
   */
  static searchMany(parts: readonly IvfPqPart[], query: Float32Array, opts: IvfPqManyOptions): MultiKnnResult {
    const empty: MultiKnnResult = { parts: new Uint32Array(0), positions: new Uint32Array(0), distances: new Float32Array(0) };
    if (parts.length === 0) return empty;
    const model = parts[0].index.model;
    const { metric, dim, partitions: P, subVectors: M, subDim, centroids, codebooks } = model;
    const k = opts.k;
    checkQuery(query, dim, k);
    if (parts.length >= PART_LIMIT) throw new Error(`IvfPqIndex.searchMany: at most ${PART_LIMIT - 1} parts`);
    const nprobes = Math.min(P, Math.max(1, Math.floor(opts.nprobes ?? DEFAULT_NPROBES)));
    const rf = opts.refineFactor ?? DEFAULT_REFINE_FACTOR;
    if (!(rf >= 0)) throw new Error(`refineFactor must be ≥ 0, got ${rf}`);
    const refine = rf > 0;
    let rows = 0;
    for (const part of parts) {
      if (part.index.model !== model) throw new Error('IvfPqIndex.searchMany: every part must use the same model');
      if (refine) {
        if (part.source === undefined) throw new Error('IvfPqIndex.search: refineFactor > 0 needs the vector source');
        if (part.source.dim !== dim) throw new Error(`vector source has dimension ${part.source.dim}, the index ${dim}`);
      }
      rows += part.index.rows;
    }
    if (k === 0 || rows === 0) return empty;
    const lower = opts.distanceRange?.[0] ?? -Infinity;
    const upper = opts.distanceRange?.[1] ?? Infinity;
    const ranged = lower > -Infinity || upper < Infinity;

    // Query in the indexed space.
    let qq = query;
    if (metric === 'cosine') {
      qq = Float32Array.from(query);
      normaliseInPlace(qq, 0, dim);
    }
    const qNorm = vectorNorm(query);
    const qqNorm = metric === 'cosine' ? Math.sqrt(normSqAt(qq, 0, dim)) : qNorm;
    if (qNorm - qNorm !== 0) return empty; // NaN/±Infinity in the query: no finite distance

    // Partition ranking and per-partition base distance.
    const score = new Float64Array(P);
    const base = new Float64Array(P);
    for (let p = 0; p < P; p++) {
      if (metric === 'dot') {
        const ip = dotBetween(qq, 0, centroids, p * dim, dim);
        score[p] = -ip;
        base[p] = 1 - ip;
      } else {
        const d = l2Between(qq, 0, centroids, p * dim, dim);
        score[p] = d;
        base[p] = metric === 'l2' ? d : 1 - dotBetween(qq, 0, centroids, p * dim, dim);
      }
    }
    let order = nearestPartitions(score, nprobes);

    // LUT: l2: −2 q_s·cb_sj; dot/cosine: −q_s·cb_sj (shared by every partition and part).
    const lut = new Float32Array(M * PQ_CODEWORDS);
    queryCodebookDots(qq, codebooks, M, subDim, metric === 'l2' ? -2 : -1, lut);
    const lutMagnitude = ranged ? maxAbsPerSubspace(lut, M) : 0; // for the rounding tolerance

    const candK = refine ? Math.max(k, Math.ceil(k * rf)) : k;
    const pool: CandidatePool = { heap: new TopK(candK), floorD: -Infinity, floorId: -1 };
    const scan: ScanContext = {
      ranged,
      lower,
      upper,
      slackKind: metric === 'l2' ? 0 : 1,
      slackScale: metric === 'dot' ? qNorm : metric === 'cosine' ? qqNorm : 1,
      refine,
    };
    const probe = (p: number): void => {
      for (let j = 0; j < parts.length; j++) {
        const part = parts[j];
        const ix = part.index;
        if (ix.sizes[p] === 0) continue;
        ivfPqSearchStats.codes += ix.sizes[p];
        const tol = 1e-5 * (Math.abs(base[p]) + ix.maxAbsTerm[p] + lutMagnitude);
        ix.scanPartition(p, lut, base[p], tol, scan, pool, part, j * PART_LIMIT_IDS);
      }
    };

    // 1. Probe nprobes partitions, then more (nearest first) until a full candidate pool
    //    (k × refineFactor, at least k) passed the filter. Without a filter nprobes partitions
    //    always fill it; with a selective one this keeps recall up, and is cheap because rows
    //    the filter rejects are skipped before any distance work. Until the pool is full every
    //    row that passes the filter (and the range) enters it, so "fewer than candK rows passed"
    //    is "the pool is not full" — which lets the scan test the filter only on rows whose
    //    distance can still enter the pool (see scanPartition).
    let probed = 0;
    for (; probed < nprobes; probed++) probe(order[probed]);
    while (pool.heap.size < candK && probed < P) {
      if (probed >= order.length) order = nearestPartitions(score, P);
      probe(order[probed++]);
    }
    const heap = pool.heap;
    ivfPqSearchStats.searches++;
    if (!refine) return { ...resultOf(heap), partitionsProbed: probed };

    // 2. Refine the pool. If a range (or rows missing from the source) leaves fewer than k,
    //    take the next pool from the same partitions (candidates ranked after the last pool's
    //    worst), and once those are drained, probe further partitions.
    const final = new TopK(k);
    let segmentStart = 0;
    for (;;) {
      ivfPqSearchStats.refined += heap.size;
      refinePool(heap, parts, metric, dim, query, qNorm, lower, upper, final);
      if (final.size >= k) break;
      if (heap.size === heap.k) {
        pool.floorD = heap.dist[0];
        pool.floorId = heap.ids[0];
        heap.clear();
        for (let t = segmentStart; t < probed; t++) probe(order[t]);
      } else {
        if (probed >= P) break;
        if (probed >= order.length) order = nearestPartitions(score, P);
        segmentStart = probed;
        pool.floorD = -Infinity;
        pool.floorId = -1;
        heap.clear();
        probe(order[probed++]);
      }
    }
    return { ...resultOf(final), partitionsProbed: probed };
  }

  /**
   * Offers partition p's rows of one part to the pool. Returns the rows that passed the filter
   * (and range) — without a range, only those within the pool's bound: searchMany goes by the
   * pool's size instead.
   */
  private scanPartition(p: number, lut: Float32Array, base: number, tol: number, ctx: ScanContext, pool: CandidatePool, part: IvfPqPart, idBase: number): number {
    const M = this.model.subVectors;
    const n = this.sizes[p];
    const positions = this.positions[p];
    const codes = this.codes[p];
    const l2 = this.model.metric === 'l2';
    const terms = this.terms[p];
    const { ranged, lower, upper } = ctx;
    const { heap, floorD, floorId } = pool;
    const maxPos = part.maxPosition ?? Infinity;
    const mask = part.allowedMask;
    const allowed = mask === undefined ? part.allowed : undefined;
    const hk = heap.k;
    const hd = heap.dist;
    // Error bound of an ADC distance relative to the exact one (0 when ADC distances are final).
    const e = ctx.refine ? this.maxError[p] * ctx.slackScale : 0;
    const l2Slack = ctx.slackKind === 0;
    const exactRange = !ctx.refine; // ADC distances are the returned distances
    let passed = 0;
    let bound = heap.size < hk ? Infinity : hd[0];
    // Fast path: the generated kernel computes the LUT sums of the rows that pass the cutoff and
    // mask; this loop ranks them.
    const kernel = allowed === undefined && codes.byteOffset % 4 === 0 ? adcKernel(M) : undefined;
    if (kernel !== undefined) {
      if (scratchSums.length < n) {
        scratchSums = new Float64Array(Math.max(n, 2 * scratchSums.length));
        scratchRows = new Int32Array(scratchSums.length);
      }
      const sums = scratchSums;
      const rows = scratchRows;
      // Rows the kernel drops are worse than the pool's current bound (or, with a range, only
      // the range decides: the bound is not applied before it).
      // Without a range, when most rows pass, the mask is read only for rows within the pool's
      // bound (`maskLate`): once the pool is full that is a small share of them, and at a million
      // rows the masks (a byte per row of every source) no longer fit in cache, so each read would
      // be a miss. A selective filter's mask is read first: it spares the distance of most rows.
      const late = !ranged && mask !== undefined && part.allowedCount !== undefined && 2 * part.allowedCount >= mask.length;
      const m = kernel(n, positions, new Uint32Array(codes.buffer, codes.byteOffset, (n * M) >> 2), lut, mask, maxPos, base, l2 ? terms : undefined, ranged ? Infinity : bound, sums, rows, scratchPassed, late);
      if (!ranged) passed = scratchPassed[0];
      for (let j = 0; j < m; j++) {
        const d = sums[j];
        if (ranged) {
          if (outsideRange(d, lower, upper, exactRange, tol, e, l2Slack)) continue;
          passed++;
        }
        if (d > bound) continue;
        const id = idBase + positions[rows[j]];
        if (d < floorD || (d === floorD && id <= floorId)) continue;
        heap.offer(d, id);
        bound = heap.size < hk ? Infinity : hd[0];
      }
      return passed;
    }
    const M4 = M & ~3;
    for (let i = 0, co = 0; i < n; i++, co += M) {
      const pos = positions[i];
      if (pos >= maxPos) continue;
      if (mask !== undefined) {
        if (mask[pos] !== 1) continue;
      } else if (allowed !== undefined && !allowed(pos)) continue;
      let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      let s = 0;
      for (let lo = 0; s < M4; s += 4, lo += 4 * PQ_CODEWORDS) {
        a0 += lut[lo + codes[co + s]];
        a1 += lut[lo + PQ_CODEWORDS + codes[co + s + 1]];
        a2 += lut[lo + 2 * PQ_CODEWORDS + codes[co + s + 2]];
        a3 += lut[lo + 3 * PQ_CODEWORDS + codes[co + s + 3]];
      }
      for (; s < M; s++) a0 += lut[s * PQ_CODEWORDS + codes[co + s]];
      let d = base + (a0 + a1 + a2 + a3);
      if (l2) d += terms[i];
      if (ranged && outsideRange(d, lower, upper, exactRange, tol, e, l2Slack)) continue;
      passed++;
      if (d > bound) continue;
      const id = idBase + pos;
      if (d < floorD || (d === floorD && id <= floorId)) continue;
      heap.offer(d, id);
      bound = heap.size < hk ? Infinity : hd[0];
    }
    return passed;
  }

  // ---- Arrow round trip ----------------------------------------------------------------------

  /** The index rows: `partition Uint32, position Uint32, code FixedSizeBinary(subVectors)`. */
  toArrow(): Table {
    const { partitions: P, subVectors: M } = this.model;
    const n = this.rows;
    const partition = new Uint32Array(n);
    const position = new Uint32Array(n);
    const code = new Uint8Array(n * M);
    let o = 0;
    for (let p = 0; p < P; p++) {
      const size = this.sizes[p];
      partition.fill(p, o, o + size);
      position.set(this.positions[p].subarray(0, size), o);
      code.set(this.codes[p].subarray(0, size * M), o * M);
      o += size;
    }
    const codeType = new FixedSizeBinary(M);
    const fields = [
      new Field('partition', new Uint32(), false),
      new Field('position', new Uint32(), false),
      new Field('code', codeType, false),
    ];
    const metadata = new Map<string, string>([
      ['quiver.index.type', 'IVF_PQ'],
      ['quiver.ivf_pq.partitions', String(P)],
      ['quiver.ivf_pq.sub_vectors', String(M)],
      [META_MAX_ERROR, JSON.stringify(Array.from(this.maxError))],
    ]);
    const schema = new Schema(fields, metadata);
    const children = [
      makeData({ type: new Uint32(), length: n, nullCount: 0, data: partition }),
      makeData({ type: new Uint32(), length: n, nullCount: 0, data: position }),
      makeData({ type: codeType, length: n, nullCount: 0, data: code }),
    ];
    const batch = new RecordBatch(schema, makeData({ type: new Struct(fields), length: n, nullCount: 0, children }));
    return new Table(schema, [batch]);
  }

  /** Rebuilds an index from `toArrow()` output (and the model it was built with). */
  static fromArrow(model: IvfPqModel, table: Table): IvfPqIndex {
    return runSteps(IvfPqIndex.fromArrowSteps(model, table, Infinity));
  }

  /**
   * `fromArrow` in steps: pauses (yields) after about `sliceRows` rows (each row's l2 term is
   * recomputed from its codes), so a generation load can give the event loop turns.
   */
  static *fromArrowSteps(model: IvfPqModel, table: Table, sliceRows = 16_384): Generator<void, IvfPqIndex, void> {
    const index = new IvfPqIndex(model);
    const { partitions: P, subVectors: M } = model;
    const names = table.schema.fields.map((f) => f.name);
    const pIdx = names.indexOf('partition');
    const posIdx = names.indexOf('position');
    const cIdx = names.indexOf('code');
    if (pIdx < 0 || posIdx < 0 || cIdx < 0) throw new Error('IVF-PQ index table needs columns partition, position and code');
    for (const batch of table.batches) {
      const pc = batch.data.children[pIdx];
      const posc = batch.data.children[posIdx];
      const cc = batch.data.children[cIdx];
      if (pc.typeId !== Type.Int || posc.typeId !== Type.Int || !(pc.values instanceof Uint32Array) || !(posc.values instanceof Uint32Array)) {
        throw new Error('IVF-PQ index table: partition and position must be Uint32');
      }
      if (cc.typeId !== Type.FixedSizeBinary || (cc.type as FixedSizeBinary).byteWidth !== M) {
        throw new Error(`IVF-PQ index table: code must be FixedSizeBinary(${M})`);
      }
      if (pc.nullCount > 0 || posc.nullCount > 0 || cc.nullCount > 0) throw new Error('IVF-PQ index table: nulls are not allowed');
      const pv = pc.values as Uint32Array;
      const posv = posc.values as Uint32Array;
      const cv = cc.values as Uint8Array;
      for (let i = 0, since = 0; i < batch.numRows; i++) {
        const p = pv[i];
        if (p >= P) throw new Error(`IVF-PQ index table: partition ${p} out of range (model has ${P})`);
        index.append(p, posv[i], cv, i * M);
        if (++since >= sliceRows) {
          since = 0;
          yield;
        }
      }
    }
    const raw = table.schema.metadata.get(META_MAX_ERROR);
    let errors: unknown = null;
    try {
      errors = raw === undefined ? null : JSON.parse(raw);
    } catch {
      errors = null;
    }
    const ok = Array.isArray(errors) && errors.length === P && errors.every((v) => typeof v === 'number' && v >= 0);
    // Without the bounds, range pruning on ADC distances is disabled (an infinite bound is safe).
    for (let p = 0; p < P; p++) index.maxError[p] = ok ? (errors as number[])[p] : Infinity;
    return index;
  }
}

/** One index searched by `searchMany`, with its rows' filter. */
export interface IvfPqPart {
  index: IvfPqIndex;
  /** The indexed vectors, for exact re-ranking (needed when refineFactor > 0). */
  source?: VectorSource;
  /** Prefilter as a byte per position (1 = may be returned); faster than `allowed`. */
  allowedMask?: Uint8Array;
  /**
   * Positions with allowedMask 1. When most rows pass (liveness without a selective filter) the
   * scan reads the mask only for rows whose distance can enter the pool; with a selective filter
   * it reads the mask first and skips the distance of the rows that fail.
   */
  allowedCount?: number;
  /** Prefilter as a function (used when there is no `allowedMask`). */
  allowed?: (pos: number) => boolean;
  /** Exclusive visibility cutoff. */
  maxPosition?: number;
}

export type IvfPqManyOptions = Omit<IvfPqSearchOptions, 'allowed' | 'maxPosition' | 'source'>;

export interface MultiKnnResult {
  /** Index into the parts of each result row. */
  parts: Uint32Array;
  positions: Uint32Array;
  distances: Float32Array;
  partitionsProbed?: number;
}

/**
 * Whether a candidate's distance d is provably outside [lower, upper): exactly when d is final
 * (no refine), else with the slack of the ADC error bound e (l2: the error grows with the
 * distance) and the rounding tolerance.
 */
function outsideRange(d: number, lower: number, upper: number, exact: boolean, tol: number, e: number, l2Slack: boolean): boolean {
  if (exact) return d < lower || d >= upper;
  let slack = tol;
  if (e > 0) slack += l2Slack ? e * (2 * Math.sqrt(d > 0 ? d : 0) + e) : e;
  return d + slack < lower || d - slack >= upper;
}

/** Scratch of the ADC kernel (one search runs at a time on a thread). */
let scratchSums = new Float64Array(1024);
let scratchRows = new Int32Array(1024);
const scratchPassed = new Int32Array(1);

/** Candidate ids are part × 2^32 + position (exact in a double for up to 2^20 parts). */
const PART_LIMIT_IDS = 0x1_0000_0000;
const PART_LIMIT = 1 << 20;

/** Pooled candidates of a search, shared by every part. */
interface CandidatePool {
  heap: TopK;
  /** Only rows ranked after (floorD, floorId) by (ADC distance, id) are collected. */
  floorD: number;
  floorId: number;
}

interface ScanContext {
  ranged: boolean;
  lower: number;
  upper: number;
  /** 0: l2 (error grows with the distance), 1: dot/cosine (|Δ| ≤ ‖q‖·e). */
  slackKind: number;
  slackScale: number;
  refine: boolean;
}

/** Exact distances for the pooled candidates, filtered by the range, offered to `out`. */
function refinePool(
  cands: TopK,
  parts: readonly IvfPqPart[],
  metric: IvfPqModel['metric'],
  dim: number,
  query: Float32Array,
  qNorm: number,
  lower: number,
  upper: number,
  out: TopK,
): void {
  const ids = cands.ids;
  for (let t = 0; t < cands.size; t++) {
    const id = ids[t];
    const j = Math.floor(id / PART_LIMIT_IDS);
    const pos = id - j * PART_LIMIT_IDS;
    const source = parts[j].source!;
    const ci = source.chunkIndexOf(pos);
    if (ci < 0) continue;
    const c = source.chunks[ci];
    const i = pos - c.start;
    if (c.validity !== null) {
      const b = c.bitOffset + i;
      if ((c.validity[b >> 3] & (1 << (b & 7))) === 0) continue;
    }
    const d = distanceAt(metric, query, qNorm, c.data, i * dim, dim);
    if (d - d !== 0 || d < lower || d >= upper) continue;
    out.offer(d, id);
  }
}

/** The kept candidates, closest first, split into part and position. */
function resultOf(heap: TopK): Omit<MultiKnnResult, 'partitionsProbed'> {
  const { ids, distances } = heap.sorted();
  const parts = new Uint32Array(ids.length);
  const positions = new Uint32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const j = Math.floor(ids[i] / PART_LIMIT_IDS);
    parts[i] = j;
    positions[i] = ids[i] - j * PART_LIMIT_IDS;
  }
  return { parts, positions, distances: Float32Array.from(distances) };
}

function maxAbsPerSubspace(lut: Float32Array, M: number): number {
  let total = 0;
  for (let s = 0; s < M; s++) {
    let m = 0;
    for (let j = 0; j < PQ_CODEWORDS; j++) {
      const v = Math.abs(lut[s * PQ_CODEWORDS + j]);
      if (v > m) m = v;
    }
    total += m;
  }
  return total;
}

/**
 * The `count` partitions with the smallest scores, ordered by (score, id): a native sort of the
 * scores finds the cut-off, then only the partitions at or below it are sorted with a comparator.
 */
function nearestPartitions(score: Float64Array, count: number): Int32Array {
  const P = score.length;
  if (count >= P) {
    const all = Int32Array.from({ length: P }, (_, p) => p);
    return all.sort((a, b) => score[a] - score[b] || a - b);
  }
  const sorted = Float64Array.from(score).sort();
  const cut = sorted[count - 1];
  const picked: number[] = [];
  for (let p = 0; p < P; p++) if (score[p] <= cut) picked.push(p);
  picked.sort((a, b) => score[a] - score[b] || a - b);
  return Int32Array.from(picked.slice(0, count));
}

/** out[s·256 + j] = scale · (q_s · cb_sj) for every subspace s and codeword j. */
function queryCodebookDots(q: Float32Array, cb: Float32Array, M: number, subDim: number, scale: number, out: Float32Array): void {
  if (subDim === 8) {
    for (let s = 0; s < M; s++) {
      const qo = s * 8;
      const q0 = scale * q[qo], q1 = scale * q[qo + 1], q2 = scale * q[qo + 2], q3 = scale * q[qo + 3];
      const q4 = scale * q[qo + 4], q5 = scale * q[qo + 5], q6 = scale * q[qo + 6], q7 = scale * q[qo + 7];
      const ob = s * PQ_CODEWORDS;
      for (let j = 0, o = ob * 8; j < PQ_CODEWORDS; j++, o += 8) {
        out[ob + j] = q0 * cb[o] + q1 * cb[o + 1] + q2 * cb[o + 2] + q3 * cb[o + 3] + (q4 * cb[o + 4] + q5 * cb[o + 5] + q6 * cb[o + 6] + q7 * cb[o + 7]);
      }
    }
    return;
  }
  for (let s = 0; s < M; s++) {
    const qo = s * subDim;
    for (let j = 0; j < PQ_CODEWORDS; j++) {
      out[s * PQ_CODEWORDS + j] = scale * dotBetween(q, qo, cb, (s * PQ_CODEWORDS + j) * subDim, subDim);
    }
  }
}
