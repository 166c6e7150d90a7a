/**
 * Rewrite rules: functions from logical plan to logical plan, applied in a fixed order by
 * `optimize`. Each keeps the query's meaning; none is needed for a correct answer (the plain
 * plan the builder makes answers every query exactly, by scan) — they make it cheap:
 *
 * 1. constant folding: constant sub-expressions evaluated once (`price > 2 * 10` → `price > 20`);
 *    one that fails (`1 / 0` in a CASE branch no row reaches) is left for the rows to decide;
 * 2. predicate pushdown: a Filter over a Scan, VectorSearch or TextSearch becomes the source's
 *    prefilter — applied after key dedup, so a filter never uncovers an older version of a key
 *    whose newest version it rejects, and evaluated once per source version (filter-memo.ts);
 * 3. sort + limit → TopK: keep the best `limit + offset` rows instead of sorting all;
 * 4. vector search: TopK ordered first by `distance(column, query)` ascending over a scan of the
 *    table → a VectorSearch of k = limit + offset nearest rows with the scan's filter as its
 *    prefilter (the index picks the rows; the TopK above orders them, and by any later keys);
 * 5. text top-k: TopK ordered first by `_score` descending over a TextSearch of every match →
 *    the TextSearch keeps only its k best (MaxScore pruning in the index);
 * 6. limit pushdown: Limit moves below a Project, so the source stops after the rows it needs;
 * 7. projection pruning: every source produces only the columns something above reads.
 */
