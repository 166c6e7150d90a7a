/**
 * The indexes of one source — a MemTable or a flushed generation — keyed by index name, plus a
 * `VectorSource` per vector column for exact distances (brute force and IVF-PQ refinement).
 *
 * A MemTable's set grows as batches are written (`insert`, called alongside the WAL write, so a
 * row is indexed before it becomes visible). A generation's set is built once, from its sidecar
 * files when they exist or from its rows when they do not (a generation flushed before the index
 * was created). Row positions are the source's own: MemTable row positions, or row indexes in
 * the generation's data file.
 */
import { type Data, FixedSizeList, type RecordBatch, type Utf8 } from 'apache-arrow';
import type { TableSchema } from '../schema/table-schema.js';
import type { IndexDef } from './index-def.js';
import { InvertedIndex } from './fts/inverted-index.js';
import type { TokenCursor } from './fts/row-tokens.js';
import type { OffThreadTokenize } from './fts/tokenize-worker.js';
import { ScalarIndex } from './scalar/scalar-index.js';
import { CodeQueue, MIN_OFF_THREAD_ROWS, type OffThreadEncode } from './vector/code-queue.js';
import { IvfPqIndex } from './vector/ivf-pq-index.js';
import { type IvfPqModel, PQ_CODEWORDS } from './vector/ivf-pq-model.js';
import { VectorSource } from './vector/vector-source.js';

export type SourceIndex = IvfPqIndex | InvertedIndex | ScalarIndex;

/** Rows of a tokenized batch added in one step (the code queue runs ~4 ms of steps a turn). */
const TOKENIZED_PIECE_ROWS = 128;
/**
 * The same while the index meets many words new to it (more than NEW_TERMS_PER_ROW a row in its
 * last step): a fresh MemTable's first rows bring ~20 new terms each, and a new term costs ~20×
 * a known one (its arrays, slab entries, growth), so a 128-row step took 10–40 ms there
 * (bench/dev-ingest.ts GAPS=1 at 8 puts in flight: the longest turns after a freeze). Counted
 * in terms rather than timed, so steps end at the same rows from run to run.
 */
const NEW_TERMS_PIECE_ROWS = 24;
const NEW_TERMS_PER_ROW = 2;

/** Steps that added tokenized rows to full-text indexes, and their rows (tests read these). */
export const tokenizedSteps = { steps: 0, rows: 0 };

/** What an index needs beyond its definition: the trained IVF-PQ model, when there is one. */
export type ModelLookup = (def: IndexDef) => IvfPqModel | undefined;

export class SourceIndexes {
  private readonly vectors = new Map<number, VectorSource>();
  private readonly indexes = new Map<string, { def: IndexDef; index: SourceIndex }>();
  /** Indexes being built over existing rows in slices (`addIndexAsync`), not searchable yet. */
  private readonly pending = new Map<string, PendingBuild>();
  private rows = 0;
  /** IVF-PQ codes of inserted rows still being computed elsewhere (`insert` with `offThread`). */
  private codes: CodeQueue | undefined;
  /** Per IVF-PQ index: rows below this position had their codes queued by `queueCodesAhead`. */
  private readonly codesAhead = new WeakMap<IvfPqIndex, number>();
  /** Per full-text index: rows below this position were sent to be tokenized by `queueCodesAhead`. */
  private readonly tokensAhead = new WeakMap<InvertedIndex, number>();
  /** Per full-text index: terms new to it per row in the last step of tokenized rows (none yet: a fresh index, counted as many). */
  private readonly newTermsPerRow = new WeakMap<InvertedIndex, number>();

  constructor(private readonly schema: TableSchema) {
    schema.stored.fields.forEach((f, i) => {
      if (f.type instanceof FixedSizeList) this.vectors.set(i, new VectorSource(f.type.listSize));
    });
  }

  get rowCount(): number {
    return this.rows;
  }

  /** Exact vectors of a column (every row inserted so far; callers pass a visibility cutoff). */
  vectorSource(column: string): VectorSource | undefined {
    return this.vectors.get(this.columnIndex(column));
  }

  index<T extends SourceIndex>(name: string): T | undefined {
    return this.indexes.get(name)?.index as T | undefined;
  }

  hasIndex(name: string): boolean {
    return this.indexes.has(name);
  }

