/**
 * Appends WAL entries for one region writer.
 *
 * Positions are assigned in call order, 1-based and contiguous. Every entry is written
 * create-if-absent, so two writers can never both own a position: a collision with an entry of
 * a newer epoch means this writer is fenced. A collision counts as "my earlier attempt landed"
 * only when the stored entry is provably this writer's: its bytes are exactly the ones this
 * writer sent (they carry its unique writer id), never merely the same epoch.
 *
 * Several entries may be in flight at once (`maxInFlight`) to hide storage latency, but an
 * append resolves only when its entry *and every earlier one* are on storage: replay stops at the
 * first missing position, so an entry after a gap is not durable in any useful sense. If an
 * entry fails for good, that entry and every later one fail, and the appender refuses further
 * work: the writer must be reopened, which replays the log and fills any gap with a fence
 * sentinel before writing again (see wal-replay.ts). A failed entry therefore never leaves a
 * gap that stops replay of acknowledged data (lance-memwal.md pitfall 8).
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { DataError, FencedError, isQuiverError, type QuiverError, toQuiverError, UnavailableError } from '../errors.js';
import type { WalWriterIdentity } from './wal-entry.js';
import type { RegionLayout } from './region-layout.js';
import type { ObjectStore } from '../storage/object-store.js';
import { walEntryBuffers } from './entry-buffer-pool.js';
import { decodeWalEntry, encodeWalEntry } from './wal-entry.js';
import { nextLoopIteration } from '../util/steps.js';

/** Entries of at least this many bytes are handed to the store after a turn of the event loop (see `write`). */
const LARGE_ENTRY_BYTES = 1024 * 1024;

export interface WalAppendResult {
  position: number;
  bytes: number;
}

interface Pending {
  position: number;
  bytes: number;
  done: boolean;
  resolve: (r: WalAppendResult) => void;
  reject: (e: unknown) => void;
}

export class WalAppender {
  private next: number;
  private durableUpTo: number;
  private inFlight = 0;
  private readonly slotWaiters: (() => void)[] = [];
  private readonly pending = new Map<number, Pending>();
  private failure: QuiverError | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly layout: RegionLayout,
    private readonly schema: Schema,
    private readonly writer: WalWriterIdentity,
    nextPosition: number,
    private readonly maxInFlight: number,
  ) {
    this.next = nextPosition;
    this.durableUpTo = nextPosition - 1;
  }

  get epoch(): number {
    return this.writer.epoch;
  }
  /** Entries written and not yet settled (group commit batches while this is non-zero). */
  get writesInFlight(): number {
    return this.inFlight;
  }

  /** The position the next entry will take. */
  get nextPosition(): number {
    return this.next;
  }
  /** Highest position such that it and all earlier ones are durable. */
  get durablePosition(): number {
    return this.durableUpTo;
  }
  get failed(): QuiverError | undefined {
    return this.failure;
  }

  /**
   * Encodes `batches` into the next entry and writes it. The position is taken synchronously,
   * so entries follow call order. Resolves when this and all earlier entries are durable.
   */
  append(batches: readonly RecordBatch[]): { position: number; durable: Promise<WalAppendResult> } {
    if (this.failure) return { position: -1, durable: Promise.reject(this.failure) };
    const position = this.next++;
    // Encode into a reused buffer (first-touch page faults dominate a fresh one; see
    // entry-buffer-pool.ts). Only a buffer taken from the pool goes back to it.
    let pooled: Uint8Array | undefined;
    const bytes = encodeWalEntry(this.schema, this.writer, batches, (size) => (pooled = walEntryBuffers.take(size)));
    if (pooled && pooled.buffer !== bytes.buffer) pooled = undefined;
    const durable = new Promise<WalAppendResult>((resolve, reject) => {
      this.pending.set(position, { position, bytes: bytes.length, done: false, resolve, reject });
    });
    void this.write(position, bytes, pooled);
    return { position, durable };
  }

  private async write(position: number, bytes: Uint8Array, pooled: Uint8Array | undefined): Promise<void> {
    // A large entry (group commit under load: up to maxWalBufferSize) took its encoding's time
    // on this turn already, and its rows' copies for the index workers follow on it (they go
    // out first, so the workers start while the entry is written: RegionWriter.flushWal); the
    // store's copy of it (the file worker's transfer buffer) waits for the event loop to go
    // round, so it adds to no single stall.
    if (bytes.length >= LARGE_ENTRY_BYTES) await nextLoopIteration();
    await this.acquireSlot();
    try {
      if (this.failure) throw this.failure;
      await this.putEntry(position, bytes);
      // The store is done with the bytes once the write succeeded; a failed write's buffer is
      // left to the garbage collector.
      if (pooled) walEntryBuffers.give(pooled);
      const p = this.pending.get(position);
      if (p) p.done = true;
      this.advance();
    } catch (e) {
      this.fail(position, e);
    } finally {
      this.releaseSlot();
    }
  }

  private async putEntry(position: number, bytes: Uint8Array): Promise<void> {
    const key = this.layout.walEntryKey(position);
    try {
      await this.store.putIfAbsent(key, bytes);
    } catch (e) {
      if (!isQuiverError(e, 'already_exists')) throw e;
      const stored = await this.store.get(key);
      // Our own earlier attempt landed (its response was lost) only if the object is exactly
      // what we sent: the bytes carry this writer's unique id and epoch.
      if (sameBytes(stored, bytes)) return;
      let other: { writerEpoch: number; writerId: string };
      try {
        other = decodeWalEntry(stored, key);
      } catch (cause) {
        throw new DataError(`region ${this.layout.regionId}: WAL position ${position} is taken by an unreadable entry (${key})`, { cause });
      }
      if (other.writerEpoch >= this.epoch) {
        // A newer epoch, or (impossible while claims are unique) another writer of this epoch.
        throw new FencedError(
          `region ${this.layout.regionId}: writer epoch ${this.epoch} is fenced; WAL position ${position} was written by epoch ${other.writerEpoch} (writer ${other.writerId || 'unnamed'})`,
          { cause: e },
        );
      }
      throw new UnavailableError(
        `region ${this.layout.regionId}: WAL position ${position} holds an entry of an older writer (epoch ${other.writerEpoch}); reopen the writer to recover`,
        { cause: e },
      );
    }
  }

  private advance(): void {
    for (;;) {
      const p = this.pending.get(this.durableUpTo + 1);
      if (!p || !p.done) return;
      this.pending.delete(p.position);
      this.durableUpTo = p.position;
      p.resolve({ position: p.position, bytes: p.bytes });
    }
  }

  private fail(position: number, e: unknown): void {
    if (!this.failure) {
      // Keep the cause's kind: a permanent storage error must not pose as a retryable one (the
      // table would reopen the writer, claim a new epoch and fail the same way, forever).
      this.failure = toQuiverError(e, `WAL write at position ${position} failed`);
    }
    // This entry and every later one can no longer be acknowledged; earlier ones still in
    // flight may yet complete and be acknowledged.
    for (const [pos, p] of [...this.pending]) {
      if (pos >= position) {
        this.pending.delete(pos);
        p.reject(this.failure);
      }
    }
  }

  private acquireSlot(): Promise<void> {
    if (this.inFlight < this.maxInFlight) {
      this.inFlight++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  private releaseSlot(): void {
    const nextWaiter = this.slotWaiters.shift();
    if (nextWaiter) nextWaiter();
    else this.inFlight--;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.length), Buffer.from(b.buffer, b.byteOffset, b.length)) === 0;
}
