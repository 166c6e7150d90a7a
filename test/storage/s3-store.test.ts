/**
 * S3ObjectStore against the radosgw test server (`npm run s3:start`). Fails, never skips, when
 * the server is not running. The pure parts (URL parsing, error mapping) need no server.
 */
import test from 'ava';
import { isQuiverError } from '../../src/errors.js';
import { mapS3Error, parseS3Url, S3ObjectStore } from '../../src/storage/s3-store.js';
import { loadS3Env, makeTestBucketStore, NOT_RUNNING } from '../helpers/s3-env.js';
import { objectStoreConformance } from './conformance.js';

// Under a prefix, so that prefix handling is part of every contract check.
objectStoreConformance('s3', () => makeTestBucketStore('conformance/root'));

test('s3: stores with sibling prefixes ("a" and "ab") in one bucket see only their own keys', async (t) => {
  const { store: root, bucket, cleanup } = await makeTestBucketStore();
  t.teardown(cleanup);
  const env = loadS3Env();
  const a = new S3ObjectStore({ bucket, prefix: '/a/', ...env });
  const ab = new S3ObjectStore({ bucket, prefix: 'ab', ...env });
  t.teardown(() => Promise.all([root.close(), a.close(), ab.close()]).then(() => {}));
  t.is(a.description, `s3://${bucket}/a`);
  await a.put('k', Uint8Array.from([1]));
  await ab.put('k', Uint8Array.from([2]));
  t.deepEqual(await a.list(''), [{ key: 'k', size: 1 }]);
  t.deepEqual(await ab.list(''), [{ key: 'k', size: 1 }]);
  t.deepEqual(await a.get('k'), Uint8Array.from([1]));
  t.deepEqual((await root.list('')).map((m) => m.key), ['a/k', 'ab/k']);
});

test('s3: list follows continuation tokens past 1000 keys', async (t) => {
  const { store, cleanup } = await makeTestBucketStore('paged');
  t.teardown(cleanup);
  t.teardown(() => store.close());
  const keys = Array.from({ length: 1100 }, (_, i) => `many/${String(i).padStart(5, '0')}`);
  // 16 puts in flight: a raw store (no retry layer) on a loaded 2-core machine saw a 64-socket
  // burst time out connecting to the single-node gateway once.
  for (let i = 0; i < keys.length; i += 16) {
    await Promise.all(keys.slice(i, i + 16).map((k) => store.put(k, new Uint8Array(1))));
  }
  const listed = await store.list('many/');
  t.is(listed.length, keys.length);
  t.deepEqual(listed.map((m) => m.key), keys);
});

test('s3: a stopped server is unavailable (retryable), naming the key and the store', async (t) => {
  const store = new S3ObjectStore({ bucket: 'nowhere', prefix: 'p', endpoint: 'http://127.0.0.1:9', accessKeyId: 'x', secretAccessKey: 'y' });
  t.teardown(() => store.close());
  const e = await t.throwsAsync(store.get('some/key'));
  t.true(isQuiverError(e, 'unavailable'), e?.message);
  t.regex(e!.message, /some\/key on s3:\/\/nowhere\/p/);
});

test('s3: a missing bucket is a storage error, not an empty store', async (t) => {
  const store = new S3ObjectStore({ bucket: 'quiver-test-no-such-bucket', ...loadS3Env() });
  t.teardown(() => store.close());
  for (const op of [() => store.get('k'), () => store.list(''), () => store.put('k', new Uint8Array(1))]) {
    const e = await t.throwsAsync(op());
    t.true(isQuiverError(e, 'storage'), e?.message);
    t.regex(e!.message, /bucket quiver-test-no-such-bucket does not exist/);
  }
});

test('s3: wrong credentials are a storage error (not retryable)', async (t) => {
  const store = new S3ObjectStore({ bucket: 'b', ...loadS3Env(), secretAccessKey: 'wrong' });
  t.teardown(() => store.close());
  const e = await t.throwsAsync(store.get('k'));
  t.true(isQuiverError(e, 'storage'), e?.message);
  t.false(isQuiverError(e) && e.retryable);
  t.regex(e!.message, /SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId/);
});

