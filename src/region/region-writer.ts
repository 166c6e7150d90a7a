/**
 * RegionWriter: the single writer of one region (Lance's MemWAL region writer, with the fixes
 * upstream made after its first version).
 *
 * Write path of a put:
 *   validate (by the table) -> backpressure -> freeze the active MemTable first if the batches
 *   would push it past a limit -> append to the active MemTable -> group commit: a WAL entry is
 *   written when the unflushed bytes reach `maxWalBufferSize` or when the group-commit timer
 *   (`maxWalFlushIntervalMs`, a real timer) fires -> the put resolves when the WAL entry holding
 *   its rows, and every entry before it, is on storage.
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
 * - after a failure the writer is finished: every pending and later write fails with the cause
 *   (FencedError when fenced, otherwise a retryable UnavailableError; the table then reopens a
 *   fresh writer, which replays the log).
 */
import type { RecordBatch } from 'apache-arrow';
import { ClosedError, QuiverError, UnavailableError } from '../errors.js';
import type { RegionManifest } from '../manifest/region-manifest.js';
import { RegionManifestStore } from '../manifest/region-manifest-store.js';
import { batchBytes } from '../memtable/batch-store.js';
import { MemTable, type MemTableLimits, type MemTableSnapshot } from '../memtable/memtable.js';
import type { ObjectStore } from '../storage/object-store.js';
import type { TableSchema } from '../table/table-schema.js';
import { WalAppender } from '../wal/wal-appender.js';
import { replayAndFence } from '../wal/wal-replay.js';
import { dedupForFlush, writeGeneration } from './generation.js';
import type { GenerationCache } from './generation-cache.js';
import type { IndexingContext } from '../index/indexing.js';
import type { RegionLayout } from './layout.js';
import type { RegionWriterConfig } from './writer-config.js';
import { type Runtime, type TimerHandle, sleep } from '../util/runtime.js';

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
}

/** What a reader needs of a region at one instant. */
export interface RegionReadState {
  manifest: RegionManifest;
  /** Oldest first; the last one is the active MemTable. */
  memtables: MemTableSnapshot[];
}

export interface RegionWriterStats {
  epoch: number;
  walEntries: number;
  walBytes: number;
  generationsFlushed: number;
  replayedEntries: number;
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
  private readonly limits: MemTableLimits;
  readonly stats: RegionWriterStats;

  private constructor(
    private readonly opts: RegionWriterOptions,
    private readonly manifests: RegionManifestStore,
    claimed: RegionManifest,
  ) {
    this.manifest = claimed;
    this.active = this.newMemTable(claimed.currentGeneration, claimed.replayAfterWalEntryPosition);
    const c = opts.config;
    this.limits = { maxBytes: c.maxMemtableSize, maxRows: c.maxMemtableRows, maxBatches: c.maxMemtableBatches };
    this.stats = { epoch: claimed.writerEpoch, walEntries: 0, walBytes: 0, generationsFlushed: 0, replayedEntries: 0, backpressureWaits: 0 };
  }

  /** Claims the region (epoch + 1), replays its WAL and fences older writers. */
  static async open(opts: RegionWriterOptions): Promise<RegionWriter> {
    const manifests = new RegionManifestStore(opts.store, opts.layout.manifestDir, opts.layout.regionId, opts.config.manifestScanBatchSize);
    const claimed = await manifests.claimEpoch(opts.regionSpecId);
    const writer = new RegionWriter(opts, manifests, claimed);
    try {
      await writer.replay();
    } catch (e) {
      writer.fail(asQuiverError(e, 'WAL replay failed'));
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
    for (const mt of [...this.frozen, this.active]) this.opts.indexing.complete(mt.indexes!, mt.store.range(0, mt.indexed));
  }

  private async replay(): Promise<void> {
    const { store, layout, schema } = this.opts;
    const result = await replayAndFence(store, layout, schema.stored, this.manifest.replayAfterWalEntryPosition, this.epoch, (position, batches) => {
      this.insertReplayed(position, batches);
    });
    this.stats.replayedEntries = result.applied;
    this.active.lastWalPosition = result.nextPosition - 1;
    this.appender = new WalAppender(store, layout, schema.stored, this.epoch, result.nextPosition, this.opts.config.maxWalWritesInFlight);
  }

  private insertReplayed(position: number, batches: RecordBatch[]): void {
    const bytes = batches.reduce((n, b) => n + batchBytes(b), 0);
    if (this.active.wouldOverflow(batches, bytes, this.limits)) this.freeze();
    const mt = this.active;
    const { end } = mt.append(batches);
    mt.walEnqueued = end;
    mt.markDurable(end);
    mt.markVisible(end);
    mt.lastWalPosition = position;
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
    const durable = mt.whenDurable(end);
    if (mt.store.bytesOf(mt.walEnqueued, mt.batchCount) >= this.opts.config.maxWalBufferSize) this.flushWal(mt);
    else this.armTimer();
    if (mt.isFull(this.limits)) this.freeze();
    await durable;
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
    const { position, durable } = this.appender.append(mt.store.range(start, end));
    if (position > 0) mt.lastWalPosition = position;
    // Index the rows while the WAL write is in flight; they become visible only when both are
    // done (markVisible), in entry order.
    mt.indexUpTo(end);
    durable.then(
      (r) => {
        this.stats.walEntries++;
        this.stats.walBytes += r.bytes;
        mt.markDurable(end);
        mt.markVisible(end);
      },
      (e) => this.fail(asQuiverError(e, 'WAL write failed')),
    );
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
        await mt.whenDurable(mt.batchCount);
        await this.writeAndCommit(mt);
        return;
      } catch (e) {
        const err = asQuiverError(e, 'generation flush failed');
        if (err.kind === 'fenced' || this.failure) return this.fail(err);
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
    const rows = dedupForFlush(schema, mt.store.range(0, mt.batchCount));
    const gen = await writeGeneration(store, layout, schema, mt.generation, rows, this.opts.indexing, this.opts.runtime);
    const manifest = await this.manifests.commit(this.epoch, (latest) => ({
      ...latest,
      replayAfterWalEntryPosition: Math.max(latest.replayAfterWalEntryPosition, mt.lastWalPosition),
      walEntryPositionLastSeen: Math.max(latest.walEntryPositionLastSeen, this.appender?.durablePosition ?? 0, mt.lastWalPosition),
      currentGeneration: mt.generation + 1,
      flushedGenerations: [...latest.flushedGenerations, { generation: mt.generation, path: gen.folder }],
    }));
    // Publish the generation and retire the frozen MemTable in one synchronous step, so a
    // reader sees the rows in exactly one of the two.
    generations.put(layout, gen);
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
        const t = clock.setTimer(resolve, remaining);
        this.roomWaiters.push(() => {
          clock.clearTimer(t);
          resolve();
        });
      });
    }
  }

  private wakeRoomWaiters(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }

  private fail(error: QuiverError): void {
    if (!this.failure) this.failure = error;
    this.clearTimer();
    for (const m of [...this.frozen, this.active]) m.failWaiters(this.failure);
    this.wakeRoomWaiters();
  }
}

function asQuiverError(e: unknown, what: string): QuiverError {
  if (e instanceof QuiverError) return e;
  return new UnavailableError(`${what}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
}

