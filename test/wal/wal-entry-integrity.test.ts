/**
 * Every WAL entry verifies itself (wal-entry.ts: the Arrow IPC stream, then a 16-byte trailer of
 * "QWAL", CRC-32 and stream length). Replay and tailing apply whatever `decodeWalEntry` returns,
 * so any damage must be a `data` error naming the object, never a shorter, empty or altered entry.
 */
import { crc32 } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import { Message, RecordBatch, RecordBatchStreamWriter, Schema } from 'apache-arrow';
import { isQuiverError } from '../../src/errors.js';
import { RegionLayout } from '../../src/wal/region-layout.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { decodeWalEntry, encodeWalEntry, WAL_TRAILER_BYTES, WRITER_EPOCH_KEY, WRITER_ID_KEY } from '../../src/wal/wal-entry.js';
import { docs, docsSchema } from '../helpers/data.js';
import { mulberry32 } from '../helpers/rng.js';

const schema = new TableSchema(docsSchema, ['id']);
const rows = (ids: number[], v = 1): RecordBatch[] => schema.normalize(docs(ids, v));
const key = new RegionLayout('docs', '00000000-0000-4000-8000-0000000000c7').walEntryKey(7);

const EPOCH = 1234567;
const WRITER = '6f1c2a7e-writer';
const batches = [...rows([1, 2, 3]), ...rows([4]), ...rows([5, 6, 7, 8, 9], 2)];
const entry = encodeWalEntry(schema.stored, { epoch: EPOCH, id: WRITER }, batches).slice();
const streamLength = entry.length - WAL_TRAILER_BYTES;

/** Byte offsets where each IPC message starts, then where the stream ends (before the trailer). */
function messageBoundaries(stream: Uint8Array): number[] {
  const view = new DataView(stream.buffer, stream.byteOffset, stream.byteLength);
  const starts: number[] = [];
  let at = 0;
  while (view.getInt32(at + 4, true) !== 0) {
    starts.push(at);
    const metadataLength = view.getInt32(at + 4, true);
    at += 8 + metadataLength + Number(Message.decode(stream.subarray(at + 8, at + 8 + metadataLength)).bodyLength);
  }
  return [...starts, at, at + 8]; // ..., end-of-stream marker, end of stream
}

