/**
 * RetryingObjectStore (what is retried, what is not, and the lost-response putIfAbsent case)
 * and the FaultInjectingObjectStore it is tested with.
 */
import test from 'ava';
import { InvalidError, isQuiverError } from '../../src/errors.js';
import { FaultInjectingObjectStore, type StoreOp } from '../../src/storage/fault-store.js';
import { MemoryObjectStore } from '../../src/storage/memory-store.js';
import { RetryingObjectStore } from '../../src/storage/retrying-store.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

function setup(maxAttempts = 5) {
  const inner = new MemoryObjectStore();
  const faults = new FaultInjectingObjectStore(inner);
  const store = new RetryingObjectStore(faults, { maxAttempts, baseDelayMs: 1, maxDelayMs: 5 });
  const callsOf = (op: StoreOp) => faults.calls.filter((c) => c.op === op).length;
  return { inner, faults, store, callsOf };
}

// ---- RetryingObjectStore ----

test('retrying: an unavailable failure is retried until it succeeds', async (t) => {
  const { inner, faults, store, callsOf } = setup();
  await inner.put('k', bytes(1, 2));
  faults.addRule({ ops: ['get'], action: 'fail', nth: 1 }).addRule({ ops: ['get'], action: 'fail', nth: 2 });
  t.deepEqual(await store.get('k'), bytes(1, 2));
  t.is(callsOf('get'), 3);
  t.is(faults.faultsFired, 2);
});

test('retrying: a failed put is retried and lands once', async (t) => {
  const { inner, faults, store, callsOf } = setup();
  faults.addRule({ ops: ['put'], action: 'fail' });
  await store.put('k', bytes(7));
  t.is(callsOf('put'), 2);
  t.deepEqual(await inner.get('k'), bytes(7));
});

test('retrying: already_exists and not_found are answers, not retried', async (t) => {
  const { inner, store, callsOf } = setup();
  await inner.put('k', bytes(1));
  t.true(isQuiverError(await t.throwsAsync(store.putIfAbsent('k', bytes(2))), 'already_exists'));
  t.is(callsOf('putIfAbsent'), 1);
  t.is(callsOf('get'), 0, 'no read-back without an earlier transient failure');
  t.true(isQuiverError(await t.throwsAsync(store.get('missing')), 'not_found'));
  t.is(callsOf('get'), 1);
});

test('retrying: a non-retryable injected error is thrown at once', async (t) => {
  const { faults, store, callsOf } = setup();
  faults.addRule({ ops: ['head'], action: 'fail', error: () => new InvalidError('bad request') });
  t.true(isQuiverError(await t.throwsAsync(store.head('k')), 'invalid'));
  t.is(callsOf('head'), 1);
});

test('retrying: gives up after maxAttempts with the last unavailable error', async (t) => {
  const { inner, faults, store, callsOf } = setup(3);
  faults.addRule({ ops: ['put'], action: 'fail', repeat: true });
  const e = await t.throwsAsync(store.put('k', bytes(1)));
  t.true(isQuiverError(e, 'unavailable'));
  t.is(callsOf('put'), 3);
  t.is(await inner.head('k'), undefined);
});

test('retrying: putIfAbsent whose first attempt landed but looked failed resolves', async (t) => {
  const { inner, faults, store, callsOf } = setup();
  faults.addRule({ ops: ['putIfAbsent'], action: 'fail-after-write' });
  await store.putIfAbsent('wal/1', bytes(1, 2, 3));
  t.is(callsOf('putIfAbsent'), 2, 'the retry met our own object');
  t.is(callsOf('get'), 1, 'and read it back to compare');
  t.deepEqual(await inner.get('wal/1'), bytes(1, 2, 3));
});

