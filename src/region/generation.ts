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
import { RecordBatch, Table, tableFromIPC, tableToIPC, makeData, Struct } from 'apache-arrow';
import { takeData } from '../../exec/kernels/take.js';
import { DataError, isQuiverError } from '../errors.js';
import { indexFromSidecar, sidecarOf } from '../index/sidecar.js';
import type { IndexingContext } from '../index/indexing.js';
import { SourceIndexes } from '../index/source-indexes.js';
import type { IndexDef } from '../index/index-def.js';
import type { LivenessCache } from '../memtable/liveness.js';
import { PrimaryKeyFilter } from '../index/pk-filter.js';
import type { ObjectStore } from '../storage/object-store.js';
import { batchKeyReader } from '../schema/primary-key.js';
import type { TableSchema } from '../schema/table-schema.js';
import { KeyDeduper } from './key-dedup.js';
import type { RegionLayout } from '../wal/region-layout.js';
import type { Runtime } from '../util/runtime.js';

export const GENERATION_DATA_FILE = 'data.arrow';
export const GENERATION_PK_FILTER_FILE = 'pk_filter.bin';

export interface LoadedGeneration {
  generation: number;
  folder: string;
  batches: RecordBatch[];
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

/** Rows of `batches` that survive dedup within one MemTable (tombstones kept). */
export function dedupForFlush(schema: TableSchema, batches: readonly RecordBatch[]): RecordBatch[] {
  const dedup = new KeyDeduper(schema.keyIndexes, schema.tombstoneIndex);
  const survivors = dedup.survivors(batches, true);
  const out: RecordBatch[] = [];
  batches.forEach((batch, i) => {
    const keep = survivors[i];
    if (keep === undefined) out.push(batch);
    else if (keep.length > 0) out.push(takeBatch(batch, keep));
  });
  return out;
}

export function takeBatch(batch: RecordBatch, indices: Uint32Array): RecordBatch {
  const data = batch.data;
  return new RecordBatch(
    batch.schema,
    makeData({ type: new Struct(batch.schema.fields), length: indices.length, nullCount: 0, children: data.children.map((c) => takeData(c, indices)) }),
  );
}

export async function writeGeneration(
  store: ObjectStore,
  layout: RegionLayout,
  schema: TableSchema,
  generation: number,
  batches: RecordBatch[],
  indexing: IndexingContext,
  runtime: Runtime,
): Promise<LoadedGeneration> {
  const folder = `${runtime.randomHex(4)}_gen_${generation}`;
  // Indexes are rebuilt over the deduplicated rows (their positions differ from the MemTable's)
  // and written as sidecars, so the generation is searchable without re-indexing.
  const indexes = indexing.build(batches);
  const sidecars = indexes.entries().map(({ def, index }) =>
    store.put(layout.generationKey(folder, indexSidecarFile(def)), tableToIPC(sidecarOf(def, index), 'file')),
  );
  const table = new Table(schema.stored, batches);
  const filter = PrimaryKeyFilter.forKeys(table.numRows);
  for (const batch of batches) {
    const key = batchKeyReader(batch, schema.keyIndexes);
    for (let r = 0; r < batch.numRows; r++) filter.add(key(r));
  }
  await Promise.all([
    store.put(layout.generationKey(folder, GENERATION_DATA_FILE), tableToIPC(table, 'file')),
    store.put(layout.generationKey(folder, GENERATION_PK_FILTER_FILE), filter.encode()),
    ...sidecars,
  ]);
  return { generation, folder, batches, rowCount: table.numRows, indexes, cache: {} };
}

export async function readGeneration(
  store: ObjectStore,
  layout: RegionLayout,
  indexing: IndexingContext,
  generation: number,
  folder: string,
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
  await loadIndexSidecars(store, layout, folder, indexing, indexes, batches);
  return { generation, folder, batches, rowCount: indexes.rowCount, indexes, cache: {} };
}

/**
 * Gives a loaded generation every current index: from its sidecar when the generation has one,
 * otherwise built from its rows (it was flushed before the index existed, or before the IVF-PQ
 * model was trained).
 */
export async function loadIndexSidecars(
  store: ObjectStore,
  layout: RegionLayout,
  folder: string,
  indexing: IndexingContext,
  indexes: SourceIndexes,
  batches: readonly RecordBatch[],
): Promise<void> {
  await Promise.all(
    indexing.defs.map(async (def) => {
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
      const prebuilt = indexFromSidecar(def, indexing, table);
      if (prebuilt) indexes.addIndex(def, indexing.model, batches, prebuilt);
    }),
  );
  indexing.complete(indexes, batches);
}

export async function readPrimaryKeyFilter(store: ObjectStore, layout: RegionLayout, folder: string): Promise<PrimaryKeyFilter> {
  const key = layout.generationKey(folder, GENERATION_PK_FILTER_FILE);
  return PrimaryKeyFilter.decode(await store.get(key), key);
}
