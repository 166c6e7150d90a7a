/**
 * Training and loading IVF-PQ models. A model is trained per index from the table's live
 * rows and stored as `{table}/_indices/{index name}-{uuid}.arrow` (create-if-absent); the index
 * definition in table metadata names it. New rows of every MemTable and generation are encoded
 * with that model, so ADC distances are comparable across them (and refined distances are
 * exact anyway); when the table has grown well past the rows the model was trained from, a
 * model with more partitions replaces it (model-growth.ts).
 *
 * Training runs in a worker thread (index/vector/train-worker.ts), so the event loop keeps
 * serving while k-means runs (seconds at 100k × 128); the model is the one `trainIvfPq` gives
 * in-process for the same rows (same seed).
 */
import type { RecordBatch } from 'apache-arrow';
import { DataError } from '../errors.js';
import { decodeIvfPqModel, encodeIvfPqModel, type IvfPqModel } from '../index/vector/ivf-pq-model.js';
import { type OffThreadOptions, trainIvfPqOffThread } from '../index/vector/train-worker.js';
import { VectorSource } from '../index/vector/vector-source.js';
import type { ObjectStore } from '../storage/object-store.js';
import { randomUUID } from '../util/uuid.js';
import type { IndexDef } from '../index/index-def.js';

/** Fewer rows than this are searched exactly; a model is trained once a table has this many. */
export const MIN_TRAINING_ROWS = 2048;

/** Vectors needed to train a model for `def`. */
export function minTrainingVectors(def: IndexDef): number {
  return Math.max(MIN_TRAINING_ROWS, def.partitions ?? 0);
}

/** Trains from `batches` (one column: the vectors); with too few vectors, says how many there were. */
export async function trainIndexModel(
  store: ObjectStore,
  tableKey: string,
  def: IndexDef,
  batches: readonly RecordBatch[],
  options?: OffThreadOptions,
): Promise<{ def: IndexDef; model: IvfPqModel; offThread: boolean; reason?: string } | { tooFew: number }> {
  if (batches.length === 0) return { tooFew: 0 };
  const source = VectorSource.fromArrow([...batches], 0);
  let vectors = 0;
  for (const c of source.chunks) {
    if (!c.validity) vectors += c.count;
    else for (let i = 0; i < c.count; i++) if (c.validity[(c.bitOffset + i) >> 3] & (1 << ((c.bitOffset + i) & 7))) vectors++;
  }
  if (vectors < minTrainingVectors(def)) return { tooFew: vectors };
  const { model, offThread, reason } = await trainIvfPqOffThread(source, { metric: def.metric ?? 'l2', partitions: def.partitions, subVectors: def.subVectors }, options);
  const file = await storeIndexModel(store, tableKey, def, model);
  // trainedRows: when the table holds GROWTH_FACTOR times as many, the model grows (model-growth.ts).
  return { def: { ...def, model: file, trainedRows: vectors }, model, offThread, reason };
}

/** Writes a trained model of `def` under a fresh name (create-if-absent); returns its file, relative to the table. */
export async function storeIndexModel(store: ObjectStore, tableKey: string, def: IndexDef, model: IvfPqModel): Promise<string> {
  const file = `_indices/${def.name}-${randomUUID()}.arrow`;
  await store.putIfAbsent(`${tableKey}/${file}`, encodeIvfPqModel(model));
  return file;
}

export async function loadIndexModel(store: ObjectStore, tableKey: string, def: IndexDef): Promise<IvfPqModel> {
  const key = `${tableKey}/${def.model}`;
  try {
    return decodeIvfPqModel(await store.get(key));
  } catch (e) {
    throw new DataError(`cannot load the IVF-PQ model of index ${def.name} (${key}): ${(e as Error).message}`, { cause: e });
  }
}
