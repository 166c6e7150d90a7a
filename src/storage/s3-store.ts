/**
 * ObjectStore over S3 (AWS or a compatible server such as Ceph radosgw).
 *
 * - `putIfAbsent` is a PUT with `If-None-Match: *`: the server decides the create race
 *   atomically, so two writers can never both win (412 PreconditionFailed for the loser).
 * - The SDK's own retries are off (`maxAttempts: 1`): `RetryingObjectStore` retries in one place,
 *   and it knows that an "already exists" after a lost response may be our own write.
 * - Checksums only `WHEN_REQUIRED` and bodies always as Uint8Array: the SDK's default
 *   aws-chunked checksum framing is rejected (411) or stored verbatim (corrupt) by some servers.
 * - Keys are relative to the store's prefix, in and out.
 */
import type { AgentOptions } from 'node:http';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type BucketLocationConstraint,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { AlreadyExistsError, InternalError, InvalidError, NotFoundError, type QuiverError, StorageError, UnavailableError } from '../errors.js';
import { type ByteRange, checkKey, type ObjectMeta, type ObjectStore } from './object-store.js';

export interface S3StoreOptions {
  bucket: string;
  /** Key prefix inside the bucket, without leading or trailing '/'. */
  prefix?: string;
  /** Custom endpoint (e.g. http://127.0.0.1:7480); AWS when absent. */
  endpoint?: string;
  /** Default 'us-east-1'. */
  region?: string;
  /** Both or neither; when absent the SDK's default credential chain applies. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Path-style addressing; default true when `endpoint` is set (most S3-compatible servers need it). */
  forcePathStyle?: boolean;
  /** TCP connect timeout (default 5 000 ms). */
  connectionTimeoutMs?: number;
  /** Whole request and response (default 120 000 ms: generously above a large object upload). */
  requestTimeoutMs?: number;
}

