/**
 * Index searches over a table snapshot: vector KNN, BM25 full text and primary/scalar key
 * lookups, across every source of every region (active and frozen MemTables, flushed
 * generations), returning only the newest live version of each key.
 *
 * Per source the prefilter is `live ∧ filter`: liveness comes from liveness.ts (superseded and
 * deleted rows are never candidates), the user's filter from the vectorized evaluator. Each
 * source is searched with its index when it has one (IVF-PQ once a model is trained, the
 * inverted index, the scalar index) or exactly otherwise (brute-force KNN, a filtered scan), and
 * the per-source top-k lists are merged by distance, or by BM25 score computed with statistics
 * summed over all sources so scores are comparable.
 */
import { type Data, Field, Float32, makeData, RecordBatch, Schema, Struct, Table as ArrowTable } from 'apache-arrow';
import { gatherData } from '../../exec/kernels/gather.js';
import { evaluateFilter } from '../../exec/expr/evaluate.js';
import type { Expr } from '../../exec/expr/expr.js';
import { InvalidError } from '../errors.js';
import { addFtsStats, emptyFtsStats, type FtsStats, type InvertedIndex } from '../index/fts/inverted-index.js';
import type { FtsQuery, FtsTermClause } from '../index/fts/query.js';
import { LiveCorpusStats } from '../index/fts/live-corpus-stats.js';
import type { ScalarIndex, ScalarPredicate } from '../index/scalar/scalar-index.js';
import type { SourceIndexes } from '../index/source-indexes.js';
import { flatKnn } from '../index/vector/flat-knn.js';
import type { Metric } from '../index/vector/distance.js';
import { IvfPqIndex, type IvfPqPart } from '../index/vector/ivf-pq-index.js';
import { TopK } from '../index/vector/top-k.js';
import type { IndexDef } from '../index/index-def.js';
import { batchHolding } from '../memtable/batch-offsets.js';
import { regionLiveness } from '../memtable/liveness.js';
import { evaluateBatchesFrom, filteredRows } from './filter-memo.js';
import { candidatePositions, candidatesPassing, indexedConjuncts, maskFromCandidates, primaryKeyValues } from './indexed-filter.js';
import type { KeyValue } from '../schema/primary-key.js';
import type { LiveState, LivenessCache, RegionLivenessSlot } from '../memtable/liveness.js';

/** One searchable source of a snapshot. */
export interface SearchSource {
  batches: readonly RecordBatch[];
  /** Row position of each batch's first row. */
  rowOffsets: readonly number[];
  rowCount: number;
  indexes: SourceIndexes;
  cache: LivenessCache;
}

export interface RegionSources {
  /** Newest first: MemTables, then generations by descending number. */
  sources: SearchSource[];
  generationCount: number;
  /** Identifies the generation list, for the liveness cache. */
  signature: string;
  cacheSlot: RegionLivenessSlot;
}

export interface PreparedSource {
  source: SearchSource;
  /** 1 = the newest live version of its key. */
  live: Uint8Array;
  liveCount: number;
  /** The cached live state behind `live`, for sums kept incrementally (absent for a late snapshot). */
  liveState?: LiveState;
  /** 1 = candidate (live and passing the filter). */
  allowed: Uint8Array;
  allowedCount: number;
  /** Rows the filter was evaluated on by this query (see SourcePlan.filterRows). */
  filterRows?: number;
  /**
   * With `sparse`, for a primary-key lookup: the allowed positions, ascending; `allowed` is then
   * empty (a point query allocates nothing per stored row).
   */
  rows?: Uint32Array;
}

