/**
 * Regression tests for the ways a second writer, a retry or a takeover could lose or resurrect
 * data (issue: two writers, one region). Each reproduces one defect as an exact interleaving;
 * the simulation (test/sim/) explores the rest.
 */
import test from 'ava';
import { connect, type Database, FaultInjectingObjectStore, isQuiverError, MemoryObjectStore, RetryingObjectStore, StorageError, type Table, UnavailableError } from '../../src/quiver.js';
import { RegionManifestStore } from '../../src/manifest/region-manifest-store.js';
import type { RegionWriter } from '../../src/region/region-writer.js';
import type { ObjectStore } from '../../src/storage/object-store.js';
import { WalAppender } from '../../src/wal/wal-appender.js';
import { encodeWalEntry } from '../../src/wal/wal-entry.js';
import { RegionLayout } from '../../src/wal/region-layout.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { docs, docsSchema, liveRows, range } from '../helpers/data.js';
import { type Runtime, systemRuntime } from '../../src/util/runtime.js';

const REGION = '00000000-0000-4000-8000-000000000001';

/** A store whose writes to keys matching `pattern` wait until `open()` is called. */
function gated(inner: ObjectStore, pattern: RegExp) {
  let release!: () => void;
  let gate = Promise.resolve();
  const store = Object.create(inner) as ObjectStore;
  store.putIfAbsent = async (key, data) => {
    if (pattern.test(key)) await gate;
    return inner.putIfAbsent(key, data);
  };
  return {
    store,
    close: () => (gate = new Promise<void>((r) => (release = r))),
    open: () => release(),
  };
}

const manifestsOf = (mem: MemoryObjectStore, table = 'docs') => mem.list(`${table}/_mem_wal/`).then((l) => l.filter((o) => /\/manifest\/[01]{64}\.binpb$/.test(o.key)).length);

async function writerOf(table: Table): Promise<RegionWriter> {
  const writers = (table as unknown as { writers: Map<string, Promise<RegionWriter>> }).writers;
  return [...writers.values()][0];
}

test('defect 1: a claim that failed transiently does not take another writer\'s identical-looking claim for its own', async (t) => {
  const mem = new MemoryObjectStore();
  await new RegionManifestStore(mem, 'r/manifest', REGION).claimEpoch(1, 'writer-0'); // version 1
  // A's create of version 2 fails before reaching storage; meanwhile B claims version 2.
  const storeA = Object.create(mem) as ObjectStore;
  let first = true;
  storeA.putIfAbsent = async (key, data) => {
    if (first && key.endsWith('.binpb')) {
      first = false;
      await new RegionManifestStore(mem, 'r/manifest', REGION).claimEpoch(1, 'writer-B');
      throw new UnavailableError('connection reset');
    }
    return mem.putIfAbsent(key, data);
  };
  const claimA = new RegionManifestStore(new RetryingObjectStore(storeA, { baseDelayMs: 1 }), 'r/manifest', REGION).claimEpoch(1, 'writer-A');
  const err = await t.throwsAsync(claimA);
  t.true(isQuiverError(err, 'fenced'), String(err));
  const latest = await new RegionManifestStore(mem, 'r/manifest', REGION).readLatest();
  t.like(latest, { version: 2, writerEpoch: 2, writerId: 'writer-B' });
});

test('defect 1: a WAL collision with an entry of the same epoch but another writer is a fence, not an ack', async (t) => {
  const mem = new MemoryObjectStore();
  const schema = new TableSchema(docsSchema, ['id']);
  const layout = new RegionLayout('docs', REGION);
  await mem.putIfAbsent(layout.walEntryKey(1), encodeWalEntry(schema.stored, { epoch: 2, id: 'other' }, schema.normalize(docs([9], 9))));
  const appender = new WalAppender(mem, layout, schema.stored, { epoch: 2, id: 'me' }, 1, 1);
  const err = await t.throwsAsync(appender.append(schema.normalize(docs([1], 1))).durable);
  t.true(isQuiverError(err, 'fenced'), String(err));
  t.is(appender.durablePosition, 0, 'nothing acknowledged');
});

