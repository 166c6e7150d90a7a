/** A batch of one row and no columns: what constant expressions (SELECT 1 + 1, VALUES) evaluate over. */
import { makeData, RecordBatch, Schema, Struct } from 'apache-arrow';

export const EMPTY_ROW = new RecordBatch(new Schema([]), makeData({ type: new Struct([]), length: 1, nullCount: 0, children: [] }));
