/**
 * Table: a named, primary-keyed collection of rows spread over regions.
 *
 * Writes are validated once, routed to regions by the region spec, and handed to each region's
 * RegionWriter. The writer opens — claims the region (epoch + 1), replays its WAL and fences
 * older writers — lazily, on the first write to that region through this Table object.
 * A put touching several regions is atomic per region, not across regions.
 *
 * One rule for a writer that fails: after a transient failure (`unavailable`) the next write
 * opens a fresh writer, which replays the log; after any other (`fenced` — including losing a
 * claim race —, `storage`, `data`, `internal`) the region stays failed for this Table object,
 * and every write to it throws that error. Recovery is explicit: `table.close()`, then
 * `db.openTable(name)` gives a new Table whose next write claims the region again.
 *
 * Reads take a snapshot: for regions this process writes, the writer's in-memory state captured
 * synchronously after confirming (one HEAD) that no newer writer has claimed the region; for the
 * others, a read-only tail of the region's manifest and WAL. So a read sees every write any
 * process acknowledged before it began. A scan then walks each region's sources newest first and
 * keeps only the newest version of each key.
 */
import { type Data, type DataType, makeBuilder, makeData, RecordBatch, Schema, Struct, type Table as ArrowTable } from 'apache-arrow';
import { takeData } from '../../exec/kernels/take.js';
import { AlreadyExistsError, ClosedError, InvalidError, isQuiverError, NotFoundError, type QuiverError, toQuiverError } from '../errors.js';
import { takeBatch } from '../region/generation.js';
import { KeyDeduper } from '../region/key-dedup.js';
import { RegionLayout } from '../wal/region-layout.js';
import { type RegionSpec, routeBatch, staticRegions } from '../region/region-spec.js';
import { RegionTail } from '../region/region-tail.js';
import { type RegionReadState, RegionWriter, type RegionWriterStats } from '../region/region-writer.js';
import { type RegionWriterConfig, resolveWriterConfig } from '../region/writer-config.js';
import { keyVectorData } from '../schema/primary-key.js';
import type { TableSchema } from '../schema/table-schema.js';
import { type CreateIndexOptions, type IndexDef, makeIndexDef } from '../index/index-def.js';
import type { SourceIndexes } from '../index/source-indexes.js';
import type { IndexScope } from '../index/indexing.js';
import { catchUpLiveState, type SearchRequest, runSearch, searchSources } from './table-search.js';
import type { RegionSources } from './search.js';
import { minTrainingVectors, trainIndexModel } from './index-training.js';
import { ModelGrowth, type ModelGrowthStats } from './model-growth.js';
import type { TableContext } from './table-context.js';
import { nextTurn } from '../util/steps.js';

export type { TableContext } from './table-context.js';

/**
 * A consistent read of a table for the query engine: every region's sources (MemTables newest
 * first, then generations newest first) with their indexes and liveness caches, captured when
 * the snapshot was taken. Writes after that are not visible through it; holding it keeps the
 * captured MemTable batches and loaded generations reachable, so a query drops it when done.
 */
export interface TableSnapshot {
  readonly table: string;
  readonly schema: TableSchema;
  readonly indexes: readonly IndexDef[];
  readonly regions: readonly RegionSources[];
}

export interface ScanOptions {
  /** Columns to return, in this order (default: all). */
  columns?: string[];
}

export class Table {
  readonly name: string;
  private readonly writers = new Map<string, Promise<RegionWriter>>();
  private readonly tails = new Map<string, RegionTail>();
  private readonly registered = new Set<string>();
  /** Regions whose writer failed for good (or lost its claim race): sticky for this object. */
  private readonly regionFailures = new Map<string, QuiverError>();
  private readonly config: RegionWriterConfig;
  private closed = false;
  /** `search` ran: small writes then keep the search state current (`catchUpAfterWrite`). */
  private searched = false;
  /** `search` calls under way (a write's catch-up waits for none: see `catchUpAfterWrite`). */
  private searchesInFlight = 0;
  /** A snapshot was taken for a SQL query (which reads it while it executes): no write-time catch-up from then on. */
  private snapshotTaken = false;
  /** After a training attempt with too few vectors: stored rows and vectors found then, per index. */
  private readonly trainingGate = new Map<string, { storedRows: number; vectors: number }>();
  /** An IVF-PQ training in progress (one at a time per table). */
  private trainingNow: Promise<void> | undefined;
  /** Region ids of an unsharded or bucketed table (fixed by its spec; derived once). */
  private staticRegionIds: string[] | undefined;
  /** Indexes whose createIndex is under way (training, building), by name. */
  private readonly creating = new Set<string>();
  /** IVF-PQ models that grow with the table, and the background re-encoding (model-growth.ts). */
  private readonly growth: ModelGrowth;

