/**
 * Which rows of a region snapshot are live: the newest version of their key, not a tombstone.
 *
 * Index searches (vector, full text, key ranges) look at rows by position, so unlike a scan they
 * cannot deduplicate by walking everything newest first on every query. Instead each source keeps
 * what it can reuse:
 * - a MemTable, per visible batch count: its internal liveness (last visible position per key)
 *   and the key → position map;
 * - a flushed generation (keys already unique within it): the key → position map, built once;
 * - per region, for the current list of generations: which generation rows newer generations
 *   supersede (changes only when a generation is flushed).
 * A query then only applies the MemTables' keys to the older sources. The result per source is
 * a byte map (1 = live) used as part of the prefilter.
 */
import type { RecordBatch } from 'apache-arrow';
import { batchKeyReader, type KeyValue } from '../schema/primary-key.js';

export interface KeyedSource {
  /** Visible batches in position order (stored schema). */
  batches: readonly RecordBatch[];
  rowCount: number;
  /** Cache slot owned by the source object (a MemTable or a loaded generation). */
  cache: { liveness?: SourceKeys };
}

export interface SourceKeys {
  rowCount: number;
  /** Newest visible position of each key within the source (tombstones included). */
  positions: Map<KeyValue, number>;
  /** 1 where the row is its key's newest version in the source and not a tombstone. */
  live: Uint8Array;
}

export function sourceKeys(source: KeyedSource, keyIndexes: readonly number[], tombstoneIndex: number): SourceKeys {
  const cached = source.cache.liveness;
  if (cached && cached.rowCount === source.rowCount) return cached;
  const positions = new Map<KeyValue, number>();
  const live = new Uint8Array(source.rowCount);
  let base = 0;
  for (const batch of source.batches) {
    const key = batchKeyReader(batch, keyIndexes);
    const tomb = batch.data.children[tombstoneIndex];
    const bits = tomb.values as Uint8Array;
    for (let r = 0; r < batch.numRows; r++) {
      const pos = base + r;
      const k = key(r);
      const previous = positions.get(k);
      if (previous !== undefined) live[previous] = 0;
      positions.set(k, pos);
      const bit = tomb.offset + r;
      live[pos] = bits[bit >> 3] & (1 << (bit & 7)) ? 0 : 1;
    }
    base += batch.numRows;
  }
  const result = { rowCount: source.rowCount, positions, live };
  source.cache.liveness = result;
  return result;
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
  cacheSlot: { signature?: string; dead?: Uint8Array[] },
  signature: string,
): Uint8Array[] {
  const keys = sources.map((s) => sourceKeys(s, keyIndexes, tombstoneIndex));
  const memCount = sources.length - generationCount;
  // Generations against newer generations: cached until the generation list changes.
  if (cacheSlot.signature !== signature || !cacheSlot.dead) {
    const dead: Uint8Array[] = [];
    for (let g = memCount; g < sources.length; g++) {
      const d = new Uint8Array(keys[g].rowCount);
      for (let newer = memCount; newer < g; newer++) {
        for (const k of keys[newer].positions.keys()) {
          const pos = keys[g].positions.get(k);
          if (pos !== undefined) d[pos] = 1;
        }
      }
      dead.push(d);
    }
    cacheSlot.signature = signature;
    cacheSlot.dead = dead;
  }
  const out: Uint8Array[] = [];
  for (let s = 0; s < sources.length; s++) {
    const live = keys[s].live.slice();
    if (s >= memCount) {
      const d = cacheSlot.dead[s - memCount];
      for (let i = 0; i < live.length; i++) if (d[i]) live[i] = 0;
    }
    // Keys written in newer MemTables supersede this source's versions.
    for (let newer = 0; newer < Math.min(s, memCount); newer++) {
      for (const k of keys[newer].positions.keys()) {
        const pos = keys[s].positions.get(k);
        if (pos !== undefined) live[pos] = 0;
      }
    }
    out.push(live);
  }
  return out;
}
