/**
 * Flushed generations: a frozen MemTable written out as an immutable folder
 * `{8 random hex}_gen_{N}/` in the region directory, holding
 *
 * - `data.arrow`: the rows, an Arrow IPC *file* in the stored schema (user columns +
 *   `_tombstone`), already deduplicated (only the newest version of each key, tombstones kept so
 *   they still hide older generations), in position order;
 * - `pk_filter.bin`: the primary-key Bloom filter (see index/pk-filter.ts).
 *
 * The random prefix gives a retried flush a fresh folder; only the folder recorded in the region
 * manifest counts, so a flush that dies before its manifest commit leaves an orphan folder that
 * readers never look at.
 */
import { type Data, RecordBatch, Struct, Table, tableFromIPC, makeData } from 'apache-arrow';
import { takeData } from '../../exec/kernels/take.js';
import { runsOf, takeRuns } from '../../exec/kernels/take-runs.js';
import { DataError, isQuiverError } from '../errors.js';
import { indexFromSidecar, sidecarSteps } from '../index/sidecar.js';
import type { IndexingContext, IndexScope } from '../index/indexing.js';
import { type SourceIndex, SourceIndexes } from '../index/source-indexes.js';
import { InvertedIndex } from '../index/fts/inverted-index.js';
import { sameTokenizerOptions } from '../index/fts/tokenizer.js';
import { ScalarIndex } from '../index/scalar/scalar-index.js';
import { IvfPqIndex } from '../index/vector/ivf-pq-index.js';
import type { IndexDef } from '../index/index-def.js';
import type { LivenessCache } from '../memtable/liveness.js';
import { PrimaryKeyFilter } from '../index/pk-filter.js';
import { rowOffsetsOf } from '../memtable/batch-offsets.js';
import { type ObjectStore, putParts } from '../storage/object-store.js';
import { BufferPool } from '../util/buffer-pool.js';
import { ipcFileParts } from '../util/ipc-parts.js';
import { batchKeyReader } from '../schema/primary-key.js';
import type { TableSchema } from '../schema/table-schema.js';
import { KeyDeduper } from './key-dedup.js';
import { integerColumnWords } from './int-key-set.js';
import type { RegionLayout } from '../wal/region-layout.js';
import { type Runtime, sleep } from '../util/runtime.js';
import { runStepsPausing } from '../util/steps.js';

export const GENERATION_DATA_FILE = 'data.arrow';
export const GENERATION_PK_FILTER_FILE = 'pk_filter.bin';

export interface LoadedGeneration {
  generation: number;
  folder: string;
  batches: RecordBatch[];
  /** Row position of each batch's first row. */
  rowOffsets: readonly number[];
  rowCount: number;
  /** Indexes over the rows (row position = row index in the data file). */
  indexes: SourceIndexes;
  /** Reader caches (key liveness). */
  cache: LivenessCache;
}

/** Sidecar file of an index inside a generation folder. */
export function indexSidecarFile(def: IndexDef): string {
  return `index_${def.name}.arrow`;
}

/** A MemTable's rows as a generation holds them. */
export interface FlushRows {
  /** The rows that survive dedup within the MemTable (tombstones kept), in position order. */
  batches: RecordBatch[];
  /**
   * Per MemTable row position, its position in `batches`, or −1 when dedup dropped the row.
   * Increasing over the kept rows (the generation keeps the MemTable's order).
   */
  newPosition: Int32Array;
}

/** Rows of `batches` (a MemTable's, from position 0) that survive dedup within it, with where each row went. */
export async function dedupForFlush(schema: TableSchema, batches: readonly RecordBatch[], pause?: () => Promise<void>): Promise<FlushRows> {
  let total = 0;
  for (const b of batches) total += b.numRows;
  const dedup = new KeyDeduper(schema.keyIndexes, schema.tombstoneIndex, total);
  // Batch by batch, newest first (what one `survivors` call over all of them does), with a pause
  // about every YIELD_ROWS rows when given one: 200k keys take ~80 ms.
  const survivors: (Uint32Array | undefined)[] = new Array(batches.length);
  let since = 0;
  for (let b = batches.length - 1; b >= 0; b--) {
    survivors[b] = dedup.survivors([batches[b]!], true)[0];
    if (pause && (since += batches[b]!.numRows) >= YIELD_ROWS) {
      since = 0;
      await pause();
    }
  }
  dedup.release();
  const newPosition = new Int32Array(total);
  const out: RecordBatch[] = [];
  let from = 0;
  let to = 0;
  batches.forEach((batch, i) => {
    const keep = survivors[i];
    const n = batch.numRows;
    if (keep === undefined) {
      for (let r = 0; r < n; r++) newPosition[from + r] = to + r;
      to += n;
      out.push(batch);
    } else {
      newPosition.fill(-1, from, from + n);
      for (let k = 0; k < keep.length; k++) newPosition[from + keep[k]] = to + k;
      to += keep.length;
      if (keep.length > 0) out.push(takeBatch(batch, keep));
    }
    from += n;
  });
  return { batches: out, newPosition };
}