  /**
   * Adds rows at positions [rowCount, rowCount + rows) to every vector source and index. With
   * `offThread`, IVF-PQ codes may be computed on another thread and applied later, in order
   * (`whenIndexed` says when); everything else is added now. Full-text indexes move the tokens
   * of all the batches into their postings once, at the end (see `InvertedIndex.add`'s `defer`);
   * with `defer` not even then, for a caller inserting one write in several slices.
   */
  insert(batches: readonly RecordBatch[], offThread?: OffThreadEncode, defer = false): void {
    const last = batches.length - 1;
    for (let b = 0; b <= last; b++) {
      const batch = batches[b]!;
      const first = this.rows;
      for (const [col, source] of this.vectors) {
        for (const c of VectorSource.fromArrow([batch], col, first).chunks) source.append(c);
      }
      for (const { def, index } of this.indexes.values()) {
        const col = this.columnIndex(def.column);
        if (index instanceof IvfPqIndex) {
          const ahead = this.codesAhead.get(index) ?? 0;
          if (ahead >= first + batch.numRows) {
            if (ahead === first + batch.numRows) this.codesAhead.delete(index);
            continue; // sent by queueCodesAhead
          }
          // queueCodesAhead stops at the end of a chunk, and a batch is one chunk.
          if (ahead > first) throw new Error(`internal: IVF-PQ codes sent ahead to row ${ahead}, inside the batch of rows ${first}..${first + batch.numRows}`);
          // Once codes are pending, later rows queue behind them even when encoded here.
          if (offThread || this.codes?.idle === false) {
            this.queueCodes(index, batch, col, first, offThread);
            continue;
          }
        } else if (index instanceof InvertedIndex) {
          const ahead = this.tokensAhead.get(index) ?? 0;
          if (ahead >= first + batch.numRows) {
            if (ahead === first + batch.numRows) this.tokensAhead.delete(index);
            continue; // sent by queueCodesAhead
          }
          if (ahead > first) throw new Error(`internal: full-text rows sent ahead to row ${ahead}, inside the batch of rows ${first}..${first + batch.numRows}`);
          // Rows tokenized elsewhere may be pending: these take their turn behind them.
          if (this.codes?.idle === false) {
            const data = batch.data.children[col] as Data<Utf8>;
            this.codes.addJob(undefined, () => index.add(first, data));
            continue;
          }
        }
        addTo(index, batch, col, first, defer || b < last);
      }
      // A build still working through older rows queues these behind them; one that caught up
      // (held for publishing) takes them now, like a published index.
      for (const p of this.pending.values()) {
        if (p.current) addTo(p.index!, batch, p.col, first);
        else if (batch.numRows > 0) p.todo.push({ batch, first, done: 0 });
      }
      this.rows += batch.numRows;
    }
  }

  /**
   * Sends the IVF-PQ codes of the rows that the next `insert` calls will add (`batches`, starting
   * at `rowCount`) to `offThread` now, for every published IVF-PQ index; those calls then index
   * everything else. A writer indexing a WAL entry in slices calls it first, so the encode worker
   * has the whole entry's vectors while this thread tokenizes, rather than one slice's at a time
   * with the last slice's codes still out when everything else is done. It stops at the first
   * chunk `offThread` does not take (small, or no worker ready): from there the codes are left
   * to `insert`, slice by slice, rather than all computed here at once.
   */
  queueCodesAhead(batches: readonly RecordBatch[], offThread: OffThreadEncode, tokenize?: OffThreadTokenize): void {
    if (tokenize) this.queueTokensAhead(batches, tokenize);
    for (const { def, index } of this.indexes.values()) {
      if (!(index instanceof IvfPqIndex)) continue;
      if ((this.codesAhead.get(index) ?? this.rows) !== this.rows) continue; // codes already ahead: insert catches up first
      const col = this.columnIndex(def.column);
      const queue = (this.codes ??= new CodeQueue());
      let first = this.rows;
      outer: for (const batch of batches) {
        for (const c of VectorSource.fromArrow([batch], col, first).chunks) {
          if (!queue.add(index, c, offThread, true)) break outer;
          first = c.start + c.count;
        }
      }
      if (first > this.rows) this.codesAhead.set(index, first);
    }
  }

