/**
 * `table.search(...)`: validates a search request, builds the snapshot's searchable sources
 * (MemTables and loaded generations, newest first per region) and runs the vector, text or key
 * search of search.ts over them.
 */
import type { Table as ArrowTable } from 'apache-arrow';
import { checkFilter } from '../../exec/expr/check.js';
import { and, col, compare, type Expr, inList, lit, type LiteralValue } from '../../exec/expr/expr.js';
import { parseFilter } from '../../exec/expr/parse-filter.js';
import { InvalidError } from '../errors.js';
import { FtsQueryError, parseFtsQuery } from '../index/fts/query.js';
import type { ScalarPredicate } from '../index/scalar/scalar-index.js';
import type { IndexScope } from '../index/indexing.js';
import { METRICS, type Metric } from '../index/vector/distance.js';
import { pendingLivenessRows, type RegionLivenessSlot } from '../memtable/liveness.js';
import type { RegionLayout } from '../wal/region-layout.js';
import type { RegionReadState } from '../region/region-writer.js';
import type { LoadedGeneration } from '../region/generation.js';
import { isFloat32Vector } from '../index/index-def.js';
import { catchUpTextStats, keyHits, materialize, prepareSources, type RegionSources, type SearchSource, type SourcePlan, textHits, vectorHits } from './search.js';
import type { TableContext } from './table-context.js';

export interface SearchRequest {
  vector?: { column: string; query: Float32Array | readonly number[]; metric?: Metric };
  text?: { column: string; query: string };
  key?: {
    /** Default: the (single-column) primary key. */
    column?: string;
    eq?: unknown;
    in?: readonly unknown[];
    lower?: unknown;
    /** Default true. */
    lowerInclusive?: boolean;
    upper?: unknown;
    /** Default false. */
    upperInclusive?: boolean;
  };
  /** Rows wanted (default 10). */
  k?: number;
  /** SQL boolean expression over the table's columns, applied as a prefilter. */
  filter?: string;
  /** Values of `$1`, `$2`, … in `filter`. */
  params?: readonly unknown[];
  /** IVF-PQ partitions to probe (default 20). */
  nprobes?: number;
  /** IVF-PQ refine factor: k × refine candidates re-ranked exactly (default 40; 0 = off). */
  refine?: number;
  /** Vector distance bounds [lower inclusive, upper exclusive]. */
  distanceRange?: readonly [number, number];
  /** Columns returned (default all). */
  columns?: readonly string[];
}

const regionCaches = new WeakMap<TableContext, Map<string, RegionLivenessSlot>>();

