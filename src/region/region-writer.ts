/**
 * RegionWriter: the single writer of one region (Lance's MemWAL region writer, with the fixes
 * upstream made after its first version).
 *
 * Write path of a put:
 *   validate (by the table) -> backpressure -> freeze the active MemTable first if the batches
 *   would push it past a limit -> append to the active MemTable -> group commit (leader /
 *   follower): when no WAL write is in flight the rows are written at once; while one is, rows
 *   gather and are written together when it completes. `maxWalBufferSize` (bytes gathered) and
 *   `maxWalFlushIntervalMs` (a timer) are upper bounds, not the usual wait -> the put resolves
 *   when the WAL entry holding its rows, and every entry before it, is on storage and the rows
 *   are indexed (IVF-PQ codes are computed on the encode worker meanwhile, when there is one).
 *
 * Invariants it keeps:
 * - an ack is tied to the exact MemTable and batch count its rows end at (never released by
 *   another generation's progress);
 * - a visible row is durable and indexed (with the default visibility);
 * - frozen MemTables flush to generations one at a time, oldest first, and the manifest's replay
 *   cursor only moves over a contiguous run of flushed WAL entries (a failed flush is retried,
 *   never skipped: lance-memwal.md #8293);
 * - opening claims `epoch + 1`, replays the WAL after the cursor and closes it with a fence
 *   sentinel, so no acknowledged write is lost and an older writer's next WAL write fails as
 *   fenced;
 * - every claim, WAL entry and manifest commit carries this writer's unique id, so a collision
 *   is taken for "my write landed" only when the stored object is provably this writer's;
 * - the manifest's epoch floor rises to this writer's epoch once the replay cursor passes its
 *   fence sentinel, so no later replay or tail applies a fenced writer's late entry;
 * - after a failure the writer is finished: every pending and later write fails with the cause,
 *   whose kind says whether a fresh writer can help (`unavailable`) or not (`fenced`, `storage`,
 *   `data`, `internal`). Generation flushes retry only transient errors.
 */
import type { RecordBatch } from 'apache-arrow';
import { ClosedError, type QuiverError, toQuiverError, UnavailableError } from '../errors.js';
import type { RegionManifest } from '../manifest/region-manifest.js';
import { RegionManifestStore } from '../manifest/region-manifest-store.js';
import { batchBytes } from '../memtable/batch-store.js';
import { MemTable, type MemTableLimits, type MemTableSnapshot } from '../memtable/memtable.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { TableSchema } from '../schema/table-schema.js';
import { WalAppender } from '../wal/wal-appender.js';
import { replayAndFence } from '../wal/wal-replay.js';
import { dedupForFlush, writeGeneration } from './generation.js';
import type { GenerationCache } from './generation-cache.js';
import type { IndexingContext } from '../index/indexing.js';
import type { RegionLayout } from '../wal/region-layout.js';
import type { RegionWriterConfig } from './writer-config.js';
import { type Runtime, runtimeUuid, systemRuntime, type TimerHandle, sleep } from '../util/runtime.js';
import type { OffThreadEncode } from '../index/vector/code-queue.js';
import { encodeOffThread } from '../index/vector/encode-worker.js';
import { type OffThreadTokenize, tokenizeOffThread } from '../index/fts/tokenize-worker.js';

export interface RegionWriterOptions {
  store: ObjectStore;
  layout: RegionLayout;
  schema: TableSchema;
  regionSpecId: number;
  config: RegionWriterConfig;
  generations: GenerationCache;
  indexing: IndexingContext;
  /** Clock, timers and randomness (the simulation injects its own). */
  runtime: Runtime;
  /**
   * Whether IVF-PQ codes of written rows may be computed on the encode worker thread, and their
   * full-text rows tokenized on the tokenize worker, while the WAL entry is written (default:
   * with the system runtime). A simulated runtime keeps all work
   * on its own seeded event loop, which a worker's replies would escape.
   */
  offThreadEncoding?: boolean;
}

/** What a reader needs of a region at one instant. */
export interface RegionReadState {
  manifest: RegionManifest;
  /** Oldest first; the last one is the active MemTable. */
  memtables: MemTableSnapshot[];
}

/** `open` takes writes; `failed` / `fenced` / `closed` never will again. */
export type RegionWriterState = 'open' | 'fenced' | 'failed' | 'closed';

export interface RegionWriterStats {
  epoch: number;
  /** The writer's unique id, recorded in its claim, WAL entries and manifest commits. */
  writerId: string;
  state: RegionWriterState;
  /** Why the writer stopped, when it did (`kind: message`). */
  failure?: string;
  walEntries: number;
  walBytes: number;
  generationsFlushed: number;
  replayedEntries: number;
  /** Most MemTable bytes (active + frozen) held at once while replaying. */
  replayPeakUnflushedBytes: number;
  backpressureWaits: number;
}