  /**
   * Sends the text of the rows the next `insert` calls will add to `tokenize` now, for every
   * full-text index (like `queueCodesAhead`): the rows come back as lexicon ids and enter the
   * index in turn (`InvertedIndex.addTokenized`), or are indexed here if the worker fails. Writes
   * of fewer than MIN_OFF_THREAD_ROWS rows are indexed here (a small put's rows are visible
   * sooner that way, and cost ~2 µs a row). Stops at the first batch `tokenize` does not take.
   */
  private queueTokensAhead(batches: readonly RecordBatch[], tokenize: OffThreadTokenize): void {
    let total = 0;
    for (const b of batches) total += b.numRows;
    if (total < MIN_OFF_THREAD_ROWS) return;
    for (const { def, index } of this.indexes.values()) {
      if (!(index instanceof InvertedIndex)) continue;
      if ((this.tokensAhead.get(index) ?? this.rows) !== this.rows) continue; // rows already ahead: insert catches up first
      const col = this.columnIndex(def.column);
      const queue = (this.codes ??= new CodeQueue());
      let first = this.rows;
      for (const batch of batches) {
        const data = batch.data.children[col] as Data<Utf8>;
        const away = batch.numRows > 0 ? tokenize(index.options, data) : undefined;
        if (away === undefined) break;
        const at = first;
        const cursor: TokenCursor = { row: 0, token: 0 };
        queue.addJob(away, (t) => {
          const n = data.length;
          if (t !== undefined && t.mirror.serves(t.rows)) {
            // A piece a turn (the queue's budget decides how many a turn): a fresh MemTable's
            // first batches, every term new, took up to ~70 ms for 1 000 rows.
            const from = cursor.row;
            const terms = index.termCount;
            const rows = (this.newTermsPerRow.get(index) ?? Infinity) > NEW_TERMS_PER_ROW ? NEW_TERMS_PIECE_ROWS : TOKENIZED_PIECE_ROWS;
            const end = Math.min(n, from + rows);
            // A segment per chunk, made as its last piece is added: deferring it to 65 536
            // tokens (fewer segments for the flush to merge, its count and copy ~20 % less) cost
            // ingest at 8 puts in flight ~14 % (CPU 24.9 -> 29.5 µs a row over all threads):
            // the chunk's tokens, sorted as they are added, are still in the cache.
            index.addTokenized(at, t.rows, t.mirror, end < n, cursor, end);
            this.newTermsPerRow.set(index, (index.termCount - terms) / Math.max(1, cursor.row - from));
            tokenizedSteps.steps++;
            tokenizedSteps.rows += cursor.row - from;
            if (cursor.row < n) return false;
            t.release?.(); // every row is in the index: its buffer may serve a later job
            return true;
          }
          // Not tokenized elsewhere (or the mirror moved on since): the rest is tokenized here.
          index.add(at + cursor.row, cursor.row > 0 ? data.slice(cursor.row, n - cursor.row) : data);
          return true;
        });
        first += batch.numRows;
      }
      if (first > this.rows) this.tokensAhead.set(index, first);
    }
  }

  private queueCodes(index: IvfPqIndex, batch: RecordBatch, col: number, first: number, offThread: OffThreadEncode | undefined): void {
    const queue = (this.codes ??= new CodeQueue());
    for (const c of VectorSource.fromArrow([batch], col, first).chunks) queue.add(index, c, offThread);
  }

  /** Calls `fn` once every row inserted so far is in every published index (now, when none is pending). */
  whenIndexed(fn: () => void): void {
    if (this.codes) this.codes.whenApplied(fn);
    else fn();
  }

  /** Applies pending IVF-PQ codes now, computing here those not back yet. */
  finishIndexing(): void {
    this.codes?.finishNow();
  }

  /**
   * Starts maintaining an index, indexing the rows already present (`existing`, in position
   * order). An IVF-PQ definition without a trained model is skipped: searches stay exact.
   */
  addIndex(def: IndexDef, models: ModelLookup, existing: readonly RecordBatch[], prebuilt?: SourceIndex): void {
    if (this.indexes.has(def.name)) return;
    if (!prebuilt && def.type === 'ivf_pq' && !models(def)) return;
    const running = this.pending.get(def.name);
    if (running) {
      // A build in slices is under way: finish it now (synchronously), unless this replaces it.
      if (!prebuilt && running.def.model === def.model) return this.attach(def.name);
      this.discard(def.name);
    }
    let index = prebuilt;
    if (!index) {
      index = createIndex(def, models, this.schema);
      if (!index) return;
      const col = this.columnIndex(def.column);
      let first = 0;
      for (const batch of existing) {
        addTo(index, batch, col, first);
        first += batch.numRows;
      }
    }
    this.indexes.set(def.name, { def, index });
  }

