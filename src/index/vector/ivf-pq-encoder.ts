/**
 * IVF-PQ encoding of vectors, separate from the index that stores the codes (issue 7): the
 * write path can then encode on another thread (encode-worker.ts) and apply the codes on the
 * main thread (`IvfPqIndex.applyEncoded`), with results identical to `IvfPqIndex.add`, which is
 * this encoder followed by that apply.
 *
 * Per row: the nearest centroid (on the unit-normalised vector for `cosine`), the residual
 * vector − centroid PQ-encoded one sub-space at a time (the chosen codewords r̂ reconstruct it),
 * the reconstruction error ‖r − r̂‖ and, for `l2`, the query-independent ADC term
 * Σ_s ‖r̂_s‖² + 2 c_p·r̂_s. Null vectors are left out; vectors holding NaN/±Infinity are left
 * out and counted (`skipped`). Rows are encoded in blocks of 64 (all rows of a block against all
 * centroids at once, staged once for the SIMD kernel).
 */
import { normSqAt } from './distance.js';
import { PQ_CODEWORDS, normaliseInPlace, type IvfPqModel } from './ivf-pq-model.js';
import { NearestCentroids, squaredNorms } from './kmeans.js';
import { simdAvailable, stageRows } from './simd-kernels.js';
import type { VectorChunk } from './vector-source.js';

/** Rows PQ-encoded together. */
const BLOCK = 64;

/**
 * The encoded rows of one chunk, in chunk order, as plain typed arrays (they cross a thread
 * boundary by transfer): row r is `positions[r]`, in partition `partitions[r]`, with codes
 * `codes[r·M .. r·M + M)`, l2 term `terms[r]` (0 for other metrics) and reconstruction error
 * `errors[r]` (‖x − x̂‖, in the normalised space for cosine).
 */
export interface EncodedRows {
  count: number;
  /** Rows left out because a value was NaN or ±Infinity. */
  skipped: number;
  positions: Float64Array;
  partitions: Int32Array;
  codes: Uint8Array;
  terms: Float64Array;
  errors: Float64Array;
}

/** An answer with room for `count` rows of `M` codes and none in it yet. */
export function emptyEncodedRows(count: number, M: number): EncodedRows {
  return {
    count: 0,
    skipped: 0,
    positions: new Float64Array(count),
    partitions: new Int32Array(count),
    codes: new Uint8Array(count * M),
    terms: new Float64Array(count),
    errors: new Float64Array(count),
  };
}

export class IvfPqEncoder {
  readonly model: IvfPqModel;
  /** ‖codeword‖², subspace s codeword j at s·256 + j. */
  readonly cbNormsFlat: Float64Array;
  private readonly ivf: NearestCentroids;
  private readonly pq: NearestCentroids[];
  private readonly simd: boolean;
  private readonly resid: Float32Array;
  private readonly recon: Float32Array;
  private readonly parts = new Int32Array(BLOCK);
  private readonly codes: Uint8Array;
  private readonly blockErrors = new Float64Array(BLOCK);
  private readonly blockTerms = new Float64Array(BLOCK);
  private readonly blockPositions = new Float64Array(BLOCK);

  private constructor(model: IvfPqModel) {
    this.model = model;
    const { dim, subVectors: M, subDim, partitions } = model;
    const cbSize = PQ_CODEWORDS * subDim;
    this.simd = simdAvailable();
    this.ivf = new NearestCentroids(model.centroids, partitions, dim);
    this.pq = Array.from({ length: M }, (_, s) => new NearestCentroids(model.codebooks.subarray(s * cbSize, (s + 1) * cbSize), PQ_CODEWORDS, subDim));
    this.cbNormsFlat = new Float64Array(M * PQ_CODEWORDS);
    for (let s = 0; s < M; s++) this.cbNormsFlat.set(squaredNorms(model.codebooks.subarray(s * cbSize, (s + 1) * cbSize), PQ_CODEWORDS, subDim), s * PQ_CODEWORDS);
    this.resid = new Float32Array(BLOCK * dim);
    this.recon = new Float32Array(BLOCK * dim);
    this.codes = new Uint8Array(BLOCK * M);
  }

  /**
   * The encoder of a model, shared by every index over it on this thread (models are immutable
   * and `encode` runs to completion), so a new index — a MemTable's, a flush's `remapped` copy —
   * costs no set-up; rebuilt when the SIMD kernel was switched on or off.
   */
  static of(model: IvfPqModel): IvfPqEncoder {
    let enc = cache.get(model);
    if (enc === undefined || enc.simd !== simdAvailable()) cache.set(model, (enc = new IvfPqEncoder(model)));
    return enc;
  }

