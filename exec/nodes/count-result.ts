/** The one-row result of a statement that writes: `count` BIGINT, the rows it affected. */
import { Field, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';

export const COUNT_RESULT_SCHEMA = new Schema([new Field('count', new Int64(), false)]);

export function countBatch(count: number): RecordBatch {
  const data = makeData({ type: new Int64(), length: 1, nullCount: 0, data: BigInt64Array.of(BigInt(count)) });
  return new RecordBatch(COUNT_RESULT_SCHEMA, makeData({ type: new Struct(COUNT_RESULT_SCHEMA.fields), length: 1, nullCount: 0, children: [data] }));
}
