/**
 * IVF-PQ model: coarse centroids (IVF) plus product-quantisation codebooks, trained once and then
 * shared by every index built over the same column so distances stay comparable across LSM levels
 * (lance-memwal.md §5.3: the MemTable index reuses the base table's centroids, codebook and
 * metric; the model must not change while the MemWAL is enabled).
 *
 * - IVF: k-means (k-means++ seeding, Lloyd) on a sample; `cosine` trains on unit-normalised
 *   vectors, `l2` and `dot` on the raw vectors (squared-L2 k-means in both cases, so partitions
 *   stay balanced; `dot` only ranks partitions by q·c at search time).
 * - PQ: the residual vector − centroid (of the normalised vector for `cosine`) is split into
 *   `subVectors` sub-vectors of `subDim = dim / subVectors` values; each subspace gets 256
 *   centroids (8-bit codes) from k-means on the sample's residuals.
 *
 * Serialised form (`encodeIvfPqModel`): an Arrow IPC **file** with one row per partition,
 *   `partition: Uint32 (not null)`, `centroid: FixedSizeList<Float32 (not null)>[dim] (not null)`,
 * and schema metadata
 *   `quiver.index.type = "IVF_PQ"`, `quiver.ivf_pq.version = "1"`, `quiver.ivf_pq.metric`
 *   (`l2` | `cosine` | `dot`), `quiver.ivf_pq.dim`, `quiver.ivf_pq.partitions`,
 *   `quiver.ivf_pq.sub_vectors`, `quiver.ivf_pq.sub_dim`, `quiver.ivf_pq.num_bits = "8"`,
 *   `quiver.ivf_pq.codebooks` = base64 of the little-endian float32 array
 *   [subVectors][256][subDim] (codeword j of subspace s at ((s·256)+j)·subDim).
 * The bytes can be stored next to table metadata and read back with `decodeIvfPqModel`.
 */
import {
  Field,
  FixedSizeList,
  Float32,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  Type,
  Uint32,
} from 'apache-arrow';
import { type Metric, METRICS, normSqAt } from './distance.js';
import { kmeans, Rng } from './kmeans.js';
import { isValidAt, type VectorSource } from './vector-source.js';

/** Codewords per subspace (8-bit codes). */
export const PQ_CODEWORDS = 256;

export interface IvfPqModel {
  metric: Metric;
  dim: number;
  partitions: number;
  /** partitions × dim, row-major. */
  centroids: Float32Array;
  subVectors: number;
  subDim: number;
  /** subVectors × 256 × subDim. */
  codebooks: Float32Array;
}

export interface TrainIvfPqParams {
  metric: Metric;
  /** Default clamp(round(√n), 1, 256) over the n non-null vectors. */
  partitions?: number;
  /** Default dim / 8 when divisible, else the largest divisor of dim ≤ dim / 4. */
  subVectors?: number;
  /** Training sample (default min(n, max(40 × partitions, 40 × 256))). */
  sampleSize?: number;
  /** Lloyd iterations for both k-means stages (default 10). */
  iterations?: number;
  seed?: number;
}

export const DEFAULT_MAX_PARTITIONS = 256;

export function defaultPartitions(n: number): number {
  return Math.min(DEFAULT_MAX_PARTITIONS, Math.max(1, Math.round(Math.sqrt(n))));
}

export function defaultSubVectors(dim: number): number {
  if (dim % 8 === 0) return dim / 8;
  for (let m = Math.floor(dim / 4); m >= 1; m--) if (dim % m === 0) return m;
  return 1;
}

export function defaultSampleSize(n: number, partitions: number): number {
  return Math.min(n, Math.max(40 * partitions, 40 * PQ_CODEWORDS));
}

