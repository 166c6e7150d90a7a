/**
 * Data of the SQL benchmark (bench/sql.bench.ts), generated once into typed arrays and handed,
 * unchanged, to both engines: Quiver through `table.put` of zero-copy Arrow batches, DuckDB
 * through its appender (bench/lib/duckdb.ts: data chunks filled from the same arrays).
 *
 * - `t`: `id BIGINT` (primary key, 0 .. n−1), `a INT` uniform in [0, 1 000 000), `b DOUBLE`
 *   uniform in [0, 1000), `c SMALLINT` uniform in [−1000, 1000), `g INT` uniform in [0, 1000)
 *   (the group key). All columns independent, no NULLs.
 * - `v`: `id BIGINT` (primary key), `cat INT` uniform in [0, 10), `emb FLOAT4[128]` drawn from
 *   the clustered model of the search benchmark (bench/search-data.ts), so IVF-PQ partitions
 *   mean something.
 */
import { Field, FixedSizeList, Float32, Float64, Int16, Int32, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { ClusterModel, Rng } from './search-data.js';

export const A_RANGE = 1_000_000;
export const B_RANGE = 1000;
export const GROUPS = 1000;
export const CATS = 10;

export interface NumericRows {
  n: number;
  id: BigInt64Array;
  a: Int32Array;
  b: Float64Array;
  c: Int16Array;
  g: Int32Array;
}

export function numericSchema(): Schema {
  return new Schema([
    new Field('id', new Int64(), false),
    new Field('a', new Int32(), true),
    new Field('b', new Float64(), true),
    new Field('c', new Int16(), true),
    new Field('g', new Int32(), true),
  ]);
}

export function makeNumericRows(n: number, seed = 8): NumericRows {
  const rng = new Rng(seed);
  const rows: NumericRows = { n, id: new BigInt64Array(n), a: new Int32Array(n), b: new Float64Array(n), c: new Int16Array(n), g: new Int32Array(n) };
  for (let i = 0; i < n; i++) {
    rows.id[i] = BigInt(i);
    rows.a[i] = Math.floor(rng.next() * A_RANGE);
    rows.b[i] = rng.next() * B_RANGE;
    rows.c[i] = Math.floor(rng.next() * 2000) - 1000;
    rows.g[i] = Math.floor(rng.next() * GROUPS);
  }
  return rows;
}

/** Rows [start, end) as one RecordBatch sharing the arrays' memory. */
export function numericBatch(schema: Schema, r: NumericRows, start: number, end: number): RecordBatch {
  const len = end - start;
  const children = [
    makeData({ type: new Int64(), length: len, nullCount: 0, data: r.id.subarray(start, end) }),
    makeData({ type: new Int32(), length: len, nullCount: 0, data: r.a.subarray(start, end) }),
    makeData({ type: new Float64(), length: len, nullCount: 0, data: r.b.subarray(start, end) }),
    makeData({ type: new Int16(), length: len, nullCount: 0, data: r.c.subarray(start, end) }),
    makeData({ type: new Int32(), length: len, nullCount: 0, data: r.g.subarray(start, end) }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: len, nullCount: 0, children }));
}

export interface VectorRows {
  n: number;
  dim: number;
  id: BigInt64Array;
  cat: Int32Array;
  emb: Float32Array;
}

export function vectorSchema(dim: number): Schema {
  return new Schema([
    new Field('id', new Int64(), false),
    new Field('cat', new Int32(), true),
    new Field('emb', new FixedSizeList(dim, new Field('item', new Float32(), true)), true),
  ]);
}

/** The clustered model of bench/search.bench.ts (256 overlapping clusters, low-rank shape + noise). */
export function clusterModel(dim: number): ClusterModel {
  return new ClusterModel({ dim, clusters: 256, seed: 12, centreStd: 0.3, spread: 1.0, noise: 0.3, latentDim: 16, weightSigma: 1.0 });
}

export function makeVectorRows(n: number, dim: number, model: ClusterModel, seed = 9): VectorRows {
  const rng = new Rng(seed);
  const rows: VectorRows = { n, dim, id: new BigInt64Array(n), cat: new Int32Array(n), emb: new Float32Array(n * dim) };
  for (let i = 0; i < n; i++) {
    rows.id[i] = BigInt(i);
    rows.cat[i] = rng.int(CATS);
    model.sample(rng, rows.emb, i * dim);
  }
  return rows;
}

export function vectorBatch(schema: Schema, r: VectorRows, start: number, end: number): RecordBatch {
  const len = end - start;
  const embType = schema.fields[2].type as FixedSizeList;
  const children = [
    makeData({ type: new Int64(), length: len, nullCount: 0, data: r.id.subarray(start, end) }),
    makeData({ type: new Int32(), length: len, nullCount: 0, data: r.cat.subarray(start, end) }),
    makeData({
      type: embType,
      length: len,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: len * r.dim, nullCount: 0, data: r.emb.subarray(start * r.dim, end * r.dim) }),
    }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: len, nullCount: 0, children }));
}
