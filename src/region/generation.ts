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
import { randomBytes } from 'node:crypto';
import { RecordBatch, type Schema, Table, tableFromIPC, tableToIPC, makeData, Struct } from 'apache-arrow';
import { takeData } from '../../exec/kernels/take.js';
import { DataError } from '../errors.js';
import { PrimaryKeyFilter } from '../index/pk-filter.js';
import type { ObjectStore } from '../storage/object-store.js';
import { batchKeyReader } from '../table/primary-key.js';
import type { TableSchema } from '../table/table-schema.js';
import { KeyDeduper } from './key-dedup.js';
import type { RegionLayout } from './layout.js';

export const GENERATION_DATA_FILE = 'data.arrow';
export const GENERATION_PK_FILTER_FILE = 'pk_filter.bin';

export interface LoadedGeneration {
  generation: number;
  folder: string;
  batches: RecordBatch[];
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
): Promise<LoadedGeneration> {
  const folder = `${randomBytes(4).toString('hex')}_gen_${generation}`;
  const table = new Table(schema.stored, batches);
  const filter = PrimaryKeyFilter.forKeys(table.numRows);
  for (const batch of batches) {
    const key = batchKeyReader(batch, schema.keyIndexes);
    for (let r = 0; r < batch.numRows; r++) filter.add(key(r));
  }
  await Promise.all([
    store.put(layout.generationKey(folder, GENERATION_DATA_FILE), tableToIPC(table, 'file')),
    store.put(layout.generationKey(folder, GENERATION_PK_FILTER_FILE), filter.encode()),
  ]);
  return { generation, folder, batches };
}

export async function readGeneration(
  store: ObjectStore,
  layout: RegionLayout,
  stored: Schema,
  generation: number,
  folder: string,
): Promise<LoadedGeneration> {
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
  return { generation, folder, batches };
}

export async function readPrimaryKeyFilter(store: ObjectStore, layout: RegionLayout, folder: string): Promise<PrimaryKeyFilter> {
  const key = layout.generationKey(folder, GENERATION_PK_FILTER_FILE);
  return PrimaryKeyFilter.decode(await store.get(key), key);
}
