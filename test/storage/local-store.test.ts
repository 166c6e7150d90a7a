import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import test from 'ava';
import { isQuiverError } from '../../src/errors.js';
import { LocalObjectStore } from '../../src/storage/local-store.js';
import { putParts } from '../../src/storage/object-store.js';
import { FaultInjectingObjectStore } from '../../src/storage/fault-store.js';
import { fileWriteWorkerReady, fileWriteWorkerStats, OFF_THREAD_MAX_BYTES, setFileWriteWorkerEnabled } from '../../src/storage/file-write-worker.js';
import { objectStoreConformance } from './conformance.js';
import { STAGE_BYTES, STAGE_MIN_BYTES, stagedWriteStats } from '../../src/storage/staged-write.js';

const makeDir = () => fs.mkdtemp(path.join(os.tmpdir(), 'quiver-local-store-'));

// The default store writes on the file write worker once it is ready; the conformance suite runs
// against both paths.
objectStoreConformance('local', async () => {
  const dir = await makeDir();
  if (!(await fileWriteWorkerReady())) throw new Error('the file write worker did not start');
  return { store: new LocalObjectStore(dir), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
});
objectStoreConformance('local (writes on the event loop)', async () => {
  const dir = await makeDir();
  return { store: new LocalObjectStore(dir, { writeThread: false }), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
});

/** Every file under `dir`, relative, sorted (temp files included). */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { recursive: true, withFileTypes: true })) if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
  return out.sort();
}

test.serial('local: the file write worker does the writes, with the same outcomes as the event loop, and leaves no temp file', async (t) => {
  t.true(await fileWriteWorkerReady());
  const outcomes: Record<string, unknown[]> = {};
  for (const writeThread of [true, false]) {
    const dir = await makeDir();
    t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
    const store = new LocalObjectStore(dir, { writeThread });
    const jobs0 = fileWriteWorkerStats.jobs;
    const seen: unknown[] = [];
    const kindOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e) => (isQuiverError(e) ? e.kind : `not a QuiverError: ${e}`));
    seen.push(await kindOf(store.putIfAbsent('wal/000001', bytes(1, 2))));
    seen.push(await kindOf(store.putIfAbsent('wal/000001', bytes(9)))); // taken: already_exists
    seen.push(await kindOf(putParts(store, 'gen/a', [bytes(3), bytes(4, 5)])));
    seen.push(await kindOf(store.put('gen/a', bytes(6)))); // replaced
    seen.push(await kindOf(store.put('gen/a/b', bytes(7)))); // an object where a directory must be
    seen.push(await store.get('wal/000001'), await store.get('gen/a'));
    outcomes[String(writeThread)] = seen;
    // (The last put fails creating its directory, on this thread, before any file is written.)
    t.is(fileWriteWorkerStats.jobs - jobs0, writeThread ? 4 : 0, writeThread ? 'every write went to the worker' : 'none did');
    t.deepEqual(await filesUnder(dir), ['gen/a', 'wal/000001'], 'no temp file is left behind, and nothing else');
  }
  t.deepEqual(outcomes.true, outcomes.false);
  t.deepEqual(outcomes.true!.slice(0, 5), ['ok', 'already_exists', 'ok', 'ok', 'storage']);
});

test.serial('local: a worker stopped with a write out fails it as unavailable, and a retry settles it', async (t) => {
  t.true(await fileWriteWorkerReady());
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new LocalObjectStore(dir);
  await store.put('wal/000000', bytes(0)); // the directory exists: the next write goes out without I/O here
  const jobs0 = fileWriteWorkerStats.jobs;
  const write = store.putIfAbsent('wal/000001', bytes(1, 2, 3));
  // The worker's answer is a message (a macrotask): stopping it between microtasks catches the write out.
  for (let i = 0; i < 1000 && fileWriteWorkerStats.jobs === jobs0; i++) await Promise.resolve();
  t.is(fileWriteWorkerStats.jobs, jobs0 + 1, 'the write went to the worker');
  setFileWriteWorkerEnabled(false);
  const e = await t.throwsAsync(write);
  t.true(isQuiverError(e, 'unavailable'), `${e?.name}: ${e?.message}`);
  t.regex(e!.message, /outcome is unknown/);
  setFileWriteWorkerEnabled(true);
  // Whether it landed is unknown; a retry (on the loop now) either writes it or finds it there, never other bytes.
  const retry = await store.putIfAbsent('wal/000001', bytes(1, 2, 3)).then(() => 'ok', (err) => (isQuiverError(err) ? err.kind : String(err)));
  t.true(retry === 'ok' || retry === 'already_exists', retry);
  t.deepEqual(await store.get('wal/000001'), bytes(1, 2, 3));
  t.true(await fileWriteWorkerReady(), 'a new worker starts after one stopped on purpose');
});

