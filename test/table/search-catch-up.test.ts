/**
 * A small write to a table that has been searched brings the search state up to date itself
 * (issue 7: a 20-row put before each query added its rows' liveness and BM25-statistics upkeep
 * to the query): the query after it finds nothing to catch up, and answers exactly what a table
 * that never did that work answers. Larger writes, and writes to a table never searched, leave
 * the work to the next search. Counters, not timings; serial, since the counters are module-wide.
 */
import test from 'ava';
import { Field, FixedSizeList, Float32, Int64, makeData, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, MemoryObjectStore, type Table as QuiverTable } from '../../src/quiver.js';
import { FaultInjectingObjectStore } from '../../src/storage/fault-store.js';
import { livenessWork } from '../../src/memtable/liveness.js';
import { liveCorpusWork } from '../../src/index/fts/live-corpus-stats.js';

const DIM = 4;
const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('body', new Utf8(), true),
  new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true),
]);

function rows(ids: readonly number[], version: number): Table {
  const values = new Float32Array(ids.length * DIM);
  ids.forEach((id, i) => values.set([id % 11, version % 7, (id * version) % 5, 1], i * DIM));
  return new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    body: vectorFromArray(ids.map((id) => `alpha w${id % 17} w${(id + version) % 29} v${version}`), new Utf8()),
    vec: makeVector(makeData({ type: schema.fields[2].type as FixedSizeList, length: ids.length, nullCount: 0, child: makeData({ type: new Float32(), length: values.length, data: values }) })),
  });
}

/** A table of three generations and a MemTable, indexes on body and id. */
async function makeTable(): Promise<QuiverTable> {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('t', schema, { primaryKey: 'id' });
  await table.createIndex('body', { type: 'fts' });
  await table.createIndex('id', { type: 'scalar' });
  for (let g = 0; g < 3; g++) {
    await table.put(rows(Array.from({ length: 400 }, (_, i) => g * 400 + i), 1));
    await table.flush();
  }
  await table.put(rows(Array.from({ length: 100 }, (_, i) => 1200 + i), 1));
  return table;
}

const work = () => livenessWork.rowsScanned + livenessWork.generationKeysApplied + livenessWork.memtableKeyLookups + liveCorpusWork.rowsRead + liveCorpusWork.followers;

/** Every answer the test compares, with ids and scores / distances. */
async function answers(table: QuiverTable): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const query of ['alpha', 'w3 w5', 'v2', 'v1 w7']) {
    const r = await table.search({ text: { column: 'body', query }, k: 2000, columns: ['id'] });
    out.push([...r.getChild('id')!].map(Number), [...r.getChild('_score')!]);
  }
  const v = await table.search({ vector: { column: 'vec', query: [3, 1, 2, 1] }, k: 2000, columns: ['id'] });
  out.push([...v.getChild('id')!].map(Number), [...v.getChild('_distance')!]);
  const k = await table.search({ key: { in: Array.from({ length: 1400 }, (_, i) => BigInt(i)) }, k: 2000, columns: ['id'] });
  out.push([...k.getChild('id')!].map(Number).sort((a, b) => a - b));
  return out;
}

// Keys of every source: the MemTable's, each generation's.
const upserts = [1201, 1250, 3, 77, 399, 400, 555, 799, 800, 1000, 1199, 12, 13, 14, 15, 16, 17, 18, 19, 20];

test.serial('after a search, a small write brings liveness and BM25 statistics up to date; the next search does none of it and answers the same', async (t) => {
  const table = await makeTable();
  const reference = await makeTable();
  // No search yet: a small write leaves everything to the first search.
  const w0 = work();
  await table.put(rows(upserts.slice(0, 5), 2));
  t.is(work(), w0, 'a write to a table never searched does no search upkeep');
  await reference.put(rows(upserts.slice(0, 5), 2));
  await answers(table); // the first search computes it all
  const w1 = work();
  await table.put(rows(upserts, 3));
  await table.delete([BigInt(1202), BigInt(401), BigInt(5)]);
  t.true(work() > w1, 'the small writes did the upkeep');
  t.true(liveCorpusWork.rowsRead > 0);
  const w2 = work();
  const got = await answers(table);
  t.is(work(), w2, 'the search after them found nothing to catch up');
  // The reference table did the same writes without ever having been searched before them: its
  // first search computes liveness and statistics from scratch.
  await reference.put(rows(upserts, 3));
  await reference.delete([BigInt(1202), BigInt(401), BigInt(5)]);
  t.deepEqual(got, await answers(reference));
});