const FLUSH_RETRY_MAX_DELAY_MS = 5_000;
const CLOSE_FLUSH_ATTEMPTS = 5;

export class RegionWriter {
  private manifest: RegionManifest;
  private active: MemTable;
  private readonly frozen: MemTable[] = [];
  private appender!: WalAppender;
  private timer: TimerHandle | undefined;
  private flushChain: Promise<void> = Promise.resolve();
  private failure: QuiverError | undefined;
  private closing = false;
  private closed = false;
  private roomWaiters: (() => void)[] = [];
  /** WAL entries handed to the appender and not yet settled (group commit gathers meanwhile). */
  private walWritesPending = 0;
  /** Position of this writer's fence sentinel: once the cursor passes it, the floor is ours. */
  private sentinelPosition = Number.POSITIVE_INFINITY;
  readonly writerId: string;
  /** When a read last confirmed that no other writer has claimed the region. */
  private ownershipConfirmedAt = Number.NEGATIVE_INFINITY;
  private readonly limits: MemTableLimits;
  /** Where IVF-PQ codes of written rows are computed besides this thread (undefined: here only). */
  private readonly offThread: OffThreadEncode | undefined;
  /** Full-text rows tokenized on the tokenize worker (with `offThread`: the same switch). */
  private readonly tokenize: OffThreadTokenize | undefined;
  readonly stats: RegionWriterStats;

  private constructor(
    private readonly opts: RegionWriterOptions,
    private readonly manifests: RegionManifestStore,
    claimed: RegionManifest,
  ) {
    this.manifest = claimed;
    this.writerId = claimed.writerId;
    this.active = this.newMemTable(claimed.currentGeneration, claimed.replayAfterWalEntryPosition);
    const c = opts.config;
    this.limits = { maxBytes: c.maxMemtableSize, maxRows: c.maxMemtableRows, maxBatches: c.maxMemtableBatches };
    this.offThread = (opts.offThreadEncoding ?? opts.runtime === systemRuntime) ? encodeOffThread : undefined;
    this.tokenize = this.offThread ? tokenizeOffThread : undefined;
    this.stats = { epoch: claimed.writerEpoch, writerId: claimed.writerId, state: 'open', walEntries: 0, walBytes: 0, generationsFlushed: 0, replayedEntries: 0, replayPeakUnflushedBytes: 0, backpressureWaits: 0 };
  }

  /** Claims the region (epoch + 1), replays its WAL and fences older writers. */
  static async open(opts: RegionWriterOptions): Promise<RegionWriter> {
    const manifests = new RegionManifestStore(opts.store, opts.layout.manifestDir, opts.layout.regionId, opts.config.manifestScanBatchSize);
    const claimed = await manifests.claimEpoch(opts.regionSpecId, runtimeUuid(opts.runtime));
    const writer = new RegionWriter(opts, manifests, claimed);
    try {
      await writer.replay();
    } catch (e) {
      writer.fail(toQuiverError(e, 'WAL replay failed'));
      throw writer.failure;
    }
    return writer;
  }

  get epoch(): number {
    return this.manifest.writerEpoch;
  }
  get regionId(): string {
    return this.opts.layout.regionId;
  }
  /** Why the writer stopped accepting writes, if it did. */
  get failed(): QuiverError | undefined {
    return this.failure;
  }
  get isClosed(): boolean {
    return this.closed || this.closing;
  }
  /** Active + frozen MemTable bytes: what backpressure limits. */
  get unflushedBytes(): number {
    let n = this.active.byteSize;
    for (const m of this.frozen) n += m.byteSize;
    return n;
  }

  private newMemTable(generation: number, lastWalPosition: number): MemTable {
    return new MemTable(generation, lastWalPosition, this.opts.indexing.build([]));
  }

  /** Starts maintaining indexes defined (or trained) since the MemTables were created. */
  refreshIndexes(): void {
    for (const mt of [...this.frozen, this.active]) this.opts.indexing.complete(mt.indexes!, mt.indexedBatches());
  }

  private async replay(): Promise<void> {
    const { store, layout, schema } = this.opts;
    const m = this.manifest;
    const result = await replayAndFence(
      store,
      layout,
      schema.stored,
      { after: m.replayAfterWalEntryPosition, epochFloor: m.replayEpochFloor },
      this.identity,
      (position, batches) => this.insertReplayed(position, batches),
    );
    this.stats.replayedEntries = result.applied;
    this.sentinelPosition = result.sentinelPosition ?? result.nextPosition - 1;
    this.active.lastWalPosition = result.nextPosition - 1;
    this.appender = new WalAppender(store, layout, schema.stored, this.identity, result.nextPosition, this.opts.config.maxWalWritesInFlight);
  }

