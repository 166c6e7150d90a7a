/**
 * The seeded data generators of every benchmark, in one module: suites import rows, queries and
 * exact answers from here. The generators themselves stay where earlier suites and dev harnesses
 * import them (search-data.ts: PRNG, Zipf vocabulary, cluster model, search rows; sql-data.ts:
 * numeric and vector tables; data.ts: Lance's write-bench rows); what is new for the peer suites
 * is below: the MemTable-read rows.
 */
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct, Utf8 } from 'apache-arrow';
import { type ClusterModel, Rng, ZipfVocabulary } from '../search-data.js';
import { clusterModel } from '../sql-data.js';

export * from '../search-data.js';
export * from '../sql-data.js';
export * from '../data.js';

/**
 * Rows of the MemTable read suite (the seed benchmark's design): `id Int64` 0..n−1, `text Utf8`
 * of three words from a Zipf vocabulary, `vector FixedSizeList<Float32>[dim]` drawn from the
 * clustered model of the search suite and normalised to unit length (uniformly random directions
 * would have no neighbourhoods for an IVF index to find: recall@10 near 0.2 at nprobes 8).
 */
export interface TextVectorRows {
  n: number;
  dim: number;
  ids: BigInt64Array;
  texts: string[];
  vectors: Float32Array;
  vocab: ZipfVocabulary;
  model: ClusterModel;
}

export function textVectorSchema(dim: number): Schema {
  return new Schema([
    new Field('id', new Int64(), false),
    new Field('text', new Utf8(), true),
    new Field('vector', new FixedSizeList(dim, new Field('item', new Float32(), true)), true),
  ]);
}

/** Scales `out[offset .. offset + dim)` to unit length. */
export function normalise(out: Float32Array, offset: number, dim: number): void {
  let norm = 0;
  for (let d = 0; d < dim; d++) norm += out[offset + d] * out[offset + d];
  const inv = 1 / Math.sqrt(norm);
  for (let d = 0; d < dim; d++) out[offset + d] *= inv;
}

/** A query vector: a fresh draw from the same model, normalised. */
export function unitQuery(model: ClusterModel, rng: Rng): Float32Array {
  const v = new Float32Array(model.dim);
  model.sample(rng, v, 0);
  normalise(v, 0, model.dim);
  return v;
}

export function makeTextVectorRows(n: number, dim: number, seed = 21): TextVectorRows {
  const rng = new Rng(seed);
  const vocab = new ZipfVocabulary(5000, 1.0, seed + 1);
  const model = clusterModel(dim);
  const rows: TextVectorRows = { n, dim, ids: new BigInt64Array(n), texts: new Array(n), vectors: new Float32Array(n * dim), vocab, model };
  for (let i = 0; i < n; i++) {
    rows.ids[i] = BigInt(i);
    rows.texts[i] = vocab.document(rng, 3, 3);
    model.sample(rng, rows.vectors, i * dim);
    normalise(rows.vectors, i * dim, dim);
  }
  return rows;
}

export function textVectorBatch(schema: Schema, r: TextVectorRows, start: number, end: number): RecordBatch {
  const n = end - start;
  const encoder = new TextEncoder();
  const encoded = r.texts.slice(start, end).map((t) => encoder.encode(t));
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + encoded[i].length;
  const values = new Uint8Array(offsets[n]);
  for (let i = 0; i < n; i++) values.set(encoded[i], offsets[i]);
  const children = [
    makeData({ type: new Int64(), length: n, nullCount: 0, data: r.ids.subarray(start, end) }),
    makeData({ type: new Utf8(), length: n, nullCount: 0, valueOffsets: offsets, data: values }),
    makeData({
      type: schema.fields[2].type as FixedSizeList,
      length: n,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: n * r.dim, nullCount: 0, data: r.vectors.subarray(start * r.dim, end * r.dim) }),
    }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }));
}

/** Exact top-k ids by squared L2 over `vectors` (n × dim), ties by id: the recall oracle. */
export function exactTopK(vectors: Float32Array, dim: number, query: Float32Array, k: number): number[] {
  const n = vectors.length / dim;
  const best: { id: number; d: number }[] = [];
  for (let i = 0, o = 0; i < n; i++, o += dim) {
    let s = 0;
    for (let j = 0; j < dim; j++) {
      const x = query[j] - vectors[o + j];
      s += x * x;
    }
    if (best.length < k || s < best[best.length - 1].d) {
      best.push({ id: i, d: s });
      best.sort((a, b) => a.d - b.d || a.id - b.id);
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b.id);
}