/** Splits `s3://bucket/some/prefix` into bucket and prefix (no leading or trailing '/'). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  if (!m) throw new InvalidError(`not an S3 URL: ${JSON.stringify(url)} (expected s3://bucket/prefix)`);
  return { bucket: m[1]!, prefix: (m[2] ?? '').replace(/^\/+|\/+$/g, '') };
}

export class S3ObjectStore implements ObjectStore {
  readonly description: string;
  readonly bucket: string;
  readonly prefix: string;
  /** The underlying client, for operations outside the ObjectStore contract (tests, admin). */
  readonly client: S3Client;
  private readonly region: string;

  constructor(options: S3StoreOptions) {
    if (!options.bucket) throw new InvalidError('S3 store needs a bucket');
    if ((options.accessKeyId === undefined) !== (options.secretAccessKey === undefined)) {
      throw new InvalidError('S3 store needs both accessKeyId and secretAccessKey, or neither');
    }
    this.bucket = options.bucket;
    this.prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
    this.description = this.prefix ? `s3://${this.bucket}/${this.prefix}` : `s3://${this.bucket}`;
    this.region = options.region ?? 'us-east-1';
    const httpAgent: AgentOptions = { keepAlive: true, maxSockets: 64 };
    this.client = createClient({
      region: this.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
      credentials:
        options.accessKeyId !== undefined
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey! }
          : undefined,
      maxAttempts: 1,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // The options form builds the SDK's NodeHttpHandler without importing @smithy/node-http-handler,
      // which is not a direct dependency. `requestTimeout` alone only logs a warning when
      // exceeded; `throwOnRequestTimeout` makes it fail the request.
      requestHandler: {
        connectionTimeout: options.connectionTimeoutMs ?? 5_000,
        requestTimeout: options.requestTimeoutMs ?? 120_000,
        throwOnRequestTimeout: true,
        httpAgent,
        httpsAgent: httpAgent,
      },
    });
  }

  /** Creates the bucket if it does not exist yet (tests and first-time setup). */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(
        new CreateBucketCommand({
          Bucket: this.bucket,
          // us-east-1 is the one region that must not be named as a location constraint.
          CreateBucketConfiguration: this.region === 'us-east-1' ? undefined : { LocationConstraint: this.region as BucketLocationConstraint },
        }),
      );
    } catch (e) {
      const code = errorCode(e);
      if (code === 'BucketAlreadyOwnedByYou' || code === 'BucketAlreadyExists') return;
      throw this.mapError(e, 'create bucket', '');
    }
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    const full = this.fullKey(key);
    // An empty range needs no bytes; S3 cannot even express it (`bytes=a-(a-1)` is invalid).
    if (range?.length === 0) return new Uint8Array(0);
    const header = range ? `bytes=${range.offset}-${range.length === undefined ? '' : range.offset + range.length - 1}` : undefined;
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: full, Range: header }));
      const bytes = res.Body ? await res.Body.transformToByteArray() : new Uint8Array(0);
      if (res.ContentLength !== undefined && bytes.length !== res.ContentLength) {
        throw new UnavailableError(`get ${key} on ${this.description}: short read, ${bytes.length} of ${res.ContentLength} bytes`);
      }
      return bytes;
    } catch (e) {
      // A range starting at or past the end: clamp to empty, as the local and memory stores do.
      if (range && (errorCode(e) === 'InvalidRange' || httpStatus(e) === 416)) return new Uint8Array(0);
      throw this.mapError(e, 'get', key);
    }
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const full = this.fullKey(key);
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: full, Body: data, ContentLength: data.length }));
    } catch (e) {
      throw this.mapError(e, 'put', key);
    }
  }

  async putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    const full = this.fullKey(key);
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key: full, Body: data, ContentLength: data.length, IfNoneMatch: '*' }),
      );
    } catch (e) {
      throw this.mapError(e, 'putIfAbsent', key);
    }
  }

  async head(key: string): Promise<ObjectMeta | undefined> {
    const full = this.fullKey(key);
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: full }));
      return { key, size: res.ContentLength ?? 0 };
    } catch (e) {
      const mapped = this.mapError(e, 'head', key);
      if (mapped.kind === 'not_found') return undefined;
      throw mapped;
    }
  }

  async list(prefix: string): Promise<ObjectMeta[]> {
    // With a store prefix, listing '' must not match sibling prefixes ("a/b" vs "a/bc"), so the
    // store prefix always ends in '/' here.
    const base = this.prefix ? `${this.prefix}/` : '';
    const out: ObjectMeta[] = [];
    let token: string | undefined;
    try {
      do {
        const res = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: base + prefix, ContinuationToken: token }),
        );
        for (const obj of res.Contents ?? []) {
          if (obj.Key === undefined || !obj.Key.startsWith(base)) continue;
          out.push({ key: obj.Key.slice(base.length), size: obj.Size ?? 0 });
        }
        token = res.IsTruncated ? res.NextContinuationToken : undefined;
      } while (token);
    } catch (e) {
      throw this.mapError(e, 'list', prefix);
    }
    // S3 sorts by UTF-8 bytes; sort by JS string order like the other backends.
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    const full = this.fullKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: full }));
    } catch (e) {
      const mapped = this.mapError(e, 'delete', key);
      if (mapped.kind === 'not_found') return;
      throw mapped;
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private fullKey(key: string): string {
    checkKey(key);
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  private mapError(e: unknown, op: string, key: string): QuiverError {
    return mapS3Error(e, op, key, this.description, this.bucket);
  }
}

/**
 * Builds the client. On Node 20 this SDK version prints a one-time NodeVersionSupportWarning
 * (through process.emitWarning) when the first client is built; the SDK's own opt-out is an
 * environment variable read at that moment, so it is set only around the construction and
 * every other warning, and the caller's environment, stay as they were.
 */
function createClient(config: S3ClientConfig): S3Client {
  const optOut = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';
  const previous = process.env[optOut];
  if (previous === undefined) process.env[optOut] = 'true';
  try {
    return new S3Client(config);
  } finally {
    if (previous === undefined) delete process.env[optOut];
  }
}

interface SdkErrorShape {
  name?: string;
  message?: string;
  Code?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number; clockSkewCorrected?: boolean };
}

