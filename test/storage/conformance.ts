/**
 * The ObjectStore contract as one ava suite, run against every backend so that they behave
 * alike: code written and tested against the memory store must hold on S3.
 *
 * The backend is made once per test file (an S3 bucket is slow to create) and each test works
 * under its own key prefix, so tests run concurrently without seeing each other's objects.
 * The backend is made lazily by the first test that needs it: when it cannot be made (no
 * radosgw), every contract test fails with that reason, and never skips.
 */
import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { isQuiverError } from '../../src/errors.js';
import type { ObjectStore } from '../../src/storage/object-store.js';

export interface StoreFixture {
  store: ObjectStore;
  cleanup(): Promise<void>;
}

export function objectStoreConformance(name: string, makeStore: () => Promise<StoreFixture>): void {
  let made: Promise<StoreFixture> | undefined;
  const store = async (): Promise<ObjectStore> => (await (made ??= makeStore())).store;

  test.after.always(async () => {
    if (!made) return;
    const fixture = await made.catch(() => undefined);
    if (!fixture) return;
    await fixture.store.close();
    await fixture.cleanup();
  });

  /** A key prefix of the test's own, e.g. "put-overwrites-3f9a1c". */
  const prefixFor = (t: ExecutionContext) =>
    `${t.title.slice(name.length + 2).replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').slice(0, 40)}-${randomBytes(3).toString('hex')}`;

  const contract = (title: string, body: (t: ExecutionContext, s: ObjectStore, p: string) => Promise<void>) =>
    test(`${name}: ${title}`, async (t) => body(t, await store(), prefixFor(t)));

  contract('put/get round trip with binary data', async (t, s, p) => {
    const allBytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const big = new Uint8Array(randomBytes(300_000));
    await s.put(`${p}/bytes.bin`, allBytes);
    await s.put(`${p}/nested/deeper/big.bin`, big);
    await s.put(`${p}/empty`, new Uint8Array(0));
    t.deepEqual(await s.get(`${p}/bytes.bin`), allBytes);
    t.deepEqual(await s.get(`${p}/nested/deeper/big.bin`), big);
    t.deepEqual(await s.get(`${p}/empty`), new Uint8Array(0));
  });

  contract('get returns a copy the caller may keep', async (t, s, p) => {
    const data = Uint8Array.from([1, 2, 3]);
    await s.put(`${p}/k`, data);
    data[0] = 9; // mutating the written buffer must not change the object
    const first = await s.get(`${p}/k`);
    first[1] = 9; // nor mutating a read result
    t.deepEqual(await s.get(`${p}/k`), Uint8Array.from([1, 2, 3]));
  });

  contract('get ranges: offset+length, open end, clamped at the end', async (t, s, p) => {
    const k = `${p}/digits`;
    await s.put(k, new TextEncoder().encode('0123456789'));
    const text = async (offset: number, length?: number) => new TextDecoder().decode(await s.get(k, { offset, length }));
    t.is(await text(2, 3), '234');
    t.is(await text(0, 10), '0123456789');
    t.is(await text(0), '0123456789');
    t.is(await text(7), '789');
    t.is(await text(9, 1), '9');
    t.is(await text(4, 0), '', 'an empty range is empty');
    // Past the end: clamped, and empty once the offset reaches the end (never an error).
    t.is(await text(8, 50), '89');
    t.is(await text(10), '');
    t.is(await text(10, 5), '');
    t.is(await text(1000), '');
    t.is(await text(1000, 5), '');
  });

  contract('get of a missing key is not_found', async (t, s, p) => {
    for (const range of [undefined, { offset: 0 }, { offset: 3, length: 2 }]) {
      const e = await t.throwsAsync(s.get(`${p}/missing`, range));
      t.true(isQuiverError(e, 'not_found'), `${e?.name}: ${e?.message}`);
      t.regex(e!.message, new RegExp(`${p}/missing`));
    }
  });

  contract('put overwrites, longer then shorter', async (t, s, p) => {
    const k = `${p}/k`;
    await s.put(k, Uint8Array.from([1, 1, 1, 1, 1, 1]));
    await s.put(k, Uint8Array.from([2, 2]));
    t.deepEqual(await s.get(k), Uint8Array.from([2, 2]));
    t.is((await s.head(k))?.size, 2);
  });

  contract('putIfAbsent creates once; a second call is already_exists and changes nothing', async (t, s, p) => {
    const k = `${p}/once`;
    await s.putIfAbsent(k, Uint8Array.from([1, 2, 3]));
    t.deepEqual(await s.get(k), Uint8Array.from([1, 2, 3]));
    for (const other of [Uint8Array.from([4, 5, 6, 7]), Uint8Array.from([1, 2, 3])]) {
      const e = await t.throwsAsync(s.putIfAbsent(k, other));
      t.true(isQuiverError(e, 'already_exists'), `${e?.name}: ${e?.message}`);
      t.regex(e!.message, new RegExp(`${p}/once`));
    }
    t.deepEqual(await s.get(k), Uint8Array.from([1, 2, 3]));
  });

  contract('putIfAbsent after delete creates again', async (t, s, p) => {
    const k = `${p}/k`;
    await s.putIfAbsent(k, Uint8Array.from([1]));
    await s.delete(k);
    await s.putIfAbsent(k, Uint8Array.from([2]));
    t.deepEqual(await s.get(k), Uint8Array.from([2]));
  });

  contract('16 racing putIfAbsent calls: exactly one wins and its bytes are stored', async (t, s, p) => {
    const k = `${p}/contended`;
    const payloads = Array.from({ length: 16 }, (_, i) => new Uint8Array(4096 + i).fill(i + 1));
    const results = await Promise.allSettled(payloads.map((data) => s.putIfAbsent(k, data)));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    const losers = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    t.is(winners.length, 1, 'exactly one creator wins');
    t.is(losers.length, 15);
    for (const r of losers) t.true(isQuiverError(r.reason, 'already_exists'), String(r.reason));
    t.deepEqual(await s.get(k), payloads[winners[0]!]);
  });

  contract('head: size of an existing object, undefined when missing', async (t, s, p) => {
    await s.put(`${p}/seven`, new Uint8Array(7));
    await s.put(`${p}/zero`, new Uint8Array(0));
    t.deepEqual(await s.head(`${p}/seven`), { key: `${p}/seven`, size: 7 });
    t.deepEqual(await s.head(`${p}/zero`), { key: `${p}/zero`, size: 0 });
    t.is(await s.head(`${p}/missing`), undefined);
    t.is(await s.head(`${p}/seven/below`), undefined, 'a key below an object is not an object');
  });

  contract('list by prefix: nested, sorted, partial names, no leakage', async (t, s, p) => {
    // Written out of order; "<p>x" is a sibling prefix that must never leak into "<p>/...".
    const sizes: Record<string, number> = { 'b/d/e': 5, a: 1, ba: 4, 'b/c': 3, 'a-z': 2, 'c.json': 6 };
    await Promise.all(Object.entries(sizes).map(([k, n]) => s.put(`${p}/${k}`, new Uint8Array(n))));
    await s.put(`${p}x/other`, new Uint8Array(1));
    const keys = async (prefix: string) => (await s.list(prefix)).map((m) => m.key);

    t.deepEqual(await s.list(`${p}/`), ['a', 'a-z', 'b/c', 'b/d/e', 'ba', 'c.json'].map((k) => ({ key: `${p}/${k}`, size: sizes[k]! })));
    t.deepEqual(await keys(`${p}/b`), [`${p}/b/c`, `${p}/b/d/e`, `${p}/ba`], 'a partial name matches files and folders');
    t.deepEqual(await keys(`${p}/b/`), [`${p}/b/c`, `${p}/b/d/e`]);
    t.deepEqual(await keys(`${p}/b/d`), [`${p}/b/d/e`]);
    t.deepEqual(await keys(`${p}/a`), [`${p}/a`, `${p}/a-z`]);
    t.deepEqual(await keys(`${p}/c.js`), [`${p}/c.json`]);
    t.deepEqual(await keys(`${p}/c.json`), [`${p}/c.json`], 'a full key lists itself');
    t.deepEqual(await keys(`${p}/nothing`), []);
    t.deepEqual(await keys(`${p}/b/d/e/`), []);
    t.deepEqual(await keys(`${p}x`), [`${p}x/other`]);
    t.deepEqual((await keys(p)).length, 7, 'without the slash, the sibling prefix matches too');
  });

  contract('delete removes the object; deleting a missing key is fine', async (t, s, p) => {
    await s.put(`${p}/gone`, Uint8Array.from([1]));
    await s.put(`${p}/kept`, Uint8Array.from([2]));
    await s.delete(`${p}/gone`);
    t.is(await s.head(`${p}/gone`), undefined);
    t.true(isQuiverError(await t.throwsAsync(s.get(`${p}/gone`)), 'not_found'));
    await t.notThrowsAsync(s.delete(`${p}/gone`));
    await t.notThrowsAsync(s.delete(`${p}/never/existed`));
    t.deepEqual(await s.list(`${p}/`), [{ key: `${p}/kept`, size: 1 }]);
  });

  contract('invalid keys are rejected as invalid', async (t, s, p) => {
    for (const key of ['', '/abs', `${p}//double`, `${p}/../escape`, `${p}/./dot`, `${p}/trailing/`]) {
      const e = await t.throwsAsync(s.put(key, new Uint8Array(1)));
      t.true(isQuiverError(e, 'invalid'), `${JSON.stringify(key)}: ${e?.message}`);
      t.true(isQuiverError(await t.throwsAsync(s.get(key)), 'invalid'));
    }
  });
}
