/**
 * Reading a region's WAL back: replay on writer open, and tailing for read-only snapshots.
 *
 * Replay walks positions from `replay_after_wal_entry_position + 1` until the first missing one
 * (several GETs in flight). Which entries count:
 * - an entry whose `writer_epoch` is newer than the replaying writer's claimed epoch means a newer
 *   writer exists: the replaying writer is fenced;
 * - an entry older than the newest epoch seen so far is skipped: it was written by a stale writer
 *   *after* a newer writer's fence sentinel, and a stale writer cannot have acknowledged it (its
 *   ack needs every earlier position to be its own, and the sentinel is not);
 * - everything else is applied in position order.
 *
 * Where to start: after the manifest's replay cursor, with the manifest's `replay_epoch_floor` as
 * the newest epoch already seen. The cursor may sit past a newer writer's sentinel; the floor
 * keeps that sentinel's fence in force for a stale writer's entry that landed after it (a zombie
 * write), however far the cursor has moved.
 *
 * A writer (not a reader) then closes the log at the first missing position p with a *fence
 * sentinel* — an empty entry of its own epoch — so that an older writer's next WAL write collides
 * and learns it is fenced. If entries exist beyond p (a failed write left a gap; nothing after a
 * gap was ever acknowledged), the sentinel fills the gap, every further hole up to the last
 * existing entry gets a sentinel too, and those stale entries are skipped by the rule above,
 * now and at every later replay. The log is contiguous again before the writer appends.
 */
import { RecordBatch, type Schema } from 'apache-arrow';
import { DataError, FencedError, isQuiverError } from '../errors.js';
import { sameType } from '../util/same-type.js';
import type { RegionLayout } from './region-layout.js';
import type { ObjectStore } from '../storage/object-store.js';
import { decodeWalEntry, encodeWalEntry, type WalEntry, type WalWriterIdentity } from './wal-entry.js';

/** Applies one entry's rows; a returned promise is awaited before the next entry (backpressure). */
export type ApplyEntry = (position: number, batches: RecordBatch[]) => void | Promise<void>;

/** Where reading a region's log starts: the manifest's cursor and epoch floor. */
export interface ReplayStart {
  after: number;
  epochFloor: number;
}

export interface ReplayResult {
  /** The position a writer's next entry takes (or where a reader stopped). */
  nextPosition: number;
  /** Entries applied / skipped as stale. */
  applied: number;
  skipped: number;
  /** Position of the fence sentinel written (writers only). */
  sentinelPosition?: number;
}

const PREFETCH = 4;

/** The entry's bytes, or undefined when the position is empty. */
async function readBytes(store: ObjectStore, layout: RegionLayout, position: number): Promise<Uint8Array | undefined> {
  try {
    return await store.get(layout.walEntryKey(position));
  } catch (e) {
    if (isQuiverError(e, 'not_found')) return undefined;
    throw e;
  }
}

async function readEntry(store: ObjectStore, layout: RegionLayout, position: number): Promise<WalEntry | undefined> {
  const bytes = await readBytes(store, layout, position);
  return bytes && decodeWalEntry(bytes, layout.walEntryKey(position));
}

class EpochFilter {
  maxEpoch = 0;
  applied = 0;
  skipped = 0;
  constructor(
    private readonly layout: RegionLayout,
    private readonly schema: Schema,
    private readonly writer: WalWriterIdentity | undefined,
    private readonly apply: ApplyEntry,
  ) {}

  async offer(position: number, entry: WalEntry): Promise<void> {
    const w = this.writer;
    if (w && (entry.writerEpoch > w.epoch || (entry.writerEpoch === w.epoch && entry.writerId !== w.id))) {
      throw new FencedError(
        `region ${this.layout.regionId}: writer epoch ${w.epoch} is fenced; WAL position ${position} was written by epoch ${entry.writerEpoch} (writer ${entry.writerId || 'unnamed'})`,
      );
    }
    if (entry.writerEpoch < this.maxEpoch) {
      this.skipped++;
      return;
    }
    this.maxEpoch = entry.writerEpoch;
    if (entry.batches.length > 0) {
      await this.apply(position, relabel(entry, this.schema, this.layout.walEntryKey(position)));
      this.applied++;
    }
  }
}

