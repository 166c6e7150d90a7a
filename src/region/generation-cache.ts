/**
 * Loaded flushed generations, shared by a table's readers and writers, bounded by bytes (least
 * recently used out first). An entry counts everything it holds: the rows, every index over them
 * (FTS postings, IVF-PQ codes and their lookup tables, scalar runs; a trained model is shared and
 * not counted), and a reserve for the readers' per-row liveness state built on first search. A generation is immutable, so a cached copy never goes stale; the
 * writer seeds the cache with what it just flushed so a fresh generation is not read back.
 *
 * A generation is loaded with the indexes its first reader needs (`IndexScope`: a scan needs
 * none, a search every one) and gains the others, in place, when a reader that needs them asks;
 * its bytes are counted again then. Concurrent readers share one load and one upgrade.
 */
import type { IndexingContext, IndexScope } from '../index/indexing.js';
import { batchBytes } from '../memtable/batch-store.js';
import type { ObjectStore } from '../storage/object-store.js';
import { isQuiverError } from '../errors.js';
import { type LoadedGeneration, loadIndexSidecars, readGeneration, readPrimaryKeyFilter } from './generation.js';
import type { RegionLayout } from '../wal/region-layout.js';
import { estimateBytes } from '../util/memory-estimate.js';
import type { Data } from 'apache-arrow';

export class GenerationCache {
  /**
   * By key; `used` is when the entry was last asked for (a tick of this cache). Recency is a
   * counter rather than the Map's order, so a hit costs no delete and re-insert: a search asks
   * for every generation of the table on every query.
   */
  private readonly entries = new Map<string, CacheEntry>();
  private bytes = 0;
  private tick = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly indexing: IndexingContext,
    private readonly maxBytes = 512 * 1024 * 1024,
  ) {}

  private key(layout: RegionLayout, folder: string): string {
    return `${layout.regionId}/${folder}`;
  }

  /** The generation with every index of `scope` that can be built now (sidecars read, or built from rows). */
  async get(layout: RegionLayout, generation: number, folder: string, scope: IndexScope = 'all'): Promise<LoadedGeneration> {
    const key = this.key(layout, folder);
    const hit = this.entries.get(key);
    if (!hit) {
      const gen = readGeneration(this.store, layout, this.indexing, generation, folder, scope);
      const entry: CacheEntry = { gen, bytes: 0, used: ++this.tick, scanOnly: scope !== 'all' };
      this.entries.set(key, entry);
      gen.then(
        (g) => this.account(key, entry, g),
        () => this.entries.get(key) === entry && this.entries.delete(key),
      );
      return gen;
    }
    hit.used = ++this.tick;
    if (scope === 'all') hit.scanOnly = false;
    const loaded = await hit.gen;
    // Indexes this reader needs that the entry lacks — loaded for a narrower reader, or created
    // since: from sidecars or built from its rows, one upgrade at a time. An IVF-PQ index without
    // a trained model cannot be built yet: no sidecar fetch for it. (Twice at most from here: an
    // index that a finished upgrade did not give is not asked for again in a loop.)
    let started = 0;
    while (this.indexing.lacksIndexes(loaded.indexes, scope)) {
      if (!hit.upgrade) {
        if (started++ === 2) break;
        hit.upgrade = loadIndexSidecars(this.store, layout, folder, this.indexing, loaded.indexes, loaded.batches, scope).finally(() => {
          hit.upgrade = undefined;
          this.account(key, hit, loaded);
        });
      }
      await hit.upgrade;
    }
    return loaded;
  }

  /**
   * The generation when it is loaded and has every index of `scope` that can be built now,
   * without a promise or an await (a search asks for every generation on every query);
   * undefined when `get` has work to do.
   */
  peek(layout: RegionLayout, folder: string, scope: IndexScope = 'all'): LoadedGeneration | undefined {
    const key = this.key(layout, folder);
    const hit = this.entries.get(key);
    const loaded = hit?.loaded;
    if (!hit || !loaded || this.indexing.lacksIndexes(loaded.indexes, scope)) return undefined;
    hit.used = ++this.tick;
    return loaded;
  }

  /**
   * Rows of a generation without loading it: from the cached copy when there is one, else from
   * its primary-key filter (a small file recording its key count, one per row); a generation
   * without a filter file is loaded. The model-growth check counts every generation's rows after
   * a table is opened, and loading a 100 000-row generation (rows and every index) only for that
   * held up the first puts.
   */
  async rowCount(layout: RegionLayout, generation: number, folder: string): Promise<number> {
    const hit = this.entries.get(this.key(layout, folder));
    if (hit) return (await hit.gen).rowCount;
    try {
      return (await readPrimaryKeyFilter(this.store, layout, folder)).n;
    } catch (e) {
      if (!isQuiverError(e, 'not_found')) throw e;
      return (await this.get(layout, generation, folder)).rowCount;
    }
  }

  /** Calls `fn` with every generation loaded so far (DROP INDEX removes the index from each). */
  async forEachLoaded(fn: (gen: LoadedGeneration) => void): Promise<void> {
    const loaded = await Promise.allSettled([...this.entries.values()].map((e) => e.gen));
    for (const r of loaded) if (r.status === 'fulfilled') fn(r.value);
  }

  put(layout: RegionLayout, gen: LoadedGeneration): void {
    const key = this.key(layout, gen.folder);
    const old = this.entries.get(key);
    if (old) this.bytes -= old.bytes;
    const entry: CacheEntry = { gen: Promise.resolve(gen), bytes: 0, used: ++this.tick, scanOnly: false };
    this.entries.set(key, entry);
    this.account(key, entry, gen);
  }

  /**
   * Counts a loaded entry (again, after an upgrade added indexes), then lets the least recently
   * used others go while over the budget. A generation only scans have asked for is kept only
   * while it fits: a scan of a table larger than the budget would otherwise push out, in scan
   * order, every generation — the searches' indexed ones too — and miss each one again on the
   * next scan; this way the generations that fit stay, and the rest are read for the scan alone.
   */
  private account(key: string, entry: CacheEntry, gen: LoadedGeneration): void {
    if (this.entries.get(key) !== entry) return;
    entry.loaded = gen;
    this.bytes -= entry.bytes;
    entry.bytes = generationBytes(gen, this.indexing);
    this.bytes += entry.bytes;
    if (this.bytes <= this.maxBytes) return;
    if (entry.scanOnly) {
      this.entries.delete(key);
      this.bytes -= entry.bytes;
      return;
    }
    const byAge = [...this.entries].filter(([k]) => k !== key).sort((a, b) => a[1].used - b[1].used);
    for (const [k, e] of byAge) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= e.bytes;
    }
  }
}