/** Live ∧ filter per source, for every region. */
export function prepareSources(
  regions: readonly RegionSources[],
  keyIndexes: readonly number[],
  tombstoneIndex: number,
  filter: Expr | undefined,
  params: readonly unknown[] | undefined,
  /** Index definitions: conjuncts on scalar-indexed columns narrow the rows the filter is evaluated on. */
  defs: readonly IndexDef[] = [],
  /** The caller reads `rows` when set (scans do): a primary-key lookup then allocates no dense mask and is not memoized. */
  sparse = false,
): PreparedSource[] {
  const out: PreparedSource[] = [];
  const conjuncts = filter ? indexedConjuncts(filter, defs, params) : [];
  const keyField = keyIndexes.length === 1 ? regions[0]?.sources[0]?.batches[0]?.schema.fields[keyIndexes[0]] : undefined;
  const keyValues = filter && keyField ? primaryKeyValues(filter, keyField, params) : undefined;
  const filterKey = filter ? memoKey(filter, params) : undefined;
  for (const region of regions) {
    const live = regionLiveness(region.sources, region.generationCount, keyIndexes, tombstoneIndex, region.cacheSlot, region.signature);
    region.sources.forEach((source, s) => {
      const { live: liveRows, liveCount, state: liveState } = live[s];
      if (!filter) {
        // No filter: the candidates are the live rows, kept up to date incrementally.
        out.push({ source, live: liveRows, liveCount, liveState, allowed: liveRows, allowedCount: liveCount });
        return;
      }
      const evaluate = (batch: RecordBatch, out?: Uint8Array) => evaluateFilter(filter, batch, params as unknown[] | undefined, out);
      if (sparse && keyValues) {
        const candidates = keyCandidates(source, keyValues);
        if (candidates) {
          const rows = candidatesPassing(source.batches, candidates, filter, evaluate).filter((pos) => liveRows[pos] === 1);
          out.push({ source, live: liveRows, liveCount, liveState, allowed: EMPTY_MASK, allowedCount: rows.length, filterRows: candidates.length, rows });
          return;
        }
      }
      const evaluateRows = (from: number, mask: Uint8Array): number => {
        // From scratch, a scalar index may narrow the rows the filter has to see.
        const candidates =
          from !== 0
            ? undefined
            : keyValues
              ? keyCandidates(source, keyValues)
              : conjuncts.length > 0
                ? candidatePositions(conjuncts, (name) => source.indexes.index<ScalarIndex>(name), source.rowCount)
                : undefined;
        if (candidates) {
          maskFromCandidates(source.batches, candidates, filter, evaluate, mask);
          return candidates.length;
        }
        return evaluateBatchesFrom(source.batches, source.rowOffsets, from, mask, evaluate);
      };
      const { allowed, allowedCount, filterRows } = filteredRows(source.cache, filterKey, source.rowCount, liveRows, liveCount, liveState, evaluateRows);
      out.push({ source, live: liveRows, liveCount, liveState, allowed, allowedCount, filterRows });
    });
  }
  return out;
}

const EMPTY_MASK = new Uint8Array(0);

/**
 * Rows of a source that can hold the given primary keys: each key's newest position in the
 * source, from the key map liveness keeps (see `primaryKeyValues`). Undefined when the map does
 * not describe exactly this snapshot's rows (a late snapshot): the filter then reads every row.
 */
function keyCandidates(source: SearchSource, keys: readonly KeyValue[]): Uint32Array | undefined {
  const own = source.cache.liveness;
  if (!own || own.rowCount !== source.rowCount) return undefined;
  const found: number[] = [];
  for (const k of keys) {
    const pos = own.positions.get(k);
    if (pos !== undefined) found.push(pos);
  }
  return Uint32Array.from(new Set(found)).sort();
}

/** A filter and its parameter values as a string, or undefined when they cannot be named exactly. */
function memoKey(filter: Expr, params: readonly unknown[] | undefined): string | undefined {
  try {
    return JSON.stringify([filter, params ?? []], function (this: Record<string, unknown>, k: string, v: unknown) {
      const raw = this[k]; // before toJSON (a Date arrives here as its ISO string)
      if (raw instanceof Date) return { $date: raw.getTime() };
      // Tagged objects: no string literal can produce the same text.
      if (typeof v === 'bigint') return { $bigint: String(v) };
      if (typeof v === 'number' && !Number.isFinite(v)) return { $number: String(v) };
      if (ArrayBuffer.isView(v)) return { $view: v.constructor.name, values: Array.from(v as unknown as ArrayLike<number>, String) };
      return v;
    });
  } catch {
    return undefined;
  }
}