  constructor(private readonly ctx: TableContext) {
    this.name = ctx.meta.name;
    this.config = resolveWriterConfig({ ...ctx.meta.writer, ...ctx.writerOverrides });
    this.growth = new ModelGrowth(ctx, () => this.readStates());
  }

  /** Whether `close()` was called; `db.openTable` then hands out a new Table object. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** The table's schema as the user declared it. */
  get schema(): Schema {
    return this.ctx.schema.user;
  }
  get primaryKey(): string[] {
    return [...this.ctx.schema.primaryKey];
  }
  get regionSpec(): RegionSpec {
    return this.ctx.meta.region_spec;
  }

  /** Writes rows (upsert by primary key). Resolves once every row is durable. */
  async put(input: RecordBatch | ArrowTable | readonly RecordBatch[]): Promise<void> {
    this.checkOpen();
    const batches = this.ctx.schema.normalize(input);
    await this.writeRouted(batches);
    this.growth.noteWrites(batches.reduce((n, b) => n + b.numRows, 0));
  }

  /** Deletes rows by primary-key value (single-column keys). Resolves once durable. */
  async delete(keys: readonly unknown[]): Promise<void> {
    this.checkOpen();
    const schema = this.ctx.schema;
    if (schema.primaryKey.length !== 1) throw new InvalidError('delete(keys) needs a single-column primary key');
    if (!Array.isArray(keys) || keys.length === 0) throw new InvalidError('delete: give a non-empty array of primary-key values');
    const keyField = schema.stored.fields[schema.keyIndexes[0]];
    await this.writeTombstones([keyVectorData(keyField.type, keyField.name, keys)], keys.length);
  }

  /**
   * Deletes the rows whose primary keys are the rows of `keys`: a batch holding the key columns
   * (by name, of the table's key types; composite keys too). Resolves once durable. The SQL
   * engine's DELETE goes through here.
   */
  async deleteKeys(keys: RecordBatch | readonly RecordBatch[]): Promise<void> {
    this.checkOpen();
    const schema = this.ctx.schema;
    const batches = (Array.isArray(keys) ? keys : [keys]) as RecordBatch[];
    const tombstones = batches
      .filter((b) => b.numRows > 0)
      .map((b) => {
        const columns = schema.keyIndexes.map((k) => {
          const field = schema.stored.fields[k];
          const i = b.schema.fields.findIndex((f) => f.name === field.name);
          if (i < 0) throw new InvalidError(`deleteKeys: the batch lacks key column ${field.name}`);
          const data = b.data.children[i];
          if (data.type.typeId !== field.type.typeId) throw new InvalidError(`deleteKeys: key column ${field.name} is ${String(data.type)}, the table's is ${String(field.type)}`);
          if (data.nullCount > 0) throw new InvalidError(`deleteKeys: key column ${field.name} has NULLs`);
          return data;
        });
        return this.tombstoneBatch(columns, b.numRows);
      });
    if (tombstones.length) await this.writeRouted(tombstones);
  }

  /** Writes `n` tombstone rows with the given key columns (in primary-key order). */
  private async writeTombstones(keyColumns: readonly Data[], n: number): Promise<void> {
    await this.writeRouted([this.tombstoneBatch(keyColumns, n)]);
  }

  private tombstoneBatch(keyColumns: readonly Data[], n: number): RecordBatch {
    const schema = this.ctx.schema;
    const children: Data[] = schema.stored.fields.map((f, i) => {
      const k = schema.keyIndexes.indexOf(i);
      if (k >= 0) return keyColumns[k];
      if (i === schema.tombstoneIndex) return makeData({ type: f.type, length: n, nullCount: 0, data: new Uint8Array((n + 7) >> 3).fill(0xff) } as never);
      return nullData(f.type, n);
    });
    return new RecordBatch(schema.stored, makeData({ type: new Struct(schema.stored.fields), length: n, nullCount: 0, children }));
  }