  /**
   * `addIndex` without stalling the event loop (issue 7): the existing rows are indexed in slices
   * (`sliceRows`, by default sized to take a few milliseconds), one slice per event-loop turn
   * (setImmediate; builds of all sources take turns). Rows inserted while the build runs are
   * queued behind the existing ones; the index
   * becomes visible (`index(name)`, `hasIndex`, `entries`) only once it covers every row
   * inserted so far — until then searches of this source go exact. Concurrent calls for one
   * index share one build. `existing` must be the rows inserted so far, in position order.
   *
   * With `hold`, the caught-up index is kept back (still fed by `insert`) until `attach(name)`,
   * so a caller can publish it together with the index definition; `discard(name)` drops it.
   * Resolves once the build covers every inserted row.
   */
  addIndexAsync(def: IndexDef, models: ModelLookup, existing: readonly RecordBatch[], options: AsyncBuildOptions = {}): Promise<void> {
    if (this.indexes.has(def.name)) return Promise.resolve();
    if (def.type === 'ivf_pq' && !models(def)) return Promise.resolve();
    const running = this.pending.get(def.name);
    if (running && running.def.model === def.model) {
      if (!options.hold && running.hold) {
        running.hold = false;
        if (running.current) this.attach(def.name);
      }
      return running.done;
    }
    if (running) this.discard(def.name);
    let first = 0;
    const todo: PendingBuild['todo'] = [];
    for (const batch of existing) {
      if (batch.numRows > 0) todo.push({ batch, first, done: 0 });
      first += batch.numRows;
    }
    if (first !== this.rows) return Promise.reject(new Error(`addIndexAsync(${def.name}): ${first} existing rows given, the source holds ${this.rows}`));
    const build: PendingBuild = {
      def,
      make: () => createIndex(def, models, this.schema)!,
      col: this.columnIndex(def.column),
      todo,
      head: 0,
      hold: options.hold ?? false,
      current: false,
      cancelled: false,
      sliceRows: Math.max(1, Math.floor(options.sliceRows ?? defaultSliceRows(def, models))),
      done: Promise.resolve(),
    };
    this.pending.set(def.name, build);
    build.done = this.runBuild(build);
    return build.done;
  }

  /** Whether an index is being built in slices (not yet searchable, or held). */
  building(name: string): boolean {
    return this.pending.has(name);
  }

  /** Publishes a build started by `addIndexAsync`, finishing it synchronously if it has not caught up. */
  attach(name: string): void {
    const p = this.pending.get(name);
    if (!p) return;
    while (p.head < p.todo.length) buildSlice(p, Infinity);
    this.pending.delete(name);
    this.indexes.set(name, { def: p.def, index: (p.index ??= p.make()) });
  }

  /** Removes an index (DROP INDEX), published or still being built. */
  remove(name: string): void {
    this.discard(name);
    this.indexes.delete(name);
  }

  /** Drops a build started by `addIndexAsync` that is not published yet. */
  discard(name: string): void {
    const p = this.pending.get(name);
    if (!p) return;
    p.cancelled = true;
    this.pending.delete(name);
  }

  /** One step per event-loop turn (`takeTurn`, shared fairly by every build): making the index (an IVF-PQ index's takes tens of ms), then slices of rows. */
  private async runBuild(p: PendingBuild): Promise<void> {
    try {
      for (;;) {
        await takeTurn();
        if (p.cancelled) return;
        if (!p.index) {
          p.index = p.make();
          continue;
        }
        buildSlice(p, p.sliceRows);
        if (p.head === p.todo.length) {
          p.current = true;
          p.todo = [];
          p.head = 0;
          if (!p.hold) this.attach(p.def.name);
          return;
        }
      }
    } catch (e) {
      this.discard(p.def.name);
      throw e;
    }
  }

  entries(): { def: IndexDef; index: SourceIndex }[] {
    return [...this.indexes.values()];
  }

  private columnIndex(column: string): number {
    return this.schema.stored.fields.findIndex((f) => f.name === column);
  }
}

/** Options of `SourceIndexes.addIndexAsync`. */
export interface AsyncBuildOptions {
  /** Keep the caught-up index unpublished until `attach` (see `addIndexAsync`). */
  hold?: boolean;
  /** Rows indexed per slice (default: `defaultSliceRows`). */
  sliceRows?: number;
}

