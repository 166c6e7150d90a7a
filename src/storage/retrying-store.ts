/**
 * Adds retries with exponential backoff and jitter to any ObjectStore.
 *
 * Only `UnavailableError` (a transient failure) is retried. Precondition outcomes — a missing
 * object, a lost create race — are answers, not failures, and are never retried.
 *
 * One subtlety: when a `putIfAbsent` attempt fails transiently the write may still have landed
 * (the response was lost). A retry then sees "already exists" for what is in fact our own
 * object. So after a transient failure, an "already exists" answer is checked by reading the
 * object back: identical bytes mean the earlier attempt won, and the call succeeds.
 */
import { AlreadyExistsError, isQuiverError } from '../errors.js';
import { type Runtime, sleep, systemRuntime } from '../util/runtime.js';
import { type ByteRange, type ObjectMeta, type ObjectStore, putParts } from './object-store.js';

export interface RetryOptions {
  /** Attempts in all, including the first (default 5). */
  maxAttempts?: number;
  /** First backoff delay in ms (default 20); doubles each attempt, with full jitter. */
  baseDelayMs?: number;
  /** Upper bound for one delay in ms (default 2000). */
  maxDelayMs?: number;
}

export class RetryingObjectStore implements ObjectStore {
  readonly description: string;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(
    readonly inner: ObjectStore,
    options: RetryOptions = {},
    private readonly runtime: Runtime = systemRuntime,
  ) {
    this.description = inner.description;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.baseDelayMs = options.baseDelayMs ?? 20;
    this.maxDelayMs = options.maxDelayMs ?? 2000;
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.retry(() => this.inner.get(key, range));
  }

  put(key: string, data: Uint8Array): Promise<void> {
    return this.retry(() => this.inner.put(key, data));
  }

  putParts(key: string, parts: readonly Uint8Array[]): Promise<void> {
    return this.retry(() => putParts(this.inner, key, parts));
  }

  async putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    let sawTransient = false;
    try {
      await this.retry(
        () => this.inner.putIfAbsent(key, data),
        () => {
          sawTransient = true;
        },
      );
    } catch (e) {
      if (sawTransient && isQuiverError(e, 'already_exists')) {
        const existing = await this.retry(() => this.inner.get(key));
        if (sameBytes(existing, data)) return;
        throw new AlreadyExistsError((e as Error).message, { cause: e });
      }
      throw e;
    }
  }

  head(key: string): Promise<ObjectMeta | undefined> {
    return this.retry(() => this.inner.head(key));
  }

  list(prefix: string): Promise<ObjectMeta[]> {
    return this.retry(() => this.inner.list(prefix));
  }

  delete(key: string): Promise<void> {
    return this.retry(() => this.inner.delete(key));
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async retry<T>(op: () => Promise<T>, onTransient?: () => void): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await op();
      } catch (e) {
        if (!isQuiverError(e, 'unavailable') || attempt >= this.maxAttempts) throw e;
        onTransient?.();
        const cap = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1));
        await sleep(this.runtime, this.runtime.random() * cap);
      }
    }
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;
}