  /** Streams the table's live rows: the newest version of each key, deleted keys omitted. */
  async *scan(options: ScanOptions = {}): AsyncGenerator<RecordBatch> {
    this.checkOpen();
    const project = this.projection(options.columns);
    const states = await this.readStates();
    const { keyIndexes, tombstoneIndex } = this.ctx.schema;
    for (const { layout, state } of states) {
      const dedup = new KeyDeduper(keyIndexes, tombstoneIndex);
      for (let m = state.memtables.length - 1; m >= 0; m--) {
        const snap = state.memtables[m];
        const batches = snap.memtable.store.range(0, snap.batchCount);
        yield* emit(await survivorsInSlices(dedup, batches), batches, project);
      }
      const gens = [...state.manifest.flushedGenerations].sort((a, b) => b.generation - a.generation);
      // Rows and keys only: a scan reads no index (a generation's other indexes load when a
      // search needs them). The next SCAN_READ_AHEAD generations are read while this one's rows
      // are deduplicated and streamed: a read is mostly fresh memory faulting in, on libuv's
      // threads, so reads side by side use every core (1M rows in 11 generations, first scan:
      // 3.5–3.7 s one at a time, 2.5–2.8 s one ahead, 2.3 s two ahead; bench/dev-scan.ts).
      const load = (i: number) => {
        if (i >= gens.length) return undefined;
        const p = this.ctx.generations.get(layout, gens[i].generation, gens[i].path, 'none');
        p.catch(() => undefined); // awaited below; a scan stopped early leaves it unawaited
        return p;
      };
      const ahead = Array.from({ length: SCAN_READ_AHEAD + 1 }, (_, i) => load(i));
      for (let i = 0; i < gens.length; i++) {
        const loaded = await ahead.shift()!;
        ahead.push(load(i + SCAN_READ_AHEAD + 1));
        yield* emit(await survivorsInSlices(dedup, loaded.batches), loaded.batches, project);
      }
    }
  }

  /** Index definitions of the table. */
  get indexes(): IndexDef[] {
    return [...this.ctx.indexing.defs];
  }

  /**
   * Creates an index on a column: `{ type: 'ivf_pq', metric?, partitions?, subVectors? }`,
   * `{ type: 'fts', stem?, stopWords? }` or `{ type: 'scalar' }`. An IVF-PQ model is trained from
   * the table's rows when there are enough, otherwise the first time a search finds enough.
   * Every source's existing rows (MemTables and loaded generations) are indexed before this
   * resolves, without blocking the event loop (issue 7): the model trains in a worker thread and
   * rows are indexed in slices that yield between them. Searches meanwhile see the table as it
   * was — no such index, so exact — until the index is published on every source at once.
   */
  async createIndex(column: string, options: CreateIndexOptions): Promise<IndexDef> {
    this.checkOpen();
    const field = this.ctx.schema.user.fields.find((f) => f.name === column);
    let def = makeIndexDef(field, column, options);
    const same = this.ctx.indexing.defs.find((d) => d.name === def.name || (d.column === def.column && d.type === def.type));
    if (same || this.creating.has(def.name)) {
      throw new AlreadyExistsError(same && same.name !== def.name ? `column ${column} of table ${this.name} already has a ${def.type} index (${same.name})` : `index ${def.name} already exists on table ${this.name}`);
    }
    this.creating.add(def.name);
    try {
      if (def.type === 'ivf_pq') def = (await this.train(def)) ?? def;
      await this.publishIndex(def);
    } finally {
      this.creating.delete(def.name);
    }
    return def;
  }

  /**
   * Drops an index by name: a new metadata version without it, and every MemTable and loaded
   * generation of this process stops holding it. Its sidecars stay in flushed generations (read
   * back only by an index of the same name whose model / tokenizer options match them) and its
   * trained model file stays under `_indices/`. Other processes see the drop when they next open
   * the table.
   */
  async dropIndex(name: string): Promise<IndexDef> {
    this.checkOpen();
    const def = this.ctx.indexing.defs.find((d) => d.name === name);
    if (!def) throw new NotFoundError(`index ${name} does not exist on table ${this.name}`);
    if (this.creating.has(name)) throw new InvalidError(`index ${name} is still being created`);
    for (let attempt = 0; ; attempt++) {
      const latest = await this.ctx.metaStore.readLatest();
      if (!latest) throw new NotFoundError(`table ${this.name} has no metadata (dropped?)`);
      const next = { ...latest.doc, indexes: (latest.doc.indexes ?? []).filter((d) => d.name !== name) };
      try {
        await this.ctx.metaStore.write(latest.version + 1, next);
        this.ctx.meta = next;
        break;
      } catch (e) {
        if (!isQuiverError(e, 'already_exists') || attempt >= 10) throw e;
      }
    }
    this.ctx.indexing.setDefs(this.ctx.meta.indexes ?? []);
    this.trainingGate.delete(name);
    for (const { state } of await this.readStates()) for (const { memtable } of state.memtables) memtable.indexes?.remove(name);
    await this.ctx.generations.forEachLoaded((g) => g.indexes.remove(name));
    return def;
  }