test('defect 2: a fenced writer\'s WAL entry that lands after the new writer flushed past its sentinel is never applied', async (t) => {
  const mem = new MemoryObjectStore();
  const g = gated(mem, /\/wal\//);
  const writer = { maxWalFlushIntervalMs: 0, maxWalBufferSize: 1, maxWalWritesInFlight: 4 };
  const dbA = await connect('memory://', { store: g.store, writer });
  const a = await dbA.createTable('docs', docsSchema, { primaryKey: 'id' });
  await a.put(docs([1], 1)); // acknowledged: positions 1 (sentinel), 2
  g.close(); // A's next WAL writes hang in flight
  const zombies = [a.put(docs([1], 2)), a.put(docs([2], 2)), a.put(docs([1], 3))]; // positions 3, 4, 5
  for (const z of zombies) z.catch(() => {});
  await new Promise((r) => setTimeout(r, 10));
  // B takes over: sentinel at 3 (A's 3 is not there yet), its own entry at 4, then a flush
  // moves the cursor to 4, past B's sentinel.
  const dbB = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const b = await dbB.openTable('docs');
  await b.put(docs([1], 10));
  await b.flush();
  // A's writes land now: 3 and 4 collide, 5 lands after B's cursor.
  g.open();
  await Promise.allSettled(zombies);
  const regionId = Object.keys(await b.writerStats())[0];
  t.truthy(await mem.head(new RegionLayout('docs', regionId).walEntryKey(5)), 'the zombie entry landed');
  // A fresh reader (tail) and a fresh writer (replay) must both keep B's acknowledged version.
  const dbC = await connect('memory://', { store: mem });
  t.is((await liveRows(await dbC.openTable('docs'))).get(1), 10);
  const dbD = await connect('memory://', { store: mem });
  const d = await dbD.openTable('docs');
  await d.put(docs([50], 1)); // opens D's writer: replays from the cursor
  t.is((await liveRows(d)).get(1), 10);
  await Promise.all([dbB.close(), dbD.close(), dbC.close()]);
  await dbA.close().catch(() => {});
});

test('defect 3: a generation flush fails the writer at once with a permanent error\'s own kind; the rows stay in the WAL', async (t) => {
  t.timeout(10_000); // retrying a permanent error forever would hang here
  const mem = new MemoryObjectStore();
  const store = new FaultInjectingObjectStore(mem);
  const db = await connect('memory://', { store, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.put(docs([1, 2], 1));
  store.addRule({ ops: ['put'], key: /data\.arrow$/, action: 'fail', repeat: true, error: () => new StorageError('permission denied') });
  const err = await t.throwsAsync(table.flush());
  t.true(isQuiverError(err, 'storage'), String(err));
  t.is((await table.writerStats())[Object.keys(await table.writerStats())[0]].state, 'failed');
  store.clearRules();
  const db2 = await connect('memory://', { store: mem });
  t.deepEqual([...(await liveRows(await db2.openTable('docs'))).keys()].sort(), [1, 2]);
  await db.close().catch(() => {});
});

test('defect 4: a manifest commit that landed but was reported failed is not committed twice', async (t) => {
  const mem = new MemoryObjectStore();
  const store = new FaultInjectingObjectStore(mem);
  const db = await connect('memory://', { store, writer: { maxWalFlushIntervalMs: 0 }, retry: { maxAttempts: 1 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.put(docs([1, 2], 1));
  // The generation's manifest commit lands, but its response is lost and there is no retry left.
  store.addRule({ ops: ['putIfAbsent'], key: /manifest\/[01]{64}\.binpb$/, action: 'fail-after-write' });
  await table.flush();
  const latest = await new RegionManifestStore(mem, `docs/_mem_wal/${Object.keys(await table.writerStats())[0]}/manifest`, '').readLatest();
  const gens = latest!.flushedGenerations.map((g) => g.generation);
  t.deepEqual(gens, [...new Set(gens)], 'each generation listed once');
  t.is(gens.length, 1);
  await db.close();
});

test('defect 7: a permanent WAL error keeps its kind, and later puts do not claim new epochs', async (t) => {
  const mem = new MemoryObjectStore();
  const store = new FaultInjectingObjectStore(mem);
  const db = await connect('memory://', { store, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.put(docs([1], 1));
  const manifests = await manifestsOf(mem);
  store.addRule({ ops: ['putIfAbsent'], key: /\/wal\//, action: 'fail', repeat: true, error: () => new StorageError('read-only file system') });
  for (let i = 0; i < 3; i++) {
    const err = await t.throwsAsync(table.put(docs([2 + i], 1)));
    t.true(isQuiverError(err, 'storage'), String(err));
    t.false((err as unknown as { retryable: boolean }).retryable);
  }
  t.is(await manifestsOf(mem), manifests, 'no new claims');
  await db.close().catch(() => {});
});

test('defect 8: a read in a process whose writer was superseded sees the newer writer\'s acknowledged writes', async (t) => {
  const mem = new MemoryObjectStore();
  const dbA = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const a = await dbA.createTable('docs', docsSchema, { primaryKey: 'id' });
  await a.put(docs([1, 2], 1));
  const dbB = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const b = await dbB.openTable('docs');
  await b.put(docs([1], 2)); // acknowledged before A's read begins
  const rows = await liveRows(a);
  t.is(rows.get(1), 2);
  t.is(rows.get(2), 1);
  const stats = Object.values(await a.writerStats())[0];
  t.is(stats.state, 'fenced', 'the read found out A no longer holds the region');
  await dbB.close();
  await dbA.close().catch(() => {});
});

test('defect 9: replay holds at most about the backpressure threshold, not the whole backlog', async (t) => {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  for (let i = 0; i < 80; i++) await table.put(docs(range(i * 100, i * 100 + 100), 1));
  // No close: the 8 000 rows (about 500 KB in memory) are only in the WAL (a crash).
  const limit = 64 * 1024;
  const db2 = await connect('memory://', { store: mem, writer: { maxMemtableSize: 16 * 1024, maxUnflushedMemtableBytes: limit } });
  const t2 = await db2.openTable('docs');
  await t2.delete([999_999]); // opens the writer: replay
  const stats = Object.values(await t2.writerStats())[0];
  t.true(stats.replayedEntries >= 80);
  t.true(stats.replayPeakUnflushedBytes < limit + 32 * 1024, `peak ${stats.replayPeakUnflushedBytes}`);
  t.is((await liveRows(t2)).size, 8000);
  await db2.close();
});

test('defect 9: a put that timed out under backpressure leaves the waiter list', async (t) => {
  const mem = new MemoryObjectStore();
  const store = new FaultInjectingObjectStore(mem);
  const db = await connect('memory://', { store, writer: { maxWalFlushIntervalMs: 0, maxUnflushedMemtableBytes: 1, backpressureTimeoutMs: 30 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  store.addRule({ ops: ['put'], key: /data\.arrow$/, action: 'delay', delayMs: 300, repeat: true });
  await table.put(docs([1], 1));
  const err = await t.throwsAsync(table.put(docs([2], 1)));
  t.true(isQuiverError(err, 'unavailable'));
  t.is((await writerOf(table)).roomWaiterCount, 0);
  await db.close();
});

test('defect 10: fenced is sticky, also after a lost claim race, and close + openTable recovers', async (t) => {
  const mem = new MemoryObjectStore();
  const setup = await connect('memory://', { store: mem });
  await setup.createTable('docs', docsSchema, { primaryKey: 'id' });
  const dbs: Database[] = [];
  const tables: Table[] = [];
  for (let i = 0; i < 2; i++) {
    dbs.push(await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } }));
    tables.push(await dbs[i].openTable('docs'));
  }
  // Both claim the fresh region at once: one loses the race.
  const results = await Promise.allSettled(tables.map((tb, i) => tb.put(docs([i], 1))));
  const loser = results.findIndex((r) => r.status === 'rejected');
  t.true(loser >= 0, 'one claim lost');
  t.true(isQuiverError((results[loser] as PromiseRejectedResult).reason, 'fenced'));
  const again = await t.throwsAsync(tables[loser].put(docs([7], 1)));
  t.true(isQuiverError(again, 'fenced'), 'the next put does not silently claim again');
  t.is(Object.values(await tables[loser].writerStats())[0].state, 'fenced');
  // The documented recovery: close the table, open it again, write.
  await tables[loser].close();
  const reopened = await dbs[loser].openTable('docs');
  t.not(reopened, tables[loser]);
  await reopened.put(docs([7], 2));
  t.is((await liveRows(reopened)).get(7), 2);
  t.is(Object.values(await reopened.writerStats())[0].state, 'open');
  for (const d of dbs) await d.close().catch(() => {});
});

test('defect 12: writerStats says whether this process holds each region, with which epoch and writer id', async (t) => {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  t.deepEqual(await table.writerStats(), {}, 'opening a table claims nothing');
  await table.put(docs([1], 1));
  const [stats] = Object.values(await table.writerStats());
  t.like(stats, { epoch: 1, state: 'open' });
  t.regex(stats.writerId, /^[0-9a-f-]{36}$/);
  await table.close();
  t.is(Object.values(await table.writerStats()).length, 0);
  await db.close();
});

test('defect 8: with ownershipCheckIntervalMs, a read may miss another process\'s writes only within that interval', async (t) => {
  const mem = new MemoryObjectStore();
  // A's clock is advanced by hand, so a slow machine cannot carry the reads past the interval.
  let skew = 0;
  const runtime: Runtime = { ...systemRuntime, now: () => systemRuntime.now() + skew };
  const dbA = await connect('memory://', { store: mem, runtime, writer: { maxWalFlushIntervalMs: 0, ownershipCheckIntervalMs: 60_000 } });
  const a = await dbA.createTable('docs', docsSchema, { primaryKey: 'id' });
  await a.put(docs([1], 1));
  t.is((await liveRows(a)).get(1), 1); // confirms ownership now
  const dbB = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  await (await dbB.openTable('docs')).put(docs([1], 2));
  t.is((await liveRows(a)).get(1), 1, 'inside the interval: served from A\'s memory, B\'s write not seen yet');
  skew = 60_001;
  t.is((await liveRows(a)).get(1), 2, 'past the interval: A checks, finds B\'s claim, reads from storage');
  t.is(Object.values(await a.writerStats())[0].state, 'fenced');
  await dbB.close();
  await dbA.close().catch(() => {});
});

test('a search by a writer that lost its region answers from storage: another process\'s acknowledged writes are seen', async (t) => {
  const mem = new MemoryObjectStore();
  const dbA = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const a = await dbA.createTable('docs', docsSchema, { primaryKey: 'id' });
  await a.put(docs(range(0, 50), 1, 'alpha'));
  const versionOf = async (req: Parameters<Table['search']>[0]) => {
    const r = await a.search({ ...req, k: 100, columns: ['id', 'version'] });
    return new Map(Array.from({ length: r.numRows }, (_, i) => [Number(r.getChild('id')!.get(i)), Number(r.getChild('version')!.get(i))]));
  };
  t.is((await versionOf({ key: { column: 'id', eq: 7 } })).get(7), 1, 'served from A\'s own writer');
  // B takes the region over and rewrites key 7 and adds key 99; A does not know yet.
  const dbB = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const b = await dbB.openTable('docs');
  await b.put(docs([7, 99], 2, 'beta'));
  t.is((await versionOf({ key: { column: 'id', eq: 7 } })).get(7), 2, 'key search sees B\'s write');
  t.is((await versionOf({ key: { column: 'id', in: [99] } })).get(99), 2, 'and B\'s new key');
  t.is(Object.values(await a.writerStats())[0].state, 'fenced', 'the search found A fenced');
  // B writes again: A's searches keep reading storage.
  await b.put(docs([8], 3, 'gamma'));
  t.is((await versionOf({ key: { column: 'id', eq: 8 } })).get(8), 3);
  await dbB.close();
  await dbA.close().catch(() => {});
});