export interface Hit {
  source: SearchSource;
  position: number;
  value: number;
}

export interface VectorSearchParams {
  def: IndexDef | undefined;
  column: string;
  query: Float32Array;
  metric: Metric;
  k: number;
  nprobes?: number;
  refineFactor?: number;
  distanceRange?: readonly [number, number];
}

/** Schema metadata key of a search result: how each source was searched (JSON). */
export const SEARCH_PLAN_KEY = 'quiver.search.plan';

/** Below this many rows a source is searched exactly even when it has an IVF-PQ index. */
const SMALL_SOURCE_ROWS = 2048;

/**
 * How one source was searched, for the result's `quiver.search.plan` metadata: no path is taken
 * silently (an exact scan instead of the index, or an index search that probed every partition,
 * shows here and, with the SQL engine, in EXPLAIN).
 */
export interface SourcePlan {
  rows: number;
  path: 'ivf_pq' | 'exact' | 'bm25' | 'scalar_index' | 'filter_scan';
  /** Why an exact or scan path was taken. */
  reason?: string;
  partitionsProbed?: number;
  partitions?: number;
  /** With a filter: the rows it was evaluated on by this query (fewer than `rows` when a scalar index narrowed them; 0 when the source remembered the filter and no row was added since). */
  filterRows?: number;
}

export function vectorHits(prepared: readonly PreparedSource[], p: VectorSearchParams, plan: SourcePlan[] = []): Hit[] {
  const hits: Hit[] = [];
  // Sources searched through IVF-PQ, grouped by model: one shared candidate pool per group.
  const groups = new Map<IvfPqIndex['model'], { parts: IvfPqPart[]; sources: SearchSource[]; plans: SourcePlan[] }>();
  for (const { source, allowed, allowedCount, filterRows } of prepared) {
    if (allowedCount === 0) continue;
    const vectors = source.indexes.vectorSource(p.column);
    if (!vectors) throw new InvalidError(`search: column ${p.column} is not a vector column`);
    const index = p.def ? source.indexes.index<IvfPqIndex>(p.def.name) : undefined;
    const why = !p.def
      ? 'no IVF-PQ index on the column'
      : p.def.metric !== p.metric
        ? `metric ${p.metric} differs from the index's ${p.def.metric ?? 'l2'}`
        : !index
          ? 'the IVF-PQ model is not trained yet'
          : source.rowCount < SMALL_SOURCE_ROWS
            ? `small source (< ${SMALL_SOURCE_ROWS} rows)`
            : undefined;
    if (index && why === undefined) {
      let group = groups.get(index.model);
      if (!group) groups.set(index.model, (group = { parts: [], sources: [], plans: [] }));
      group.parts.push({ index, source: vectors, allowedMask: allowed, allowedCount, maxPosition: source.rowCount });
      group.sources.push(source);
      const entry: SourcePlan = { rows: source.rowCount, path: 'ivf_pq', partitions: index.model.partitions, filterRows };
      group.plans.push(entry);
      plan.push(entry);
    } else {
      const result = flatKnn(vectors, p.query, { k: p.k, metric: p.metric, allowed: (pos) => allowed[pos] === 1, maxPosition: source.rowCount, distanceRange: p.distanceRange });
      plan.push({ rows: source.rowCount, path: 'exact', reason: why, filterRows });
      for (let i = 0; i < result.positions.length; i++) hits.push({ source, position: result.positions[i], value: result.distances[i] });
    }
  }
  for (const group of groups.values()) {
    const r = IvfPqIndex.searchMany(group.parts, p.query, { k: p.k, nprobes: p.nprobes, refineFactor: p.refineFactor, distanceRange: p.distanceRange });
    for (const entry of group.plans) entry.partitionsProbed = r.partitionsProbed;
    for (let i = 0; i < r.positions.length; i++) hits.push({ source: group.sources[r.parts[i]], position: r.positions[i], value: r.distances[i] });
  }
  hits.sort((a, b) => a.value - b.value);
  return hits.slice(0, p.k);
}