  /**
   * Top-k search over a snapshot of the table: `{ vector: { column, query, metric? } }`,
   * `{ text: { column, query } }` or `{ key: { column?, eq | lower/upper | in } }`, with `k`
   * (default 10), `filter` (a SQL boolean expression), `nprobes`, `refine` (factor; 0 = off),
   * `distanceRange`, `columns` and `params`. Returns an Arrow table of the rows' columns plus
   * `_distance` (vector) or `_score` (text).
   */
  async search(request: SearchRequest): Promise<ArrowTable> {
    this.checkOpen();
    this.searched = true;
    this.searchesInFlight++;
    try {
      return await this.searchNow(request);
    } finally {
      this.searchesInFlight--;
    }
  }

  private async searchNow(request: SearchRequest): Promise<ArrowTable> {
    const vectorDef = request?.vector ? this.ctx.indexing.defs.find((d) => d.type === 'ivf_pq' && d.column === request.vector!.column) : undefined;
    if (vectorDef && !vectorDef.model) await this.trainLater(vectorDef);
    // The search runs on this process's writer state while the ownership HEAD is in flight; if a
    // writer turns out to have lost its region, the answer is discarded and the search runs again
    // on what storage holds (the same answer `readStates` first would give, without the wait).
    const { states, owned } = await this.readStatesOptimistically();
    let result: ArrowTable | undefined;
    let error: unknown;
    try {
      result = await runSearch(this.ctx, states, request);
    } catch (e) {
      error = e;
    }
    if (!(await owned)) return runSearch(this.ctx, await this.readStates(), request);
    if (result === undefined) throw error;
    return result;
  }

  /**
   * A snapshot of every source for the query engine (see TableSnapshot). `vectorColumns`: IVF-PQ
   * indexes on these columns whose model is not trained yet are trained first when enough rows
   * exist (as `search` does). `indexes`: which indexes the reader will use (`all`, the default,
   * for searches; `scalar` or `none` for scans): a generation not loaded yet is loaded with those.
   */
  async snapshot(options: { vectorColumns?: readonly string[]; indexes?: IndexScope } = {}): Promise<TableSnapshot> {
    this.checkOpen();
    this.snapshotTaken = true;
    for (const column of options.vectorColumns ?? []) {
      const def = this.ctx.indexing.defs.find((d) => d.type === 'ivf_pq' && d.column === column);
      if (def && !def.model) await this.trainLater(def);
    }
    const regions = await searchSources(this.ctx, await this.readStates(), options.indexes);
    return { table: this.name, schema: this.ctx.schema, indexes: [...this.ctx.indexing.defs], regions };
  }

  /** Freezes and flushes every MemTable this process holds into generations. */
  async flush(): Promise<void> {
    await Promise.all([...this.writers.values()].map(async (w) => (await w).flush()));
    // A good moment to grow an IVF-PQ model or re-encode what the flush wrote under an older one.
    if (this.writers.size > 0) this.growth.kick();
  }

  /**
   * Resolves once background index work is done: an IVF-PQ model growing with the table and the
   * re-encoding of generations made with an older model (searches meanwhile are exact in ids
   * and distances either way). Returns what that work has done in this Table object.
   */
  async settleIndexes(): Promise<ModelGrowthStats> {
    await this.growth.settle();
    return { ...this.growth.stats };
  }