test.serial('a large write leaves the upkeep to the next search, which answers the same', async (t) => {
  const table = await makeTable();
  const reference = await makeTable();
  await answers(table);
  const many = Array.from({ length: 600 }, (_, i) => (i * 7) % 1300);
  const w0 = work();
  await table.put(rows([...new Set(many)], 4));
  t.is(work(), w0, 'a 600-row write does no search upkeep');
  const got = await answers(table);
  t.true(work() > w0, 'the search caught up');
  await reference.put(rows([...new Set(many)], 4));
  t.deepEqual(got, await answers(reference));
});

test.serial('a small write after a flush (a new generation the search state has not taken in) leaves the upkeep to the next search', async (t) => {
  const table = await makeTable();
  const reference = await makeTable();
  await answers(table);
  await table.flush();
  await reference.flush();
  const w0 = work();
  await table.put(rows(upserts, 5));
  t.is(work(), w0, 'no upkeep in the write: the new generation is not applied yet');
  const got = await answers(table);
  t.true(work() > w0);
  // Caught up again: the next small write does its own upkeep.
  const w1 = work();
  await table.put(rows(upserts.slice(0, 4), 6));
  t.true(work() > w1);
  const w2 = work();
  const again = await answers(table);
  t.is(work(), w2);
  await reference.put(rows(upserts, 5));
  t.deepEqual(got, await answers(reference));
  await reference.put(rows(upserts.slice(0, 4), 6));
  t.deepEqual(again, await answers(reference));
});

test.serial('a small write while a search is under way leaves the upkeep to the next search', async (t) => {
  // The ownership check of a search (a HEAD on the next manifest version) is held back, so the
  // search is still under way when the write resolves.
  const faulty = new FaultInjectingObjectStore(new MemoryObjectStore());
  const db = await connect('memory://', { store: faulty, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('t', schema, { primaryKey: 'id' });
  await table.createIndex('body', { type: 'fts' });
  await table.put(rows(Array.from({ length: 400 }, (_, i) => i), 1));
  await table.flush();
  await table.put(rows(Array.from({ length: 50 }, (_, i) => 400 + i), 1));
  await table.search({ text: { column: 'body', query: 'alpha' }, k: 5 });
  let w = work();
  await table.put(rows([1, 2, 3], 2));
  t.true(work() > w, 'no search under way: the write does the upkeep');
  faulty.addRule({ ops: ['head'], key: /manifest/, action: 'delay', delayMs: 300, repeat: true });
  const searching = table.search({ text: { column: 'body', query: 'alpha' }, k: 500 });
  w = work();
  await table.put(rows([4, 5, 6], 3));
  t.is(work(), w, 'no upkeep while a search is under way');
  t.true((await searching).numRows > 0);
  w = work();
  const after = await table.search({ text: { column: 'body', query: 'v3' }, k: 500, columns: ['id'] });
  t.true(work() > w, 'the next search caught up');
  t.deepEqual([...after.getChild('id')!].map(Number).sort((a, b) => a - b), [4, 5, 6]);
  await db.close();
});

test.serial('once SQL has queried a table, its small writes leave the upkeep to the next query', async (t) => {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('t', schema, { primaryKey: 'id' });
  await table.createIndex('body', { type: 'fts' });
  await table.put(rows(Array.from({ length: 400 }, (_, i) => i), 1));
  await table.search({ text: { column: 'body', query: 'alpha' }, k: 5 });
  let w = work();
  await table.put(rows([1, 2, 3], 2));
  t.true(work() > w, 'searched with table.search only: the write does the upkeep');
  await db.sql('SELECT count(*) FROM t');
  w = work();
  await table.put(rows([4, 5, 6], 3));
  t.is(work(), w, 'after a SQL query: no upkeep in the write');
  const r = await db.sql("SELECT id FROM t WHERE match(body, 'v3') ORDER BY id");
  t.deepEqual([...r.getChild('id')!].map(Number), [4, 5, 6]);
  await db.close();
});
