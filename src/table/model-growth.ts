/**
 * An IVF-PQ model that grows with the table (issue 7).
 *
 * A model is trained once, from the rows the table holds when the index is created (often a
 * small first part of it). As the table grows its partitions fill up, and a query at a fixed
 * nprobes scans ever more codes: at 1M rows under a model trained on 100k, about a fifth of the
 * table. So when the rows stored reach GROWTH_FACTOR × the rows the current model was trained
 * from (and at least `modelGrowthSettings.minRows`), a new model with more partitions (`grownPartitions`) is
 * trained — from an even sample of every source, in the training worker thread — stored under
 * `_indices/` like the first one, and committed as the index's model in a new table-metadata
 * version, the old one moving to `previousModels`.
 *
 * What changes, and why the answers stay right during the transition:
 * - New MemTables index with the new model (they are built from the current definitions); a
 *   MemTable that was indexing under the old model keeps it, and its flush keeps those codes
 *   (cheap, and its sidecar names the old model).
 * - Generations under an older model of the lineage are re-encoded in the background: on the
 *   encode worker thread when there is one (this thread copies slices out and applies the codes
 *   in order), else here in slices of a few milliseconds, an event-loop turn between them; the new sidecar is
 *   written whole (`put` replaces an object atomically: a temp file renamed on a local disk, one
 *   PUT on S3), then the generation's in-memory index is swapped in one synchronous step.
 * - Every sidecar names its model and a reader decodes codes only with the model they were made
 *   with (`IndexingContext.lineageModel`), so old and new sidecars are each exact; a search
 *   groups sources by model, one candidate pool per model, and merges the groups' exact
 *   (refined) distances — a query mid-transition is as right as before or after it.
 * - Two processes: the metadata commit is compare-and-set on the model it replaces, so only one
 *   growth lands; the other adopts the winner's definition. A process that opened the table
 *   before a growth meets a sidecar naming a model it does not know, re-reads the metadata once
 *   and adopts the grown definition (its lineage contains the model the process had).
 * - A crash at any point loses nothing: the model file is written before the metadata names
 *   it, a sidecar before memory switches to it, and a generation still under an older model is
 *   searched with that model and re-encoded by the next writing process that checks.
 *
 * Only a process that writes to the table (or flushes it) checks and re-encodes; readers never
 * write. A user who fixed `partitions` at createIndex keeps that model.
 */
import { tableToIPC } from 'apache-arrow';
import { isQuiverError } from '../errors.js';
import type { IndexDef } from '../index/index-def.js';
import { sidecarOf } from '../index/sidecar.js';
import type { SourceIndexes } from '../index/source-indexes.js';
import { CodeQueue } from '../index/vector/code-queue.js';
import { encodeOffThread, encodeWorkerReady } from '../index/vector/encode-worker.js';
import { IvfPqIndex } from '../index/vector/ivf-pq-index.js';
import { defaultSampleSize, type IvfPqModel, PQ_CODEWORDS } from '../index/vector/ivf-pq-model.js';
import { trainIvfPqOffThread } from '../index/vector/train-worker.js';
import { isValidAt, VectorSource } from '../index/vector/vector-source.js';
import { indexSidecarFile, type LoadedGeneration } from '../region/generation.js';
import type { RegionReadState } from '../region/region-writer.js';
import type { RegionLayout } from '../wal/region-layout.js';
import { loadIndexModel, storeIndexModel } from './index-training.js';
import type { TableContext } from './table-context.js';
import { nextTurn } from '../util/steps.js';

/** A model is replaced once the table holds this many times the rows it was trained from. */
export const GROWTH_FACTOR = 4;
/**
 * Below `minRows` stored rows a model is never replaced. Measured on the search benchmark's
 * table at 100 000 rows (bench/dev-growth.ts, back to back): a model grown from 100 to 316
 * partitions scanned 15k codes a query instead of 43k, yet the query took as long (at that size
 * the per-query costs around the scan dominate: partition ranking, the exact re-rank of 400
 * candidates, liveness and filter masks), and a 16 % filter's recall@10 fell from 0.981 to 0.963
 * (nprobes 20 then covers 6 % of the partitions instead of 20 %, and the filtered neighbours lie
 * further out). From a few hundred thousand rows the scan dominates: at 1M, 200k codes → 35k.
 * A settings object rather than a constant so tests can grow small tables.
 */
export const modelGrowthSettings = { minRows: 200_000 };
/** Most partitions a grown model gets (partition ranking costs P × dim per query). */
export const MAX_GROWN_PARTITIONS = 4096;
/**
 * Multiply-adds of encoding per re-encoding slice: four build slices (`defaultSliceRows`), a few
 * milliseconds — 64 rows at 128 dims and 1 000 partitions.
 */