  /** Flushes and releases this table's region writers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.growth.close();
    const errors: unknown[] = [];
    await Promise.all(
      [...this.writers.values()].map(async (p) => {
        try {
          await (await p).close();
        } catch (e) {
          if (!isQuiverError(e, 'fenced')) errors.push(e);
        }
      }),
    );
    this.writers.clear();
    if (errors.length) throw errors[0];
  }

  /**
   * The region writers of this Table object, by region id: epoch, writer id, state (`open`,
   * `fenced`, `failed`, `closed`), the failure if any, and counters. A region appears once a
   * write has tried to claim it; regions this process only reads do not appear.
   */
  async writerStats(): Promise<Record<string, RegionWriterStats>> {
    const out: Record<string, RegionWriterStats> = {};
    for (const [id, p] of this.writers) {
      const w = await p.catch(() => undefined);
      if (w) out[id] = { ...w.stats, state: w.state };
    }
    for (const [id, failure] of this.regionFailures) {
      if (out[id]) continue;
      out[id] = { epoch: 0, writerId: '', state: failure.kind === 'fenced' ? 'fenced' : 'failed', failure: `${failure.kind}: ${failure.message}`, walEntries: 0, walBytes: 0, generationsFlushed: 0, replayedEntries: 0, replayPeakUnflushedBytes: 0, backpressureWaits: 0 };
    }
    return out;
  }

  // ---- internals ----------------------------------------------------------------------------

  /** Trains the IVF-PQ model of `def` from the table's live rows; undefined when too few. */
  private async train(def: IndexDef): Promise<IndexDef | undefined> {
    const batches: RecordBatch[] = [];
    for await (const b of this.scan({ columns: [def.column] })) batches.push(b);
    const trained = await trainIndexModel(this.ctx.store, this.ctx.tableKey, def, batches);
    if ('tooFew' in trained) {
      this.trainingGate.set(def.name, { storedRows: await this.storedRows(), vectors: trained.tooFew });
      return undefined;
    }
    this.trainingGate.delete(def.name);
    this.ctx.indexing.setModel(trained.def, trained.model);
    return trained.def;
  }

  /**
   * Trains a model that could not be trained at createIndex time, once enough rows may exist: a
   * failed attempt remembers how many vectors it found and how many rows were stored, and the
   * next attempt waits until enough rows were written since to reach the minimum — so vector
   * searches on a small table do not rescan it each time.
   */
  private async trainLater(def: IndexDef): Promise<void> {
    const gate = this.trainingGate.get(def.name);
    if (gate && (await this.storedRows()) - gate.storedRows < minTrainingVectors(def) - gate.vectors) return;
    if (!this.trainingNow) {
      this.trainingNow = (async () => {
        const trained = await this.train(def);
        if (trained) await this.publishIndex(trained);
      })().finally(() => (this.trainingNow = undefined));
    }
    await this.trainingNow;
  }

  /** Rows stored in the table's sources (live or not): an upper bound of its vectors. */
  private async storedRows(): Promise<number> {
    let n = 0;
    for (const { layout, state } of await this.readStates()) {
      for (const m of state.memtables) n += m.memtable.store.rowsBefore(m.batchCount);
      for (const g of state.manifest.flushedGenerations) n += await this.ctx.generations.rowCount(layout, g.generation, g.path);
    }
    return n;
  }

  /**
   * Builds `def` over every source of the table, in slices that yield to the event loop, then
   * records it and publishes those builds in one synchronous step — so a search meanwhile sees
   * the table as it was (no such index, or an untrained one: exact search) and never a source
   * whose index is half built. Rows written during the build are added to it (see
   * `SourceIndexes.addIndexAsync`); sources that appear meanwhile are completed right after.
   */
  private async publishIndex(def: IndexDef): Promise<void> {
    const staged: SourceIndexes[] = [];
    try {
      if (this.ctx.indexing.canBuild(def)) {
        const builds: Promise<void>[] = [];
        const stage = (set: SourceIndexes, rows: readonly RecordBatch[]) => {
          staged.push(set);
          builds.push(this.ctx.indexing.buildAsync(def, set, rows, { hold: true }));
        };
        for (const { layout, state } of await this.readStates()) {
          for (const { memtable } of state.memtables) stage(memtable.indexes!, memtable.indexedBatches());
          for (const g of state.manifest.flushedGenerations) {
            const loaded = await this.ctx.generations.get(layout, g.generation, g.path);
            stage(loaded.indexes, loaded.batches);
          }
        }
        await Promise.all(builds);
      }
      await this.commitIndexDef(def, staged);
    } finally {
      // Published builds are no longer pending; after a failure the held ones are dropped.
      for (const set of staged) set.discard(def.name);
    }
  }

  /** Builds every current index that a source of the table lacks (in slices, see above). */
  private async completeSources(): Promise<void> {
    const work: Promise<unknown>[] = [];
    for (const { layout, state } of await this.readStates()) {
      for (const { memtable } of state.memtables) work.push(this.ctx.indexing.completeAsync(memtable.indexes!, memtable.indexedBatches()));
      // A generation's missing indexes come from its sidecars or are built when it is got.
      for (const g of state.manifest.flushedGenerations) work.push(this.ctx.generations.get(layout, g.generation, g.path));
    }
    await Promise.all(work);
  }