export async function runSearch(ctx: TableContext, states: readonly { layout: RegionLayout; state: RegionReadState }[], req: SearchRequest): Promise<ArrowTable> {
  if (!req || typeof req !== 'object') throw new InvalidError('search: give { vector | text | key, k, ... }');
  const kinds = [req.vector, req.text, req.key].filter((x) => x !== undefined).length;
  if (kinds !== 1) throw new InvalidError('search: give exactly one of vector, text or key');
  const k = req.k ?? 10;
  if (!Number.isInteger(k) || k < 1) throw new InvalidError(`search: k must be a positive integer, got ${String(req.k)}`);
  const user = ctx.schema.user;
  const columnIndexes = (req.columns ?? user.fields.map((f) => f.name)).map((name) => {
    const i = user.fields.findIndex((f) => f.name === name);
    if (i < 0) throw new InvalidError(`search: unknown column ${name} in table ${ctx.meta.name}`);
    return i;
  });
  let filter: Expr | undefined = req.filter !== undefined ? parseFilter(req.filter, user) : undefined;
  const regions = await searchSources(ctx, states);

  if (req.vector) {
    const { column, metric: asked } = req.vector;
    const field = user.fields.find((f) => f.name === column);
    if (!field || !isFloat32Vector(field.type)) throw new InvalidError(`search: ${column} is not a FLOAT4[n] vector column of table ${ctx.meta.name}`);
    const query = Float32Array.from(req.vector.query as ArrayLike<number>);
    if (query.length !== field.type.listSize) throw new InvalidError(`search: query vector has dimension ${query.length}, column ${column} has dimension ${field.type.listSize}`);
    if (query.some((v) => !Number.isFinite(v))) throw new InvalidError('search: query vector has a non-finite value');
    const def = ctx.indexing.defs.find((d) => d.type === 'ivf_pq' && d.column === column);
    const metric = asked ?? def?.metric ?? 'l2';
    if (!METRICS.includes(metric)) throw new InvalidError(`search: metric must be one of ${METRICS.join(', ')}`);
    if (req.nprobes !== undefined && (!Number.isInteger(req.nprobes) || req.nprobes < 1)) throw new InvalidError('search: nprobes must be a positive integer');
    if (req.refine !== undefined && (!Number.isInteger(req.refine) || req.refine < 0)) throw new InvalidError('search: refine must be an integer >= 0');
    const prepared = prepareSources(regions, ctx.schema.keyIndexes, ctx.schema.tombstoneIndex, filter, req.params, ctx.indexing.defs);
    const plan: SourcePlan[] = [];
    const hits = vectorHits(prepared, { def, column, query, metric, k, nprobes: req.nprobes, refineFactor: req.refine, distanceRange: req.distanceRange }, plan);
    return materialize(hits, user, columnIndexes, '_distance', plan);
  }

  if (req.text) {
    const { column, query: text } = req.text;
    const def = ctx.indexing.defs.find((d) => d.type === 'fts' && d.column === column);
    if (!def) throw new InvalidError(`search: no full-text index on column ${column}; create one with createIndex('${column}', { type: 'fts' })`);
    let query;
    try {
      query = parseFtsQuery(text, { stem: def.stem, stopWords: def.stopWords });
    } catch (e) {
      if (e instanceof FtsQueryError) throw new InvalidError(`search: ${e.message}`, { cause: e });
      throw e;
    }
    const prepared = prepareSources(regions, ctx.schema.keyIndexes, ctx.schema.tombstoneIndex, filter, req.params, ctx.indexing.defs);
    const plan: SourcePlan[] = prepared.map((p) => ({ rows: p.source.rowCount, path: 'bm25' }));
    return materialize(textHits(prepared, def, query, k), user, columnIndexes, '_score', plan);
  }

  const key = req.key!;
  const column = key.column ?? (ctx.schema.primaryKey.length === 1 ? ctx.schema.primaryKey[0] : undefined);
  if (!column) throw new InvalidError('search: key.column is required for a composite primary key');
  const field = user.fields.find((f) => f.name === column);
  if (!field) throw new InvalidError(`search: unknown column ${column}`);
  const { predicate, expr } = keyPredicate(column, key);
  // Without a scalar index the key predicate is evaluated as part of the filter.
  const def = ctx.indexing.defs.find((d) => d.type === 'scalar' && d.column === column);
  const keyExpr = checkFilter(expr, user);
  const prepared = prepareSources(regions, ctx.schema.keyIndexes, ctx.schema.tombstoneIndex, def ? filter : filter ? and(filter, keyExpr) : keyExpr, req.params, ctx.indexing.defs);
  filter = undefined;
  const plan: SourcePlan[] = [];
  const hits = keyHits(prepared, def, predicate, k, plan);
  return materialize(hits, user, columnIndexes, undefined, plan);
}

function keyPredicate(column: string, key: NonNullable<SearchRequest['key']>): { predicate: ScalarPredicate; expr: Expr } {
  const c = col(column);
  const literal = (v: unknown, what: string): Expr => {
    if (v === null || v === undefined) throw new InvalidError(`search: key ${what} must not be null`);
    if (!['number', 'bigint', 'string', 'boolean'].includes(typeof v)) throw new InvalidError(`search: key ${what} must be a number, bigint, string or boolean`);
    return lit(v as LiteralValue);
  };
  const forms = [key.eq !== undefined, key.in !== undefined, key.lower !== undefined || key.upper !== undefined].filter(Boolean).length;
  if (forms !== 1) throw new InvalidError('search: key needs exactly one of eq, in, or lower/upper');
  if (key.eq !== undefined) return { predicate: { op: 'eq', value: key.eq }, expr: compare('=', c, literal(key.eq, 'eq')) };
  if (key.in !== undefined) {
    if (!Array.isArray(key.in) || key.in.length === 0) throw new InvalidError('search: key.in must be a non-empty array');
    return { predicate: { op: 'in', values: [...key.in] }, expr: inList(c, key.in.map((v, i) => literal(v, `in[${i}]`))) };
  }
  const lowerInclusive = key.lowerInclusive ?? true;
  const upperInclusive = key.upperInclusive ?? false;
  const parts: Expr[] = [];
  if (key.lower !== undefined) parts.push(compare(lowerInclusive ? '>=' : '>', c, literal(key.lower, 'lower')));
  if (key.upper !== undefined) parts.push(compare(upperInclusive ? '<=' : '<', c, literal(key.upper, 'upper')));
  return {
    predicate: {
      op: 'range',
      lower: key.lower !== undefined ? { value: key.lower, inclusive: lowerInclusive } : undefined,
      upper: key.upper !== undefined ? { value: key.upper, inclusive: upperInclusive } : undefined,
    },
    expr: parts.length === 1 ? parts[0] : and(...parts),
  };
}