  private get identity(): { epoch: number; id: string } {
    return { epoch: this.manifest.writerEpoch, id: this.writerId };
  }

  /**
   * Replayed rows go through the same MemTable limits as puts, and replay waits for frozen
   * MemTables to flush when unflushed bytes pass the backpressure threshold, so a long backlog
   * is never held in memory all at once.
   */
  private async insertReplayed(position: number, batches: RecordBatch[]): Promise<void> {
    const bytes = batches.reduce((n, b) => n + batchBytes(b), 0);
    if (this.active.wouldOverflow(batches, bytes, this.limits)) this.freeze();
    const mt = this.active;
    const { end } = mt.append(batches);
    mt.walEnqueued = end;
    mt.markDurable(end);
    mt.markVisible(end);
    mt.lastWalPosition = position;
    this.stats.replayPeakUnflushedBytes = Math.max(this.stats.replayPeakUnflushedBytes, this.unflushedBytes);
    if (mt.isFull(this.limits)) this.freeze();
    while (this.unflushedBytes >= this.opts.config.maxUnflushedMemtableBytes && this.frozen.length > 0) {
      await this.flushChain;
      if (this.failure) throw this.failure;
    }
  }

  /**
   * Writes stored-schema batches (already validated by the table). Resolves once they are
   * durable; all batches of one call become visible together.
   */
  async put(batches: RecordBatch[]): Promise<void> {
    this.checkWritable();
    const bytes = batches.reduce((n, b) => n + batchBytes(b), 0);
    await this.waitForRoom();
    this.checkWritable();
    if (this.active.wouldOverflow(batches, bytes, this.limits)) this.freeze();
    const mt = this.active;
    const { end } = mt.append(batches);
    if (this.opts.config.visibility === 'memory') mt.markVisible(end); // indexes them too
    const durable = mt.whenAcked(end);
    // Leader/follower group commit: nothing in flight -> write now; otherwise gather until the
    // in-flight write settles (onWalSettled), with size and the timer as upper bounds.
    if (this.walWritesPending === 0 || mt.store.bytesOf(mt.walEnqueued, mt.batchCount) >= this.opts.config.maxWalBufferSize) this.flushWal(mt);
    else this.armTimer();
    if (mt.isFull(this.limits)) this.freeze();
    await durable;
  }

  /** The writer's state for `table.writerStats()`. */
  get state(): RegionWriterState {
    if (this.failure?.kind === 'fenced') return 'fenced';
    if (this.failure && this.failure.kind !== 'closed') return 'failed';
    if (this.closed || this.closing || this.failure) return 'closed';
    return 'open';
  }

  /**
   * Confirms this writer still holds the region before a read uses its in-memory state: one
   * HEAD for the manifest version after the one it knows. If a newer version exists and a newer
   * writer claimed it, this writer is fenced (its reads would miss that writer's acknowledged
   * writes), and the caller reads the region from storage instead.
   */
  async confirmOwnership(): Promise<boolean> {
    if (this.failure) return false;
    const interval = this.opts.config.ownershipCheckIntervalMs;
    const now = this.opts.runtime.now();
    if (interval > 0 && now - this.ownershipConfirmedAt < interval) return true;
    const known = this.manifest.version;
    if (!(await this.manifests.hasVersionAfter(known))) {
      if (!this.failure) this.ownershipConfirmedAt = now;
      return !this.failure;
    }
    const latest = await this.manifests.readLatest();
    try {
      if (latest) this.manifests.checkFenced(latest, this.identity);
    } catch (e) {
      this.fail(toQuiverError(e, 'ownership check'));
      return false;
    }
    if (!this.failure) this.ownershipConfirmedAt = now;
    return !this.failure;
  }

  /** A consistent view for a reader, captured synchronously so writes cannot tear it. */
  readState(): RegionReadState {
    return {
      manifest: this.manifest,
      memtables: [...this.frozen.map((m) => m.snapshot()), this.active.snapshot()],
    };
  }

  /** Forces the pending rows of the active MemTable into a WAL entry now. */
  flushWalNow(): void {
    this.flushWal(this.active);
  }

  /** Freezes the active MemTable and waits until every frozen MemTable is a generation. */
  async flush(): Promise<void> {
    this.checkWritable();
    if (this.active.batchCount > 0) this.freeze();
    await this.flushChain;
    if (this.failure) throw this.failure;
  }