/** Trains an IVF-PQ model on the non-null, finite vectors of `source`. */
export function trainIvfPq(source: VectorSource, params: TrainIvfPqParams): IvfPqModel {
  const { metric } = params;
  if (!METRICS.includes(metric)) throw new Error(`unknown metric ${String(metric)}`);
  const dim = source.dim;
  const subVectors = params.subVectors ?? defaultSubVectors(dim);
  if (!Number.isInteger(subVectors) || subVectors < 1 || dim % subVectors !== 0) {
    throw new Error(`subVectors must be a positive divisor of dim ${dim}, got ${subVectors}`);
  }
  const subDim = dim / subVectors;
  const iterations = params.iterations ?? 10;
  if (!Number.isInteger(iterations) || iterations < 0) throw new Error(`iterations must be a non-negative integer, got ${iterations}`);

  // Pass 1: count trainable rows (non-null with finite values).
  let n = 0;
  for (const c of source.chunks) {
    for (let i = 0; i < c.count; i++) if (isTrainable(c.data, c.validity, c.bitOffset, i, dim)) n++;
  }
  const partitions = params.partitions ?? defaultPartitions(n);
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`partitions must be a positive integer, got ${partitions}`);
  if (partitions > 0xffff) throw new Error(`at most 65535 partitions are supported, got ${partitions}`);
  if (n < PQ_CODEWORDS || n < partitions) {
    throw new Error(
      `not enough vectors to train an IVF-PQ index: ${n} non-null vectors, need at least ${Math.max(PQ_CODEWORDS, partitions)} ` +
        `(${PQ_CODEWORDS} PQ codewords, ${partitions} partitions)`,
    );
  }
  let sampleN = params.sampleSize ?? defaultSampleSize(n, partitions);
  if (!Number.isInteger(sampleN) || sampleN < 1) throw new Error(`sampleSize must be a positive integer, got ${sampleN}`);
  sampleN = Math.min(n, Math.max(sampleN, PQ_CODEWORDS, partitions));

  // Pass 2: selection sampling (Knuth's algorithm S), in position order.
  const rng = new Rng(params.seed ?? 42);
  const sample = new Float32Array(sampleN * dim);
  let seen = 0;
  let taken = 0;
  for (const c of source.chunks) {
    for (let i = 0; i < c.count && taken < sampleN; i++) {
      if (!isTrainable(c.data, c.validity, c.bitOffset, i, dim)) continue;
      if ((n - seen) * rng.next() < sampleN - taken) {
        const so = taken * dim;
        sample.set(c.data.subarray(i * dim, i * dim + dim), so);
        if (metric === 'cosine') normaliseInPlace(sample, so, dim);
        taken++;
      }
      seen++;
    }
  }

  // IVF.
  const ivf = kmeans(sample, sampleN, dim, partitions, { iterations, rng });
  const centroids = ivf.centroids;

  // PQ on residuals, one subspace at a time.
  const codebooks = new Float32Array(subVectors * PQ_CODEWORDS * subDim);
  const sub = new Float32Array(sampleN * subDim);
  for (let s = 0; s < subVectors; s++) {
    const so = s * subDim;
    for (let i = 0; i < sampleN; i++) {
      const xo = i * dim + so;
      const co = ivf.assignments[i] * dim + so;
      const o = i * subDim;
      for (let d = 0; d < subDim; d++) sub[o + d] = sample[xo + d] - centroids[co + d];
    }
    const pq = kmeans(sub, sampleN, subDim, PQ_CODEWORDS, { iterations, rng });
    codebooks.set(pq.centroids, s * PQ_CODEWORDS * subDim);
  }
  return { metric, dim, partitions, centroids, subVectors, subDim, codebooks };
}

function isTrainable(data: Float32Array, validity: Uint8Array | null, bitOffset: number, i: number, dim: number): boolean {
  if (!isValidAt(validity, bitOffset, i)) return false;
  const s = normSqAt(data, i * dim, dim);
  return s - s === 0;
}

/** Scales `v[o..o+dim)` to unit length (zero vectors stay zero). */
export function normaliseInPlace(v: Float32Array, o: number, dim: number): void {
  const s = normSqAt(v, o, dim);
  if (!(s > 0) || s === Infinity) return;
  const inv = 1 / Math.sqrt(s);
  for (let d = 0; d < dim; d++) v[o + d] *= inv;
}

export function validateIvfPqModel(m: IvfPqModel): void {
  if (!METRICS.includes(m.metric)) throw new Error(`IVF-PQ model: unknown metric ${String(m.metric)}`);
  if (!Number.isInteger(m.dim) || m.dim < 1) throw new Error(`IVF-PQ model: bad dim ${m.dim}`);
  if (!Number.isInteger(m.partitions) || m.partitions < 1 || m.partitions > 0xffff) throw new Error(`IVF-PQ model: bad partitions ${m.partitions}`);
  if (!Number.isInteger(m.subVectors) || m.subVectors < 1 || m.subVectors * m.subDim !== m.dim) {
    throw new Error(`IVF-PQ model: subVectors ${m.subVectors} × subDim ${m.subDim} must equal dim ${m.dim}`);
  }
  if (m.centroids.length !== m.partitions * m.dim) throw new Error(`IVF-PQ model: centroids hold ${m.centroids.length} values, need ${m.partitions * m.dim}`);
  if (m.codebooks.length !== m.subVectors * PQ_CODEWORDS * m.subDim) {
    throw new Error(`IVF-PQ model: codebooks hold ${m.codebooks.length} values, need ${m.subVectors * PQ_CODEWORDS * m.subDim}`);
  }
}

// ---- serialisation ---------------------------------------------------------------------------

