/**
 * A custom ObjectStore that knows nothing of Quiver's error classes reports its outcomes with the
 * documented shape (`kind`, optionally `retryable`), and Quiver's retry and not-found handling
 * treat them like its own.
 */
import test from 'ava';
import { isQuiverError, StorageError } from '../../src/errors.js';
import { VersionedStore } from '../../src/manifest/versioned-store.js';
import type { ByteRange, ObjectMeta, ObjectStore } from '../../src/storage/object-store.js';
import { RetryingObjectStore } from '../../src/storage/retrying-store.js';

const bytes = (...values: number[]) => Uint8Array.from(values);
const shaped = (kind: string, message: string) => Object.assign(new Error(message), { kind, retryable: kind === 'unavailable' });

type Op = 'get' | 'put' | 'putIfAbsent' | 'head';

/** A Map-backed store with its own errors; `failNext` queues one failure for an operation. */
class ForeignStore implements ObjectStore {
  readonly description = 'foreign://';
  readonly objects = new Map<string, Uint8Array>();
  readonly calls: Op[] = [];
  private readonly failures = new Map<Op, { error: unknown; afterWrite?: boolean }[]>();

  failNext(op: Op, error: unknown, afterWrite = false): this {
    this.failures.set(op, [...(this.failures.get(op) ?? []), { error, afterWrite }]);
    return this;
  }

  private async run<T>(op: Op, call: () => T): Promise<T> {
    this.calls.push(op);
    const failure = this.failures.get(op)?.shift();
    if (failure && !failure.afterWrite) throw failure.error;
    const result = call();
    if (failure) throw failure.error;
    return result;
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.run('get', () => {
      const data = this.objects.get(key);
      if (!data) throw shaped('not_found', `no ${key}`);
      return range ? data.slice(range.offset, range.length === undefined ? undefined : range.offset + range.length) : data.slice();
    });
  }
  put(key: string, data: Uint8Array): Promise<void> {
    return this.run('put', () => void this.objects.set(key, data.slice()));
  }
  putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    return this.run('putIfAbsent', () => {
      if (this.objects.has(key)) throw shaped('already_exists', `${key} exists`);
      this.objects.set(key, data.slice());
    });
  }
  head(key: string): Promise<ObjectMeta | undefined> {
    return this.run('head', () => {
      const data = this.objects.get(key);
      return data && { key, size: data.length };
    });
  }
  async list(prefix: string): Promise<ObjectMeta[]> {
    return [...this.objects].filter(([k]) => k.startsWith(prefix)).map(([key, v]) => ({ key, size: v.length })).sort((a, b) => (a.key < b.key ? -1 : 1));
  }
  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }
  async close(): Promise<void> {}
}

const retrying = (inner: ObjectStore) => new RetryingObjectStore(inner, { baseDelayMs: 1, maxDelayMs: 2 });

test('custom store: an Error with kind unavailable is retried, and the call succeeds', async (t) => {
  const foreign = new ForeignStore();
  foreign.objects.set('k', bytes(1, 2));
  foreign.failNext('get', Object.assign(new Error('x'), { kind: 'unavailable', retryable: true }));
  t.deepEqual(await retrying(foreign).get('k'), bytes(1, 2));
  t.deepEqual(foreign.calls, ['get', 'get']);
});

test('custom store: a plain object with only kind unavailable is retried too', async (t) => {
  const foreign = new ForeignStore().failNext('put', { kind: 'unavailable' });
  await retrying(foreign).put('k', bytes(3));
  t.deepEqual(foreign.calls, ['put', 'put']);
  t.deepEqual(foreign.objects.get('k'), bytes(3));
});

test('custom store: not_found and storage are answers, not retried', async (t) => {
  const foreign = new ForeignStore().failNext('head', new StorageError('permission denied'));
  const store = retrying(foreign);
  t.true(isQuiverError(await t.throwsAsync(store.get('missing')), 'not_found'));
  t.true(isQuiverError(await t.throwsAsync(store.head('k')), 'storage'));
  t.deepEqual(foreign.calls, ['get', 'head']);
});

test('custom store: a lost putIfAbsent response, then its own already_exists, resolves', async (t) => {
  const foreign = new ForeignStore().failNext('putIfAbsent', shaped('unavailable', 'response lost'), true);
  await retrying(foreign).putIfAbsent('wal/1', bytes(1, 2, 3));
  t.deepEqual(foreign.calls, ['putIfAbsent', 'putIfAbsent', 'get'], 'the retry met our own object and read it back');
});

test('custom store: a not_found between probe and read makes VersionedStore look again', async (t) => {
  const foreign = new ForeignStore();
  const codec = { encode: (n: number) => bytes(n), decode: (b: Uint8Array) => b[0]! };
  const versions = new VersionedStore(foreign, 'doc', 'bin', codec);
  await versions.write(1, 10);
  await versions.write(2, 20);
  // Version 2 is garbage collected after its HEAD probe, before its read.
  const get = foreign.get.bind(foreign);
  foreign.get = async (key, range) => {
    if (key === versions.keyOf(2) && foreign.objects.delete(key)) throw shaped('not_found', `no ${key}`);
    return get(key, range);
  };
  t.deepEqual(await versions.readLatest(), { version: 1, doc: 10 });
});

test('isQuiverError: the shape needs a known kind and, if present, the matching retryable', (t) => {
  t.true(isQuiverError({ kind: 'fenced' }, 'fenced'));
  t.true(isQuiverError(Object.assign(new Error('x'), { kind: 'data', retryable: false })));
  t.false(isQuiverError({ kind: 'not_found' }, 'fenced'));
  t.false(isQuiverError({ kind: 'nope' }));
  t.false(isQuiverError({ kind: 'toString' }));
  t.false(isQuiverError({ kind: 'unavailable', retryable: false }));
  t.false(isQuiverError({ kind: 'not_found', retryable: true }));
  t.false(isQuiverError({ kind: 'invalid', retryable: 'no' }));
  for (const v of [null, undefined, 'unavailable', 42, new Error('plain')]) t.false(isQuiverError(v));
  const storage = new StorageError('read-only file system');
  t.true(isQuiverError(storage, 'storage'));
  t.false(storage.retryable);
  t.is(storage.name, 'StorageError');
});