/**
 * The rows of `batch` at `indices`. Ascending indices that come in long runs (a flush's dedup
 * drops a few superseded rows here and there) are copied run by run, a block copy per buffer
 * and run; other index lists go through `takeData` row by row.
 */
export function takeBatch(batch: RecordBatch, indices: Uint32Array): RecordBatch {
  const data = batch.data;
  const runs = runsOf(indices);
  const take = runs ? (c: Data) => takeRuns(c, runs, indices.length) : (c: Data) => takeData(c, indices);
  return new RecordBatch(
    batch.schema,
    makeData({ type: new Struct(batch.schema.fields), length: indices.length, nullCount: 0, children: data.children.map(take) }),
  );
}

/**
 * Indexes that a flush made by remapping the MemTable's instead of rebuilding them from rows, and
 * those it rebuilt (tests check that a flush does not re-index what the MemTable holds); `shared`
 * counts the remapped full-text indexes that are the MemTable's own (every row kept in place).
 */
export const flushIndexCounters = { remapped: 0, rebuilt: 0, shared: 0 };

/** Whether a flush's position map keeps every row where it was (nothing dropped, nothing moved). */
function keepsEveryPosition(newPosition: Int32Array): boolean {
  for (let i = 0; i < newPosition.length; i++) if (newPosition[i] !== i) return false;
  return true;
}

/**
 * The MemTable a generation is flushed from, for reusing its indexes: `indexes` over its row
 * positions, and the flush's `newPosition` map (from `dedupForFlush`).
 */
export interface FlushSource {
  indexes: SourceIndexes | undefined;
  newPosition: Int32Array;
}

/**
 * Gives a generation's index set (holding `batches`) the index of `def`: remapped from the
 * MemTable's when it holds that index over all of its rows (made with the same model, tokenizer
 * or key type), built from `batches` otherwise (an index the MemTable lacks, or no MemTable
 * given). False when the index cannot be built (an IVF-PQ index without a trained model).
 */
async function addGenerationIndex(
  set: SourceIndexes,
  def: IndexDef,
  indexing: IndexingContext,
  batches: readonly RecordBatch[],
  from: FlushSource | undefined,
  /** Called between the steps of a remap that works in steps; undefined runs it through. */
  pause: (() => Promise<void>) | undefined,
): Promise<boolean> {
  // The MemTable's indexes cover its rows [0, rowCount); all of them must be there to be remapped.
  const source = from?.indexes && from.indexes.rowCount === from.newPosition.length ? from.indexes : undefined;
  let prebuilt: SourceIndex | undefined;
  if (source) prebuilt = await runStepsPausing(remappedIndex(def, indexing, source.index(def.name), from!.newPosition), pause);
  if (prebuilt) flushIndexCounters.remapped++;
  else if (indexing.canBuild(def)) flushIndexCounters.rebuilt++;
  set.addIndex(def, indexing.model, batches, prebuilt);
  return set.hasIndex(def.name);
}

/** Rows of an IVF-PQ index remapped between two pauses of a large flush (~5 ms). */
const REMAP_SLICE_ROWS = 32_768;

/** The MemTable's index of `def` remapped (in steps), or undefined when it cannot serve. */
function* remappedIndex(def: IndexDef, indexing: IndexingContext, index: SourceIndex | undefined, newPosition: Int32Array): Generator<void, SourceIndex | undefined, void> {
  switch (def.type) {
    case 'ivf_pq': {
      const model = indexing.model(def);
      // A MemTable still under the model this index grew out of keeps its codes (the flush stays
      // cheap; its sidecar names that model and the generation is re-encoded in the background).
      return index instanceof IvfPqIndex && model !== undefined && (index.model === model || indexing.inLineage(def, index.model)) ? yield* index.remappedSteps(newPosition, REMAP_SLICE_ROWS) : undefined;
    }
    case 'fts':
      if (!(index instanceof InvertedIndex && sameTokenizerOptions(index.options, { stem: def.stem, stopWords: def.stopWords }))) return undefined;
      // Every row kept where it was (no key written twice in the MemTable): the index as it is.
      if (keepsEveryPosition(newPosition)) {
        flushIndexCounters.shared++;
        return yield* index.sealSteps();
      }
      return yield* index.remapSteps(newPosition);
    case 'scalar': {
      const field = indexing.schema.stored.fields.find((f) => f.name === def.column);
      return index instanceof ScalarIndex && field !== undefined && index.type === field.type ? yield* index.remappedSteps(newPosition) : undefined;
    }
  }
}