  /** Encodes every non-null, finite vector of the chunk (positions `chunk.start + i`). */
  encode(chunk: VectorChunk): EncodedRows {
    const { dim, metric, subVectors: M } = this.model;
    const { start, count, data, validity, bitOffset } = chunk;
    if (data.length < count * dim) throw new Error(`vector chunk holds ${data.length} values, needs ${count} × ${dim}`);
    if (!Number.isInteger(start) || start < 0 || start + count > 0x1_0000_0000) {
      throw new Error(`row positions must fit in 32 bits (chunk ${start}+${count})`);
    }
    const out = emptyEncodedRows(count, M);
    const resid = this.resid;
    let b = 0;
    for (let i = 0; i < count; i++) {
      if (validity !== null) {
        const bit = bitOffset + i;
        if ((validity[bit >> 3] & (1 << (bit & 7))) === 0) continue;
      }
      const off = i * dim;
      const nsq = normSqAt(data, off, dim);
      if (nsq - nsq !== 0) {
        out.skipped++;
        continue;
      }
      const ro = b * dim;
      resid.set(data.subarray(off, off + dim), ro);
      if (metric === 'cosine') normaliseInPlace(resid, ro, dim);
      this.blockPositions[b] = start + i;
      if (++b === BLOCK) {
        this.encodeBlock(b, out);
        b = 0;
      }
    }
    if (b > 0) this.encodeBlock(b, out);
    return out;
  }

  /**
   * Assigns the block's rows to partitions, turns them into residuals, PQ-encodes those one
   * sub-space at a time (staged once for the SIMD kernel) and appends the rows to `out`.
   */
  private encodeBlock(count: number, out: EncodedRows): void {
    const { dim, subVectors: M, subDim, centroids } = this.model;
    const resid = this.resid;
    const codes = this.codes;
    const parts = this.parts;
    this.ivf.nearestMany(resid, 0, dim, count, parts, 0, 1);
    for (let b = 0; b < count; b++) {
      const ro = b * dim;
      const co = parts[b] * dim;
      for (let d = 0; d < dim; d++) resid[ro + d] -= centroids[co + d];
    }
    const staged = this.pq[0].accelerated ? stageRows(resid, 0, dim, count, dim) : null;
    const recon = this.recon;
    for (let s = 0; s < M; s++) {
      const pq = this.pq[s];
      pq.nearestMany(resid, s * subDim, dim, count, codes, s, M, staged, s * subDim);
      // The chosen codewords, while this sub-space's codebook is in cache (random accesses
      // to the whole codebook array would miss it when it exceeds L2, e.g. 768 dims).
      pq.copyCentroids(codes, s, M, count, recon, s * subDim, dim);
    }
    const err = this.blockErrors;
    const terms = this.blockTerms;
    errorsAndTerms(resid, recon, codes, parts, count, dim, M, subDim, centroids, this.cbNormsFlat, err, terms);
    const l2 = this.model.metric === 'l2';
    const o = out.count;
    out.positions.set(this.blockPositions.subarray(0, count), o);
    out.partitions.set(parts.subarray(0, count), o);
    out.codes.set(codes.subarray(0, count * M), o * M);
    for (let b = 0; b < count; b++) {
      out.errors[o + b] = Math.sqrt(err[b]);
      out.terms[o + b] = l2 ? terms[b] : 0;
    }
    out.count = o + count;
  }
}

const cache = new WeakMap<IvfPqModel, IvfPqEncoder>();

/**
 * Per block row b < count: squared reconstruction error ‖r − r̂‖² (→ err[b]) and l2 term
 * Σ_s ‖r̂_s‖² + 2 c_p·r̂_s (→ terms[b]), from the residuals and reconstructions (r̂ = the chosen
 * codewords, `recon`), one sequential pass per row. Per sub-space the same operations in the
 * same order as l2Between / dotBetween (four accumulators), summed over s in order, so the
 * values equal Σ_s l2Between(r_s, r̂_s) and `IvfPqIndex.termOf` bit for bit.
 */
function errorsAndTerms(
  resid: Float32Array,
  recon: Float32Array,
  codes: Uint8Array,
  parts: Int32Array,
  count: number,
  dim: number,
  M: number,
  subDim: number,
  centroids: Float32Array,
  cbNorms: Float64Array,
  errOut: Float64Array,
  termOut: Float64Array,
): void {
  for (let b = 0; b < count; b++) {
    const po = parts[b] * dim;
    const bo = b * M;
    let err = 0;
    let term = 0;
    for (let s = 0; s < M; s++) {
      const xo = b * dim + s * subDim;
      const qo = po + s * subDim;
      let e0 = 0, e1 = 0, e2 = 0, e3 = 0, t0 = 0, t1 = 0, t2 = 0, t3 = 0;
      let i = 0;
      for (; i + 3 < subDim; i += 4) {
        const c0 = recon[xo + i], c1 = recon[xo + i + 1], c2 = recon[xo + i + 2], c3 = recon[xo + i + 3];
        const d0 = resid[xo + i] - c0, d1 = resid[xo + i + 1] - c1, d2 = resid[xo + i + 2] - c2, d3 = resid[xo + i + 3] - c3;
        e0 += d0 * d0;
        e1 += d1 * d1;
        e2 += d2 * d2;
        e3 += d3 * d3;
        t0 += centroids[qo + i] * c0;
        t1 += centroids[qo + i + 1] * c1;
        t2 += centroids[qo + i + 2] * c2;
        t3 += centroids[qo + i + 3] * c3;
      }
      for (; i < subDim; i++) {
        const c = recon[xo + i];
        const d = resid[xo + i] - c;
        e0 += d * d;
        t0 += centroids[qo + i] * c;
      }
      err += e0 + e1 + e2 + e3;
      term += cbNorms[s * PQ_CODEWORDS + codes[bo + s]] + 2 * (t0 + t1 + t2 + t3);
    }
    errOut[b] = err;
    termOut[b] = term;
  }
}