  /**
   * Records an index definition in a new metadata version and starts maintaining it: `staged`
   * sources hold a finished (held) build of it, published in the step that publishes the
   * definition; any other source gets it built in slices before this resolves.
   */
  private async commitIndexDef(def: IndexDef, staged: readonly SourceIndexes[] = []): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const latest = await this.ctx.metaStore.readLatest();
      if (!latest) throw new NotFoundError(`table ${this.name} has no metadata (dropped?)`);
      const indexes = [...(latest.doc.indexes ?? []).filter((d) => d.name !== def.name), def];
      const next = { ...latest.doc, indexes };
      try {
        await this.ctx.metaStore.write(latest.version + 1, next);
        this.ctx.meta = next;
        break;
      } catch (e) {
        if (!isQuiverError(e, 'already_exists') || attempt >= 10) throw e;
      }
    }
    this.ctx.indexing.setDefs(this.ctx.meta.indexes ?? []);
    for (const set of staged) set.attach(def.name);
    await this.completeSources();
    // Whatever is still missing (nothing, normally) is built synchronously by the writers.
    for (const p of this.writers.values()) {
      const w = await p.catch(() => undefined);
      w?.refreshIndexes();
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new ClosedError(`table ${this.name} is closed`);
  }

  private async writeRouted(batches: RecordBatch[]): Promise<void> {
    const { meta, schema } = this.ctx;
    const spec = meta.region_spec;
    const byRegion = new Map<string, { value: unknown; batches: RecordBatch[] }>();
    const column = spec.kind === 'unsharded' ? 0 : schema.stored.fields.findIndex((f) => f.name === spec.column);
    for (const batch of batches) {
      for (const route of routeBatch(meta.table_id, spec, batch, column)) {
        let group = byRegion.get(route.regionId);
        if (!group) byRegion.set(route.regionId, (group = { value: route.value, batches: [] }));
        group.batches.push(route.rows.length === batch.numRows ? batch : takeBatch(batch, route.rows));
      }
    }
    const written: [string, RegionWriter][] = [];
    await Promise.all(
      [...byRegion].map(async ([regionId, group]) => {
        const writer = await this.writerFor(regionId, group.value);
        await writer.put(group.batches);
        written.push([regionId, writer]);
      }),
    );
    let rows = 0;
    for (const b of batches) rows += b.numRows;
    if (this.searched && this.searchesInFlight === 0 && !this.snapshotTaken && rows <= CATCH_UP_WRITE_ROWS) this.catchUpAfterWrite(written);
  }

  /**
   * A small write, once this table has been searched: its rows' part of what the next search
   * would do first (which older rows they supersede, the BM25 statistics over live rows) is done
   * before the write resolves — a few µs a row, on state the search keeps — so a query right
   * after a write does not pay for it (issue 7: a 20-row put before a query at 1M rows in ten
   * generations added ~85 µs of such upkeep to the query). Larger writes leave it to the next
   * search, which pays for all rows since the last one at once (a bulk load may never be
   * queried before its MemTable is flushed, and that state is dropped with it); so does a small
   * write after a flush or after large writes, whose catching up would not be small. Not while a
   * search is under way: one whose snapshot predates this write would then find the cached state
   * ahead of it and compute its answer afresh (liveness.ts), a far larger cost than the one saved.
   * For the same reason a table that SQL has queried does not do it at all: a SQL query reads its
   * snapshot while it executes, at times this object does not see, so its queries (and the
   * searches after a small write) pay for the written rows, as before.
   */
  private catchUpAfterWrite(written: readonly [string, RegionWriter][]): void {
    const states = written.filter(([, w]) => !w.failed).map(([id, w]) => ({ layout: new RegionLayout(this.ctx.tableKey, id), state: w.readState() }));
    try {
      catchUpLiveState(this.ctx, states, 2 * CATCH_UP_WRITE_ROWS);
    } catch {
      // The write is durable and must resolve as such; the next search does this same work
      // and reports whatever went wrong.
    }
  }

  private async writerFor(regionId: string, value: unknown): Promise<RegionWriter> {
    const sticky = this.regionFailures.get(regionId);
    if (sticky) throw sticky;
    const existing = this.writers.get(regionId);
    if (existing) {
      const writer = await existing.catch(() => undefined);
      // A writer that failed for a transient reason is replaced by a fresh one, which replays
      // the log; any other failure stays (see the class comment).
      if (writer && (!writer.failed || !writer.failed.retryable)) return writer;
      if (this.writers.get(regionId) !== existing) return this.writerFor(regionId, value);
    }
    const opening = (async () => {
      if (this.ctx.meta.region_spec.kind === 'identity') await this.register(regionId, value);
      return RegionWriter.open({
        store: this.ctx.store,
        layout: new RegionLayout(this.ctx.tableKey, regionId),
        schema: this.ctx.schema,
        regionSpecId: this.ctx.meta.region_spec_id,
        config: this.config,
        generations: this.ctx.generations,
        indexing: this.ctx.indexing,
        runtime: this.ctx.runtime,
      });
    })();
    this.writers.set(regionId, opening);
    opening.catch((e: unknown) => {
      if (this.writers.get(regionId) === opening) this.writers.delete(regionId);
      // Losing the claim race (fenced) or a permanent error is sticky, like a writer's failure.
      const err = toQuiverError(e, `opening the writer of region ${regionId}`);
      if (!err.retryable) this.regionFailures.set(regionId, err);
    });
    return opening;
  }

  /** Records an identity region in the registry so readers can find it. */
  private async register(regionId: string, value: unknown): Promise<void> {
    if (this.registered.has(regionId)) return;
    const body = JSON.stringify({ region_id: regionId, value: typeof value === 'bigint' ? value.toString() : value });
    try {
      await this.ctx.store.putIfAbsent(`${this.ctx.tableKey}/_regions/${regionId}.json`, new TextEncoder().encode(body));
    } catch (e) {
      if (!isQuiverError(e, 'already_exists')) throw e;
    }
    this.registered.add(regionId);
  }

  private async regionIds(): Promise<string[]> {
    const spec = this.ctx.meta.region_spec;
    if (spec.kind !== 'identity') return (this.staticRegionIds ??= staticRegions(this.ctx.meta.table_id, spec).map((r) => r.regionId));
    const listed = await this.ctx.store.list(`${this.ctx.tableKey}/_regions/`);
    const ids = new Set(listed.map((o) => o.key.slice(o.key.lastIndexOf('/') + 1).replace(/\.json$/, '')));
    for (const id of this.writers.keys()) ids.add(id);
    return [...ids].sort();
  }

  /** One consistent read state per region. */
  async readStates(): Promise<{ layout: RegionLayout; state: RegionReadState }[]> {
    const ids = await this.regionIds();
    // A local writer's memory is only current while it still holds its region: confirm that
    // first (one HEAD each, in parallel), then capture every such state in one synchronous step.
    const local = new Map<string, RegionReadState>();
    const settled = new Map<string, RegionWriter>();
    for (const [id, p] of this.writers) {
      const w = await p.catch(() => undefined);
      if (w && !w.failed) settled.set(id, w);
    }
    const owned = await Promise.all([...settled].map(async ([id, w]) => [id, w, await w.confirmOwnership()] as const));
    for (const [id, w, ok] of owned) if (ok && !w.failed) local.set(id, w.readState());
    return this.withStoredStates(ids, local);
  }

  /** Each region's state: this process's writer's (`local`) when given, else what storage holds. */
  private async withStoredStates(ids: readonly string[], local: ReadonlyMap<string, RegionReadState>): Promise<{ layout: RegionLayout; state: RegionReadState }[]> {
    const out: { layout: RegionLayout; state: RegionReadState }[] = [];
    for (const id of ids) {
      const layout = new RegionLayout(this.ctx.tableKey, id);
      let state = local.get(id);
      if (!state) {
        let tail = this.tails.get(id);
        if (!tail) this.tails.set(id, (tail = new RegionTail(this.ctx.store, layout, this.ctx.indexing)));
        state = await tail.readState();
      }
      if (state) out.push({ layout, state });
    }
    return out;
  }

  /**
   * `readStates`, but a local writer's state is captured at once and its ownership HEAD left in
   * flight: `owned` resolves true when every captured writer still held its region at the time of
   * the capture (its HEAD was issued then), false when one did not (its state must not be used).
   */
  private async readStatesOptimistically(): Promise<{ states: { layout: RegionLayout; state: RegionReadState }[]; owned: Promise<boolean> }> {
    const ids = await this.regionIds();
    const settled = new Map<string, RegionWriter>();
    for (const [id, p] of this.writers) {
      const w = await p.catch(() => undefined);
      if (w && !w.failed) settled.set(id, w);
    }
    // One synchronous step: every state captured and every check started before anything else runs.
    const local = new Map<string, RegionReadState>();
    const checks: Promise<boolean>[] = [];
    for (const [id, w] of settled) {
      local.set(id, w.readState());
      checks.push(w.confirmOwnership().then((ok) => ok && !w.failed, () => false));
    }
    const owned = Promise.all(checks).then((oks) => oks.every(Boolean));
    return { states: await this.withStoredStates(ids, local), owned };
  }

  private projection(columns: string[] | undefined): Projection {
    const user = this.ctx.schema.user;
    const names = columns ?? user.fields.map((f) => f.name);
    const indexes = names.map((n) => {
      const i = user.fields.findIndex((f) => f.name === n);
      if (i < 0) throw new InvalidError(`scan: unknown column ${n} in table ${this.name}`);
      return i;
    });
    return { schema: new Schema(indexes.map((i) => user.fields[i]), user.metadata), indexes };
  }
}