/** By live state (one per source), not by index: a flush's generation may read its MemTable's index. */
const liveCorpusCache = new WeakMap<LiveState, LiveCorpusStats>();

/**
 * BM25 statistics over a source's live rows, kept by `LiveCorpusStats` for the source's live
 * state (a query after a put pays for the put's rows, read from the index's forward index).
 */
function liveStats(index: InvertedIndex, state: LiveState): LiveCorpusStats {
  let stats = liveCorpusCache.get(state);
  if (!stats || stats.index !== index || stats.rows > state.rows) {
    stats = new LiveCorpusStats(index, state);
    liveCorpusCache.set(state, stats);
  }
  return stats;
}

/** The BM25 live statistics `textHits` reads for index `def`, brought up to date now (see `catchUpLiveState`). */
export function catchUpTextStats(prepared: readonly PreparedSource[], def: IndexDef): void {
  for (const p of prepared) {
    if (p.liveCount === p.source.rowCount || !p.liveState) continue;
    const index = p.source.indexes.index<InvertedIndex>(def.name);
    if (index) liveStats(index, p.liveState).totals();
  }
}

export function textHits(prepared: readonly PreparedSource[], def: IndexDef, query: FtsQuery, k: number): Hit[] {
  const indexes = prepared.map((p) => {
    const index = p.source.indexes.index<InvertedIndex>(def.name);
    if (!index) throw new InvalidError(`search: no full-text index on ${def.column}`);
    return index;
  });
  // BM25 statistics over the live rows of every source, so scores compare across MemTables and
  // generations and do not depend on stale versions still stored.
  const terms = new Set<string>();
  for (let s = 0; s < prepared.length; s++) for (const t of indexes[s].queryTerms(query, prepared[s].source.rowCount)) terms.add(t);
  const stats = emptyFtsStats();
  for (const t of terms) stats.docFreq.set(t, 0);
  // A source none of whose live rows holds a query term (or a fuzzy expansion of one) has no
  // hit: it still counts in the statistics, but is not searched.
  const holdsTerm = new Uint8Array(prepared.length);
  for (let s = 0; s < prepared.length; s++) {
    const p = prepared[s];
    const index = indexes[s];
    if (p.liveCount !== p.source.rowCount && p.liveState) {
      // Added straight into the query's statistics: no per-source map (this runs for every
      // source of every text query).
      const live = liveStats(index, p.liveState);
      const totals = live.totals();
      stats.docCount += totals.docCount;
      stats.totalTokens += totals.totalTokens;
      for (const t of terms) {
        const df = live.docFreq(t);
        if (df === 0) continue;
        stats.docFreq.set(t, stats.docFreq.get(t)! + df);
        holdsTerm[s] = 1;
      }
      continue;
    }
    const local =
      p.liveCount === p.source.rowCount
        ? index.stats(terms, p.source.rowCount)
        : index.statsExcluding(terms, p.source.rowCount, (pos) => p.live[pos] === 0);
    addFtsStats(stats, local);
    for (const df of local.docFreq.values()) if (df > 0) holdsTerm[s] = 1;
  }
  // Largest sources first; each later source only needs rows that can beat the k-th best score
  // found so far, which its MaxScore pruning starts from (slightly lowered, so float32 rounding
  // of the reported scores cannot drop a tie).
  const order = prepared.map((_, i) => i).sort((a, b) => prepared[b].source.rowCount - prepared[a].source.rowCount || a - b);
  const floor = rareTermFloor(prepared, indexes, order, holdsTerm, query, stats, k);
  const best = new TopK(k); // by −score
  const hits: (Hit & { rank: number })[] = [];
  for (const s of order) {
    const { source, allowed, allowedCount } = prepared[s];
    if (allowedCount === 0 || holdsTerm[s] === 0) continue;
    const theta = Math.max(best.full ? -best.bound : -Infinity, floor);
    const minScore = theta > -Infinity ? theta * (1 - 1e-6) : undefined;
    const r = indexes[s].search(query, { k, stats, allowedMask: allowed, maxPosition: source.rowCount, minScore });
    for (let i = 0; i < r.positions.length; i++) {
      hits.push({ source, position: r.positions[i], value: r.scores[i], rank: s });
      best.offer(-r.scores[i], hits.length);
    }
  }
  // Score, then newest source, then position: the same order whatever order sources ran in.
  hits.sort((a, b) => b.value - a.value || a.rank - b.rank || a.position - b.position);
  return hits.slice(0, k);
}