/** The entry's batches under the table's stored schema object, after checking they fit it. */
function relabel(entry: WalEntry, schema: Schema, what: string): RecordBatch[] {
  const fields = entry.schema.fields;
  if (fields.length !== schema.fields.length || fields.some((f, i) => f.name !== schema.fields[i].name || !sameType(f.type, schema.fields[i].type))) {
    throw new DataError(`WAL entry ${what} does not have the table's stored schema`);
  }
  return entry.batches.map((b) => new RecordBatch(schema, b.data));
}

/** Reads and applies entries from `from` until the first missing position; returns it. */
async function readContiguous(store: ObjectStore, layout: RegionLayout, from: number, filter: EpochFilter): Promise<number> {
  let position = from;
  for (;;) {
    // Fetch ahead, but decode in order and only up to the first missing position: an entry
    // beyond a gap is not part of the log yet, so even a damaged one must not stop the read.
    const window = await Promise.all(Array.from({ length: PREFETCH }, (_, i) => readBytes(store, layout, position + i)));
    for (const bytes of window) {
      if (!bytes) return position;
      await filter.offer(position, decodeWalEntry(bytes, layout.walEntryKey(position)));
      position++;
    }
  }
}

/**
 * Read-only tail: applies the durable, contiguous log from `from` on. `maxEpoch` carries the
 * newest epoch seen by an earlier call, so a reader can tail incrementally.
 */
export async function tailWal(
  store: ObjectStore,
  layout: RegionLayout,
  schema: Schema,
  from: number,
  maxEpoch: number,
  apply: ApplyEntry,
): Promise<ReplayResult & { maxEpoch: number }> {
  const filter = new EpochFilter(layout, schema, undefined, apply);
  filter.maxEpoch = maxEpoch;
  const nextPosition = await readContiguous(store, layout, from, filter);
  return { nextPosition, applied: filter.applied, skipped: filter.skipped, maxEpoch: filter.maxEpoch };
}

/** Writer replay: applies the log, then closes it with a fence sentinel of `epoch`. */
export async function replayAndFence(
  store: ObjectStore,
  layout: RegionLayout,
  schema: Schema,
  start: ReplayStart,
  writer: WalWriterIdentity,
  apply: ApplyEntry,
): Promise<ReplayResult> {
  const filter = new EpochFilter(layout, schema, writer, apply);
  filter.maxEpoch = start.epochFloor;
  const epoch = writer.epoch;
  const sentinel = encodeWalEntry(schema, writer, []);
  let position = start.after + 1;
  let sentinelPosition: number;
  for (;;) {
    position = await readContiguous(store, layout, position, filter);
    try {
      await store.putIfAbsent(layout.walEntryKey(position), sentinel);
      sentinelPosition = position;
      filter.maxEpoch = epoch;
      break;
    } catch (e) {
      // Another (older) writer appended at this position meanwhile: read on.
      if (!isQuiverError(e, 'already_exists')) throw e;
    }
  }
  // Entries beyond the sentinel were written after a gap and never acknowledged: skip them and
  // plug every further hole so the log reads contiguously to its end.
  const beyond = (await store.list(`${layout.walDir}/`))
    .map((o) => layout.walPositionOf(o.key))
    .filter((p): p is number => p !== undefined && p > sentinelPosition)
    .sort((a, b) => a - b);
  let next = sentinelPosition + 1;
  if (beyond.length > 0) {
    const existing = new Set(beyond);
    const last = beyond[beyond.length - 1];
    for (let p = sentinelPosition + 1; p <= last; p++) {
      if (existing.has(p)) {
        const entry = await readEntry(store, layout, p);
        if (entry) await filter.offer(p, entry);
        continue;
      }
      try {
        await store.putIfAbsent(layout.walEntryKey(p), sentinel);
      } catch (e) {
        if (!isQuiverError(e, 'already_exists')) throw e;
        const entry = await readEntry(store, layout, p);
        if (entry) await filter.offer(p, entry);
      }
    }
    next = last + 1;
  }
  return { nextPosition: next, applied: filter.applied, skipped: filter.skipped, sentinelPosition };
}