test("retrying: putIfAbsent after a transient failure still loses to someone else's bytes", async (t) => {
  const { inner, faults, store } = setup();
  await inner.put('wal/1', bytes(9, 9)); // another writer won while our attempt was failing
  faults.addRule({ ops: ['putIfAbsent'], action: 'fail' });
  const e = await t.throwsAsync(store.putIfAbsent('wal/1', bytes(1, 2, 3)));
  t.true(isQuiverError(e, 'already_exists'), e?.message);
  t.deepEqual(await inner.get('wal/1'), bytes(9, 9));
});

test('retrying: identical bytes without a transient failure are still a collision', async (t) => {
  // A fenced writer re-sending the same entry must learn it lost; only a lost response of our
  // own excuses an "already exists".
  const { inner, store } = setup();
  await inner.put('wal/1', bytes(1, 2, 3));
  t.true(isQuiverError(await t.throwsAsync(store.putIfAbsent('wal/1', bytes(1, 2, 3))), 'already_exists'));
});

// ---- FaultInjectingObjectStore ----

test('faults: fail on the Nth matching call only, touching nothing', async (t) => {
  const inner = new MemoryObjectStore();
  const faults = new FaultInjectingObjectStore(inner).addRule({ ops: ['put'], action: 'fail', nth: 3 });
  await faults.put('a', bytes(1));
  await faults.put('b', bytes(2));
  t.true(isQuiverError(await t.throwsAsync(faults.put('c', bytes(3))), 'unavailable'));
  await faults.put('d', bytes(4));
  t.deepEqual((await inner.list('')).map((m) => m.key), ['a', 'b', 'd']);
  t.is(faults.faultsFired, 1);
  t.deepEqual(faults.calls.map((c) => c.key), ['a', 'b', 'c', 'd']);
});

test('faults: repeat fires on every matching call from the Nth on', async (t) => {
  const faults = new FaultInjectingObjectStore(new MemoryObjectStore()).addRule({ ops: ['head'], action: 'fail', nth: 2, repeat: true });
  await faults.head('x');
  for (let i = 0; i < 3; i++) await t.throwsAsync(faults.head('x'));
  t.is(faults.faultsFired, 3);
  faults.clearRules();
  await t.notThrowsAsync(faults.head('x'));
});

test('faults: rules match by op and key pattern', async (t) => {
  const faults = new FaultInjectingObjectStore(new MemoryObjectStore()).addRule({ ops: ['put', 'putIfAbsent'], key: /^wal\//, action: 'fail', repeat: true });
  await faults.put('manifest/1', bytes(1));
  await t.throwsAsync(faults.put('wal/1', bytes(1)));
  await t.throwsAsync(faults.putIfAbsent('wal/2', bytes(1)));
  await t.notThrowsAsync(faults.get('manifest/1'));
});

test('faults: fail-after-write writes, then throws', async (t) => {
  const inner = new MemoryObjectStore();
  const faults = new FaultInjectingObjectStore(inner).addRule({ ops: ['putIfAbsent'], action: 'fail-after-write' });
  t.true(isQuiverError(await t.throwsAsync(faults.putIfAbsent('k', bytes(5))), 'unavailable'));
  t.deepEqual(await inner.get('k'), bytes(5));
});

test('faults: delay waits, then performs the call', async (t) => {
  const inner = new MemoryObjectStore();
  const faults = new FaultInjectingObjectStore(inner).addRule({ ops: ['put'], action: 'delay', delayMs: 60 });
  const started = performance.now();
  const pending = faults.put('k', bytes(1));
  t.is(await inner.head('k'), undefined, 'not yet written while delayed');
  await pending;
  t.true(performance.now() - started >= 50);
  t.deepEqual(await inner.get('k'), bytes(1));
});

test('faults: a custom error replaces the default', async (t) => {
  const faults = new FaultInjectingObjectStore(new MemoryObjectStore()).addRule({ ops: ['list'], action: 'fail', error: () => new InvalidError('custom') });
  const e = await t.throwsAsync(faults.list(''));
  t.true(isQuiverError(e, 'invalid'));
  t.is(e?.message, 'custom');
});
