/**
 * WAL entry codec. One entry is one Arrow IPC *stream* (schema, record batches, end marker) whose
 * schema metadata carries `writer_epoch` as a decimal string, exactly as Lance writes it. An entry
 * with no batches is a fence sentinel: a new writer writes one at open so that an older writer's
 * next WAL write collides with it and learns it is fenced.
 */
import { RecordBatch, RecordBatchReader, RecordBatchStreamWriter, Schema } from 'apache-arrow';
import { DataError } from '../errors.js';

export const WRITER_EPOCH_KEY = 'writer_epoch';

export interface WalEntry {
  writerEpoch: number;
  schema: Schema;
  batches: RecordBatch[];
}

export function encodeWalEntry(schema: Schema, writerEpoch: number, batches: readonly RecordBatch[]): Uint8Array {
  const metadata = new Map(schema.metadata);
  metadata.set(WRITER_EPOCH_KEY, String(writerEpoch));
  const entrySchema = new Schema(schema.fields, metadata);
  const writer = new RecordBatchStreamWriter();
  writer.reset(undefined, entrySchema);
  for (const batch of batches) writer.write(new RecordBatch(entrySchema, batch.data));
  writer.finish();
  return writer.toUint8Array(true);
}

export function decodeWalEntry(bytes: Uint8Array, what: string): WalEntry {
  try {
    const reader = RecordBatchReader.from(bytes).open();
    const schema = reader.schema;
    if (!schema) throw new Error('no schema message');
    const batches: RecordBatch[] = [];
    // The reader yields one empty batch for a stream without batches (a sentinel); drop it.
    for (const batch of reader) if (batch.numRows > 0) batches.push(batch);
    const epochText = schema.metadata.get(WRITER_EPOCH_KEY);
    const writerEpoch = epochText === undefined ? 0 : Number(epochText);
    if (!Number.isSafeInteger(writerEpoch) || writerEpoch < 0) throw new Error(`bad writer_epoch ${epochText}`);
    const metadata = new Map(schema.metadata);
    metadata.delete(WRITER_EPOCH_KEY);
    return { writerEpoch, schema: new Schema(schema.fields, metadata), batches };
  } catch (e) {
    throw new DataError(`corrupt WAL entry ${what}: ${(e as Error).message}`, { cause: e });
  }
}
