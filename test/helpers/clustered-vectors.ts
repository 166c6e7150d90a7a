/** A small clustered vector table for table-level index tests: id Int64, vec FLOAT4[16]. */
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { mulberry32 } from './rng.js';

export const DIM = 16;
export const vecSchema = new Schema([new Field('id', new Int64(), false), new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true)]);

/** Rows `from..to` of a clustered data set (8 clusters), the same for a given id. */
export function rows(from: number, to: number): RecordBatch {
  const n = to - from;
  const values = new Float32Array(n * DIM);
  for (let i = 0; i < n; i++) {
    const rnd = mulberry32(from + i + 1);
    const cluster = (from + i) % 8;
    for (let d = 0; d < DIM; d++) values[i * DIM + d] = (d % 8 === cluster ? 4 : 0) + rnd() - 0.5;
  }
  const ids = makeData({ type: new Int64(), length: n, nullCount: 0, data: BigInt64Array.from({ length: n }, (_, i) => BigInt(from + i)) });
  const vecType = vecSchema.fields[1].type as FixedSizeList;
  const vecs = makeData({ type: vecType, length: n, nullCount: 0, child: makeData({ type: new Float32(), length: n * DIM, nullCount: 0, data: values }) });
  return new RecordBatch(vecSchema, makeData({ type: new Struct(vecSchema.fields), length: n, nullCount: 0, children: [ids, vecs] }));
}

export function queries(count: number): Float32Array[] {
  const rnd = mulberry32(4242);
  return Array.from({ length: count }, (_, q) => Float32Array.from({ length: DIM }, (_, d) => (d % 8 === q % 8 ? 4 : 0) + 2 * (rnd() - 0.5)));
}