/** The snapshot's sources per region, newest first, with every current index (of `scope`; MemTables have all). */
export async function searchSources(ctx: TableContext, states: readonly { layout: RegionLayout; state: RegionReadState }[], scope: IndexScope = 'all'): Promise<RegionSources[]> {
  const out: RegionSources[] = [];
  for (const { layout, state } of states) {
    // Indexes created after a MemTable started are built over its rows now, in slices that
    // yield to the event loop; concurrent searches share the build.
    for (const memtable of memtablesLackingIndexes(ctx, state)) await ctx.indexing.completeAsync(memtable.indexes!, memtable.indexedBatches());
    const gens = flushedNewestFirst(state);
    // Cached generations are taken synchronously; any other is loaded (and all awaited) by `get`.
    const loaded = cachedGenerations(ctx, layout, gens, scope) ?? (await Promise.all(gens.map((g) => ctx.generations.get(layout, g.generation, g.path, scope))));
    out.push(regionSources(ctx, layout, state, gens, loaded));
  }
  return out;
}

/**
 * `searchSources` when it needs nothing loaded or built (every generation cached, every
 * MemTable's indexes complete), else undefined.
 */
export function searchSourcesIfReady(ctx: TableContext, states: readonly { layout: RegionLayout; state: RegionReadState }[]): RegionSources[] | undefined {
  const out: RegionSources[] = [];
  for (const { layout, state } of states) {
    if (memtablesLackingIndexes(ctx, state).length > 0) return undefined;
    const gens = flushedNewestFirst(state);
    const loaded = cachedGenerations(ctx, layout, gens);
    if (!loaded) return undefined;
    out.push(regionSources(ctx, layout, state, gens, loaded));
  }
  return out;
}

type FlushedGeneration = RegionReadState['manifest']['flushedGenerations'][number];

/** The state's non-empty MemTables whose indexes lack one the table defines (created since they started). */
function memtablesLackingIndexes(ctx: TableContext, state: RegionReadState): RegionReadState['memtables'][number]['memtable'][] {
  return state.memtables.filter(({ memtable, batchCount }) => batchCount > 0 && ctx.indexing.lacksIndexes(memtable.indexes!)).map((m) => m.memtable);
}

function flushedNewestFirst(state: RegionReadState): FlushedGeneration[] {
  return [...state.manifest.flushedGenerations].sort((a, b) => b.generation - a.generation);
}

/** The region's generations from the cache, or undefined when one is not in it. */
function cachedGenerations(ctx: TableContext, layout: RegionLayout, gens: readonly FlushedGeneration[], scope: IndexScope = 'all'): LoadedGeneration[] | undefined {
  const loaded: LoadedGeneration[] = [];
  for (const g of gens) {
    const hit = ctx.generations.peek(layout, g.path, scope);
    if (!hit) return undefined;
    loaded.push(hit);
  }
  return loaded;
}

/** One region's sources, newest first: its MemTables, then `loaded` (the generations `gens`). */
function regionSources(ctx: TableContext, layout: RegionLayout, state: RegionReadState, gens: readonly FlushedGeneration[], loaded: readonly LoadedGeneration[]): RegionSources {
  let caches = regionCaches.get(ctx);
  if (!caches) regionCaches.set(ctx, (caches = new Map()));
  const sources: SearchSource[] = [];
  for (let m = state.memtables.length - 1; m >= 0; m--) {
    const { memtable, batchCount } = state.memtables[m];
    if (batchCount === 0) continue;
    sources.push({ batches: memtable.store.range(0, batchCount), rowOffsets: memtable.store.rowOffsets, rowCount: memtable.store.rowsBefore(batchCount), indexes: memtable.indexes!, cache: memtable.cache });
  }
  for (const g of loaded) sources.push({ batches: g.batches, rowOffsets: g.rowOffsets, rowCount: g.rowCount, indexes: g.indexes, cache: g.cache });
  let cacheSlot = caches.get(layout.regionId);
  if (!cacheSlot) caches.set(layout.regionId, (cacheSlot = {}));
  return { sources, generationCount: loaded.length, signature: gens.map((g) => g.path).join('/'), cacheSlot };
}

/**
 * After a small write: what the next search would do first for these states — the sources'
 * liveness (which rows the write superseded, in every older source) and the BM25 statistics
 * over live rows — done now, so that search finds them current. Only when that is a small
 * step: nothing to load or build (a write never waits for a generation to load), and at most
 * `maxRows` rows new to the liveness state (not after a flush, or after large writes, since the
 * last search: those are the next search's to pay). False when it did nothing.
 */
export function catchUpLiveState(ctx: TableContext, states: readonly { layout: RegionLayout; state: RegionReadState }[], maxRows: number): boolean {
  const regions = searchSourcesIfReady(ctx, states);
  if (!regions || regions.some((r) => pendingLivenessRows(r.sources, r.cacheSlot, r.signature) > maxRows)) return false;
  const prepared = prepareSources(regions, ctx.schema.keyIndexes, ctx.schema.tombstoneIndex, undefined, undefined, ctx.indexing.defs);
  for (const def of ctx.indexing.defs) if (def.type === 'fts') catchUpTextStats(prepared, def);
  return true;
}
