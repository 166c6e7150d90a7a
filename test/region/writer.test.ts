import test from 'ava';
import { connect, FaultInjectingObjectStore, isQuiverError, MemoryObjectStore, type RegionWriterConfig } from '../../src/quiver.js';
import { decodeWalEntry } from '../../src/wal/wal-entry.js';
import { docs, docsSchema, liveRows, range } from '../helpers/data.js';
import { walPositions } from '../helpers/store-snapshot.js';

async function setup(writer: Partial<RegionWriterConfig> = {}) {
  const mem = new MemoryObjectStore();
  const store = new FaultInjectingObjectStore(mem);
  const db = await connect('memory://', { store, writer: { maxWalFlushIntervalMs: 20, ...writer }, retry: { maxAttempts: 2, baseDelayMs: 1 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  return { mem, store, db, table };
}

/** Holds every generation-file write until the returned function is called. */
function gateGenerationWrites(store: FaultInjectingObjectStore): () => void {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  // Generation files go through put or putParts (Arrow files in parts): gate both.
  const realPut = store.put.bind(store);
  const realPutParts = store.putParts.bind(store);
  store.put = async (key, data) => {
    if (/_gen_/.test(key)) await gate;
    return realPut(key, data);
  };
  store.putParts = async (key, parts) => {
    if (/_gen_/.test(key)) await gate;
    return realPutParts(key, parts);
  };
  return release;
}

const walPuts = (store: FaultInjectingObjectStore) => store.calls.filter((c) => c.op === 'putIfAbsent' && c.key.includes('/wal/')).length;

test('put, upsert by key, delete, scan; reopen reads the same rows', async (t) => {
  const { mem, db, table } = await setup();
  await table.put(docs([1, 2, 3], 1));
  await table.put(docs([2, 3, 4], 2));
  await table.delete([3]);
  t.deepEqual([...(await liveRows(table))].sort(), [[1, 1], [2, 2], [4, 2]]);
  await db.close();
  const db2 = await connect('memory://', { store: mem });
  t.deepEqual(await db2.tableNames(), ['docs']);
  t.deepEqual([...(await liveRows(await db2.openTable('docs')))].sort(), [[1, 1], [2, 2], [4, 2]]);
  await db2.close();
});

test('group commit, leader/follower: a put with nothing in flight is written at once; puts arriving meanwhile share the next entry', async (t) => {
  // The timer is far away: nothing may wait for it.
  const { store, db, table } = await setup({ maxWalFlushIntervalMs: 60_000 });
  await table.put(docs([0], 0)); // opens the writer (claim + sentinel)
  const before = walPuts(store);
  await table.put(docs([100], 1)); // a lone put: written immediately, one entry
  t.is(walPuts(store) - before, 1);
  await Promise.all(range(1, 21).map((i) => table.put(docs([i], 1))));
  // The first of the 20 leads (its own entry); the 19 that arrive while it is in flight follow together.
  t.is(walPuts(store) - before, 3);
  await db.close();
});

test('group commit by timer: with a write stuck in flight, gathered rows are written when the timer fires', async (t) => {
  const { mem, store, db, table } = await setup({ maxWalFlushIntervalMs: 30 });
  await table.put(docs([0], 0));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const realPut = store.putIfAbsent.bind(store);
  let first = true;
  store.putIfAbsent = async (key, data) => {
    if (first && key.includes('/wal/')) {
      first = false;
      await gate; // the leader's write hangs
    }
    return realPut(key, data);
  };
  const before = walPuts(store);
  const leader = table.put(docs([1], 1));
  const followers = Promise.all(range(2, 6).map((i) => table.put(docs([i], 1))));
  // The timer (an upper bound) writes the followers' entry although the leader is still in
  // flight: wait for it (the leader stays stuck until released, so only the timer can write it;
  // the generous deadline only keeps a loaded machine from failing the test).
  const walEntries = async () => (await mem.list('docs/_mem_wal/')).filter((o) => o.key.includes('/wal/')).length;
  const deadline = Date.now() + 10_000;
  while ((await walEntries()) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  t.true((await walEntries()) >= 3);
  release();
  await Promise.all([leader, followers]);
  t.true(walPuts(store) - before >= 1);
  await db.close();
});

test('group commit by size: a full WAL buffer is written at once', async (t) => {
  const { store, db, table } = await setup({ maxWalFlushIntervalMs: 60_000, maxWalBufferSize: 1 });
  await table.put(docs([0], 0));
  const before = walPuts(store);
  await Promise.all(range(1, 11).map((i) => table.put(docs([i], 1))));
  t.is(walPuts(store) - before, 10);
  await db.close();
});

test('an ack never precedes durability: every acknowledged row is already in a WAL entry on storage', async (t) => {
  const { mem, store, db, table } = await setup({ maxWalFlushIntervalMs: 5, maxWalWritesInFlight: 3 });
  store.addRule({ ops: ['putIfAbsent'], key: /\/wal\//, action: 'delay', delayMs: 40, repeat: true });
  const durableIds = async () => {
    const ids = new Set<number>();
    for (const o of await mem.list('docs/_mem_wal/')) {
      if (!o.key.includes('/wal/')) continue;
      for (const b of decodeWalEntry(await mem.get(o.key), o.key).batches) for (const v of b.getChild('id')!) ids.add(Number(v));
    }
    return ids;
  };
  const violations: number[] = [];
  await Promise.all(
    range(0, 30).map(async (i) => {
      await new Promise((r) => setTimeout(r, (i % 10) * 7));
      await table.put(docs([i], 1));
      if (!(await durableIds()).has(i)) violations.push(i);
    }),
  );
  t.deepEqual(violations, []);
  await db.close();
});

test('MemTables freeze before crossing the row limit and flush into generations; the replay cursor advances', async (t) => {
  const { mem, db, table } = await setup({ maxMemtableRows: 50 });
  for (let i = 0; i < 20; i++) await table.put(docs(range(i * 10, i * 10 + 10), 1));
  await table.put(docs(range(0, 30), 2)); // updates cross generations
  await table.flush();
  const gens = (await mem.list('docs/_mem_wal/')).filter((o) => /_gen_\d+\/data\.arrow$/.test(o.key));
  t.true(gens.length >= 4, `generations: ${gens.length}`);
  const rows = await liveRows(table);
  t.is(rows.size, 200);
  for (const [id, v] of rows) t.is(v, id < 30 ? 2 : 1);
  await db.close();
  const db2 = await connect('memory://', { store: mem });
  const reopened = await db2.openTable('docs');
  t.deepEqual(await liveRows(reopened), rows);
  await db2.close();
});

test('a reader snapshot never tears while writes continue', async (t) => {
  const { db, table } = await setup({ maxMemtableRows: 25 });
  for (let i = 0; i < 10; i++) await table.put(docs(range(i * 10, i * 10 + 10), 1));
  const scan = table.scan();
  const first = await scan.next();
  t.false(first.done);
  let seen = first.value!.numRows;
  await Promise.all(range(0, 10).map((i) => table.put(docs(range(1000 + i * 10, 1010 + i * 10), 1))));
  await table.delete(range(0, 50));
  for (let r = await scan.next(); !r.done; r = await scan.next()) seen += r.value.numRows;
  t.is(seen, 100);
  t.is((await liveRows(table)).size, 150);
  await db.close();
});

test("visibility 'memory' shows rows before they are durable; 'durable' does not", async (t) => {
  for (const visibility of ['memory', 'durable'] as const) {
    const { store, db, table } = await setup({ visibility, maxWalFlushIntervalMs: 5 });
    await table.put(docs([0], 0));
    store.addRule({ ops: ['putIfAbsent'], key: /\/wal\//, action: 'delay', delayMs: 200 });
    const pending = table.put(docs([1], 1));
    await new Promise((r) => setTimeout(r, 60));
    t.is((await liveRows(table)).has(1), visibility === 'memory', visibility);
    await pending;
    t.true((await liveRows(table)).has(1));
    await db.close();
  }
});

test('backpressure: a put waits while unflushed MemTables are over the limit, then proceeds', async (t) => {
  const { store, db, table } = await setup({ maxMemtableRows: 10, maxUnflushedMemtableBytes: 1, backpressureTimeoutMs: 60_000 });
  // Generation flushes hang until released: the second put must wait for the first flush.
  const release = gateGenerationWrites(store);
  await table.put(docs(range(0, 10), 1));
  let done = false;
  const p = table.put(docs(range(10, 20), 1)).then(() => (done = true));
  await new Promise((r) => setTimeout(r, 150));
  t.false(done, 'the put is held back');
  release();
  await p;
  t.is((await liveRows(table)).size, 20, 'no row dropped');
  await db.close();
});

test('backpressure: past the timeout a put fails with a retryable error and nothing acknowledged is lost', async (t) => {
  const { store, db, table } = await setup({ maxMemtableRows: 10, maxUnflushedMemtableBytes: 1, backpressureTimeoutMs: 100 });
  const release = gateGenerationWrites(store);
  await table.put(docs(range(0, 10), 1));
  const err = await t.throwsAsync(table.put(docs(range(10, 20), 1)));
  t.true(isQuiverError(err, 'unavailable'), String(err));
  t.true((err as { retryable?: boolean }).retryable);
  t.regex(err!.message, /backpressure/);
  release();
  await table.put(docs(range(10, 20), 1)); // the retry succeeds
  t.deepEqual([...(await liveRows(table)).keys()].sort((a, b) => a - b), range(0, 20));
  await db.close();
});

test('a failed WAL write fails the put (retryable), leaves no gap, and the next put recovers', async (t) => {
  const { mem, store, db, table } = await setup();
  await table.put(docs([1, 2], 1));
  store.addRule({ ops: ['putIfAbsent'], key: /\/wal\//, action: 'fail', repeat: true });
  const err = await t.throwsAsync(table.put(docs([3], 1)));
  t.true(isQuiverError(err, 'unavailable'));
  store.clearRules();
  await table.put(docs([4], 1));
  const positions = await walPositions(mem, 'docs');
  t.deepEqual(positions, range(1, positions.length + 1), 'WAL positions are contiguous');
  const rows = await liveRows(table);
  t.true(rows.has(1) && rows.has(2) && rows.has(4));
  await db.close();
  const db2 = await connect('memory://', { store: mem });
  const again = await liveRows(await db2.openTable('docs'));
  t.true(again.has(1) && again.has(2) && again.has(4));
  await db2.close();
});

test('a WAL write whose response is lost (landed, reported failed) is retried to success', async (t) => {
  const { store, db, table } = await setup();
  await table.put(docs([1], 1));
  store.addRule({ ops: ['putIfAbsent'], key: /\/wal\//, action: 'fail-after-write' });
  await table.put(docs([2], 1));
  t.deepEqual([...(await liveRows(table)).keys()].sort(), [1, 2]);
  await db.close();
});

test('fencing: a newer writer fences the older one; no acknowledged row is lost; the newer data wins', async (t) => {
  const mem = new MemoryObjectStore();
  const dbA = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const a = await dbA.createTable('docs', docsSchema, { primaryKey: 'id' });
  await a.put(docs(range(0, 10), 1));
  const dbB = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const b = await dbB.openTable('docs');
  await b.put(docs(range(5, 15), 2)); // claims the region: epoch 2
  const err = await t.throwsAsync(a.put(docs(range(100, 105), 1)));
  t.true(isQuiverError(err, 'fenced'), String(err));
  t.regex(err!.message, /fenced/);
  const again = await t.throwsAsync(a.put(docs([200], 1)));
  t.true(isQuiverError(again, 'fenced'), 'a fenced writer stays fenced');
  const rows = await liveRows(b);
  t.is(rows.size, 15);
  for (const [id, v] of rows) t.is(v, id < 5 ? 1 : 2);
  t.false(rows.has(100));
  await dbB.close();
  await dbA.close().catch(() => {});
  const dbC = await connect('memory://', { store: mem });
  t.deepEqual(await liveRows(await dbC.openTable('docs')), rows);
});

test('fencing: an older writer is fenced at its next WAL write even before the newer one writes data', async (t) => {
  const mem = new MemoryObjectStore();
  const dbA = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const a = await dbA.createTable('docs', docsSchema, { primaryKey: 'id' });
  await a.put(docs([1], 1));
  const dbB = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const b = await dbB.openTable('docs');
  // Open B's writer without writing data: a delete of a missing key still claims the region.
  await b.delete([999]);
  const err = await t.throwsAsync(a.put(docs([2], 1)));
  t.true(isQuiverError(err, 'fenced'));
  t.deepEqual([...(await liveRows(b)).keys()], [1]);
  await dbB.close();
});

test('bucket regions: rows spread over regions, every key in one region, scans merge them', async (t) => {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id', regionSpec: { kind: 'bucket', column: 'id', buckets: 4 } });
  await table.put(docs(range(0, 200), 1));
  await table.put(docs(range(0, 200, ), 2));
  await table.delete(range(0, 10));
  const regions = new Set((await mem.list('docs/_mem_wal/')).map((o) => o.key.split('/')[2]));
  t.is(regions.size, 4);
  const rows = await liveRows(table);
  t.is(rows.size, 190);
  for (const v of rows.values()) t.is(v, 2);
  await db.close();
  const db2 = await connect('memory://', { store: mem });
  t.is((await liveRows(await db2.openTable('docs'))).size, 190);
});

test('identity regions: one region per value of a key column, registered for readers', async (t) => {
  const { Field, Int64, Schema, Utf8, Table, makeVector, vectorFromArray } = await import('apache-arrow');
  const schema = new Schema([new Field('tenant', new Utf8(), false), new Field('id', new Int64(), false), new Field('v', new Int64(), false)]);
  const rowsOf = (tenants: string[], ids: number[], v: number) =>
    new Table({ tenant: vectorFromArray(tenants, new Utf8()), id: makeVector(BigInt64Array.from(ids.map(BigInt))), v: makeVector(BigInt64Array.from(ids.map(() => BigInt(v)))) });
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const table = await db.createTable('t', schema, { primaryKey: ['tenant', 'id'], regionSpec: { kind: 'identity', column: 'tenant' } });
  await table.put(rowsOf(['a', 'b', 'a', 'c'], [1, 1, 2, 1], 1));
  await table.put(rowsOf(['a'], [1], 2));
  t.is((await mem.list('t/_regions/')).length, 3);
  await db.close();
  const db2 = await connect('memory://', { store: mem });
  const out: string[] = [];
  for await (const b of (await db2.openTable('t')).scan()) for (const r of b) out.push(`${r.tenant}/${r.id}=${r.v}`);
  t.deepEqual(out.sort(), ['a/1=2', 'a/2=1', 'b/1=1', 'c/1=1']);
  const bad = await t.throwsAsync(db2.createTable('u', schema, { primaryKey: 'id', regionSpec: { kind: 'identity', column: 'tenant' } }));
  t.true(isQuiverError(bad, 'invalid'));
});
