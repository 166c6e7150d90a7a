/**
 * WAL entry codec. One entry is one Arrow IPC *stream* (schema, record batches, end marker) whose
 * schema metadata carries `writer_epoch` as a decimal string, exactly as Lance writes it, followed
 * by a 16-byte integrity trailer (below). An entry with no batches is a fence sentinel: a new
 * writer writes one at open so that an older writer's next WAL write collides with it and learns
 * it is fenced.
 *
 * Encoding is on the write path of every durable ack, so it is done directly rather than through
 * `RecordBatchStreamWriter` (toolchain.md §3.2–3.3): each batch is assembled with
 * `VectorAssembler`, the exact entry size is computed up front, and every header and body
 * buffer is copied once into one output buffer. The writer instead queues every piece as its own
 * chunk and joins them at the end, which allocates and copies per piece and again for the whole.
 * The stream bytes are identical to the writer's (test/wal/wal-entry-encode.test.ts checks this).
 * Schemas with dictionary fields (which need DictionaryBatch messages) still use the writer.
 *
 * Integrity trailer. Arrow readers treat running out of bytes like the end-of-stream marker, so a
 * stream cut at a message boundary reads as a valid shorter stream (a "sentinel", or an entry
 * missing rows), and nothing in a stream detects a changed byte, e.g. in the `writer_epoch`
 * digits replay decides on. So the stream is followed by a fixed trailer:
 *
 *   bytes 0..3    "QWAL"
 *   bytes 4..7    u32 LE CRC-32 (IEEE, as zlib.crc32) of every byte of the stream
 *   bytes 8..15   u64 LE byte length of the stream
 *
 * The stream keeps its end-of-stream marker, where Arrow readers (apache-arrow JS, pyarrow's
 * `ipc.open_stream`) stop, so an entry still opens as a plain Arrow IPC stream. The trailer is at
 * an 8-aligned offset since every IPC message is padded to 8 bytes. The decoder requires it: an
 * entry cut anywhere loses the trailer or fails its length, and a changed byte fails the CRC.
 */
import { crc32 } from 'node:zlib';
import { DataType, type Field, Message, RecordBatch, RecordBatchReader, RecordBatchStreamWriter, Schema } from 'apache-arrow';
import { RecordBatch as RecordBatchHeader } from 'apache-arrow/ipc/metadata/message';
import { VectorAssembler } from 'apache-arrow/visitor/vectorassembler';
import { DataError } from '../errors.js';

export const WRITER_EPOCH_KEY = 'writer_epoch';
/** The writer's unique id (a random UUID per opened writer): who wrote the entry. */
export const WRITER_ID_KEY = 'writer_id';

/** Byte size of the integrity trailer after the stream. */
export const WAL_TRAILER_BYTES = 16;
/** "QWAL" read as a little-endian u32. */
const TRAILER_MAGIC = 0x4c415751;

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
 * least `size` bytes, the whole entry including the trailer; its contents may be anything, every
 * byte of the entry is written), so a caller can reuse buffers across entries; the result is then
 * a view of that buffer.
 */
export function encodeWalEntry(
  schema: Schema,
  writer: WalWriterIdentity,
  batches: readonly RecordBatch[],
  alloc?: (size: number) => Uint8Array,
): Uint8Array {
  const entrySchema = entrySchemaOf(schema, writer);
  if (schema.fields.some(hasDictionary)) return encodeWithWriter(entrySchema, batches, alloc);

  // Pass 1: encode every message header and size the whole stream. The schema message is the
  // same for every entry of one writer: encoded once (a third of a small entry's encode time).
  const schemaHeader = schemaHeaderOf(entrySchema, schema, writer);
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
  const out = outputBuffer(size + WAL_TRAILER_BYTES, alloc);
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
  writeTrailer(out, view, size);
  return out;
}

function outputBuffer(size: number, alloc: ((size: number) => Uint8Array) | undefined): Uint8Array {
  return alloc ? alloc(size).subarray(0, size) : new Uint8Array(size);
}