/** Counters for tests and benchmarks: queries that ran `rareTermFloor`'s first pass, and those it gave a floor. */
export const rareTermWork = { passes: 0, floors: 0 };

let rareTermFloorOn = true;
/** Switches `rareTermFloor` on or off (tests and benchmarks compare the two); returns the previous setting. */
export function setRareTermFloor(on: boolean): boolean {
  const prev = rareTermFloorOn;
  rareTermFloorOn = on;
  return prev;
}

/**
 * A score the k-th best result reaches for sure, from a first pass over the documents holding
 * the query's rarest term (−Infinity when there is no such pass or it finds fewer than k).
 *
 * Why: sources are searched one after another, each pruning with the k-th best score found so
 * far. One large index sees all of a rare term's documents at once, so after it the k-th best
 * is high and a frequent term's documents that lack the rare one are skipped without a look
 * (MaxScore). Split over ten generations, each source holds a few of the rare term's documents:
 * the first sources set the bar from documents holding only the frequent term, and every source
 * after them scans most of that term's postings (a 1–3 word BM25 query at 1M rows scanned
 * 2 229 postings a query over ten generations, 106 over one). So, for an optional-only query of
 * plain terms whose rarest term is in k … k × sources live documents (spread thin: fewer than k
 * a source on average) and much rarer than the rest, every source is first searched for the
 * documents holding that term (it made required: the
 * same documents' full scores, the other terms' contributions included), and the k-th best of
 * those scores is a floor for the real pass. Exact: the floor is the score of k real allowed
 * documents, so at most the final k-th score.
 */
function rareTermFloor(
  prepared: readonly PreparedSource[],
  indexes: readonly InvertedIndex[],
  order: readonly number[],
  holdsTerm: Uint8Array,
  query: FtsQuery,
  stats: FtsStats,
  k: number,
): number {
  if (!rareTermFloorOn || query.must.length > 0 || query.should.length < 2 || query.should.some((c) => c.kind !== 'term')) return -Infinity;
  let searched = 0;
  for (const s of order) if (holdsTerm[s] === 1 && prepared[s].allowedCount > 0) searched++;
  if (searched < 2) return -Infinity;
  let rare = -1;
  let rareDf = Infinity;
  let totalDf = 0;
  query.should.forEach((c, i) => {
    const df = stats.docFreq.get((c as FtsTermClause).term) ?? 0; // every clause is a term (above)
    totalDf += df;
    if (df < rareDf) {
      rare = i;
      rareDf = df;
    }
  });
  // Too rare to give k documents; common enough that a source's share of it gives k (every
  // source sets its own bar then, and the pass would double the work); or not much rarer than
  // the rest (nothing for the floor to skip).
  if (rareDf < k || rareDf > k * searched || 4 * rareDf > totalDf - rareDf) return -Infinity;
  rareTermWork.passes++;
  const first: FtsQuery = { must: [query.should[rare]!], should: query.should.filter((_, i) => i !== rare), mustNot: query.mustNot };
  const top = new TopK(k); // by −score
  for (const s of order) {
    const { source, allowed, allowedCount } = prepared[s];
    if (allowedCount === 0 || holdsTerm[s] === 0) continue;
    const r = indexes[s].search(first, { k, stats, allowedMask: allowed, maxPosition: source.rowCount, minScore: top.full ? -top.bound * (1 - 1e-6) : undefined });
    for (let i = 0; i < r.scores.length; i++) top.offer(-r.scores[i], i);
  }
  if (!top.full) return -Infinity;
  rareTermWork.floors++;
  return -top.bound;
}

