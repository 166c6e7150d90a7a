/**
 * The WAL entry encoder writes IPC streams directly (wal-entry.ts); these tests pin its stream
 * bytes to apache-arrow's RecordBatchStreamWriter byte for byte, check the integrity trailer after
 * the stream, and check the reusable output buffers.
 */
import { crc32 } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import { Dictionary, Field, Int32, RecordBatch, RecordBatchStreamWriter, Schema, Utf8, vectorFromArray, makeData, Struct } from 'apache-arrow';
import { RegionLayout } from '../../src/wal/region-layout.js';
import { MemoryObjectStore } from '../../src/storage/memory-store.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { MessageChannel } from 'node:worker_threads';
import { BufferPool, transferable } from '../../src/util/buffer-pool.js';
import { walEntryBuffers } from '../../src/wal/entry-buffer-pool.js';
import { WalAppender } from '../../src/wal/wal-appender.js';
import { decodeWalEntry, encodeWalEntry, WAL_TRAILER_BYTES, WRITER_EPOCH_KEY, WRITER_ID_KEY } from '../../src/wal/wal-entry.js';
import { docs, docsSchema } from '../helpers/data.js';

const schema = new TableSchema(docsSchema, ['id']);
const rows = (ids: number[], v = 1): RecordBatch[] => schema.normalize(docs(ids, v));

/** What the codec wrote before it encoded directly. */
function viaStreamWriter(stored: Schema, epoch: number, batches: readonly RecordBatch[]): Uint8Array {
  const metadata = new Map(stored.metadata);
  metadata.set(WRITER_EPOCH_KEY, String(epoch));
  metadata.set(WRITER_ID_KEY, `w-${epoch}`);
  const entrySchema = new Schema(stored.fields, metadata);
  const writer = new RecordBatchStreamWriter();
  writer.reset(undefined, entrySchema);
  for (const b of batches) writer.write(new RecordBatch(entrySchema, b.data));
  writer.finish();
  return writer.toUint8Array(true);
}

const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/**
 * Checks the entry's 16-byte trailer ("QWAL", u32 LE CRC-32 of the stream, u64 LE stream length)
 * and returns the stream's bytes as hex, to compare with the writer's.
 */
function streamHex(t: ExecutionContext, entry: Uint8Array): string {
  const streamLength = entry.length - WAL_TRAILER_BYTES;
  const stream = entry.subarray(0, streamLength);
  const trailer = Buffer.from(entry.buffer, entry.byteOffset + streamLength, WAL_TRAILER_BYTES);
  t.is(WAL_TRAILER_BYTES, 16);
  t.is(trailer.toString('latin1', 0, 4), 'QWAL');
  t.is(trailer.readUInt32LE(4), crc32(stream));
  t.is(trailer.readBigUInt64LE(8), BigInt(streamLength));
  t.is(hex(stream.subarray(streamLength - 8)), 'ffffffff00000000', 'the stream ends with the end-of-stream marker');
  return hex(stream);
}

test('direct encoding: the stream is byte-identical to RecordBatchStreamWriter, then the trailer', (t) => {
  const batches = [...rows([1, 2, 3]), ...rows([4]), ...rows([5, 6, 7, 8, 9], 2)];
  t.is(streamHex(t, encodeWalEntry(schema.stored, { epoch: 7, id: 'w-7' }, batches)), hex(viaStreamWriter(schema.stored, 7, batches)));
  // Sentinel (no batches) and sliced batches (non-zero offsets, odd lengths).
  t.is(streamHex(t, encodeWalEntry(schema.stored, { epoch: 3, id: 'w-3' }, [])), hex(viaStreamWriter(schema.stored, 3, [])));
  const sliced = [batches[0].slice(1, 3), batches[2].slice(2)];
  t.is(streamHex(t, encodeWalEntry(schema.stored, { epoch: 9, id: 'w-9' }, sliced)), hex(viaStreamWriter(schema.stored, 9, sliced)));
});

test('alloc is asked for the whole entry, trailer included, and an exact-size buffer suffices', (t) => {
  const batches = rows([1, 2, 3]);
  const asked: number[] = [];
  const out = encodeWalEntry(schema.stored, { epoch: 7, id: 'w-7' }, batches, (size) => {
    asked.push(size);
    return new Uint8Array(size);
  });
  t.deepEqual(asked, [viaStreamWriter(schema.stored, 7, batches).length + WAL_TRAILER_BYTES]);
  t.is(out.length, asked[0]);
  t.is(out.byteLength, out.buffer.byteLength, 'the result is the allocated buffer itself');
  t.is(streamHex(t, out), hex(viaStreamWriter(schema.stored, 7, batches)));
});

test('direct encoding handles null bitmaps, and a dirty reused buffer gives the same bytes', (t) => {
  const s = new Schema([new Field('a', new Int32(), false), new Field('s', new Utf8(), true)]);
  const mk = (values: (string | null)[]) =>
    new RecordBatch(
      s,
      makeData({
        type: new Struct(s.fields),
        length: values.length,
        nullCount: 0,
        children: [makeData({ type: new Int32(), length: values.length, nullCount: 0, data: Int32Array.from(values.map((_, i) => i)) }), vectorFromArray(values, new Utf8()).data[0]],
      }),
    );
  const batches = [mk(['x', null, 'zzz']), mk([null]), mk(['a', 'bb', null, 'dddd', 'e']).slice(1, 4)];
  const expected = hex(viaStreamWriter(s, 1, batches));
  const fresh = encodeWalEntry(s, { epoch: 1, id: 'w-1' }, batches);
  t.is(streamHex(t, fresh), expected);
  const dirty = new Uint8Array(1 << 16).fill(0xab);
  const out = encodeWalEntry(s, { epoch: 1, id: 'w-1' }, batches, () => dirty);
  t.is(out.buffer, dirty.buffer);
  t.is(hex(out), hex(fresh), 'trailer included');
  const decoded = decodeWalEntry(out, 'x');
  t.deepEqual([...decoded.batches[2].getChild('s')!], ['bb', null, 'dddd']);
});

