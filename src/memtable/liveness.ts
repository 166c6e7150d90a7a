/**
 * Which rows of a region snapshot are live: the newest version of their key, not a tombstone.
 *
 * Index searches (vector, full text, key ranges) look at rows by position, so unlike a scan they
 * cannot deduplicate by walking everything newest first on every query. A query must pay for
 * what changed since the last one, not for every stored row (DESIGN.md), so each source keeps
 * its liveness state in its cache slot and extends it as rows arrive:
 * - **own keys** (`SourceKeys`): the key → newest position map and the source's own live bytes
 *   (newest version of its key within the source, not a tombstone). A MemTable only appends, so
 *   new rows extend the map; a row superseded by a new one flips to dead (`flipped`).
 * - **superseded by newer MemTables**: per older source, a bitmap of rows whose key a newer
 *   MemTable holds, with how many rows of each newer MemTable were already applied; a query
 *   applies only the newer MemTables' new rows.
 * - **superseded by newer generations**: per generation, a bitmap with the set of newer
 *   generations already applied; when a flush adds a generation, only its keys are applied to
 *   the older ones (a generation list that lost one, e.g. to compaction, starts over).
 * - **combined**: own ∧ ¬superseded, with its live count, updated in place for flipped and newly
 *   superseded rows (and extended for a growing MemTable), so a query that changed nothing costs
 *   nothing here, and a put costs its own rows.
 *
 * Snapshots: the cached state describes the newest rows seen. A query whose snapshot holds fewer
 * rows of some source than the cache (an older snapshot running late) computes its answer
 * afresh, without touching the caches. Every caller uses the returned arrays synchronously (the
 * caches are updated in place by the next query).
 */
import type { RecordBatch } from 'apache-arrow';
import { batchKeyReader, type KeyReader, type KeyValue } from '../schema/primary-key.js';
import { batchHolding } from './batch-offsets.js';
import { KeyPositions } from './key-positions.js';

export interface KeyedSource {
  /** Visible batches in position order (stored schema). */
  batches: readonly RecordBatch[];
  /** Row position of each batch's first row (at least `batches.length` entries; see batch-offsets.ts). */
  rowOffsets: readonly number[];
  rowCount: number;
  /** Cache slot owned by the source object (a MemTable or a loaded generation). */
  cache: LivenessCache;
}

export interface LivenessCache {
  liveness?: SourceKeys;
  superseded?: Superseded;
  combined?: Combined;
}

export interface SourceKeys {
  rowCount: number;
  /** Newest visible position of each key within the source (tombstones included). */
  positions: KeyPositions;
  /** 1 where the row is its key's newest version in the source and not a tombstone ([0, rowCount); the buffer may be longer). */
  live: Uint8Array;
}

/** Rows of an older source whose key a newer MemTable holds. */
interface Superseded {
  rows: number;
  bits: Uint8Array;
  /** Newer MemTable (its key state) → how many of its rows were applied. */
  applied: Map<SourceKeys, number>;
}

/**
 * A source's combined live map, kept up to date in place. Consumers that keep their own sums
 * over live rows (BM25 corpus totals) follow it by identity, `rows` (appended rows) and the
 * `cleared` log (positions that went from live to dead, each at most once).
 */
export interface LiveState {
  readonly rows: number;
  readonly live: Uint8Array;
  readonly cleared: readonly number[];
}

interface Combined extends LiveState {
  rows: number;
  /** The generation list whose supersession is applied ('' for MemTables). */
  genSig: string;
  live: Uint8Array;
  liveCount: number;
  cleared: number[];
}

/** Marks row `p` dead in `comb` (if it was live), logging it in `cleared`. */
function clearLive(comb: Combined, p: number): void {
  if (comb.live[p]) {
    comb.live[p] = 0;
    comb.liveCount--;
    comb.cleared.push(p);
  }
}

export interface SourceLiveness {
  /** 1 = live ([0, rows) of the source). */
  live: Uint8Array;
  liveCount: number;
  /** The cached state behind `live` (absent for an older snapshot computed afresh). */
  state?: LiveState;
}

/** Counters for tests and benchmarks: how many rows liveness work touched. */
export const livenessWork = { rowsScanned: 0, generationKeysApplied: 0, memtableKeyLookups: 0 };