test.serial('local: writes carry their bytes to the worker in buffers that come back and are reused; a reused buffer writes only its own bytes', async (t) => {
  t.true(await fileWriteWorkerReady());
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new LocalObjectStore(dir);
  await store.put('warm', bytes(0)); // the directory exists
  const jobs0 = fileWriteWorkerStats.jobs;
  const back0 = fileWriteWorkerStats.buffersBack;
  const shared0 = fileWriteWorkerStats.sharedBack;
  const reused0 = fileWriteWorkerStats.buffersReused;
  // A large write, then smaller ones: each must be its own bytes, never a longer buffer's tail.
  const sizes = [3 << 20, 300 * 1024, (2 << 20) + 5, 70 * 1024, 1 << 20];
  const expected = sizes.map((n, i) => new Uint8Array(n).fill(i + 1));
  for (const [i, data] of expected.entries()) await store.putIfAbsent(`obj/${i}`, data);
  t.is(fileWriteWorkerStats.jobs - jobs0, sizes.length, 'every write went to the worker');
  t.is(fileWriteWorkerStats.buffersBack - back0, sizes.length, 'every buffer came back');
  t.is(fileWriteWorkerStats.sharedBack - shared0, sizes.length, 'as shared memory (no transfer for the collector to count)');
  t.true(fileWriteWorkerStats.buffersReused - reused0 >= sizes.length - 1, 'every write after the first reused a buffer');
  for (const [i, data] of expected.entries()) t.true(Buffer.from(await store.get(`obj/${i}`)).equals(data), `object ${i}: exactly its own bytes`);
});

test.serial('local: a write larger than the worker takes is done on the event loop', async (t) => {
  t.true(await fileWriteWorkerReady());
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new LocalObjectStore(dir);
  const jobs0 = fileWriteWorkerStats.jobs;
  const big = new Uint8Array(OFF_THREAD_MAX_BYTES + 1).fill(7);
  await store.putIfAbsent('big', big);
  t.is(fileWriteWorkerStats.jobs, jobs0, 'not sent to the worker');
  await store.putIfAbsent('small', bytes(1));
  t.is(fileWriteWorkerStats.jobs, jobs0 + 1);
  t.true(Buffer.from(await store.get('big')).equals(big));
});

// Temp files are written next to their target; a crash can leave them behind, and they must
// never show up as objects.
test('local: leftover temp files are not listed', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new LocalObjectStore(dir);
  await store.put('a/b', Uint8Array.from([1]));
  await fs.writeFile(path.join(dir, 'a', '.c.tmp.123456'), 'partial');
  t.deepEqual(await store.list('a/'), [{ key: 'a/b', size: 1 }]);
});

/** Records every directory fsync once done; fails them with `failWith`, or runs `before` first. */
class SyncSpyStore extends LocalObjectStore {
  readonly synced: string[] = [];
  constructor(root: string) {
    super(root, { writeThread: false }); // every directory fsync on this thread, through the hook
  }
  failWith: string | undefined;
  before: ((dir: string) => Promise<void>) | undefined;
  protected override async fsyncDir(dir: string): Promise<void> {
    if (this.failWith) {
      this.synced.push(dir);
      throw Object.assign(new Error(`${this.failWith}: fsync ${dir}`), { code: this.failWith });
    }
    await this.before?.(dir);
    await super.fsyncDir(dir);
    this.synced.push(dir);
  }
}

const bytes = (...values: number[]) => Uint8Array.from(values);
const exists = (file: string) => fs.access(file).then(() => true, () => false);
const twoMinutesAgo = () => new Date(Date.now() - 120_000);