/** The S3 error code (NoSuchKey, SlowDown, ...) or the SDK's error name (TimeoutError). */
function errorCode(e: unknown): string | undefined {
  const err = e as SdkErrorShape;
  const code = err?.Code ?? err?.name;
  return code === 'Error' ? undefined : code;
}

function httpStatus(e: unknown): number | undefined {
  return (e as SdkErrorShape)?.$metadata?.httpStatusCode;
}

/** S3 error codes that mean "slow down or try again", whatever their HTTP status. */
const TRANSIENT_CODES = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'RequestThrottled',
  'TooManyRequestsException',
  'RequestTimeout',
  'RequestTimeoutException',
  'InternalError',
  'ServiceUnavailable',
  'TimeoutError',
  // A clock-skew refusal: the SDK has just corrected its clock offset from the server's Date,
  // so the next attempt is signed right.
  'RequestTimeTooSkewed',
  'RequestExpired',
  'RequestInTheFuture',
]);

/**
 * S3 refusing for a reason no retry fixes: credentials, permissions, a disabled account or
 * bucket (a missing bucket is handled first, with its own message). Any other 403 counts too (a HEAD answers a bare "Forbidden", without a code).
 */
const REFUSED_CODES = new Set([
  'AccessDenied',
  'AllAccessDisabled',
  'AccountProblem',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
]);

/** Socket-level failures: the request may or may not have reached the server. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** Maps an SDK or socket error to Quiver's kinds; the message names the key and the store. */
export function mapS3Error(e: unknown, op: string, key: string, store: string, bucket: string): QuiverError {
  if (e instanceof InternalError || e instanceof UnavailableError) return e;
  const err = e as SdkErrorShape;
  const status = httpStatus(e);
  const code = errorCode(e);
  const what = key ? `${op} ${key} on ${store}` : `${op} on ${store}`;
  // RGW error bodies carry no <Message>, so the SDK's message is the useless "UnknownError".
  const detail = [code, status !== undefined ? `HTTP ${status}` : undefined, err?.message && err.message !== 'UnknownError' && err.message !== code ? err.message : undefined]
    .filter(Boolean)
    .join(', ');
  const options = { cause: e };

  // A missing bucket is a configuration problem, not an absent object: never let it read as "empty".
  if (code === 'NoSuchBucket') return new StorageError(`${what}: bucket ${bucket} does not exist`, options);
  if (status === 412 || code === 'PreconditionFailed') return new AlreadyExistsError(`object ${key} already exists in ${store}`, options);
  // AWS answers 409 when a conditional write races another in-flight one; retrying resolves it.
  if (code === 'ConditionalRequestConflict') return new UnavailableError(`${what}: conflicting concurrent write (${detail})`, options);
  if (status === 404 || code === 'NoSuchKey' || code === 'NotFound') return new NotFoundError(`object ${key} not found in ${store}`, options);
  if (
    (status !== undefined && (status >= 500 || status === 429)) ||
    (code !== undefined && TRANSIENT_CODES.has(code)) ||
    err?.$metadata?.clockSkewCorrected === true // e.g. a SignatureDoesNotMatch that was only the clock
  ) {
    return new UnavailableError(`${what}: transient S3 error (${detail})`, options);
  }
  if (status === 403 || (code !== undefined && REFUSED_CODES.has(code))) {
    return new StorageError(`${what}: S3 refused the request (${detail}); check the credentials, permissions and bucket`, options);
  }
  if (err?.code !== undefined && NETWORK_CODES.has(err.code)) {
    return new UnavailableError(`${what}: network error (${err.code}: ${err.message})`, options);
  }
  return new InternalError(`${what}: S3 error (${detail || String(e)})`, options);
}