const META = 'quiver.ivf_pq.';

export function encodeIvfPqModel(m: IvfPqModel): Uint8Array {
  validateIvfPqModel(m);
  const partition = new Uint32Array(m.partitions);
  for (let p = 0; p < m.partitions; p++) partition[p] = p;
  const centroidType = new FixedSizeList(m.dim, new Field('item', new Float32(), false));
  const fields = [new Field('partition', new Uint32(), false), new Field('centroid', centroidType, false)];
  const metadata = new Map<string, string>([
    ['quiver.index.type', 'IVF_PQ'],
    [`${META}version`, '1'],
    [`${META}metric`, m.metric],
    [`${META}dim`, String(m.dim)],
    [`${META}partitions`, String(m.partitions)],
    [`${META}sub_vectors`, String(m.subVectors)],
    [`${META}sub_dim`, String(m.subDim)],
    [`${META}num_bits`, '8'],
    [`${META}codebooks`, float32ToBase64(m.codebooks)],
  ]);
  const schema = new Schema(fields, metadata);
  const children = [
    makeData({ type: new Uint32(), length: m.partitions, nullCount: 0, data: partition }),
    makeData({
      type: centroidType,
      length: m.partitions,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: m.partitions * m.dim, nullCount: 0, data: m.centroids }),
    }),
  ];
  const batch = new RecordBatch(schema, makeData({ type: new Struct(fields), length: m.partitions, nullCount: 0, children }));
  return tableToIPC(new Table(schema, [batch]), 'file');
}

export function decodeIvfPqModel(bytes: Uint8Array): IvfPqModel {
  const table = tableFromIPC(bytes);
  const md = table.schema.metadata;
  const get = (key: string): string => {
    const v = md.get(key);
    if (v === undefined) throw new Error(`IVF-PQ model: missing schema metadata ${key}`);
    return v;
  };
  if (get('quiver.index.type') !== 'IVF_PQ') throw new Error(`IVF-PQ model: index type is ${get('quiver.index.type')}`);
  if (get(`${META}version`) !== '1') throw new Error(`IVF-PQ model: unsupported version ${get(`${META}version`)}`);
  if (get(`${META}num_bits`) !== '8') throw new Error(`IVF-PQ model: unsupported num_bits ${get(`${META}num_bits`)}`);
  const metric = get(`${META}metric`) as Metric;
  const dim = Number(get(`${META}dim`));
  const partitions = Number(get(`${META}partitions`));
  const subVectors = Number(get(`${META}sub_vectors`));
  const subDim = Number(get(`${META}sub_dim`));
  const codebooks = base64ToFloat32(get(`${META}codebooks`));
  if (table.numRows !== partitions) throw new Error(`IVF-PQ model: ${table.numRows} centroid rows for ${partitions} partitions`);
  const centroids = new Float32Array(partitions * dim);
  const pIdx = table.schema.fields.findIndex((f) => f.name === 'partition');
  const cIdx = table.schema.fields.findIndex((f) => f.name === 'centroid');
  if (pIdx < 0 || cIdx < 0) throw new Error('IVF-PQ model: needs columns partition and centroid');
  const seen = new Uint8Array(partitions);
  for (const batch of table.batches) {
    const pc = batch.data.children[pIdx];
    const cc = batch.data.children[cIdx];
    if (pc.typeId !== Type.Int || cc.typeId !== Type.FixedSizeList || (cc.type as FixedSizeList).listSize !== dim) {
      throw new Error('IVF-PQ model: partition must be Uint32 and centroid FixedSizeList<Float32>[dim]');
    }
    const pv = pc.values as Uint32Array;
    const cv = cc.children[0].values as Float32Array;
    if (!(cv instanceof Float32Array)) throw new Error('IVF-PQ model: centroid values must be Float32');
    for (let i = 0; i < batch.numRows; i++) {
      const p = pv[i];
      if (p >= partitions || seen[p]) throw new Error(`IVF-PQ model: bad or repeated partition id ${p}`);
      seen[p] = 1;
      centroids.set(cv.subarray(i * dim, i * dim + dim), p * dim);
    }
  }
  const m: IvfPqModel = { metric, dim, partitions, centroids, subVectors, subDim, codebooks };
  validateIvfPqModel(m);
  return m;
}

function float32ToBase64(a: Float32Array): string {
  const bytes = new Uint8Array(a.length * 4);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < a.length; i++) view.setFloat32(i * 4, a[i], true);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function base64ToFloat32(s: string): Float32Array {
  const buf = Buffer.from(s, 'base64');
  if (buf.byteLength % 4 !== 0) throw new Error('IVF-PQ model: codebook byte length is not a multiple of 4');
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = new Float32Array(buf.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}
