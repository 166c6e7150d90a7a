/**
 * An ObjectStore decorator that times WAL entry writes, so the benchmark can state what one
 * PUT costs — the second half of the ack-latency bound ("one group-commit interval plus one
 * PUT"). It only observes: every call is passed through unchanged.
 */
import type { ByteRange, ObjectMeta, ObjectStore } from '../src/storage/object-store.js';

export class TimingStore implements ObjectStore {
  readonly description: string;
  /** Duration (ms) and size (bytes) of every WAL-entry `putIfAbsent`, in completion order. */
  walPutMs: number[] = [];
  walPutBytes: number[] = [];
  /**
   * When each of those PUTs started (`performance.now()`, same order), so a client that issues
   * one put at a time can split its ack latency into before, during and after the PUT.
   */
  walPutStartMs: number[] = [];

  constructor(readonly inner: ObjectStore) {
    this.description = inner.description;
  }

  reset(): void {
    this.walPutMs = [];
    this.walPutBytes = [];
    this.walPutStartMs = [];
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.inner.get(key, range);
  }
  put(key: string, data: Uint8Array): Promise<void> {
    return this.inner.put(key, data);
  }
  async putIfAbsent(key: string, data: Uint8Array): Promise<void> {
    if (!key.includes('/wal/')) return this.inner.putIfAbsent(key, data);
    const t0 = performance.now();
    await this.inner.putIfAbsent(key, data);
    this.walPutMs.push(performance.now() - t0);
    this.walPutBytes.push(data.length);
    this.walPutStartMs.push(t0);
  }
  head(key: string): Promise<ObjectMeta | undefined> {
    return this.inner.head(key);
  }
  list(prefix: string): Promise<ObjectMeta[]> {
    return this.inner.list(prefix);
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