import { type Data, type DataType, Field, Float32 as Float32Type, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { evaluateValue } from '../exec/expr/index.js';
import { and, childrenOf, col, columnsOf, type Expr, exprToString, lit, type LiteralValue } from '../exec/expr/expr.js';
import { type PlanOptions, type PlanningCatalog, requireTable, vectorCall } from './builder.js';
import { rewriteTopDown, withChildren } from './expr-rewrite.js';
import { inputsOf, type LogicalPlan, node, type NamedExpr, type SortKey } from './logical-plan.js';

export interface RuleContext {
  readonly catalog: PlanningCatalog;
  readonly params: readonly unknown[];
  readonly options: PlanOptions;
}

export function optimize(plan: LogicalPlan, ctx: RuleContext): LogicalPlan {
  let p = foldConstants(plan, ctx);
  p = pushDownFilters(p);
  p = sortLimitToTopK(p);
  p = vectorSearchRule(p, ctx);
  p = textTopKRule(p);
  p = pushDownLimits(p);
  p = pruneColumns(p, null);
  return p;
}

/** Applies `fn` to every node bottom-up (inputs first), rebuilding parents whose inputs changed. */
function transformUp(plan: LogicalPlan, fn: (p: LogicalPlan) => LogicalPlan): LogicalPlan {
  const inputs = inputsOf(plan);
  let rebuilt = plan;
  if (inputs.length > 0) {
    const mapped = inputs.map((i) => transformUp(i, fn));
    if (mapped.some((m, j) => m !== inputs[j])) rebuilt = withInputs(plan, mapped);
  }
  return fn(rebuilt);
}

function withInputs(plan: LogicalPlan, inputs: readonly LogicalPlan[]): LogicalPlan {
  if (plan.kind === 'hybrid_search') return plan; // its legs are built together; rules leave them
  if ('input' in plan) return node({ ...plan, input: inputs[0] } as LogicalPlan);
  return plan;
}

// ---------------------------------------------------------------------------------------------
// 1. Constant folding

const EMPTY_ROW = new RecordBatch(new Schema([]), makeData({ type: new Struct([]), length: 1, nullCount: 0, children: [] }));

/** Folds constant sub-expressions (no columns, no match/aggregates/arrays) into literals. */
export function foldExpr(e: Expr, params: readonly unknown[]): Expr {
  return foldWalk(e, params).expr;
}

const UNFOLDABLE_CALLS = new Set(['match', 'array', 'rrf', 'count', 'sum', 'avg', 'min', 'max']);

/** One bottom-up pass: each node's children folded first, and whether the node is constant. */
function foldWalk(x: Expr, params: readonly unknown[]): { expr: Expr; constant: boolean } {
  switch (x.kind) {
    case 'column':
    case 'param':
      return { expr: x, constant: false };
    case 'literal':
      // DATE '…' / TIMESTAMP '…' literals stay as written (their type is the point).
      return { expr: x, constant: !x.temporal };
    default: {
      const kids = childrenOf(x);
      let constant = !(x.kind === 'call' && (UNFOLDABLE_CALLS.has(x.name) || x.star));
      let changed = false;
      const folded = kids.map((k) => {
        const r = foldWalk(k, params);
        if (!r.constant) constant = false;
        if (r.expr !== k) changed = true;
        return r.expr;
      });
      const rebuilt = changed ? withChildren(x, folded) : x;
      if (!constant) return { expr: rebuilt, constant: false };
      const v = evaluateConstant(rebuilt, params);
      // A constant that fails (1 / 0) or has no literal form stays for the rows to decide.
      return v ? { expr: v, constant: true } : { expr: rebuilt, constant: false };
    }
  }
}

function evaluateConstant(x: Expr, params: readonly unknown[]): Expr | undefined {
  let data;
  try {
    data = evaluateValue(x, EMPTY_ROW, params);
  } catch {
    return undefined; // an error is the rows' to raise (or not, if no row reaches it)
  }
  const v = literalOf(data.type, data);
  return v === undefined ? undefined : lit(v.value);
}

function literalOf(type: DataType, data: Data): { value: LiteralValue } | undefined {
  const typeId = type.typeId as number;
  const valid = data.nullCount === 0 || (data.nullBitmap ? ((data.nullBitmap[data.offset >> 3] >> (data.offset & 7)) & 1) === 1 : true);
  if (!valid) return typeId === 1 ? { value: null } : undefined; // typed NULLs stay unfolded (their type matters)
  const values = data.values as ArrayLike<number | bigint> | undefined;
  switch (typeId) {
    case 2: {
      // Int: only 32-bit and 64-bit integers become literals (the literal's type is inferred again).
      const v = values![data.offset];
      if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? (Number(v) > 2147483647 || Number(v) < -2147483648 ? { value: v } : undefined) : { value: v };
      return (type as { bitWidth?: number }).bitWidth === 32 ? { value: v as number } : undefined;
    }
    case 3:
      return (type as { precision?: number }).precision === 2 && !Number.isInteger(values![data.offset]) ? { value: values![data.offset] as number } : undefined;
    case 6: {
      const bit = ((data.values as Uint8Array)[(data.offset) >> 3] >> (data.offset & 7)) & 1;
      return { value: bit === 1 };
    }
    case 5: {
      const offsets = data.valueOffsets as Int32Array;
      const bytes = data.values as Uint8Array;
      return { value: new TextDecoder().decode(bytes.subarray(offsets[data.offset], offsets[data.offset + 1])) };
    }
    default:
      return undefined;
  }
}

function foldConstants(plan: LogicalPlan, ctx: RuleContext): LogicalPlan {
  return transformUp(plan, (p) => {
    switch (p.kind) {
      case 'filter': {
        const predicate = foldExpr(p.predicate, ctx.params);
        if (predicate.kind === 'literal' && predicate.value === true) return p.input;
        return predicate === p.predicate ? p : node({ ...p, predicate });
      }
      case 'project': {
        const items = p.items.map((i) => ({ expr: foldExpr(i.expr, ctx.params), name: i.name }));
        return items.every((i, j) => i.expr === p.items[j].expr) ? p : node({ ...p, items });
      }
      default:
        return p;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// 2. Predicate pushdown

function conjuncts(e: Expr | null): Expr[] {
  if (!e) return [];
  return e.kind === 'and' ? [...e.operands] : [e];
}

function pushDownFilters(plan: LogicalPlan): LogicalPlan {
  return transformUp(plan, (p) => {
    if (p.kind !== 'filter') return p;
    const input = p.input;
    if (input.kind === 'scan' || input.kind === 'vector_search' || input.kind === 'text_search') {
      const tableColumns = new Set(input.kind === 'scan' ? input.schema.fields.map((f) => f.name) : input.columns);
      const pushable = conjuncts(p.predicate).filter((c) => columnsOf(c).every((n) => tableColumns.has(n)));
      const kept = conjuncts(p.predicate).filter((c) => !pushable.includes(c));
      if (pushable.length === 0) return p;
      // A vector search's k nearest must be taken among the filtered rows: its prefilter.
      const filter = and(...conjuncts(input.filter), ...pushable);
      const source = node({ ...input, filter } as LogicalPlan);
      return kept.length ? node({ ...p, input: source, predicate: and(...kept) }) : source;
    }
    return p;
  });
}

// ---------------------------------------------------------------------------------------------
// 3. Sort + Limit → TopK

function sortLimitToTopK(plan: LogicalPlan): LogicalPlan {
  return transformUp(plan, (p) => {
    if (p.kind === 'limit' && p.limit !== null && p.input.kind === 'sort') {
      const sort = p.input;
      return node({ kind: 'top_k', input: sort.input, keys: sort.keys, limit: p.limit, offset: p.offset, schema: p.schema });
    }
    return p;
  });
}

// ---------------------------------------------------------------------------------------------
// 4. ORDER BY distance LIMIT k → VectorSearch

function vectorSearchRule(plan: LogicalPlan, ctx: RuleContext): LogicalPlan {
  return transformUp(plan, (p) => {
    if (p.kind !== 'top_k' || p.keys.length === 0 || p.keys[0].descending) return p;
    const project = p.input;
    if (project.kind !== 'project' || project.input.kind !== 'scan') return p;
    const key = p.keys[0].expr;
    if (key.kind !== 'column') return p;
    const item = project.items.find((i) => i.name === key.name);
    if (!item) return p;
    const scan = project.input;
    const info = requireTable(ctx.catalog, scan.table);
    const v = vectorCall(info, item.expr);
    if (!v) return p;
    const k = p.limit + p.offset;
    const distanceText = exprToString(item.expr);
    const search = node({
      kind: 'vector_search' as const,
      table: scan.table,
      columns: info.schema.fields.map((f) => f.name),
      column: v.column,
      query: v.query,
      metric: v.metric,
      k,
      filter: scan.filter,
      nprobes: ctx.options.nprobes ?? null,
      refine: ctx.options.refine ?? null,
      schema: new Schema([...info.schema.fields, new Field('_distance', new Float32Type(), false)]),
    });
    // The same distance anywhere in the projection is the search's `_distance`.
    const items: NamedExpr[] = project.items.map((i) => ({
      expr: rewriteTopDown(i.expr, (x) => (exprToString(x) === distanceText ? col('_distance') : undefined)),
      name: i.name,
    }));
    return node({ ...p, input: node({ ...project, input: search, items }) });
  });
}
// ---------------------------------------------------------------------------------------------
// 5. ORDER BY _score DESC LIMIT k over a TextSearch → its top-k

function textTopKRule(plan: LogicalPlan): LogicalPlan {
  return transformUp(plan, (p) => {
    if (p.kind !== 'top_k' || p.keys.length === 0 || !p.keys[0].descending) return p;
    const project = p.input;
    if (project.kind !== 'project' || project.input.kind !== 'text_search' || project.input.k !== null) return p;
    const key = p.keys[0].expr;
    const item = key.kind === 'column' ? project.items.find((i) => i.name === key.name) : undefined;
    if (!item || item.expr.kind !== 'column' || item.expr.name !== '_score') return p;
    const search = node({ ...project.input, k: p.limit + p.offset });
    return node({ ...p, input: node({ ...project, input: search }) });
  });
}

// ---------------------------------------------------------------------------------------------
// 6. Limit below Project

function pushDownLimits(plan: LogicalPlan): LogicalPlan {
  return transformUp(plan, (p) => {
    if (p.kind === 'limit' && p.input.kind === 'project') {
      const project = p.input;
      return node({ ...project, input: node({ ...p, input: project.input, schema: project.input.schema }) });
    }
    return p;
  });
}

// ---------------------------------------------------------------------------------------------
// 7. Projection pruning

/** `needed`: the columns the parent reads from this node (null = all). */
function pruneColumns(plan: LogicalPlan, needed: Set<string> | null): LogicalPlan {
  const all = (p: LogicalPlan) => new Set(p.schema.fields.map((f) => f.name));
  const exprCols = (es: readonly Expr[]) => new Set(es.flatMap((e) => columnsOf(e)));
  const union = (a: Set<string> | null, b: Set<string>) => (a === null ? null : new Set([...a, ...b]));
  switch (plan.kind) {
    case 'scan':
    case 'vector_search':
    case 'text_search': {
      if (needed === null) return plan;
      const keep = plan.columns.filter((c) => needed.has(c));
      if (keep.length === plan.columns.length) return plan;
      const extra = plan.kind === 'vector_search' ? ['_distance'] : plan.kind === 'text_search' ? ['_score'] : [];
      const schema = new Schema(plan.schema.fields.filter((f) => keep.includes(f.name) || extra.includes(f.name)));
      return node({ ...plan, columns: keep, schema } as LogicalPlan);
    }
    case 'project': {
      const input = pruneColumns(plan.input, exprCols(plan.items.map((i) => i.expr)));
      return input === plan.input ? plan : node({ ...plan, input });
    }
    case 'filter': {
      const input = pruneColumns(plan.input, union(needed ?? all(plan), exprCols([plan.predicate])));
      // The filter's output keeps its input's (possibly narrower) schema.
      return input === plan.input ? plan : node({ ...plan, input, schema: input.schema });
    }
    case 'aggregate': {
      const input = pruneColumns(plan.input, exprCols([...plan.groups.map((g) => g.expr), ...plan.aggregates.flatMap((a) => (a.arg ? [a.arg] : []))]));
      return input === plan.input ? plan : node({ ...plan, input });
    }
    case 'sort':
    case 'top_k':
    case 'limit': {
      const keys: readonly SortKey[] = plan.kind === 'limit' ? [] : plan.keys;
      const input = pruneColumns(plan.input, union(needed ?? all(plan), exprCols(keys.map((k) => k.expr))));
      return input === plan.input ? plan : node({ ...plan, input, schema: input.schema } as LogicalPlan);
    }
    case 'insert':
    case 'delete':
    case 'explain': {
      const input = pruneColumns(plan.input, null);
      return input === plan.input ? plan : node({ ...plan, input } as LogicalPlan);
    }
    default:
      return plan;
  }
}