/**
 * Adds `batch`'s primary keys to `filter`. A function of its own, not a loop inside
 * `writeGeneration`: a per-row loop made that large async function hot, and V8 compiled it
 * again (~100 ms of a compiler thread) after each flush, when the objects its optimized code had
 * embedded were collected ("weak objects" deopts), two or three times a 200 000 rows ingested.
 */
function addBatchKeys(filter: PrimaryKeyFilter, batch: RecordBatch, keyIndexes: readonly number[]): void {
  const words = keyIndexes.length === 1 ? integerColumnWords(batch.data.children[keyIndexes[0]]) : undefined;
  if (words) {
    const word = keyWord;
    for (let r = 0; r < batch.numRows; r++) {
      words(r, word);
      filter.addKeyWords(word[0], word[1]);
    }
  } else {
    const key = batchKeyReader(batch, keyIndexes);
    for (let r = 0; r < batch.numRows; r++) filter.add(key(r));
  }
}
const keyWord = new Int32Array(2);

/** The order a flush prepares its index sidecars in: the largest files first (see `writeGeneration`). */
const SIDECAR_ORDER: Record<IndexDef['type'], number> = { fts: 0, ivf_pq: 1, scalar: 2 };

/** Generations of at least this many rows are written with event-loop turns between steps. */
const YIELD_ROWS = 16_384;
/** The key filter's steps also end after this long (runtime clock). */
const YIELD_MS = 5;

/**
 * Memory for the largest arrays of full-text sidecars (a 100 000-row flush: ~26 MB of postings
 * and token positions), reused from one flush to the next: fresh, it page-faulted ~7 000 times a
 * 100 000 rows flushed, ~80 ms of the main thread on the VMs this project is measured on. Taken
 * back once the sidecar's write has succeeded (a failed write's memory is not reused, in case a
 * retried request still reads it).
 */
const sidecarBuffers = new BufferPool(256 * 1024, 64 * 1024 * 1024);

export async function writeGeneration(
  store: ObjectStore,
  layout: RegionLayout,
  schema: TableSchema,
  generation: number,
  batches: RecordBatch[],
  indexing: IndexingContext,
  runtime: Runtime,
  /** The MemTable the rows come from: its indexes are remapped rather than rebuilt. */
  from?: FlushSource,
): Promise<LoadedGeneration> {
  const folder = `${runtime.randomHex(4)}_gen_${generation}`;
  // Each file is written as soon as it is encoded (the rows first, the largest), so storage works
  // while the rest is prepared; between steps of a large generation the event loop gets a turn
  // (a flush must not block puts and searches for its whole duration).
  // Arrow files go out in parts (`ipcFileParts`): the rows file straight from the batches'
  // buffers, no joined copy.
  const writes: Promise<void>[] = [];
  const write = (file: string, parts: readonly Uint8Array[]) => {
    const p = putParts(store, layout.generationKey(folder, file), parts);
    p.catch(() => {}); // awaited below; a failure must not surface as unhandled meanwhile
    writes.push(p);
  };
  const table = new Table(schema.stored, batches);
  const large = table.numRows >= YIELD_ROWS;
  const yieldTurn = () => sleep(runtime, 0);
  if (large) await yieldTurn(); // after the caller's dedup
  write(GENERATION_DATA_FILE, await ipcFileParts(table, large ? yieldTurn : undefined));
  // Indexes over the deduplicated rows (their positions differ from the MemTable's), written as
  // sidecars so the generation is searchable without re-indexing. The MemTable's indexes hold
  // the same rows already: they are remapped to the new positions, not rebuilt.
  const indexes = new SourceIndexes(indexing.schema);
  indexes.insert(batches);
  const taken: Uint8Array[] = [];
  const take = (entries: number): Uint32Array => {
    const b = sidecarBuffers.take(4 * entries);
    taken.push(b);
    return new Uint32Array(b.buffer, b.byteOffset, entries);
  };
  // The full-text indexes first: their sidecars are the largest files after the rows (~0.3 KB a
  // row), so their writes start while the smaller indexes and the key filter are prepared.
  const defs = [...indexing.defs].sort((a, b) => SIDECAR_ORDER[a.type] - SIDECAR_ORDER[b.type]);
  for (const def of defs) {
    if (large) await yieldTurn();
    if (!(await addGenerationIndex(indexes, def, indexing, batches, from, large ? yieldTurn : undefined))) continue;
    if (large) await yieldTurn();
    const built = indexes.index(def.name)!;
    const sidecar = await runStepsPausing(sidecarSteps(def, built, built instanceof IvfPqIndex ? indexing.modelFile(built.model) : undefined, large ? undefined : Infinity, take), yieldTurn);
    if (large) await yieldTurn();
    write(indexSidecarFile(def), await ipcFileParts(sidecar));
  }
  if (large) await yieldTurn();
  const filter = PrimaryKeyFilter.forKeys(table.numRows);
  let keyed = 0;
  let since = runtime.now();
  for (const batch of batches) {
    // A turn every YIELD_ROWS rows, or sooner when they run slow (a process's first flush, cold:
    // 20–45 ms between turns).
    if (large && ((keyed += batch.numRows) >= YIELD_ROWS || runtime.now() - since >= YIELD_MS)) {
      keyed = 0;
      await yieldTurn();
      since = runtime.now();
    }
    addBatchKeys(filter, batch, schema.keyIndexes);
  }
  write(GENERATION_PK_FILTER_FILE, [filter.encode()]);
  await Promise.all(writes);
  // Every file is written: nothing reads the sidecars' arrays any more.
  for (const b of taken) sidecarBuffers.give(b);
  return { generation, folder, batches, rowOffsets: rowOffsetsOf(batches), rowCount: table.numRows, indexes, cache: {} };
}