test('local: opening sweeps stale temp files and second hard links, and nothing else', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const before = new LocalObjectStore(dir);
  await before.put('a/obj', bytes(1, 2, 3));
  await before.putIfAbsent('a/b/wal1', bytes(4, 5));
  await before.put('a/report.tmp.txt', bytes(6)); // a user's name with the mark, not a temp file
  // What a crash leaves: a partial write, and a putIfAbsent stopped between link and rm.
  const partial = path.join(dir, 'a', '.obj.tmp.0123456789ab');
  const secondLink = path.join(dir, 'a', 'b', '.wal1.tmp.aaaaaaaaaaaa');
  await fs.writeFile(partial, 'partial');
  await fs.link(path.join(dir, 'a', 'b', 'wal1'), secondLink);
  t.is((await fs.stat(secondLink)).nlink, 2);
  for (const f of [partial, secondLink]) await fs.utimes(f, twoMinutesAgo(), twoMinutesAgo());
  // Another process's write in progress: too young to be a leftover.
  const live = path.join(dir, 'a', '.other.tmp.bbbbbbbbbbbb');
  await fs.writeFile(live, 'in flight');

  const store = await LocalObjectStore.open(dir);
  t.false(await exists(partial));
  t.false(await exists(secondLink));
  t.true(await exists(live), 'a temp file within the grace period is kept');
  t.deepEqual(await store.get('a/obj'), bytes(1, 2, 3));
  t.deepEqual(await store.get('a/b/wal1'), bytes(4, 5));
  t.is((await fs.stat(path.join(dir, 'a', 'b', 'wal1'))).nlink, 1);
  t.deepEqual((await store.list('a/')).map((m) => m.key), ['a/b/wal1', 'a/obj', 'a/report.tmp.txt']);
  // A key the sweep would take for a temp file is refused rather than silently lost later.
  t.true(isQuiverError(await t.throwsAsync(store.put('a/.x.tmp.0a', bytes(1))), 'invalid'));
});

test('local: a store made with new sweeps lazily, before its first operation', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.mkdir(path.join(dir, 'x', 'y'), { recursive: true });
  const leftover = path.join(dir, 'x', 'y', '.k.tmp.0f0f0f0f0f0f');
  await fs.writeFile(leftover, 'partial');
  const store = new LocalObjectStore(dir, { tempGraceMs: 0 });
  t.true(await exists(leftover), 'constructing does no I/O');
  t.is(await store.head('x/y/k'), undefined);
  t.false(await exists(leftover));
});

test('local: a write syncs the parent of every directory it creates, the root included', async (t) => {
  const base = await makeDir();
  t.teardown(() => fs.rm(base, { recursive: true, force: true }));
  const root = path.join(base, 'new', 'root');
  const store = new SyncSpyStore(root);
  await store.put('a/b/c/k', bytes(1));
  const at = (...parts: string[]) => path.join(root, ...parts);
  t.deepEqual([...new Set(store.synced)].sort(), [base, path.join(base, 'new'), root, at('a'), at('a', 'b'), at('a', 'b', 'c')].sort());
  store.synced.length = 0;
  await store.put('a/b/d/k', bytes(2));
  t.deepEqual(store.synced.sort(), [at('a', 'b'), at('a', 'b', 'd')]);
});

test('local: a write into a directory another write just created waits for its ancestors to be synced', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new SyncSpyStore(dir);
  let rootSyncStarted!: () => void;
  const started = new Promise<void>((r) => (rootSyncStarted = r));
  store.before = async (d) => {
    if (d !== dir) return;
    rootSyncStarted();
    await new Promise((r) => setTimeout(r, 100)); // the new "a" is not durable in the root yet
  };
  const first = store.put('a/b/c/k', bytes(1));
  await started;
  await store.put('a/b/d/k', bytes(2));
  t.true(store.synced.includes(dir), 'the second write resolved before "a" was durable in the root');
  await first;
});

test('local: a directory fsync failure fails the write, unless directory fsync is not supported', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new SyncSpyStore(dir);
  for (const code of ['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR']) {
    store.failWith = code;
    await t.notThrowsAsync(store.put(`ok-${code}`, bytes(1)), code);
  }
  store.failWith = 'EIO';
  const e = await t.throwsAsync(store.putIfAbsent('sub/k', bytes(1)));
  t.true(isQuiverError(e, 'storage'), `${e?.name}: ${e?.message}`);
  t.regex(e!.message, /EIO/);
  t.true(store.synced.length > 4, 'the failing fsync was reached');
});

