/**
 * A MemTable: the in-memory tier of a region, one generation's worth of writes.
 *
 * It tracks three watermarks over its batch list, all as batch *counts* so that 0 is a real
 * "nothing yet" value (Lance's first version started its index watermark at batch 0 and showed
 * batch 0 before it was indexed; lance-memwal.md pitfall 9):
 *
 *   enqueued ≥ durable ≥ visible      (with memory visibility, visible may run ahead of durable)
 *
 * - `walEnqueued`: batches handed to a WAL entry;
 * - `durable`: batches whose WAL entries (and every earlier entry) are on storage;
 * - `visible`: batches a new reader snapshot includes. With the default durable visibility it
 *   advances only after the batches are durable *and* indexed, so a visible row is always durable
 *   and indexed.
 *
 * A put waits on `whenDurable(end)`, tied to this MemTable and the exact batch count its rows end
 * at, so an ack can never be released by another generation's progress (pitfall 1's follow-up).
 */
import type { RecordBatch } from 'apache-arrow';
import type { SourceIndexes } from '../index/source-indexes.js';
import type { LivenessCache } from './liveness.js';
import { BatchStore } from './batch-store.js';

export interface MemTableLimits {
  maxBytes: number;
  maxRows: number;
  maxBatches: number;
}

export interface MemTableSnapshot {
  memtable: MemTable;
  /** Visible batches [0, batchCount). */
  batchCount: number;
}

interface Waiter {
  end: number;
  resolve: () => void;
  reject: (e: unknown) => void;
}

export class MemTable {
  readonly store = new BatchStore();
  walEnqueued = 0;
  durable = 0;
  visible = 0;
  frozen = false;
  /** Batches [0, indexed) are in every index of `indexes`. */
  indexed = 0;
  /** Highest WAL position holding rows of this MemTable (or inherited from its predecessor). */
  lastWalPosition: number;
  /** Per-snapshot caches of readers (key liveness). */
  readonly cache: LivenessCache = {};
  private waiters: Waiter[] = [];

  constructor(
    readonly generation: number,
    lastWalPosition: number,
    readonly indexes?: SourceIndexes,
  ) {
    this.lastWalPosition = lastWalPosition;
  }

  /** Indexes batches [indexed, end): called as their WAL entry is written (or on append). */
  indexUpTo(end: number): void {
    if (!this.indexes || end <= this.indexed) return;
    this.indexes.insert(this.store.range(this.indexed, end));
    this.indexed = end;
  }

  get batchCount(): number {
    return this.store.batchCount;
  }
  get rowCount(): number {
    return this.store.rowCount;
  }
  get byteSize(): number {
    return this.store.byteSize;
  }

  /** Would appending these batches cross a limit? An empty MemTable always accepts. */
  wouldOverflow(batches: readonly RecordBatch[], bytes: number, limits: MemTableLimits): boolean {
    if (this.store.batchCount === 0) return false;
    let rows = 0;
    for (const b of batches) rows += b.numRows;
    return (
      this.store.byteSize + bytes > limits.maxBytes ||
      this.store.rowCount + rows > limits.maxRows ||
      this.store.batchCount + batches.length > limits.maxBatches
    );
  }

  isFull(limits: MemTableLimits): boolean {
    return this.store.byteSize >= limits.maxBytes || this.store.rowCount >= limits.maxRows || this.store.batchCount >= limits.maxBatches;
  }

  append(batches: readonly RecordBatch[]): { start: number; end: number } {
    if (this.frozen) throw new Error(`MemTable generation ${this.generation} is frozen`);
    return this.store.append(batches);
  }

  snapshot(): MemTableSnapshot {
    return { memtable: this, batchCount: this.visible };
  }

  /** Resolves once batches [0, end) are durable. */
  whenDurable(end: number): Promise<void> {
    if (this.durable >= end) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ end, resolve, reject }));
  }

  markDurable(end: number): void {
    if (end <= this.durable) return;
    this.durable = end;
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.end <= end ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  markVisible(end: number): void {
    // Visible implies indexed: index anything not yet indexed before exposing it.
    this.indexUpTo(end);
    if (end > this.visible) this.visible = Math.min(end, this.store.batchCount);
  }

  /** Fails every write still waiting for durability. */
  failWaiters(error: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(error);
  }

  get hasWaiters(): boolean {
    return this.waiters.length > 0;
  }
}