/** Rows of a generation superseded by newer generations, and which of those were applied. */
interface GenerationDead {
  dead: Uint8Array;
  applied: Set<LivenessCache>;
}

/** A region's cache of generation-against-generation supersession (owned by the reader). */
export interface RegionLivenessSlot {
  /** The generation list the arrays below describe. */
  signature?: string;
  /** Per generation, newest first. */
  dead?: Uint8Array[];
  generations?: Map<LivenessCache, GenerationDead>;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Keys as the liveness maps hold them. A 64-bit integer key within a double's exact range
 * (|k| < 2^53) becomes a number, read from the column's two 32-bit halves without creating a
 * BigInt, so maps of a million keys hold no per-key heap objects for the garbage collector to
 * mark on every major collection (small integers are not heap objects). Only keys of one table
 * are compared and a key column has one type, so the mapping stays one-to-one; other keys are
 * read as `batchKeyReader` reads them.
 */
function mapKeyReader(batch: RecordBatch, keyIndexes: readonly number[]): KeyReader {
  if (keyIndexes.length === 1 && LITTLE_ENDIAN) {
    const values = batch.data.children[keyIndexes[0]].values as unknown;
    if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
      const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
      const signed = values instanceof BigInt64Array;
      return (row) => {
        const hi = words[2 * row + 1];
        if (signed ? hi >= -0x200000 && hi < 0x200000 : hi >= 0 && hi < 0x200000) return hi * 4294967296 + (words[2 * row] >>> 0);
        return values[row];
      };
    }
  }
  return batchKeyReader(batch, keyIndexes);
}

/** Reads rows [from, to) of the source, calling `each(position, key, isTombstone)`. */
function forRows(
  source: KeyedSource,
  from: number,
  to: number,
  keyIndexes: readonly number[],
  tombstoneIndex: number,
  each: (pos: number, key: KeyValue, tombstone: boolean) => void,
): void {
  const { batches, rowOffsets } = source;
  for (let b = batchHolding(rowOffsets, batches.length, from); b < batches.length; b++) {
    const batch = batches[b];
    const base = rowOffsets[b];
    const end = base + batch.numRows;
    if (end > from && base < to) {
      const key = mapKeyReader(batch, keyIndexes);
      const tomb = batch.data.children[tombstoneIndex];
      const bits = tomb.values as Uint8Array;
      for (let r = Math.max(0, from - base); r < batch.numRows && base + r < to; r++) {
        const bit = tomb.offset + r;
        each(base + r, key(r), (bits[bit >> 3] & (1 << (bit & 7))) !== 0);
      }
      livenessWork.rowsScanned += Math.min(end, to) - Math.max(base, from);
    }
    if (end >= to) break;
  }
}

function grow(buf: Uint8Array, need: number): Uint8Array {
  if (buf.length >= need) return buf;
  const out = new Uint8Array(Math.max(need, buf.length * 2, 64));
  out.set(buf);
  return out;
}

/**
 * The source's own key state, extended to its current row count. `flipped` lists earlier rows
 * that the new rows superseded; `cached` is false when this snapshot is older than the cache
 * (the state was computed afresh and is not shared).
 */
function ownKeys(source: KeyedSource, keyIndexes: readonly number[], tombstoneIndex: number): { keys: SourceKeys; flipped: number[]; cached: boolean } {
  const c = source.cache.liveness;
  if (c && c.rowCount === source.rowCount) return { keys: c, flipped: [], cached: true };
  const stale = c !== undefined && c.rowCount > source.rowCount;
  const keys = c && !stale ? c : { rowCount: 0, positions: new KeyPositions(source.rowCount), live: new Uint8Array(0) };
  const flipped: number[] = [];
  const from = keys.rowCount;
  keys.live = grow(keys.live, source.rowCount);
  const live = keys.live;
  forRows(source, from, source.rowCount, keyIndexes, tombstoneIndex, (pos, key, tombstone) => {
    const previous = keys.positions.get(key);
    if (previous !== undefined && live[previous]) {
      live[previous] = 0;
      if (previous < from) flipped.push(previous);
    }
    keys.positions.set(key, pos);
    live[pos] = tombstone ? 0 : 1;
  });
  keys.rowCount = source.rowCount;
  if (!stale) source.cache.liveness = keys;
  return { keys, flipped, cached: !stale };
}