const REENCODE_SLICE_WORK = 4 * 2_600_000;
/** Rows a re-encoding job sent to the encode worker holds (~0.5 ms to copy out at 128 dims). */
const OFF_THREAD_SLICE = 4096;

/**
 * Partitions of a model trained when the table holds `rows`: the default's √n, taken at the
 * rows the model will hold halfway to its own replacement (2 × rows), so the codes a query scans
 * stay about flat as the table grows. Capped at MAX_GROWN_PARTITIONS. Measured at 1M rows of
 * the search benchmark's clustered data (bench/dev-partitions.ts): 256 partitions scan 193k
 * codes at nprobes 20 (recall@10 0.989), 632 scan 56k (0.993), 1 024 scan 27k (0.995) — more
 * partitions cost the query less and lose no recall at the same nprobes, but cost encoding
 * (dim × (partitions + 256) multiply-adds a row) and training more.
 */
export function grownPartitions(rows: number): number {
  return Math.min(MAX_GROWN_PARTITIONS, Math.max(1, Math.round(Math.sqrt(rows * 2))));
}

/** Rows the current model of `def` was trained from (older definitions: estimated as P²). */
export function trainedRowsOf(def: IndexDef, model: IvfPqModel): number {
  return def.trainedRows ?? model.partitions * model.partitions;
}

/** The partitions of the model `def` should grow to at `rows` stored rows, or undefined when not due. */
export function growthDue(def: IndexDef, model: IvfPqModel, rows: number): number | undefined {
  if (def.type !== 'ivf_pq' || def.partitions !== undefined) return undefined;
  if (rows < modelGrowthSettings.minRows || rows < GROWTH_FACTOR * trainedRowsOf(def, model)) return undefined;
  const partitions = grownPartitions(rows);
  return partitions > model.partitions ? partitions : undefined;
}

/** What the growth has done in this process (tests read these counters, never timings). */
export interface ModelGrowthStats {
  /** Models this process trained and committed. */
  grown: number;
  /** Generations whose index this process re-encoded with the current model (sidecar rewritten). */
  reencoded: number;
  /** Grown definitions adopted from another process. */
  adopted: number;
  /** The last background failure (retried at the next check), if any. */
  lastError?: string;
}

type ReadStates = () => Promise<{ layout: RegionLayout; state: RegionReadState }[]>;

export class ModelGrowth {
  readonly stats: ModelGrowthStats = { grown: 0, reencoded: 0, adopted: 0 };
  private rowsSinceCheck = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  /** A model is training in the worker (seconds to minutes): `close` does not wait for it. */
  private training = false;
  private refreshing: Promise<void> | undefined;
  /** Rows of each generation seen (generations are immutable), so a check loads none twice. */
  private readonly generationRows = new Map<string, number>();
  /** The model file each generation's index is known to be under, so a check skips those done. */
  private readonly generationModel = new Map<string, string>();

  constructor(
    private readonly ctx: TableContext,
    private readonly readStates: ReadStates,
  ) {
    ctx.indexing.loadModel = (file) => loadIndexModel(ctx.store, ctx.tableKey, { name: file, column: '', type: 'ivf_pq', model: file });
    ctx.indexing.refreshDefs = () => this.refreshDefs();
  }

  /** Counts written rows; a check runs once they reach half the smallest trained row count. */
  noteWrites(rows: number): void {
    if (this.closed) return;
    this.rowsSinceCheck += rows;
    let every = Infinity;
    for (const def of this.ctx.indexing.defs) {
      const model = this.ctx.indexing.model(def);
      if (model && def.type === 'ivf_pq' && def.partitions === undefined) every = Math.min(every, Math.max(modelGrowthSettings.minRows, trainedRowsOf(def, model)) / 2);
    }
    if (this.rowsSinceCheck >= every) this.kick();
  }

