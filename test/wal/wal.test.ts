import test from 'ava';
import { RecordBatch, RecordBatchReader } from 'apache-arrow';
import { isQuiverError } from '../../src/errors.js';
import { RegionLayout } from '../../src/wal/region-layout.js';
import { FaultInjectingObjectStore } from '../../src/storage/fault-store.js';
import { MemoryObjectStore } from '../../src/storage/memory-store.js';
import { RetryingObjectStore } from '../../src/storage/retrying-store.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { WalAppender } from '../../src/wal/wal-appender.js';
import { decodeWalEntry, encodeWalEntry, WAL_TRAILER_BYTES } from '../../src/wal/wal-entry.js';
import { replayAndFence, tailWal } from '../../src/wal/wal-replay.js';
import { docs, docsSchema } from '../helpers/data.js';

const schema = new TableSchema(docsSchema, ['id']);
const layout = new RegionLayout('docs', '00000000-0000-4000-8000-000000000001');
const rows = (ids: number[], v = 1): RecordBatch[] => schema.normalize(docs(ids, v));

test('a WAL entry is an Arrow IPC stream carrying writer_epoch, then the QWAL trailer', (t) => {
  const bytes = encodeWalEntry(schema.stored, { epoch: 42, id: "w-42" }, [...rows([1, 2]), ...rows([3])]);
  // IPC stream: continuation marker first, no file magic; the end-of-stream marker, then the trailer.
  t.deepEqual([...bytes.subarray(0, 4)], [0xff, 0xff, 0xff, 0xff]);
  const streamEnd = bytes.length - WAL_TRAILER_BYTES;
  t.deepEqual([...bytes.subarray(streamEnd - 8, streamEnd)], [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
  t.is(Buffer.from(bytes.subarray(streamEnd, streamEnd + 4)).toString('latin1'), 'QWAL');
  // A plain Arrow reader opens the whole object and stops at the end-of-stream marker.
  const plain = RecordBatchReader.from(bytes).readAll();
  t.deepEqual(plain.map((b) => b.numRows), [2, 1]);
  t.is(plain[0].schema.metadata.get('writer_epoch'), '42');
  const entry = decodeWalEntry(bytes, 'x');
  t.is(entry.writerEpoch, 42);
  t.deepEqual(entry.batches.map((b) => b.numRows), [2, 1]);
  t.is(entry.schema.fields.map((f) => f.name).join(), 'id,version,text,vec,_tombstone');
  t.is(Number(entry.batches[1].getChild('id')!.get(0)), 3);
});

test('a sentinel entry has no batches; a corrupt entry is a data error', (t) => {
  t.is(decodeWalEntry(encodeWalEntry(schema.stored, { epoch: 3, id: "w-3" }, []), 's').batches.length, 0);
  const err = t.throws(() => decodeWalEntry(Uint8Array.of(1, 2, 3), 'bad'));
  t.true(isQuiverError(err, 'data'));
  t.is(err!.message, 'corrupt WAL entry bad: truncated or damaged: 3 bytes, trailer missing (no "QWAL" magic 16 bytes from the end)');
});

test('appender: 1-based contiguous positions, acks in position order', async (t) => {
  const mem = new MemoryObjectStore();
  const store = new FaultInjectingObjectStore(mem);
  // Entry 1 is slow, entry 2 fast: entry 2 must not be acknowledged before entry 1.
  store.addRule({ ops: ['putIfAbsent'], nth: 1, action: 'delay', delayMs: 150 });
  const appender = new WalAppender(store, layout, schema.stored, { epoch: 1, id: 'w-1' }, 1, 4);
  const order: number[] = [];
  const a = appender.append(rows([1]));
  const b = appender.append(rows([2]));
  t.is(a.position, 1);
  t.is(b.position, 2);
  const done = [a.durable.then(() => order.push(1)), b.durable.then(() => order.push(2))];
  await new Promise((r) => setTimeout(r, 50));
  t.truthy(await mem.head(layout.walEntryKey(2)), 'entry 2 is written while entry 1 is slow');
  t.deepEqual(order, [], 'but nothing is acknowledged before entry 1 lands');
  await Promise.all(done);
  t.deepEqual(order, [1, 2]);
  t.is(appender.durablePosition, 2);
});

test('appender: an ack never precedes the entry being on storage', async (t) => {
  const mem = new MemoryObjectStore();
  const store = new FaultInjectingObjectStore(mem);
  store.addRule({ ops: ['putIfAbsent'], action: 'delay', delayMs: 30, repeat: true });
  const appender = new WalAppender(store, layout, schema.stored, { epoch: 1, id: 'w-1' }, 1, 2);
  const checks = [1, 2, 3, 4, 5].map(async (i) => {
    const { position, durable } = appender.append(rows([i]));
    await durable;
    return (await mem.head(layout.walEntryKey(position))) !== undefined;
  });
  t.deepEqual(await Promise.all(checks), [true, true, true, true, true]);
});

test('appender: a failed entry fails it and every later one, and the appender stops', async (t) => {
  const store = new FaultInjectingObjectStore(new MemoryObjectStore());
  store.addRule({ ops: ['putIfAbsent'], nth: 2, action: 'fail' });
  const appender = new WalAppender(store, layout, schema.stored, { epoch: 1, id: 'w-1' }, 1, 4);
  const a = appender.append(rows([1]));
  const b = appender.append(rows([2]));
  const c = appender.append(rows([3]));
  await a.durable;
  const eb = await t.throwsAsync(b.durable);
  const ec = await t.throwsAsync(c.durable);
  t.true(isQuiverError(eb, 'unavailable') && eb.retryable);
  t.is(eb, ec);
  await t.throwsAsync(appender.append(rows([4])).durable);
});

test('appender: a write that landed but reported failure is not a fence (retry reads it back)', async (t) => {
  const store = new FaultInjectingObjectStore(new MemoryObjectStore());
  store.addRule({ ops: ['putIfAbsent'], nth: 1, action: 'fail-after-write' });
  const appender = new WalAppender(new RetryingObjectStore(store, { baseDelayMs: 1 }), layout, schema.stored, { epoch: 1, id: 'w-1' }, 1, 1);
  await appender.append(rows([1])).durable;
  t.is(appender.durablePosition, 1);
});

test('appender: colliding with a newer epoch means fenced', async (t) => {
  const mem = new MemoryObjectStore();
  await mem.putIfAbsent(layout.walEntryKey(1), encodeWalEntry(schema.stored, { epoch: 2, id: "w-2" }, []));
  const appender = new WalAppender(mem, layout, schema.stored, { epoch: 1, id: 'w-1' }, 1, 1);
  const err = await t.throwsAsync(appender.append(rows([1])).durable);
  t.true(isQuiverError(err, 'fenced'));
  t.regex(err!.message, /fenced/);
});

test('replay: applies entries in order, fences with a sentinel, skips stale entries after a newer epoch', async (t) => {
  const mem = new MemoryObjectStore();
  await mem.putIfAbsent(layout.walEntryKey(1), encodeWalEntry(schema.stored, { epoch: 1, id: "w-1" }, rows([1])));
  await mem.putIfAbsent(layout.walEntryKey(2), encodeWalEntry(schema.stored, { epoch: 2, id: "w-2" }, [])); // epoch-2 sentinel
  await mem.putIfAbsent(layout.walEntryKey(3), encodeWalEntry(schema.stored, { epoch: 1, id: "w-1" }, rows([99]))); // zombie after fence
  await mem.putIfAbsent(layout.walEntryKey(4), encodeWalEntry(schema.stored, { epoch: 2, id: "w-2" }, rows([2])));
  const applied: number[] = [];
  const result = await replayAndFence(mem, layout, schema.stored, { after: 0, epochFloor: 0 }, { epoch: 3, id: 'w-3' }, (pos) => void applied.push(pos));
  t.deepEqual(applied, [1, 4]);
  t.is(result.skipped, 1);
  t.is(result.sentinelPosition, 5);
  t.is(result.nextPosition, 6);
  t.is(decodeWalEntry(await mem.get(layout.walEntryKey(5)), 's').writerEpoch, 3);
});

test('replay: a gap left by a failed write is plugged, entries after it are skipped, the log is contiguous again', async (t) => {
  const mem = new MemoryObjectStore();
  await mem.putIfAbsent(layout.walEntryKey(1), encodeWalEntry(schema.stored, { epoch: 1, id: "w-1" }, rows([1])));
  // position 2 failed; 3 and 5 landed but were never acknowledged (acks need contiguity)
  await mem.putIfAbsent(layout.walEntryKey(3), encodeWalEntry(schema.stored, { epoch: 1, id: "w-1" }, rows([3])));
  await mem.putIfAbsent(layout.walEntryKey(5), encodeWalEntry(schema.stored, { epoch: 1, id: "w-1" }, rows([5])));
  const applied: number[] = [];
  const result = await replayAndFence(mem, layout, schema.stored, { after: 0, epochFloor: 0 }, { epoch: 2, id: 'w-2' }, (pos) => void applied.push(pos));
  t.deepEqual(applied, [1]);
  t.is(result.sentinelPosition, 2);
  t.is(result.nextPosition, 6);
  for (const p of [1, 2, 3, 4, 5]) t.truthy(await mem.head(layout.walEntryKey(p)), `position ${p} exists`);
  // A later replay reads through to the end, still skipping the stale entries.
  const later: number[] = [];
  await mem.putIfAbsent(layout.walEntryKey(6), encodeWalEntry(schema.stored, { epoch: 2, id: "w-2" }, rows([6])));
  const again = await tailWal(mem, layout, schema.stored, 1, 0, (pos) => void later.push(pos));
  t.deepEqual(later, [1, 6]);
  t.is(again.nextPosition, 7);
});

test('replay: an entry of a newer epoch than the claimed one means fenced', async (t) => {
  const mem = new MemoryObjectStore();
  await mem.putIfAbsent(layout.walEntryKey(1), encodeWalEntry(schema.stored, { epoch: 5, id: "w-5" }, rows([1])));
  const err = await t.throwsAsync(replayAndFence(mem, layout, schema.stored, { after: 0, epochFloor: 0 }, { epoch: 4, id: 'w-4' }, () => {}));
  t.true(isQuiverError(err, 'fenced'));
});

test('replay: a corrupt entry stops it with a data error naming the object; moved aside, it and every later entry are lost', async (t) => {
  const mem = new MemoryObjectStore();
  for (const p of [1, 2, 3]) await mem.putIfAbsent(layout.walEntryKey(p), encodeWalEntry(schema.stored, { epoch: 1, id: 'w-1' }, rows([p])));
  // Position 2 cut at a message boundary (schema and its batch, no end marker, no trailer): it
  // used to read back as a valid entry without rows.
  const whole = await mem.get(layout.walEntryKey(2));
  await mem.put(layout.walEntryKey(2), whole.subarray(0, whole.length - WAL_TRAILER_BYTES - 8));
  const applied: number[] = [];
  const err = await t.throwsAsync(replayAndFence(mem, layout, schema.stored, { after: 0, epochFloor: 0 }, { epoch: 2, id: 'w-2' }, (pos) => void applied.push(pos)));
  t.true(isQuiverError(err, 'data'));
  t.true(err!.message.startsWith(`corrupt WAL entry ${layout.walEntryKey(2)}: truncated`), err!.message);
  t.falsy(await mem.head(layout.walEntryKey(4)), 'no sentinel written');
  t.deepEqual(applied, [1], 'entries before the damaged one were applied in order');
  applied.length = 0;
  await t.throwsAsync(tailWal(mem, layout, schema.stored, 1, 0, () => {}), { message: /corrupt WAL entry/ });
  // The operator accepts the loss and renames the object out of the log (README: "A corrupt WAL
  // entry"): the next writer plugs position 2 with its sentinel and skips entry 3 as stale.
  await mem.put(`${layout.walEntryKey(2)}.corrupt`, whole.subarray(0, whole.length - WAL_TRAILER_BYTES - 8));
  await mem.delete(layout.walEntryKey(2));
  const result = await replayAndFence(mem, layout, schema.stored, { after: 0, epochFloor: 0 }, { epoch: 3, id: 'w-3' }, (pos) => void applied.push(pos));
  t.deepEqual(applied, [1]);
  t.is(result.sentinelPosition, 2);
  t.is(result.skipped, 1);
  t.is(result.nextPosition, 4);
});

test('tail: a damaged entry beyond a gap is not part of the log yet and does not stop the read', async (t) => {
  const mem = new MemoryObjectStore();
  await mem.putIfAbsent(layout.walEntryKey(1), encodeWalEntry(schema.stored, { epoch: 1, id: 'w-1' }, rows([1])));
  // position 2 is still in flight; 3 landed damaged (a torn upload, say)
  await mem.putIfAbsent(layout.walEntryKey(3), new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]));
  const applied: number[] = [];
  const result = await tailWal(mem, layout, schema.stored, 1, 0, (pos) => void applied.push(pos));
  t.deepEqual(applied, [1]);
  t.is(result.nextPosition, 2);
});
