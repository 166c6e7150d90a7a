/**
 * WAL entry codec. One entry is one Arrow IPC *stream* (schema, record batches, end marker) whose
 * schema metadata carries `writer_epoch` as a decimal string, exactly as Lance writes it. An entry
 * with no batches is a fence sentinel: a new writer writes one at open so that an older writer's
 * next WAL write collides with it and learns it is fenced.
 *
 * Encoding is on the write path of every durable ack, so it is done directly rather than through
 * `RecordBatchStreamWriter` (toolchain.md §3.2–3.3): each batch is assembled with
 * `VectorAssembler`, the exact stream size is computed up front, and every header and body
 * buffer is copied once into one output buffer. The writer instead queues every piece as its own
 * chunk and joins them at the end, which allocates and copies per piece and again for the whole.
 * The bytes are identical to the writer's (test/wal/wal-entry-encode.test.ts checks this).
 * Schemas with dictionary fields (which need DictionaryBatch messages) still use the writer.
 */
import { DataType, type Field, Message, RecordBatch, RecordBatchReader, RecordBatchStreamWriter, Schema } from 'apache-arrow';
import { RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import { DataError } from '../errors.js';

export const WRITER_EPOCH_KEY = 'writer_epoch';
/** The writer's unique id (a random UUID per opened writer): who wrote the entry. */
export const WRITER_ID_KEY = 'writer_id';

/** Who writes an entry: the claimed epoch and the writer's unique id. */
export interface WalWriterIdentity {
  epoch: number;
  id: string;
}

export interface WalEntry {
  writerEpoch: number;
  /** '' for entries written before writer ids existed. */
  writerId: string;
  schema: Schema;
  batches: RecordBatch[];
}

/**
 * Encodes an entry. `alloc(size)`, when given, supplies the output buffer (it must return at
 * least `size` bytes; its contents may be anything, every byte of the entry is written), so a
 * caller can reuse buffers across entries; the result is then a view of that buffer.
 */
export function encodeWalEntry(
  schema: Schema,
  writer: WalWriterIdentity,
  batches: readonly RecordBatch[],
  alloc?: (size: number) => Uint8Array,
): Uint8Array {
  const metadata = new Map(schema.metadata);
  metadata.set(WRITER_EPOCH_KEY, String(writer.epoch));
  metadata.set(WRITER_ID_KEY, writer.id);
  const entrySchema = new Schema(schema.fields, metadata);
  if (schema.fields.some(hasDictionary)) return encodeWithWriter(entrySchema, batches);

  // Pass 1: encode every message header and size the whole stream.
  const schemaHeader = Message.encode(Message.from(entrySchema));
  let size = framedSize(schemaHeader) + EOS_BYTES;
  const parts: { header: Uint8Array; assembled: VectorAssembler }[] = [];
  for (const batch of batches) {
    const assembled = VectorAssembler.assemble(batch);
    // No per-batch custom metadata, as before (batches were re-labelled with the entry schema).
    const header = Message.encode(
      Message.from(new RecordBatchHeader(batch.numRows, assembled.nodes, assembled.bufferRegions, null, assembled.variadicBufferCounts), assembled.byteLength),
    );
    parts.push({ header, assembled });
    size += framedSize(header) + assembled.byteLength;
  }

  // Pass 2: copy each piece once into the output, padding included (it may be a reused buffer).
  const out = alloc ? alloc(size).subarray(0, size) : new Uint8Array(size);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  let at = writeFramed(out, view, 0, schemaHeader);
  for (const { header, assembled } of parts) {
    at = writeFramed(out, view, at, header);
    const regions = assembled.bufferRegions;
    const buffers = assembled.buffers;
    for (let i = 0; i < buffers.length; i++) {
      const b = buffers[i];
      const { offset, length } = regions[i];
      out.set(new Uint8Array(b.buffer, b.byteOffset, b.byteLength), at + offset);
      out.fill(0, at + offset + b.byteLength, at + offset + length);
    }
    at += assembled.byteLength;
  }
  view.setInt32(at, -1, true);
  view.setInt32(at + 4, 0, true);
  return out;
}

/** Continuation marker + length prefix, then the flatbuffer padded to 8 bytes. */
function framedSize(header: Uint8Array): number {
  return (header.byteLength + 8 + 7) & ~7;
}

function writeFramed(out: Uint8Array, view: DataView, at: number, header: Uint8Array): number {
  const framed = framedSize(header);
  view.setInt32(at, -1, true);
  view.setInt32(at + 4, framed - 8, true);
  out.set(header, at + 8);
  out.fill(0, at + 8 + header.byteLength, at + framed);
  return at + framed;
}

/** The end-of-stream marker: continuation + zero length. */
const EOS_BYTES = 8;

function hasDictionary(field: Field): boolean {
  return DataType.isDictionary(field.type) || (field.type.children ?? []).some(hasDictionary);
}

function encodeWithWriter(entrySchema: Schema, batches: readonly RecordBatch[]): Uint8Array {
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
    const writerId = schema.metadata.get(WRITER_ID_KEY) ?? '';
    const metadata = new Map(schema.metadata);
    metadata.delete(WRITER_EPOCH_KEY);
    metadata.delete(WRITER_ID_KEY);
    return { writerEpoch, writerId, schema: new Schema(schema.fields, metadata), batches };
  } catch (e) {
    throw new DataError(`corrupt WAL entry ${what}: ${(e as Error).message}`, { cause: e });
  }
}