  /** Flushes everything held to a generation and releases the region. */
  async close(): Promise<void> {
    if (this.closed || this.closing) return;
    this.closing = true;
    this.clearTimer();
    if (!this.failure && this.active.batchCount > 0) this.freeze();
    await this.flushChain;
    this.closed = true;
    const failure = this.failure;
    if (!failure) this.fail(new ClosedError(`region ${this.regionId}: writer closed`));
    if (failure && failure.kind !== 'fenced' && failure.kind !== 'closed') {
      throw new UnavailableError(
        `region ${this.regionId}: close could not flush every MemTable (${failure.message}); the rows are durable in the WAL and are replayed on the next open`,
        { cause: failure },
      );
    }
  }

  private checkWritable(): void {
    if (this.failure) throw this.failure;
    if (this.closing || this.closed) throw new ClosedError(`region ${this.regionId}: writer is closed`);
  }

  // ---- group commit -------------------------------------------------------------------------

  private armTimer(): void {
    if (this.timer) return;
    this.timer = this.opts.runtime.setTimer(() => {
      this.timer = undefined;
      this.flushWal(this.active);
    }, this.opts.config.maxWalFlushIntervalMs);
  }

  private clearTimer(): void {
    if (this.timer) this.opts.runtime.clearTimer(this.timer);
    this.timer = undefined;
  }

  /** Puts the not-yet-enqueued batches of `mt` into the next WAL entry. */
  private flushWal(mt: MemTable): void {
    if (mt === this.active) this.clearTimer();
    if (this.failure) return;
    const start = mt.walEnqueued;
    const end = mt.batchCount;
    if (start >= end) return;
    mt.walEnqueued = end;
    this.walWritesPending++;
    const { position, durable } = this.appender.append(mt.store.range(start, end));
    if (position > 0) mt.lastWalPosition = position;
    // Index the rows while the WAL write is in flight (IVF-PQ codes on the encode worker, when
    // there is one; a large entry in slices that give the event loop turns); they become
    // visible, and their puts resolve, only when both are done, in entry order.
    // Slicing also lets the WAL write take its steps (open, write, fsync, link, directory fsync
    // each wait for a turn) while the rows are indexed, instead of after: an unsliced 1000-row
    // put left ~6 ms of its write to run after the indexing.
    const slice = this.opts.config.indexSliceRows;
    const indexed = mt.rowCount - mt.store.rowsBefore(start) > slice ? mt.indexInSlices(end, this.offThread, slice, this.tokenize) : undefined;
    if (!indexed) mt.indexUpTo(end, this.offThread);
    durable.then(
      (r) => {
        this.stats.walEntries++;
        this.stats.walBytes += r.bytes;
        mt.markDurable(end);
        // (A later entry made visible first indexes whatever slices are left, synchronously.)
        if (indexed) indexed.then(() => mt.markVisibleWhenIndexed(end, this.offThread), (e) => this.fail(toQuiverError(e, 'indexing failed')));
        else mt.markVisibleWhenIndexed(end, this.offThread);
        this.onWalSettled();
      },
      (e) => {
        this.fail(toQuiverError(e, 'WAL write failed'));
        this.onWalSettled();
      },
    );
  }

  /** The follower side of group commit: what gathered while a write was in flight goes now. */
  private onWalSettled(): void {
    this.walWritesPending--;
    if (this.walWritesPending === 0 && !this.failure && this.active.walEnqueued < this.active.batchCount) this.flushWal(this.active);
  }

  // ---- freeze, flush, backpressure ----------------------------------------------------------

  private freeze(): void {
    const old = this.active;
    if (old.batchCount === 0) return;
    this.flushWal(old);
    old.frozen = true;
    this.frozen.push(old);
    this.active = this.newMemTable(old.generation + 1, old.lastWalPosition);
    this.flushChain = this.flushChain.then(() => this.flushGeneration(old));
  }