export async function readGeneration(
  store: ObjectStore,
  layout: RegionLayout,
  indexing: IndexingContext,
  generation: number,
  folder: string,
  scope: IndexScope = 'all',
): Promise<LoadedGeneration> {
  const stored = indexing.schema.stored;
  const key = layout.generationKey(folder, GENERATION_DATA_FILE);
  const bytes = await store.get(key);
  let table: Table;
  try {
    table = tableFromIPC(bytes);
  } catch (e) {
    throw new DataError(`corrupt generation file ${key}: ${(e as Error).message}`, { cause: e });
  }
  if (table.schema.fields.length !== stored.fields.length || table.schema.fields.some((f, i) => f.name !== stored.fields[i].name)) {
    throw new DataError(`generation file ${key} does not have the table's stored schema`);
  }
  // Re-label with the table's schema object so every source shares one schema.
  const batches = table.batches.filter((b) => b.numRows > 0).map((b) => new RecordBatch(stored, b.data));
  const indexes = new SourceIndexes(indexing.schema);
  indexes.insert(batches);
  await loadIndexSidecars(store, layout, folder, indexing, indexes, batches, scope);
  return { generation, folder, batches, rowOffsets: rowOffsetsOf(batches), rowCount: indexes.rowCount, indexes, cache: {} };
}

/**
 * Gives a loaded generation every current index of `scope`: from its sidecar when the
 * generation has one, otherwise built from its rows (it was flushed before the index existed,
 * or before the IVF-PQ model was trained), without stalling the event loop.
 */
export async function loadIndexSidecars(
  store: ObjectStore,
  layout: RegionLayout,
  folder: string,
  indexing: IndexingContext,
  indexes: SourceIndexes,
  batches: readonly RecordBatch[],
  scope: IndexScope = 'all',
): Promise<void> {
  await Promise.all(
    indexing.defsIn(scope).map(async (def) => {
      if (indexes.hasIndex(def.name) || !indexing.canBuild(def)) return;
      const key = layout.generationKey(folder, indexSidecarFile(def));
      let bytes: Uint8Array;
      try {
        bytes = await store.get(key);
      } catch (e) {
        if (isQuiverError(e, 'not_found')) return;
        throw e;
      }
      const table = tableFromIPC(bytes);
      const prebuilt = await indexFromSidecar(def, indexing, table);
      if (prebuilt) indexes.addIndex(def, indexing.model, batches, prebuilt);
    }),
  );
  // The rest are built from the rows in slices that yield to the event loop (a generation's
  // IVF-PQ index takes seconds); concurrent loads of one generation share the builds.
  await indexing.completeAsync(indexes, batches, undefined, scope);
}

export async function readPrimaryKeyFilter(store: ObjectStore, layout: RegionLayout, folder: string): Promise<PrimaryKeyFilter> {
  const key = layout.generationKey(folder, GENERATION_PK_FILTER_FILE);
  return PrimaryKeyFilter.decode(await store.get(key), key);
}