interface Projection {
  schema: Schema;
  indexes: number[];
}

/** Writes of at most this many rows bring the search state up to date themselves (`catchUpAfterWrite`). */
const CATCH_UP_WRITE_ROWS = 256;

/** Rows deduplicated between two yields to the event loop (a key costs a few µs). */
const DEDUP_SLICE_ROWS = 4096;

/** Generations a scan reads ahead of the one it streams (each holds its rows in memory meanwhile). */
const SCAN_READ_AHEAD = 2;

/**
 * `dedup.survivors(batches)`, computed over slices of at most DEDUP_SLICE_ROWS rows (newest row
 * first, as it walks) with a yield to the event loop between them, so scanning a large source —
 * IVF-PQ training scans the whole table — does not stall the process (issue 7).
 */
async function survivorsInSlices(dedup: KeyDeduper, batches: readonly RecordBatch[]): Promise<(Uint32Array | undefined)[]> {
  const out: (Uint32Array | undefined)[] = new Array(batches.length);
  let rows = 0;
  const pause = async (n: number) => {
    if ((rows += n) < DEDUP_SLICE_ROWS) return;
    rows = 0;
    await nextTurn();
  };
  for (let b = batches.length - 1; b >= 0; b--) {
    const batch = batches[b];
    const n = batch.numRows;
    if (n <= DEDUP_SLICE_ROWS) {
      out[b] = dedup.survivors([batch])[0];
      await pause(n);
      continue;
    }
    // Newest slice first; each slice's kept rows, ascending, shifted to batch row numbers.
    const kept: Uint32Array[] = [];
    let total = 0;
    for (let end = n; end > 0; end -= DEDUP_SLICE_ROWS) {
      const start = Math.max(0, end - DEDUP_SLICE_ROWS);
      const keep = dedup.survivors([batch.slice(start, end)])[0];
      const rowsKept = keep ?? Uint32Array.from({ length: end - start }, (_, i) => i);
      for (let i = 0; i < rowsKept.length; i++) rowsKept[i] += start;
      kept.push(rowsKept);
      total += rowsKept.length;
      await pause(end - start);
    }
    if (total === n) continue;
    const all = new Uint32Array(total);
    let o = 0;
    for (let i = kept.length - 1; i >= 0; i--) {
      all.set(kept[i], o);
      o += kept[i].length;
    }
    out[b] = all;
  }
  return out;
}

function* emit(survivors: readonly (Uint32Array | undefined)[], batches: readonly RecordBatch[], project: Projection): Generator<RecordBatch> {
  for (let i = 0; i < batches.length; i++) {
    const keep = survivors[i];
    if (keep !== undefined && keep.length === 0) continue;
    const data = batches[i].data;
    const length = keep === undefined ? data.length : keep.length;
    const children = project.indexes.map((c) => (keep === undefined ? data.children[c] : takeData(data.children[c], keep)));
    yield new RecordBatch(project.schema, makeData({ type: new Struct(project.schema.fields), length, nullCount: 0, children }));
  }
}

/** An all-null column of any type, built through the type's builder (deletes are small). */
function nullData(type: DataType, n: number): Data {
  const b = makeBuilder({ type, nullValues: [null, undefined] });
  for (let i = 0; i < n; i++) b.append(null);
  return b.finish().flush();
}