/**
 * Rows a `regionLiveness` call on these sources would have to take in beyond what their caches
 * hold: every row when the generation list changed since the last call (Infinity), else the
 * rows each source gained since (a MemTable's new rows; a source never seen, all of its rows).
 */
export function pendingLivenessRows(sources: readonly KeyedSource[], cacheSlot: RegionLivenessSlot, signature: string): number {
  if (cacheSlot.signature !== signature || !cacheSlot.dead) return Infinity;
  let rows = 0;
  for (const s of sources) rows += s.rowCount - Math.min(s.rowCount, s.cache.liveness?.rowCount ?? 0);
  return rows;
}

/**
 * Live maps for a region's sources, newest first. `generationCount` trailing sources are
 * flushed generations whose mutual supersession is cached under `cacheSlot`.
 */
export function regionLiveness(
  sources: readonly KeyedSource[],
  generationCount: number,
  keyIndexes: readonly number[],
  tombstoneIndex: number,
  cacheSlot: RegionLivenessSlot,
  signature: string,
): SourceLiveness[] {
  const own = sources.map((s) => ownKeys(s, keyIndexes, tombstoneIndex));
  const memCount = sources.length - generationCount;
  // Generations against newer generations: kept per generation with the set of newer ones
  // already applied, so a flush (one new generation) applies only the new generation's keys.
  if (cacheSlot.signature !== signature || !cacheSlot.dead) {
    const previous = cacheSlot.generations ?? new Map<LivenessCache, GenerationDead>();
    const next = new Map<LivenessCache, GenerationDead>();
    const dead: Uint8Array[] = [];
    for (let g = memCount; g < sources.length; g++) {
      const rows = own[g].keys.rowCount;
      const newer = sources.slice(memCount, g).map((x) => x.cache);
      let e = previous.get(sources[g].cache);
      // Reusable only if every generation it applied is still newer (none was compacted away).
      if (!e || e.dead.length !== rows || [...e.applied].some((c) => !newer.includes(c))) e = { dead: new Uint8Array(rows), applied: new Set() };
      for (let n = memCount; n < g; n++) {
        if (e.applied.has(sources[n].cache)) continue;
        const positions = own[g].keys.positions;
        const d = e.dead;
        own[n].keys.positions.forEachKey((k) => {
          const pos = positions.get(k);
          if (pos !== undefined) d[pos] = 1;
        });
        livenessWork.generationKeysApplied += own[n].keys.positions.size;
        e.applied.add(sources[n].cache);
      }
      next.set(sources[g].cache, e);
      dead.push(e.dead);
    }
    cacheSlot.signature = signature;
    cacheSlot.dead = dead;
    cacheSlot.generations = next;
  }
  // Every newer MemTable's state must be the cached one for the incremental path.
  const memCached = own.slice(0, memCount).every((o) => o.cached);
  // A MemTable's new rows are applied to every older source, usually all from the same row: read
  // their keys once (a put's 20 keys against ten generations were read ten times).
  //
  // And look each key up only down to the newest older source that holds it (`found`): every
  // source older than that one already has the key's rows dead, superseded by that source — by
  // the generations' mutual supersession (`genDead`) or by the MemTable rules applied in this
  // same pass, newest source first — and stays so, since rows only leave a region snapshot when
  // newer ones hold their keys (a flushed MemTable becomes a generation newer than all older
  // ones). A put of 20 existing keys against ten generations made ~200 lookups into cold key
  // maps; now about half, and 20 when the keys are new to the MemTable's newest generation.
  const keyMemo = new Map<number, { from: number; keys: KeyValue[]; found: Uint8Array }>();
  const newKeys = (m: number, from: number, to: number): { keys: KeyValue[]; found: Uint8Array } => {
    let e = keyMemo.get(m);
    if (e === undefined || e.from !== from) {
      const keys: KeyValue[] = [];
      forRows(sources[m], from, to, keyIndexes, tombstoneIndex, (_pos, key) => keys.push(key));
      keyMemo.set(m, (e = { from, keys, found: new Uint8Array(keys.length) }));
    }
    return e;
  };
  return sources.map((source, s) => {
    const rows = source.rowCount;
    const genDead = s >= memCount ? cacheSlot.dead![s - memCount] : undefined;
    const genSig = s >= memCount ? signature : '';
    const newerMems = own.slice(0, Math.min(s, memCount));
    if (!own[s].cached || !memCached) return fresh(own[s].keys, rows, genDead, newerMems.map((o) => o.keys), sources.slice(0, newerMems.length), keyIndexes, tombstoneIndex);

    // Rows of this source superseded by newer MemTables: apply only their new rows.
    const newlyDead: number[] = [];
    let sup = source.cache.superseded;
    let rebuilt = false;
    if (newerMems.length > 0) {
      if (!sup || sup.rows !== rows || newerMems.some((o) => (sup!.applied.get(o.keys) ?? 0) > o.keys.rowCount)) {
        sup = { rows, bits: new Uint8Array(rows), applied: new Map() };
        source.cache.superseded = sup;
        rebuilt = true;
      }
      const positions = own[s].keys.positions;
      const bits = sup.bits;
      const current = new Set<SourceKeys>();
      for (let m = 0; m < newerMems.length; m++) {
        const o = newerMems[m]!;
        current.add(o.keys);
        const done = sup.applied.get(o.keys) ?? 0;
        if (done < o.keys.rowCount) {
          const { keys, found } = newKeys(m, done, o.keys.rowCount);
          for (let i = 0; i < keys.length; i++) {
            if (found[i]) continue; // a newer source holds it: dead here already
            livenessWork.memtableKeyLookups++;
            const pos = positions.get(keys[i]);
            if (pos === undefined) continue;
            found[i] = 1;
            if (!bits[pos]) {
              bits[pos] = 1;
              newlyDead.push(pos);
            }
          }
          sup.applied.set(o.keys, o.keys.rowCount);
        }
      }
      for (const k of sup.applied.keys()) if (!current.has(k)) sup.applied.delete(k);
    }

    // own ∧ ¬generations ∧ ¬MemTables, kept up to date in place.
    const ownLive = own[s].keys.live;
    let comb = source.cache.combined;
    if (!comb || rebuilt || comb.genSig !== genSig || comb.rows > rows || (comb.rows < rows && (genDead !== undefined || sup !== undefined))) {
      const live = new Uint8Array(rows);
      let count = 0;
      for (let i = 0; i < rows; i++) {
        const v = ownLive[i] && !(genDead && genDead[i]) && !(sup && sup.bits[i]) ? 1 : 0;
        live[i] = v;
        count += v;
      }
      livenessWork.rowsScanned += rows;
      comb = { rows, genSig, live, liveCount: count, cleared: [] };
      source.cache.combined = comb;
    } else {
      // No closures made per source (under tsx each costs ~1 µs: `keepNames` names it at run time).
      for (const p of own[s].flipped) clearLive(comb, p);
      for (const p of newlyDead) clearLive(comb, p);
      if (comb.rows < rows) {
        // A growing MemTable with no newer MemTable and no generation rules: append its rows.
        comb.live = grow(comb.live, rows);
        for (let i = comb.rows; i < rows; i++) {
          comb.live[i] = ownLive[i];
          comb.liveCount += ownLive[i];
        }
        comb.rows = rows;
      }
    }
    return { live: comb.live.subarray(0, rows), liveCount: comb.liveCount, state: comb };
  });
}

/** The answer for an older snapshot, computed without the caches. */
function fresh(
  keys: SourceKeys,
  rows: number,
  genDead: Uint8Array | undefined,
  newer: readonly SourceKeys[],
  newerSources: readonly KeyedSource[],
  keyIndexes: readonly number[],
  tombstoneIndex: number,
): SourceLiveness {
  const live = keys.live.slice(0, rows);
  if (genDead) for (let i = 0; i < rows; i++) if (genDead[i]) live[i] = 0;
  newer.forEach((n, m) => {
    forRows(newerSources[m], 0, newerSources[m].rowCount, keyIndexes, tombstoneIndex, (_pos, key) => {
      const pos = keys.positions.get(key);
      if (pos !== undefined) live[pos] = 0;
    });
  });
  let liveCount = 0;
  for (let i = 0; i < rows; i++) liveCount += live[i];
  return { live, liveCount };
}
