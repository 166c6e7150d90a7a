/**
 * The one small interface every storage backend implements.
 *
 * Keys are '/'-separated relative paths ("docs/_mem_wal/<uuid>/wal/0101...arrow"). Every
 * durability guarantee Quiver gives rests on two operations here: `put` replaces an object
 * atomically (readers see the old or the new bytes, never a mix) and `putIfAbsent` creates an
 * object only if nothing is at the key, failing with `AlreadyExistsError` otherwise. WAL entries,
 * manifest versions and table metadata versions are all written with `putIfAbsent`; a collision
 * is how a stale writer learns it is fenced.
 *
 * Errors: a missing object is `NotFoundError`; a lost create race is `AlreadyExistsError`;
 * a transient backend failure is `UnavailableError` (retryable); a refusal no retry fixes
 * (permissions, read-only, I/O error, bad credentials, missing bucket) is `StorageError`.
 * Implementations do not retry; `RetryingObjectStore` adds that in one place.
 *
 * A custom implementation need not use these classes: Quiver recognises errors by shape
 * (`isQuiverError` in errors.ts). Throw any object, usually an Error, with a string `kind` from
 * `ErrorKind` ('not_found', 'already_exists', 'unavailable', 'storage', ...) and, optionally, a
 * boolean `retryable` that must be `true` exactly for 'unavailable':
 * `throw Object.assign(new Error('throttled'), { kind: 'unavailable', retryable: true })`.
 * An error without a known `kind` is never retried.
 *
 * Buffers: `put` / `putIfAbsent` may read `data` only until their promise settles; an
 * implementation that keeps the bytes must copy them (MemoryObjectStore does). The WAL reuses
 * an entry's buffer for a later entry once its write has succeeded (wal/entry-buffer-pool.ts).
 */
import { InvalidError } from '../errors.js';

export interface ObjectMeta {
  key: string;
  size: number;
}

export interface ByteRange {
  /** First byte to read. */
  offset: number;
  /** Bytes to read; to the end of the object when omitted. */
  length?: number;
}

export interface ObjectStore {
  /** Where the store points, for messages ("file:///data", "s3://bucket/prefix", "memory://"). */
  readonly description: string;
  get(key: string, range?: ByteRange): Promise<Uint8Array>;
  put(key: string, data: Uint8Array): Promise<void>;
  /**
   * Optional: `put` of the parts' concatenation, without making it (a generation's rows file is
   * written straight from its batches' buffers). Callers go through `putParts` below, which joins
   * the parts for a store without it.
   */
  putParts?(key: string, parts: readonly Uint8Array[]): Promise<void>;
  putIfAbsent(key: string, data: Uint8Array): Promise<void>;
  head(key: string): Promise<ObjectMeta | undefined>;
  /** Every object whose key starts with `prefix`, sorted by key. */
  list(prefix: string): Promise<ObjectMeta[]>;
  /** Removes the object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/** `put` of the parts' concatenation: the store's own `putParts` when it has one. */
export function putParts(store: ObjectStore, key: string, parts: readonly Uint8Array[]): Promise<void> {
  if (store.putParts) return store.putParts(key, parts);
  return store.put(key, joinParts(parts));
}

export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Joins key parts with '/', ignoring empty parts and stray slashes. */
export function joinKey(...parts: string[]): string {
  return parts
    .map((p) => p.replace(/^\/+|\/+$/g, ''))
    .filter((p) => p.length > 0)
    .join('/');
}

export function checkKey(key: string): void {
  if (key.length === 0 || key.startsWith('/') || key.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new InvalidError(`invalid object key ${JSON.stringify(key)}`);
  }
}