/**
 * Rows matching a key predicate: through the scalar index when the source has one, otherwise
 * the predicate is already part of the prefilter and every allowed row matches.
 */
export function keyHits(prepared: readonly PreparedSource[], def: IndexDef | undefined, predicate: ScalarPredicate, k: number, plan: SourcePlan[] = []): Hit[] {
  const hits: Hit[] = [];
  for (const { source, allowed, allowedCount } of prepared) {
    if (allowedCount === 0) continue;
    const index = def ? source.indexes.index<ScalarIndex>(def.name) : undefined;
    plan.push(index ? { rows: source.rowCount, path: 'scalar_index' } : { rows: source.rowCount, path: 'filter_scan', reason: 'no scalar index on the column' });
    if (index) {
      for (const pos of index.lookup(predicate, source.rowCount)) if (allowed[pos]) hits.push({ source, position: pos, value: 0 });
    } else {
      for (let pos = 0; pos < source.rowCount; pos++) if (allowed[pos]) hits.push({ source, position: pos, value: 0 });
    }
    if (hits.length >= k) break;
  }
  return hits.slice(0, k);
}

/**
 * The hits' rows as one batch in hit order: the chosen columns, plus `extra` (e.g. `_distance`)
 * holding each hit's value.
 */
export function materialize(hits: readonly Hit[], schema: Schema, columnIndexes: readonly number[], extra: string | undefined, plan?: readonly SourcePlan[]): ArrowTable {
  const fields = columnIndexes.map((c) => schema.fields[c]);
  const outFields = extra ? [...fields, new Field(extra, new Float32(), false)] : fields;
  const metadata = new Map(schema.metadata);
  if (plan) metadata.set(SEARCH_PLAN_KEY, JSON.stringify({ sources: plan }));
  const outSchema = new Schema(outFields, metadata);
  if (hits.length === 0) return new ArrowTable(outSchema);
  // Locate every hit's batch and row; gather each column across the batches involved.
  const batchList: RecordBatch[] = [];
  const batchIds = new Map<RecordBatch, number>();
  const from = new Uint32Array(hits.length);
  const rows = new Uint32Array(hits.length);
  hits.forEach((h, i) => {
    const { batches, rowOffsets } = h.source;
    const at = batchHolding(rowOffsets, batches.length, h.position);
    const batch: RecordBatch | undefined = batches[at];
    const pos = h.position - (rowOffsets[at] ?? 0);
    if (!batch || pos >= batch.numRows) throw new Error(`search: row ${h.position} is outside its source`);
    let id = batchIds.get(batch);
    if (id === undefined) {
      id = batchList.length;
      batchIds.set(batch, id);
      batchList.push(batch);
    }
    from[i] = id;
    rows[i] = pos;
  });
  const children: Data[] = columnIndexes.map((c) => gatherData(batchList.map((b) => b.data.children[c]), from, rows));
  if (extra) children.push(makeData({ type: new Float32(), length: hits.length, nullCount: 0, data: Float32Array.from(hits, (h) => h.value) }));
  const batch = new RecordBatch(outSchema, makeData({ type: new Struct(outSchema.fields), length: hits.length, nullCount: 0, children }));
  // The batch's own schema (RecordBatch makes an equal copy of outSchema): given outSchema, the
  // Table would compare the two field by field on every search.
  return new ArrowTable([batch]);
}