/** An index being built over a source's existing rows in slices. */
interface PendingBuild {
  def: IndexDef;
  make: () => SourceIndex;
  /** Made in the build's first turn. */
  index?: SourceIndex;
  col: number;
  /** Rows still to index, in position order: `batch` (at `first`) from its row `done` on. */
  todo: { batch: RecordBatch; first: number; done: number }[];
  /** First entry of `todo` not fully indexed. */
  head: number;
  hold: boolean;
  /** Caught up with every inserted row: `insert` adds rows to it directly. */
  current: boolean;
  cancelled: boolean;
  sliceRows: number;
  done: Promise<void>;
}

/**
 * Multiply-adds of IVF-PQ encoding per slice: a row costs about dim × (partitions + 256) of
 * them (nearest centroid, then 256 codewords per subspace), ~125 µs at 128 dims and 256
 * partitions, so a slice is ~40 rows there, ~5 ms on an idle core. A fixed row count rather
 * than a clock keeps the interleaving the same from run to run (the simulation tests replay
 * schedules by seed).
 */
const IVF_PQ_SLICE_WORK = 2_600_000;
const FTS_SLICE_ROWS = 1000;
const SCALAR_SLICE_ROWS = 16_384;

/** Rows per slice of an index build, sized to take a few milliseconds. */
export function defaultSliceRows(def: IndexDef, models: ModelLookup): number {
  const model = def.type === 'ivf_pq' ? models(def) : undefined;
  if (model) return Math.max(8, Math.floor(IVF_PQ_SLICE_WORK / (model.dim * (model.partitions + PQ_CODEWORDS))));
  return def.type === 'fts' ? FTS_SLICE_ROWS : SCALAR_SLICE_ROWS;
}

/**
 * Builds take turns: every step of every build in the process waits for its own event-loop
 * turn (FIFO, one step per setImmediate), so builds of several sources started together run
 * one slice between two turns, not one slice each.
 */
const turns: (() => void)[] = [];
let turnScheduled = false;

function takeTurn(): Promise<void> {
  return new Promise((resolve) => {
    turns.push(resolve);
    if (!turnScheduled) scheduleTurn();
  });
}

function scheduleTurn(): void {
  turnScheduled = true;
  setImmediate(() => {
    turnScheduled = false;
    // The step runs in the microtasks right after this callback; the next one, scheduled now,
    // runs in the next turn of the loop (after timers and I/O).
    turns.shift()?.();
    if (turns.length > 0) scheduleTurn();
  });
}

/** Indexes up to `budget` queued rows of a build. */
function buildSlice(p: PendingBuild, budget: number): void {
  const index = (p.index ??= p.make());
  while (budget > 0 && p.head < p.todo.length) {
    const t = p.todo[p.head];
    const n = Math.min(budget, t.batch.numRows - t.done);
    addRows(index, t.batch, p.col, t.first, t.done, t.done + n);
    t.done += n;
    budget -= n;
    if (t.done === t.batch.numRows) p.head++;
  }
}

/** Rows [from, to) of `batch` (whose row 0 is at position `first`). */
function addRows(index: SourceIndex, batch: RecordBatch, col: number, first: number, from: number, to: number): void {
  if (from === 0 && to === batch.numRows) return addTo(index, batch, col, first);
  if (index instanceof IvfPqIndex) {
    const dim = index.model.dim;
    for (const c of VectorSource.fromArrow([batch], col, first).chunks) {
      index.add({ start: c.start + from, count: to - from, data: c.data.subarray(from * dim, to * dim), validity: c.validity, bitOffset: c.bitOffset + from });
    }
  } else {
    addTo(index, batch.slice(from, to), col, first + from);
  }
}

function createIndex(def: IndexDef, models: ModelLookup, schema: TableSchema): SourceIndex | undefined {
  switch (def.type) {
    case 'ivf_pq': {
      const model = models(def);
      return model ? new IvfPqIndex(model) : undefined;
    }
    case 'fts':
      return new InvertedIndex({ stem: def.stem, stopWords: def.stopWords });
    case 'scalar':
      return new ScalarIndex(schema.stored.fields.find((f) => f.name === def.column)!.type);
  }
}

function addTo(index: SourceIndex, batch: RecordBatch, col: number, first: number, defer = false): void {
  const data = batch.data.children[col];
  if (index instanceof IvfPqIndex) {
    for (const c of VectorSource.fromArrow([batch], col, first).chunks) index.add(c);
  } else if (index instanceof InvertedIndex) {
    index.add(first, data as Data<Utf8>, defer);
  } else {
    index.add(first, data);
  }
}