  private async flushGeneration(mt: MemTable): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      if (this.failure) return;
      try {
        await mt.whenAcked(mt.batchCount);
        await this.writeAndCommit(mt);
        return;
      } catch (e) {
        const err = toQuiverError(e, `flush of generation ${mt.generation} failed`);
        // Only a transient error is worth another attempt; any other fails the writer with its
        // real cause (the rows stay in the WAL and are replayed by the next writer).
        if (!err.retryable || this.failure) return this.fail(err);
        if (this.closing && attempt >= CLOSE_FLUSH_ATTEMPTS) return this.fail(err);
        // Retry the same generation; later ones wait behind it so the cursor stays contiguous.
        await sleep(this.opts.runtime, Math.min(FLUSH_RETRY_MAX_DELAY_MS, 50 * 2 ** attempt));
      }
    }
  }

  private async writeAndCommit(mt: MemTable): Promise<void> {
    const { store, layout, schema, generations } = this.opts;
    // Everything up to the MemTable's last WAL entry is durable; the fence check inside commit
    // stops a fenced writer before it publishes.
    // A commit that landed while its response was lost (the last retry failed) is done: the
    // latest manifest already lists this generation. Committing again would store it twice.
    const covers = (m: RegionManifest) => m.flushedGenerations.some((g) => g.generation === mt.generation);
    let gen: Awaited<ReturnType<typeof writeGeneration>> | undefined;
    const latestNow = await this.manifests.readLatest();
    if (latestNow) this.manifests.checkFenced(latestNow, this.identity);
    if (!latestNow || !covers(latestNow)) {
      const rows = await dedupForFlush(schema, mt.store.range(0, mt.batchCount), () => sleep(this.opts.runtime, 0));
      gen = await writeGeneration(store, layout, schema, mt.generation, rows.batches, this.opts.indexing, this.opts.runtime, { indexes: mt.indexes, newPosition: rows.newPosition });
    }
    const folder = gen?.folder;
    const manifest = await this.manifests.commit(this.identity, (latest) => {
      if (covers(latest) || folder === undefined) return undefined;
      const cursor = Math.max(latest.replayAfterWalEntryPosition, mt.lastWalPosition);
      return {
        ...latest,
        replayAfterWalEntryPosition: cursor,
        // Past this writer's sentinel, every entry older than its epoch is a fenced writer's.
        replayEpochFloor: cursor >= this.sentinelPosition ? Math.max(latest.replayEpochFloor, this.epoch) : latest.replayEpochFloor,
        walEntryPositionLastSeen: Math.max(latest.walEntryPositionLastSeen, this.appender?.durablePosition ?? 0, mt.lastWalPosition),
        currentGeneration: mt.generation + 1,
        flushedGenerations: [...latest.flushedGenerations, { generation: mt.generation, path: folder }],
      };
    });
    // Publish the generation and retire the frozen MemTable in one synchronous step, so a
    // reader sees the rows in exactly one of the two. (A generation committed by an earlier
    // attempt is loaded from its own folder when read.)
    if (gen && manifest.flushedGenerations.some((g) => g.path === gen.folder)) generations.put(layout, gen);
    this.manifest = manifest;
    const i = this.frozen.indexOf(mt);
    if (i >= 0) this.frozen.splice(i, 1);
    this.stats.generationsFlushed++;
    this.wakeRoomWaiters();
  }

  private async waitForRoom(): Promise<void> {
    const max = this.opts.config.maxUnflushedMemtableBytes;
    if (this.unflushedBytes < max) return;
    this.stats.backpressureWaits++;
    const clock = this.opts.runtime;
    const deadline = clock.now() + this.opts.config.backpressureTimeoutMs;
    while (this.unflushedBytes >= max) {
      this.checkWritable();
      // Only frozen MemTables drain; if everything sits in the active one, freeze it.
      if (this.frozen.length === 0) this.freeze();
      const remaining = deadline - clock.now();
      if (remaining <= 0) {
        throw new UnavailableError(
          `region ${this.regionId}: write timed out after ${this.opts.config.backpressureTimeoutMs} ms of backpressure (${this.unflushedBytes} unflushed bytes, limit ${max}); retry later`,
        );
      }
      await new Promise<void>((resolve) => {
        const waiter = () => {
          clock.clearTimer(t);
          resolve();
        };
        // A waiter whose time ran out leaves the list, so timed-out puts do not pile up there.
        const t = clock.setTimer(() => {
          const i = this.roomWaiters.indexOf(waiter);
          if (i >= 0) this.roomWaiters.splice(i, 1);
          resolve();
        }, remaining);
        this.roomWaiters.push(waiter);
      });
    }
  }

  private wakeRoomWaiters(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }

  /** Waiters for room under backpressure (diagnostics and tests). */
  get roomWaiterCount(): number {
    return this.roomWaiters.length;
  }

  private fail(error: QuiverError): void {
    if (!this.failure) this.failure = error;
    this.stats.state = this.state;
    if (this.failure.kind !== 'closed') this.stats.failure = `${this.failure.kind}: ${this.failure.message}`;
    this.clearTimer();
    for (const m of [...this.frozen, this.active]) m.failWaiters(this.failure);
    this.wakeRoomWaiters();
  }
}