interface CacheEntry {
  gen: Promise<LoadedGeneration>;
  bytes: number;
  loaded?: LoadedGeneration;
  /** Indexes being added to the loaded generation for a reader that needs them. */
  upgrade?: Promise<void>;
  /** Only scans (`IndexScope` none or scalar) have asked for it: kept only while it fits (`account`). */
  scanOnly: boolean;
  /** The cache's tick when it was last asked for (least recently used goes first). */
  used: number;
}

/** What a loaded generation holds in memory (see the class comment). */
export function generationBytes(gen: LoadedGeneration, indexing: IndexingContext): number {
  const rows = gen.batches.reduce((n, b) => n + batchBytes(b), 0);
  // Models are shared by every source; the batches are counted above (vector sources view them).
  const shared: object[] = [indexing.schema, ...indexing.defs.flatMap((d) => indexing.model(d) ?? [])];
  const addData = (d: Data): void => {
    shared.push(d);
    for (const b of [d.values, d.valueOffsets, d.nullBitmap, d.typeIds]) if (b) shared.push(b.buffer);
    d.children.forEach(addData);
  };
  for (const b of gen.batches) {
    shared.push(b);
    addData(b.data);
  }
  const indexes = estimateBytes(gen.indexes, shared);
  return rows + indexes + gen.rowCount * LIVENESS_BYTES_PER_ROW;
}

/** Readers' liveness state per row (a key map entry, own / combined live bytes), built on first search. */
const LIVENESS_BYTES_PER_ROW = 64;