/** A stream plus a trailer that matches it, as the encoder would write it for these bytes. */
function withTrailer(stream: Uint8Array): Uint8Array {
  const out = Buffer.alloc(stream.length + WAL_TRAILER_BYTES);
  out.set(stream);
  out.write('QWAL', stream.length, 'latin1');
  out.writeUInt32LE(crc32(stream), stream.length + 4);
  out.writeBigUInt64LE(BigInt(stream.length), stream.length + 8);
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

/** Decoding `bytes` must fail with a data error naming the object; returns the message. */
function rejects(t: ExecutionContext, bytes: Uint8Array, label: string): string {
  try {
    const decoded = decodeWalEntry(bytes, key);
    t.fail(`${label}: decoded as an entry of epoch ${decoded.writerEpoch} with ${decoded.batches.length} batches`);
    return '';
  } catch (e) {
    t.true(isQuiverError(e, 'data'), `${label}: ${String(e)}`);
    const message = (e as Error).message;
    t.true(message.startsWith(`corrupt WAL entry ${key}: `), `${label}: ${message}`);
    return message;
  }
}

const ids = (decoded: { batches: RecordBatch[] }) => decoded.batches.flatMap((b) => [...b.getChild('id')!].map(Number));

test('the untouched entry decodes with its epoch, writer id and rows', (t) => {
  const decoded = decodeWalEntry(entry, key);
  t.is(decoded.writerEpoch, EPOCH);
  t.is(decoded.writerId, WRITER);
  t.deepEqual(decoded.batches.map((b) => b.numRows), [3, 1, 5]);
  t.deepEqual(ids(decoded), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
  t.is(decoded.schema.metadata.has(WRITER_EPOCH_KEY) || decoded.schema.metadata.has(WRITER_ID_KEY), false);
});

test('a sentinel (no batches) round-trips, trailer included', (t) => {
  const sentinel = encodeWalEntry(schema.stored, { epoch: 9, id: 'w-9' }, []);
  const decoded = decodeWalEntry(sentinel, key);
  t.is(decoded.writerEpoch, 9);
  t.is(decoded.writerId, 'w-9');
  t.deepEqual(decoded.batches, []);
  t.deepEqual(decoded.schema.fields.map((f) => f.name), schema.stored.fields.map((f) => f.name));
  // Schema message, end-of-stream marker, trailer: cutting the trailer is caught here too.
  t.deepEqual(messageBoundaries(sentinel.subarray(0, sentinel.length - WAL_TRAILER_BYTES)).length, 3);
  t.regex(rejects(t, sentinel.subarray(0, sentinel.length - WAL_TRAILER_BYTES), 'sentinel without trailer'), /trailer missing/);
});

test('an entry cut at a message boundary is rejected, not read as a shorter entry or a sentinel', (t) => {
  const boundaries = messageBoundaries(entry.subarray(0, streamLength));
  // 0, schema, three batches, end-of-stream marker, end of stream.
  t.is(boundaries.length, 6);
  t.is(boundaries[5], streamLength);
  const cuts = [
    [boundaries[1], 'schema only'],
    [boundaries[2], 'schema + 1 batch, no end-of-stream marker'],
    [boundaries[3], 'schema + 2 batches, no end-of-stream marker'],
    [boundaries[4], 'all batches, no end-of-stream marker'],
    [boundaries[5], 'whole stream, trailer missing'],
  ] as const;
  for (const [at, label] of cuts) {
    t.regex(rejects(t, entry.subarray(0, at), label), new RegExp(`truncated or damaged: ${at} bytes, trailer missing`), label);
  }
  // What an older build wrote (no trailer) is rejected the same way.
  const writer = new RecordBatchStreamWriter();
  const metadata = new Map([[WRITER_EPOCH_KEY, '3']]);
  writer.reset(undefined, new Schema(schema.stored.fields, metadata));
  writer.finish();
  t.regex(rejects(t, writer.toUint8Array(true), 'pre-trailer sentinel'), /trailer missing/);
});

test('an entry cut at any byte offset is rejected', (t) => {
  // Every offset (the entry is a few KiB), in the stream and inside the trailer.
  for (let at = 0; at < entry.length; at++) rejects(t, entry.subarray(0, at), `cut at ${at} of ${entry.length}`);
  // Extra bytes after the trailer are damage too.
  t.regex(rejects(t, Uint8Array.from([...entry, 0]), 'one byte appended'), /trailer missing/);
});

test('a changed byte anywhere is rejected: writer_epoch digits, batch data, trailer', (t) => {
  const digits = Buffer.from(entry).indexOf(String(EPOCH), 0, 'latin1');
  t.true(digits > 0 && digits < streamLength, 'the writer_epoch digits are in the schema message');
  const random = mulberry32(0x5eed);
  const flipped = (at: number, mask: number) => {
    const copy = entry.slice();
    copy[at] ^= mask;
    return copy;
  };
  // Each writer_epoch digit changed to another digit ('0'..'8' -> next, '9' -> '8'): the stream
  // still parses and would claim another epoch; only the checksum tells.
  for (let i = 0; i < String(EPOCH).length; i++) {
    const at = digits + i;
    const otherDigit = entry[at] === 0x39 ? 0x38 : entry[at] + 1;
    const message = rejects(t, flipped(at, entry[at] ^ otherDigit), `epoch digit ${i}`);
    t.regex(message, /checksum mismatch \(stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}\)/);
  }
  // Every byte of the entry, once with a random single bit and once with a random byte mask.
  for (let at = 0; at < entry.length; at++) {
    rejects(t, flipped(at, 1 << Math.floor(random() * 8)), `bit flip at ${at}`);
    rejects(t, flipped(at, 1 + Math.floor(random() * 255)), `byte change at ${at}`);
  }
  // What each part of the trailer reports.
  t.regex(rejects(t, flipped(streamLength, 0x20), 'magic'), /trailer missing/);
  t.regex(rejects(t, flipped(streamLength + 4, 0x01), 'stored CRC'), /checksum mismatch/);
  t.regex(rejects(t, flipped(streamLength + 8, 0x08), 'stored length'), new RegExp(`length mismatch: the trailer says the stream has ${streamLength ^ 0x08} bytes, it has ${streamLength}`));
});

test('a checksummed stream that is not one whole stream is still rejected (framing check)', (t) => {
  // As an encoder bug could write them: a valid trailer over a stream with no end-of-stream
  // marker, or with one before the end.
  const [, schemaEnd, firstBatchEnd] = messageBoundaries(entry.subarray(0, streamLength));
  t.regex(rejects(t, withTrailer(entry.subarray(0, schemaEnd)), 'schema only'), /without an end-of-stream marker/);
  t.regex(rejects(t, withTrailer(entry.subarray(0, firstBatchEnd)), 'one batch, no EOS'), /without an end-of-stream marker/);
  const early = new Uint8Array(firstBatchEnd + 16);
  early.set(entry.subarray(0, schemaEnd));
  early.set([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0], schemaEnd);
  early.set(entry.subarray(schemaEnd, firstBatchEnd), schemaEnd + 8);
  early.set([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0], firstBatchEnd + 8);
  t.regex(rejects(t, withTrailer(early), 'EOS before a batch'), new RegExp(`end-of-stream marker at byte ${schemaEnd}, before the stream's end`));
  // The helper itself writes what the encoder writes.
  t.deepEqual(withTrailer(entry.subarray(0, streamLength)), entry);
});