/** The table's schema with the writer's epoch and id added to its metadata. */
function entrySchemaOf(schema: Schema, writer: WalWriterIdentity): Schema {
  const metadata = new Map(schema.metadata);
  metadata.set(WRITER_EPOCH_KEY, String(writer.epoch));
  metadata.set(WRITER_ID_KEY, writer.id);
  return new Schema(schema.fields, metadata);
}

/** Encoded schema messages per table schema object and writer (one per region writer). */
const schemaHeaders = new WeakMap<Schema, Map<string, Uint8Array>>();
const MAX_CACHED_WRITERS = 64;

function schemaHeaderOf(entrySchema: Schema, schema: Schema, writer: WalWriterIdentity): Uint8Array {
  let byWriter = schemaHeaders.get(schema);
  if (!byWriter) schemaHeaders.set(schema, (byWriter = new Map()));
  const key = `${writer.epoch}/${writer.id}`;
  let header = byWriter.get(key);
  if (!header) {
    header = Message.encode(Message.from(entrySchema));
    // Writers come and go (each open is a new id): forget the oldest beyond a bound.
    if (byWriter.size >= MAX_CACHED_WRITERS) byWriter.delete(byWriter.keys().next().value!);
    byWriter.set(key, header);
  }
  return header;
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

/** Writes the trailer after the `streamLength` stream bytes already in `out`. */
function writeTrailer(out: Uint8Array, view: DataView, streamLength: number): void {
  view.setUint32(streamLength, TRAILER_MAGIC, true);
  view.setUint32(streamLength + 4, crc32(out.subarray(0, streamLength)), true);
  view.setUint32(streamLength + 8, streamLength % 2 ** 32, true);
  view.setUint32(streamLength + 12, Math.floor(streamLength / 2 ** 32), true);
}

function hasDictionary(field: Field): boolean {
  return DataType.isDictionary(field.type) || (field.type.children ?? []).some(hasDictionary);
}

function encodeWithWriter(entrySchema: Schema, batches: readonly RecordBatch[], alloc: ((size: number) => Uint8Array) | undefined): Uint8Array {
  const writer = new RecordBatchStreamWriter();
  writer.reset(undefined, entrySchema);
  for (const batch of batches) writer.write(new RecordBatch(entrySchema, batch.data));
  writer.finish();
  // The writer joins its chunks into a buffer of its own; one more copy adds the trailer (this
  // path is rare: only schemas with dictionary columns take it).
  const stream = writer.toUint8Array(true);
  const out = outputBuffer(stream.byteLength + WAL_TRAILER_BYTES, alloc);
  out.set(stream);
  writeTrailer(out, new DataView(out.buffer, out.byteOffset, out.byteLength), stream.byteLength);
  return out;
}

/**
 * Decodes and verifies an entry; any damage (truncation, a changed byte, a missing trailer) is a
 * `DataError` naming `what` (the object key) and the problem. Replay relies on this: it must
 * never apply a damaged entry, nor mistake a cut one for a shorter or empty entry.
 */
export function decodeWalEntry(bytes: Uint8Array, what: string): WalEntry {
  try {
    const stream = verifiedStream(bytes);
    const expectedBatches = recordBatchMessages(stream);
    const reader = RecordBatchReader.from(stream).open();
    const schema = reader.schema;
    if (!schema) throw new Error('no schema message');
    const batches: RecordBatch[] = [];
    // The reader yields one empty placeholder batch for a stream without batches (a sentinel);
    // drop it. Counting what it yields confirms it read every batch message the framing holds.
    let yielded = 0;
    for (const batch of reader) {
      yielded++;
      if (batch.numRows > 0) batches.push(batch);
    }
    if (yielded !== Math.max(expectedBatches, 1)) throw new Error(`the Arrow reader returned ${yielded} batches of ${expectedBatches}`);
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

/** Checks the trailer (magic, length, CRC) and returns the stream bytes it covers. */
function verifiedStream(bytes: Uint8Array): Uint8Array {
  const n = bytes.byteLength;
  const view = new DataView(bytes.buffer, bytes.byteOffset, n);
  const trailerAt = n - WAL_TRAILER_BYTES;
  if (trailerAt < 0 || view.getUint32(trailerAt, true) !== TRAILER_MAGIC) {
    // Also what an entry written before the trailer existed looks like (pre-release format).
    throw new Error(`truncated or damaged: ${n} bytes, trailer missing (no "QWAL" magic ${WAL_TRAILER_BYTES} bytes from the end)`);
  }
  const stored = view.getUint32(trailerAt + 8, true) + view.getUint32(trailerAt + 12, true) * 2 ** 32;
  if (stored !== trailerAt) throw new Error(`length mismatch: the trailer says the stream has ${stored} bytes, it has ${trailerAt}`);
  const stream = bytes.subarray(0, trailerAt);
  const storedCrc = view.getUint32(trailerAt + 4, true);
  const computed = crc32(stream);
  if (storedCrc !== computed) throw new Error(`checksum mismatch (stored 0x${hex32(storedCrc)}, computed 0x${hex32(computed)})`);
  return stream;
}

const hex32 = (n: number) => n.toString(16).padStart(8, '0');

/** Arrow's `MessageHeader` union tag of a record batch message (Message.fbs). */
const RECORD_BATCH_HEADER = 3;

/**
 * The header type and body length of the Message flatbuffer starting at `start`, read straight
 * from its vtable (fields 1 and 3 of `table Message`) instead of decoding the whole message: a
 * full decode of the schema message here would double the cost of reading a small entry, as the
 * Arrow reader decodes it again. Out-of-range offsets throw a RangeError (reported as corrupt).
 */
function messageHeaderInfo(view: DataView, start: number): { headerType: number; bodyLength: number } {
  const table = start + view.getUint32(start, true);
  const vtable = table - view.getInt32(table, true);
  const vtableSize = view.getUint16(vtable, true);
  const fieldOffset = (i: number) => (4 + 2 * i < vtableSize ? view.getUint16(vtable + 4 + 2 * i, true) : 0);
  const typeAt = fieldOffset(1);
  const lengthAt = fieldOffset(3);
  return {
    headerType: typeAt ? view.getUint8(table + typeAt) : 0,
    bodyLength: lengthAt ? Number(view.getBigInt64(table + lengthAt, true)) : 0,
  };
}

/**
 * Walks the stream's message framing (continuation marker, metadata length, metadata, body) and
 * returns how many record batch messages it holds, after checking that the end-of-stream marker
 * comes exactly at the end. The CRC already vouches for the bytes; this vouches for the encoder
 * that produced them: an entry that checksums fine but is not one whole stream is still corrupt.
 */
function recordBatchMessages(stream: Uint8Array): number {
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  let batches = 0;
  let at = 0;
  for (;;) {
    if (at + EOS_BYTES > stream.byteLength) throw new Error(`stream ends at byte ${stream.byteLength} without an end-of-stream marker`);
    if (view.getInt32(at, true) !== -1) throw new Error(`no message continuation marker at byte ${at}`);
    const metadataLength = view.getInt32(at + 4, true);
    if (metadataLength === 0) {
      if (at + EOS_BYTES !== stream.byteLength) throw new Error(`end-of-stream marker at byte ${at}, before the stream's end at ${stream.byteLength}`);
      return batches;
    }
    const bodyAt = at + 8 + metadataLength;
    if (metadataLength < 0 || bodyAt > stream.byteLength) throw new Error(`message at byte ${at} runs past the stream's end`);
    const { headerType, bodyLength } = messageHeaderInfo(view, at + 8);
    if (!(bodyLength >= 0)) throw new Error(`message at byte ${at} has body length ${bodyLength}`);
    if (headerType === RECORD_BATCH_HEADER) batches++;
    at = bodyAt + bodyLength;
  }
}