  /** Checks in the background: grows a model that is due, re-encodes generations under older models. */
  kick(): void {
    if (this.closed) return;
    this.rowsSinceCheck = 0;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => (this.running = undefined));
  }

  /** Resolves once no check or re-encoding is running (tests, benchmarks, close). */
  async settle(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Stops background work at its next slice and waits for that; a training under way is not
   * waited for (its model is dropped: nothing names it yet).
   */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running && !this.training) await this.running;
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      try {
        for (const def of this.ctx.indexing.defs) {
          if (def.type !== 'ivf_pq' || !this.ctx.indexing.model(def)) continue;
          const current = await this.growIfDue(def);
          await this.reencodeGenerations(current);
        }
        delete this.stats.lastError;
      } catch (e) {
        // Background work must not fail a write; the next check retries.
        this.stats.lastError = (e as Error).message;
      }
    } while (this.again && !this.closed);
  }

  /** Rows stored in the table's sources (live or not). */
  private async storedRows(): Promise<number> {
    let rows = 0;
    for (const { layout, state } of await this.readStates()) {
      for (const m of state.memtables) rows += m.memtable.store.rowsBefore(m.batchCount);
      for (const g of state.manifest.flushedGenerations) {
        const key = `${layout.regionId}/${g.path}`;
        let n = this.generationRows.get(key);
        if (n === undefined) this.generationRows.set(key, (n = await this.ctx.generations.rowCount(layout, g.generation, g.path)));
        rows += n;
      }
    }
    return rows;
  }

  /** Every source of the table now, with its rows. */
  private async sources(): Promise<{ indexes: SourceIndexes; rows: number }[]> {
    const out: { indexes: SourceIndexes; rows: number }[] = [];
    for (const { layout, state } of await this.readStates()) {
      for (const m of state.memtables) if (m.memtable.indexes) out.push({ indexes: m.memtable.indexes, rows: m.memtable.store.rowsBefore(m.batchCount) });
      for (const g of state.manifest.flushedGenerations) {
        // Rows only: the sample reads vectors, no index (a search loads those when it needs them).
        const gen = await this.ctx.generations.get(layout, g.generation, g.path, 'none');
        out.push({ indexes: gen.indexes, rows: gen.rowCount });
      }
    }
    return out;
  }

  /** Trains and commits a grown model of `def` when it is due; returns the definition now current. */
  private async growIfDue(def: IndexDef): Promise<IndexDef> {
    const model = this.ctx.indexing.model(def)!;
    if (growthDue(def, model, await this.storedRows()) === undefined) return def;
    const sources = await this.sources();
    const rows = sources.reduce((n, s) => n + s.rows, 0);
    const partitions = growthDue(def, model, rows);
    if (partitions === undefined) return def;
    const vectors = sources.map((s) => s.indexes.vectorSource(def.column)).filter((v): v is VectorSource => v !== undefined);
    const sample = evenSample(vectors, model.dim, defaultSampleSize(rows, partitions));
    this.training = true;
    let grown: IvfPqModel;
    try {
      ({ model: grown } = await trainIvfPqOffThread(sample, { metric: model.metric, partitions, subVectors: model.subVectors }));
    } finally {
      this.training = false;
    }
    if (this.closed) return def;
    const file = await storeIndexModel(this.ctx.store, this.ctx.tableKey, def, grown);
    // Compare-and-set on the model this growth replaces: a concurrent growth (or a re-created
    // index) wins, and this process adopts what the metadata then says.
    for (let attempt = 0; ; attempt++) {
      const latest = await this.ctx.metaStore.readLatest();
      const stored = latest?.doc.indexes?.find((d) => d.name === def.name);
      if (!latest || !stored || stored.model !== def.model) {
        await this.refreshDefs();
        return this.ctx.indexing.defs.find((d) => d.name === def.name) ?? def;
      }
      const next: IndexDef = { ...stored, model: file, trainedRows: rows, previousModels: [...(stored.previousModels ?? []), stored.model!] };
      const doc = { ...latest.doc, indexes: latest.doc.indexes!.map((d) => (d.name === def.name ? next : d)) };
      try {
        await this.ctx.metaStore.write(latest.version + 1, doc);
      } catch (e) {
        if (!isQuiverError(e, 'already_exists') || attempt >= 10) throw e;
        continue;
      }
      this.adopt(next, grown);
      this.stats.grown++;
      return next;
    }
  }

  /** Makes `def` (with its loaded model) the current definition of its index in this process. */
  private adopt(def: IndexDef, model: IvfPqModel): void {
    this.ctx.indexing.setModel(def, model);
    const indexes = (this.ctx.meta.indexes ?? []).map((d) => (d.name === def.name ? def : d));
    this.ctx.meta = { ...this.ctx.meta, indexes };
    this.ctx.indexing.setDefs(this.ctx.indexing.defs.map((d) => (d.name === def.name ? def : d)));
  }

  /**
   * Re-reads the table metadata and adopts every IVF-PQ definition that grew out of the one this
   * process has (its lineage holds our current model). Other changes (an index created or
   * dropped elsewhere) are left to the next open, as before.
   */
  refreshDefs(): Promise<void> {
    this.refreshing ??= (async () => {
      const latest = await this.ctx.metaStore.readLatest();
      for (const stored of latest?.doc.indexes ?? []) {
        const mine = this.ctx.indexing.defs.find((d) => d.name === stored.name);
        if (!mine || stored.type !== 'ivf_pq' || !stored.model || stored.model === mine.model) continue;
        if (!mine.model || !(stored.previousModels ?? []).includes(mine.model)) continue;
        this.adopt(stored, await loadIndexModel(this.ctx.store, this.ctx.tableKey, stored));
        this.stats.adopted++;
      }
    })().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /** Re-encodes, one at a time, every generation whose index of `def` is under an older model of its lineage. */
  private async reencodeGenerations(def: IndexDef): Promise<void> {
    const model = this.ctx.indexing.model(def);
    if (!model || !def.model) return;
    // Only a model the index grew out of makes a generation due (any other model's sidecar is
    // rebuilt from rows when loaded): without one there is nothing to do, and nothing to load —
    // the check loads each generation it has not seen, which after a reopen held up the first puts.
    if (!def.previousModels?.length) return;
    for (const { layout, state } of await this.readStates()) {
      for (const g of state.manifest.flushedGenerations) {
        if (this.closed) return;
        const key = `${layout.regionId}/${g.path}`;
        if (this.generationModel.get(key) === def.model) continue;
        const gen = await this.ctx.generations.get(layout, g.generation, g.path);
        if (await this.reencode(def, model, layout, gen)) this.generationModel.set(key, def.model);
      }
    }
  }

  /**
   * Re-encodes `gen`'s index of `def` with `model` when it is under an older model of the
   * lineage. True when the generation needs nothing more for this model (false when stopped).
   */
  private async reencode(def: IndexDef, model: IvfPqModel, layout: RegionLayout, gen: LoadedGeneration): Promise<boolean> {
    const old = gen.indexes.index<IvfPqIndex>(def.name);
    if (!(old instanceof IvfPqIndex) || old.model === model || !this.ctx.indexing.inLineage(def, old.model)) return true;
    const vectors = gen.indexes.vectorSource(def.column);
    if (!vectors) return true;
    const fresh = new IvfPqIndex(model);
    // On the encode worker when there is one (slices of OFF_THREAD_SLICE rows; this thread only
    // copies them out and applies the codes, in order), else here in slices of a few ms of work.
    const offThread = (await encodeWorkerReady()) ? encodeOffThread : undefined;
    const queue = new CodeQueue();
    const slice = offThread ? OFF_THREAD_SLICE : Math.max(16, Math.floor(REENCODE_SLICE_WORK / (model.dim * (model.partitions + PQ_CODEWORDS))));
    for (const c of vectors.chunks) {
      for (let from = 0; from < c.count; from += slice) {
        const to = Math.min(c.count, from + slice);
        queue.add(fresh, { start: c.start + from, count: to - from, data: c.data.subarray(from * model.dim, to * model.dim), validity: c.validity, bitOffset: c.bitOffset + from }, offThread);
        await nextTurn();
        if (this.closed) return false;
      }
    }
    await new Promise<void>((resolve) => queue.whenApplied(resolve));
    if (this.closed) return false;
    // The sidecar first (replaced whole), then memory, so a crash in between leaves a
    // generation whose sidecar and rows agree either way.
    await this.ctx.store.put(layout.generationKey(gen.folder, indexSidecarFile(def)), tableToIPC(sidecarOf(def, fresh, def.model), 'file'));
    if (gen.indexes.index(def.name) !== old) return false; // dropped or replaced meanwhile: look again next time
    // One synchronous step: a search sees the old index or the new one, never neither.
    gen.indexes.remove(def.name);
    gen.indexes.addIndex(def, this.ctx.indexing.model, [], fresh);
    this.stats.reencoded++;
    return true;
  }
}

/** About `want` non-null vectors spread evenly over every source (a training sample). */
function evenSample(sources: readonly VectorSource[], dim: number, want: number): VectorSource {
  let total = 0;
  for (const s of sources) for (const c of s.chunks) total += c.count;
  const step = Math.max(1, total / Math.max(1, want));
  const out = new Float32Array(Math.min(total, Math.ceil(total / step) + 1) * dim);
  let taken = 0;
  let seen = 0;
  let next = 0;
  for (const s of sources) {
    for (const c of s.chunks) {
      for (; next < seen + c.count && taken * dim < out.length; next += step) {
        const i = Math.floor(next) - seen;
        if (!isValidAt(c.validity, c.bitOffset, i)) continue;
        out.set(c.data.subarray(i * dim, (i + 1) * dim), taken * dim);
        taken++;
      }
      seen += c.count;
    }
  }
  return new VectorSource(dim, [{ start: 0, count: taken, data: out.subarray(0, taken * dim), validity: null, bitOffset: 0 }]);
}
