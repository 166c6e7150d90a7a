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
 * `indexed` counts batches handed to the indexes (`indexedBatches` are the rows handed so far,
 * which may end inside a batch while `indexInSlices` works through it); their IVF-PQ codes may
 * still be computed on the encode worker (`indexUpTo` with `offThread`). `markVisibleWhenIndexed` makes batches
 * visible once those codes are applied, in order; `markVisible` does it now (finishing the
 * codes on this thread).
 *
 * A put waits on `whenAcked(end)`, tied to this MemTable and the exact batch count its rows end
 * at, so an ack can never be released by another generation's progress (pitfall 1's follow-up).
 * It resolves once the batches are durable *and* visible, so a read that starts after the ack
 * sees them (through every index).
 */
import type { RecordBatch } from 'apache-arrow';
import type { SourceIndexes } from '../index/source-indexes.js';
import type { OffThreadEncode } from '../index/vector/code-queue.js';
import type { OffThreadTokenize } from '../index/fts/tokenize-worker.js';
import type { LivenessCache } from './liveness.js';
import { BatchStore } from './batch-store.js';
import { nextTurn } from '../util/steps.js';

/** Main-thread time an `indexInSlices` slice aims at (a turn of the event loop's share of indexing). */
const SLICE_MS = 4;
/** The smallest slice, whatever the estimate (a slice has a fixed cost too). */
const MIN_SLICE_ROWS = 64;

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
  /** Rows of batch `indexed` already in the indexes too (an `indexInSlices` slice ended inside it). */
  private indexedPart = 0;
  /** `indexInSlices`' running estimate of the main thread's cost of indexing a row, in ms (0: none yet). */
  private msPerRow = 0;
  /** Highest WAL position holding rows of this MemTable (or inherited from its predecessor). */
  lastWalPosition: number;
  /** Per-snapshot caches of readers (key liveness). */
  readonly cache: LivenessCache = {};
  private waiters: Waiter[] = [];
  /** The last `indexInSlices` run (they run one after another). */
  private slicing: Promise<void> = Promise.resolve();

  constructor(
    readonly generation: number,
    lastWalPosition: number,
    readonly indexes?: SourceIndexes,
    /** Milliseconds, for sizing `indexInSlices`' slices by their cost (a test passes its own). */
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.lastWalPosition = lastWalPosition;
  }

  /**
   * Indexes batches [indexed, end): called as their WAL entry is written (or on append). With
   * `offThread` their IVF-PQ codes may come later (see the file comment).
   */
  indexUpTo(end: number, offThread?: OffThreadEncode): void {
    if (!this.indexes || end <= this.indexed) return;
    const batches = this.store.range(this.indexed, end);
    if (this.indexedPart > 0) batches[0] = batches[0]!.slice(this.indexedPart);
    this.indexes.insert(batches, offThread);
    this.indexed = end;
    this.indexedPart = 0;
  }

  /** The rows handed to the indexes so far, in position order (what a new index must cover). */
  indexedBatches(): RecordBatch[] {
    const batches = this.store.range(0, this.indexed);
    if (this.indexedPart > 0) batches.push(this.store.batch(this.indexed).slice(0, this.indexedPart));
    return batches;
  }

  /**
   * `indexUpTo` in slices of `sliceRows` rows (a slice may end inside a batch), with an
   * event-loop turn between them, so indexing does not hold the loop for a whole WAL entry: a
   * group commit of many puts, or one large put. The turns also let the WAL write in flight meanwhile
   * take its next step (open, write, fsync, link, directory fsync each wait for one), so
   * the write overlaps the indexing instead of finishing after it. Slices run in call order;
   * resolves once batches [0, end) are indexed. A synchronous `indexUpTo` meanwhile indexes the
   * rest at once (the slices then find nothing left to do). Rows an index holds beyond `visible`
   * are not read, so the partial state between slices is never seen.
   */
  indexInSlices(end: number, offThread: OffThreadEncode | undefined, sliceRows: number, tokenize?: OffThreadTokenize): Promise<void> {
    this.slicing = this.slicing.then(async () => {
      const store = this.store;
      if (offThread && this.indexes && this.indexed < end) {
        const batches = store.range(this.indexed, end);
        if (this.indexedPart > 0) batches[0] = batches[0]!.slice(this.indexedPart);
        this.indexes.queueCodesAhead(batches, offThread, tokenize);
      }
      while (this.indexes && this.indexed < end) {
        const slice: RecordBatch[] = [];
        let b = this.indexed;
        let part = this.indexedPart;
        // At most `sliceRows`, and about SLICE_MS of work by the last slices' cost a row: a
        // fresh MemTable's first rows cost 2–3× a warm one's (every word new to its dictionary),
        // and a 512-row slice of them held the event loop 15–35 ms.
        let budget = this.msPerRow > 0 ? Math.max(MIN_SLICE_ROWS, Math.min(sliceRows, Math.floor(SLICE_MS / this.msPerRow))) : sliceRows;
        const rows0 = budget;
        while (b < end && budget > 0) {
          const batch = store.batch(b);
          const rows = batch.numRows - part;
          if (rows <= budget) {
            slice.push(part > 0 ? batch.slice(part) : batch);
            budget -= rows;
            b++;
            part = 0;
          } else {
            slice.push(batch.slice(part, part + budget));
            part += budget;
            budget = 0;
          }
        }
        // Full-text tokens wait in the index's buffer, past the last slice too: the buffer
        // moves into the postings when it is large enough or a read needs it (fewer, larger
        // moves: each touches every term it holds once).
        const t0 = this.clock();
        this.indexes.insert(slice, offThread, true);
        if (rows0 > budget) {
          const perRow = (this.clock() - t0) / (rows0 - budget);
          this.msPerRow = this.msPerRow === 0 ? perRow : 0.5 * this.msPerRow + 0.5 * perRow;
        }
        this.indexed = b;
        this.indexedPart = part;
        if (this.indexed < end) await nextTurn();
      }
    });
    return this.slicing;
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

  /** Batches [0, acked) are durable and visible: a put ending there may resolve. */
  private get acked(): number {
    return Math.min(this.durable, this.visible);
  }

  /** Resolves once batches [0, end) are durable and visible. */
  whenAcked(end: number): Promise<void> {
    if (this.acked >= end) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ end, resolve, reject }));
  }

  markDurable(end: number): void {
    if (end <= this.durable) return;
    this.durable = end;
    this.release();
  }

  /** Makes batches [0, end) visible now: anything not yet indexed is indexed first, here. */
  markVisible(end: number): void {
    this.indexUpTo(end);
    this.indexes?.finishIndexing();
    this.showUpTo(end);
  }

  /** Makes batches [0, end) visible once every index holds them (codes computed elsewhere arrive later). */
  markVisibleWhenIndexed(end: number, offThread?: OffThreadEncode): void {
    this.indexUpTo(end, offThread);
    if (this.indexes) this.indexes.whenIndexed(() => this.showUpTo(end));
    else this.showUpTo(end);
  }

  private showUpTo(end: number): void {
    if (end <= this.visible) return;
    this.visible = Math.min(end, this.store.batchCount);
    this.release();
  }

  /** Resolves the puts whose batches are now durable and visible. */
  private release(): void {
    const acked = this.acked;
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) (w.end <= acked ? w.resolve() : still.push(w));
    this.waiters = still;
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