test('schemas with dictionary fields fall back to the stream writer, trailer and alloc included', (t) => {
  const s = new Schema([new Field('d', new Dictionary(new Utf8(), new Int32()), true)]);
  const batch = new RecordBatch({ d: vectorFromArray(['a', 'b', 'a']).data[0] });
  const stored = new RecordBatch(s, batch.data);
  const bytes = encodeWalEntry(s, { epoch: 2, id: 'w-2' }, [stored]);
  t.is(streamHex(t, bytes), hex(viaStreamWriter(s, 2, [stored])));
  t.deepEqual([...decodeWalEntry(bytes, 'x').batches[0].getChild('d')!], ['a', 'b', 'a']);
  const dirty = new Uint8Array(1 << 12).fill(0xab);
  const out = encodeWalEntry(s, { epoch: 2, id: 'w-2' }, [stored], () => dirty);
  t.is(out.buffer, dirty.buffer);
  t.is(hex(out), hex(bytes));
});

test('buffer pool: reuses the smallest fitting buffer, bounds idle bytes, skips small sizes', (t) => {
  const MiB = 1 << 20;
  const pool = new BufferPool(256 * 1024, 8 * MiB);
  const small = pool.take(1000);
  t.is(small.byteLength, 1000);
  const a = pool.take(3 * MiB - 5); // rounded up to whole MiB
  t.is(a.byteLength, 3 * MiB);
  const c = pool.take(300 * 1024); // below 1 MiB: rounded up to a power of two
  t.is(c.byteLength, 512 * 1024);
  const b = pool.take(5 * MiB);
  pool.give(a.subarray(0, 10));
  pool.give(b);
  pool.give(small);
  t.is(pool.idleByteLength, 8 * MiB);
  t.is(pool.take(2 * MiB).buffer, a.buffer);
  t.is(pool.take(4 * MiB).buffer, b.buffer);
  t.is(pool.idleByteLength, 0);
  pool.give(pool.take(6 * MiB));
  pool.give(pool.take(7 * MiB - 1)); // 6 + 7 MiB > 8 MiB: the smaller one is dropped
  t.is(pool.idleByteLength, 7 * MiB);
});

test('buffer pool: a shared pool hands out shared memory, which a post shares and a transfer list leaves out', async (t) => {
  const pool = new BufferPool(64 * 1024, 1 << 20, true);
  const a = pool.take(100 * 1024);
  t.true(a.buffer instanceof SharedArrayBuffer);
  t.is(a.byteLength, 128 * 1024);
  t.false(pool.take(1000).buffer instanceof SharedArrayBuffer, 'small sizes are not pooled, so not shared');
  pool.give(a.subarray(5));
  t.is(pool.take(70 * 1024).buffer, a.buffer, 'reused');
  t.false(new BufferPool().take(300 * 1024).buffer instanceof SharedArrayBuffer, 'pools are not shared by default');

  const plain = new Uint8Array(16);
  t.deepEqual(transferable([a.buffer, plain.buffer]), [plain.buffer]);
  const { port1, port2 } = new MessageChannel();
  t.teardown(() => port1.close());
  const got = new Promise<{ shared: Uint8Array; plain: Uint8Array }>((resolve) => port2.once('message', resolve));
  port1.postMessage({ shared: a, plain }, transferable([a.buffer, plain.buffer]));
  const m = await got;
  t.is(plain.byteLength, 0, 'the plain buffer was transferred');
  t.is(a.byteLength, 128 * 1024, 'the shared one was not');
  m.shared[7] = 42;
  t.is(a[7], 42, 'the receiver writes the sender’s memory');
});

test('appender: entries encoded into reused buffers read back intact', async (t) => {
  const mem = new MemoryObjectStore();
  const layout = new RegionLayout('docs', '00000000-0000-4000-8000-0000000000e1');
  const appender = new WalAppender(mem, layout, schema.stored, { epoch: 1, id: 'w-1' }, 1, 2);
  // Large enough entries to go through the pool (4 096 rows of ~40 B each, and more).
  const big = (base: number) => rows(Array.from({ length: 8192 }, (_, i) => base + i));
  const results = await Promise.all([1, 2, 3, 4].map((k) => appender.append(big(k * 100_000)).durable));
  t.deepEqual(results.map((r) => r.position), [1, 2, 3, 4]);
  t.true(walEntryBuffers.idleByteLength > 0);
  for (const k of [1, 2, 3, 4]) {
    const entry = decodeWalEntry(await mem.get(layout.walEntryKey(k)), 'x');
    t.is(Number(entry.batches[0].getChild('id')!.get(0)), k * 100_000);
    t.is(Number(entry.batches[0].getChild('id')!.get(8191)), k * 100_000 + 8191);
  }
});
