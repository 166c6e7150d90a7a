import test from 'ava';
import { MemTable } from '../../src/memtable/memtable.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { docs, docsSchema } from '../helpers/data.js';

const schema = new TableSchema(docsSchema, ['id']);
const rows = (ids: number[]) => schema.normalize(docs(ids, 1));
const limits = { maxBytes: 1e9, maxRows: 10, maxBatches: 3 };

test('nothing is visible before the watermark moves (a real "none" value)', (t) => {
  const mt = new MemTable(1, 0);
  mt.append(rows([1, 2]));
  t.is(mt.snapshot().batchCount, 0);
  mt.markVisible(1);
  t.is(mt.snapshot().batchCount, 1);
});

test('row positions are global offsets; a snapshot never sees later appends', (t) => {
  const mt = new MemTable(1, 0);
  mt.append(rows([1, 2, 3]));
  mt.append(rows([4, 5]));
  t.is(mt.store.rowOffsets[0], 0);
  t.is(mt.store.rowOffsets[1], 3);
  mt.markVisible(2);
  const snap = mt.snapshot();
  mt.append(rows([6]));
  mt.markVisible(3);
  t.is(snap.batchCount, 2);
  t.is(snap.memtable.store.range(0, snap.batchCount).reduce((n, b) => n + b.numRows, 0), 5);
  t.is(mt.rowCount, 6);
});

test('overflow is checked before inserting: rows, batches and bytes', (t) => {
  const mt = new MemTable(1, 0);
  t.false(mt.wouldOverflow(rows([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]), 0, limits), 'an empty MemTable accepts anything');
  mt.append(rows([1, 2, 3, 4, 5, 6]));
  t.true(mt.wouldOverflow(rows([7, 8, 9, 10, 11]), 0, limits), 'rows');
  t.false(mt.wouldOverflow(rows([7, 8, 9, 10]), 0, limits));
  mt.append(rows([7]));
  mt.append(rows([8]));
  t.true(mt.wouldOverflow(rows([9]), 0, limits), 'batches');
  t.true(new MemTable(1, 0).isFull({ ...limits, maxBytes: 0 }));
  const small = new MemTable(1, 0);
  small.append(rows([1]));
  t.true(small.wouldOverflow(rows([2]), 1e6, { ...limits, maxBytes: small.byteSize + 10 }), 'bytes');
});

test('ack waiters resolve exactly at their batch count, once durable and visible; failures reject them', async (t) => {
  const mt = new MemTable(1, 0);
  mt.append(rows([1]));
  mt.append(rows([2]));
  const resolved: number[] = [];
  const w1 = mt.whenAcked(1).then(() => resolved.push(1));
  const w2 = mt.whenAcked(2).then(() => resolved.push(2));
  const turn = () => new Promise((r) => setImmediate(r));
  mt.markDurable(1);
  await turn();
  t.deepEqual(resolved, [], 'durable but not yet visible (indexing still running): no ack');
  mt.markVisible(1);
  await w1;
  await turn();
  t.deepEqual(resolved, [1]);
  // Visible before durable (visibility: memory): the ack still waits for the WAL.
  mt.markVisible(2);
  await turn();
  t.deepEqual(resolved, [1]);
  mt.markDurable(2);
  await w2;
  t.deepEqual(resolved, [1, 2]);
  mt.append(rows([3]));
  const w3 = mt.whenAcked(3);
  mt.failWaiters(new Error('boom'));
  await t.throwsAsync(w3, { message: 'boom' });
});