test('s3 helper: a missing env file says how to start the server', (t) => {
  const e = t.throws(() => loadS3Env('/nonexistent/quiver/.s3/env'));
  t.true(e!.message.startsWith(NOT_RUNNING), e!.message);
});

test('s3 helper: an env file pointing at a dead endpoint says how to start the server', async (t) => {
  const env = { endpoint: 'http://127.0.0.1:9', accessKeyId: 'x', secretAccessKey: 'y', region: 'us-east-1' };
  const e = await t.throwsAsync(makeTestBucketStore(undefined, env));
  t.true(e!.message.startsWith(NOT_RUNNING), e!.message);
});

test('parseS3Url', (t) => {
  t.deepEqual(parseS3Url('s3://bucket'), { bucket: 'bucket', prefix: '' });
  t.deepEqual(parseS3Url('s3://bucket/'), { bucket: 'bucket', prefix: '' });
  t.deepEqual(parseS3Url('s3://bucket/some/prefix/'), { bucket: 'bucket', prefix: 'some/prefix' });
  for (const bad of ['bucket/x', 's3://', 's3:///x', 'file:///x', 'S3:/bucket']) {
    t.true(isQuiverError(t.throws(() => parseS3Url(bad)), 'invalid'), bad);
  }
});

test('mapS3Error: S3 answers and socket failures map to Quiver kinds', (t) => {
  const sdk = (name: string, status?: number, extra: object = {}) =>
    Object.assign(new Error('UnknownError'), { name, $metadata: { httpStatusCode: status }, ...extra });
  const kind = (e: unknown) => mapS3Error(e, 'putIfAbsent', 'wal/0001', 's3://b/p', 'b').kind;
  t.is(kind(sdk('PreconditionFailed', 412)), 'already_exists');
  t.is(kind(sdk('ConditionalRequestConflict', 409)), 'unavailable');
  t.is(kind(sdk('NoSuchKey', 404)), 'not_found');
  t.is(kind(sdk('NotFound', 404)), 'not_found'); // HEAD: no body, so no code
  t.is(kind(sdk('NoSuchBucket', 404)), 'storage');
  t.is(kind(sdk('SlowDown', 503)), 'unavailable');
  t.is(kind(sdk('InternalError', 500)), 'unavailable');
  t.is(kind(sdk('Unknown', 502)), 'unavailable');
  t.is(kind(sdk('TooManyRequestsException', 429)), 'unavailable');
  t.is(kind(sdk('RequestTimeout', 400)), 'unavailable');
  t.is(kind(Object.assign(new Error('socket timed out'), { name: 'TimeoutError' })), 'unavailable');
  for (const code of ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE']) {
    t.is(kind(Object.assign(new Error(`${code} happened`), { code })), 'unavailable', code);
  }
  // Refusals no retry fixes: fix the credentials, permissions or bucket first.
  for (const code of ['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AllAccessDisabled']) {
    t.is(kind(sdk(code, 403)), 'storage', code);
  }
  t.is(kind(sdk('Forbidden', 403)), 'storage'); // HEAD: no body, so no code
  t.false(mapS3Error(sdk('AccessDenied', 403), 'get', 'k', 's3://b/p', 'b').retryable);
  // Clock skew: the SDK has corrected its offset, so the next attempt succeeds.
  t.is(kind(sdk('RequestTimeTooSkewed', 403)), 'unavailable');
  t.is(kind(sdk('SignatureDoesNotMatch', 403, { $metadata: { httpStatusCode: 403, clockSkewCorrected: true } })), 'unavailable');
  t.is(kind(sdk('InvalidArgument', 400)), 'internal');
  t.is(kind(new TypeError('bug')), 'internal');
  const e = mapS3Error(sdk('SlowDown', 503), 'put', 'wal/0001', 's3://b/p', 'b');
  t.true(e.retryable);
  t.regex(e.message, /put wal\/0001 on s3:\/\/b\/p.*SlowDown.*HTTP 503/);
  t.is(mapS3Error(sdk('PreconditionFailed', 412), 'putIfAbsent', 'wal/0001', 's3://b/p', 'b').message, 'object wal/0001 already exists in s3://b/p');
});
