import test, { type ExecutionContext } from 'ava';
import type { InvertedIndex } from '../../src/index/fts/inverted-index.js';
import type { ScalarIndex } from '../../src/index/scalar/scalar-index.js';
import { SourceIndexes } from '../../src/index/source-indexes.js';
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

/** A MemTable whose rows go into a full-text index on `text` and a scalar index on `version`. */
function indexedMemTable(clock?: () => number): { mt: MemTable; fts: () => InvertedIndex; scalar: () => ScalarIndex } {
  const indexes = new SourceIndexes(schema);
  indexes.addIndex({ name: 'text_fts', column: 'text', type: 'fts', stem: false }, () => undefined, []);
  indexes.addIndex({ name: 'version_scalar', column: 'version', type: 'scalar' }, () => undefined, []);
  return { mt: new MemTable(1, 0, indexes, clock), fts: () => indexes.index<InvertedIndex>('text_fts')!, scalar: () => indexes.index<ScalarIndex>('version_scalar')! };
}

/** Every row position below `end` holds its own id's word (docs' text is "v row <id> version <v>"), so positions neither skip nor repeat. */
function checkRows(t: ExecutionContext, fts: InvertedIndex, ids: number[], end: number, label: string): void {
  let bad = 0;
  for (let p = 0; p < end; p++) if (!fts.hasPosting(String(ids[p]), p) || (p + 1 < end && fts.hasPosting(String(ids[p + 1]), p))) bad++;
  t.is(bad, 0, `${label}: rows at the wrong position`);
  t.is(fts.stats(['row'], end).docFreq.get('row'), end, `${label}: documents`);
}

test('indexInSlices cuts inside batches; indexedBatches is the exact prefix the indexes hold between slices', async (t) => {
  const { mt, fts, scalar } = indexedMemTable();
  const sizes = [700, 1300, 1, 600, 255];
  const ids: number[] = [];
  for (const n of sizes) {
    const batchIds = Array.from({ length: n }, (_, i) => 10_000 + ids.length + i);
    ids.push(...batchIds);
    mt.append(rows(batchIds));
  }
  const done = mt.indexInSlices(mt.batchCount, undefined, 256);
  let settled = false;
  void done.then(() => (settled = true));
  const seen: number[] = [];
  while (!settled) {
    const held = mt.indexedBatches().reduce((n, b) => n + b.numRows, 0);
    seen.push(held);
    t.is(fts().endPosition < 0 ? 0 : fts().endPosition, held, 'the full-text index holds exactly indexedBatches');
    t.is(scalar().lookup({ op: 'eq', value: 1n }).length, held, 'so does the scalar index');
    checkRows(t, fts(), ids, held, `after ${held} rows`);
    await new Promise((r) => setImmediate(r));
  }
  t.true(seen.some((n) => n > 0 && n < ids.length), 'slices were observed in between');
  for (let i = 1; i < seen.length; i++) t.true(seen[i] - seen[i - 1] <= 256, `slices are at most 256 rows (saw ${seen[i - 1]} → ${seen[i]})`);
  t.is(mt.indexed, mt.batchCount);
  checkRows(t, fts(), ids, ids.length, 'at the end');
});

test('indexInSlices sizes slices by what rows cost: about 4 ms each, between 64 rows and the given maximum', async (t) => {
  // A clock that reads as if each row indexed cost `msPerRow` (the rows handed so far, times it).
  let msPerRow = 0.002;
  let elapsed = 0;
  let lastHeld = 0;
  const { mt, fts } = indexedMemTable(() => {
    const held = fts().endPosition < 0 ? 0 : fts().endPosition;
    elapsed += (held - lastHeld) * msPerRow;
    lastHeld = held;
    return elapsed;
  });
  const ids = Array.from({ length: 6000 }, (_, i) => 10_000 + i);
  mt.append(rows(ids));
  const done = mt.indexInSlices(1, undefined, 512);
  let settled = false;
  void done.then(() => (settled = true));
  const held: number[] = [0];
  const step = async () => {
    await new Promise((r) => setImmediate(r));
    held.push(mt.indexedBatches().reduce((n, b) => n + b.numRows, 0));
  };
  // Cheap rows (2 µs): full 512-row slices.
  for (let i = 0; i < 3; i++) await step();
  t.deepEqual(held.slice(1).map((n, i) => n - held[i]), [512, 512, 512]);
  // Rows 25× dearer (50 µs): the slices shrink towards 4 ms / 0.05 = 80 rows.
  msPerRow = 0.05;
  for (let i = 0; i < 6; i++) await step();
  const sizes = held.slice(1).map((n, i) => n - held[i]);
  const last = sizes.at(-1)!;
  t.true(last >= 80 && last <= 85, `slices ${sizes.join(', ')}`);
  for (let i = 4; i < sizes.length; i++) t.true(sizes[i] <= sizes[i - 1], `shrinking: ${sizes.join(', ')}`);
  // Rows dearer still (1 ms): never below 64 rows.
  msPerRow = 1;
  for (let i = 0; i < 4; i++) await step();
  t.is(held.at(-1)! - held.at(-2)!, 64);
  while (!settled) await step();
  checkRows(t, fts(), ids, ids.length, 'at the end');
});

test('a synchronous indexUpTo in the middle of a slice-cut batch indexes the rest once', async (t) => {
  const { mt, fts } = indexedMemTable();
  const ids = Array.from({ length: 1000 }, (_, i) => 500 + i);
  mt.append(rows(ids));
  const done = mt.indexInSlices(1, undefined, 300);
  await new Promise((r) => setImmediate(r));
  const held = mt.indexedBatches().reduce((n, b) => n + b.numRows, 0);
  t.true(held > 0 && held < 1000, `cut inside the batch (held ${held})`);
  mt.markVisible(1);
  t.is(fts().endPosition, 1000);
  await done;
  t.is(fts().endPosition, 1000);
  checkRows(t, fts(), ids, 1000, 'after markVisible');
  t.is(mt.indexedBatches().reduce((n, b) => n + b.numRows, 0), 1000);
});