test('local: a refused write is a storage error, not internal and not retryable', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new LocalObjectStore(dir);
  let e;
  if (process.getuid?.() === 0) {
    // Root writes through chmod 0o555; a regular file where a directory must be refuses as surely.
    await store.put('f', bytes(1));
    e = await t.throwsAsync(store.put('f/k', bytes(2)));
  } else {
    const ro = path.join(dir, 'ro');
    await fs.mkdir(ro);
    await fs.chmod(ro, 0o555);
    t.teardown(() => fs.chmod(ro, 0o755));
    e = await t.throwsAsync(store.put('ro/k', bytes(2)));
    t.regex(e!.message, /EACCES/);
  }
  t.true(isQuiverError(e, 'storage'), `${e?.name}: ${e?.message}`);
  t.is(e!.name, 'StorageError');
  t.false((e as { retryable?: boolean }).retryable);
  // A name the file system cannot hold, whoever runs the test.
  const long = await t.throwsAsync(store.put('x'.repeat(300), bytes(1)));
  t.true(isQuiverError(long, 'storage'), `${long?.name}: ${long?.message}`);
});

test('local: keys where the file tree has an object or a directory in the way are not objects', async (t) => {
  const dir = await makeDir();
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  const store = new LocalObjectStore(dir);
  await store.put('f', bytes(1));
  await store.put('d/k', bytes(2));
  await t.notThrowsAsync(store.delete('f/k'), 'deleting a missing object is not an error');
  await t.notThrowsAsync(store.delete('d'));
  t.true(isQuiverError(await t.throwsAsync(store.get('f/k')), 'not_found'));
  t.true(isQuiverError(await t.throwsAsync(store.get('d')), 'not_found'));
  t.deepEqual((await store.list('')).map((m) => m.key), ['d/k', 'f']);
});

test('local: putParts stores exactly the concatenation of its parts (past one writev, empty parts too) and a fault rule on put covers it', async (t) => {
  const dir = await makeDir();
  try {
    const store = await LocalObjectStore.open(dir);
    // 1 300 parts of 0..299 bytes: more than one writev call, some empty.
    const parts = Array.from({ length: 1300 }, (_, i) => Uint8Array.from({ length: (i * 37) % 300 }, (_v, j) => (i + j) & 0xff));
    await putParts(store, 'a/b.bin', parts);
    t.deepEqual(Buffer.from(await store.get('a/b.bin')), Buffer.concat(parts));
    await store.putParts('a/c.bin', [new Uint8Array(0)]);
    t.is((await store.get('a/c.bin')).byteLength, 0);
    // A store without putParts gets the joined bytes; a fault rule on `put` applies to putParts.
    const faulty = new FaultInjectingObjectStore(store);
    faulty.addRule({ ops: ['put'], key: /d\.bin$/, action: 'fail' });
    await t.throwsAsync(putParts(faulty, 'a/d.bin', parts), { message: /./ });
    t.is(await store.head('a/d.bin'), undefined, 'nothing stored when the put failed before storage');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});

test.serial('local: a large write goes out through reused staging buffers, byte for byte (parts across and inside pieces, empty ones too)', async (t) => {
  const dir = await makeDir();
  try {
    // On the event loop: the file write worker takes only smaller writes (and none when off).
    const store = await LocalObjectStore.open(dir, { writeThread: false });
    // ~10.6 MiB in uneven parts: one larger than a staging buffer, several smaller, empty ones.
    const sizes = [0, (5 * STAGE_BYTES) / 4 + 3, 17, 0, 1 << 20, STAGE_BYTES - 1, 300_001, 1, Math.floor((2 * STAGE_BYTES) / 3)];
    const parts = sizes.map((n, i) => Uint8Array.from({ length: n }, (_v, j) => (j * 31 + i * 7) & 0xff));
    const total = sizes.reduce((a, b) => a + b, 0);
    const before = { ...stagedWriteStats };
    await putParts(store, 'big/one.bin', parts);
    await putParts(store, 'big/two.bin', parts);
    const expected = Buffer.concat(parts);
    t.deepEqual(Buffer.from(await store.get('big/one.bin')), expected);
    t.deepEqual(Buffer.from(await store.get('big/two.bin')), expected);
    t.is(stagedWriteStats.writes - before.writes, 2);
    t.is(stagedWriteStats.bytes - before.bytes, 2 * total);
    // The second write found the first one's buffers idle.
    t.true(stagedWriteStats.buffersReused - before.buffersReused >= 2);
    // Below the threshold a write goes out as it is.
    await putParts(store, 'big/small.bin', [new Uint8Array(STAGE_MIN_BYTES - 1).fill(9)]);
    t.is(stagedWriteStats.writes - before.writes, 2);
    t.is((await store.get('big/small.bin')).byteLength, STAGE_MIN_BYTES - 1);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
});
