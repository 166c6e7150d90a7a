/**
 * AST → logical plan: name and type resolution, aggregation, ORDER BY / LIMIT, and recognition
 * of the searches (vector, full text, hybrid) that the SQL surface expresses as functions.
 *
 * A SELECT is first built in its plain relational shape —
 *   source → Filter(WHERE) → [Aggregate → Filter(HAVING)] → Project(items + hidden sort keys)
 *   → Sort → Limit → Project(drop hidden)
 * — where the source is a Scan, or a TextSearch when WHERE has a `match()` conjunct (its
 * `_score` has to come from somewhere), or a HybridSearch for `ORDER BY rrf(…)`. The rules
 * (rules.ts) then push filters into the source, prune columns, fuse Sort + Limit into TopK and
 * turn `TopK(l2_distance…)` over a scan into a VectorSearch. So a query the rules cannot turn
 * into an index search still answers, exactly, by scan: `l2_distance` is an ordinary function.
 *
 * Intermediate columns get internal names (`__c0`, `__s0`, `__g0`, `__a0`) so duplicate or
 * odd output names never confuse resolution; the last Project gives the user's names.
 */
import { type DataType, Field, Float32 as Float32Type, Float64 as Float64Type, Int64, Schema, Utf8 } from 'apache-arrow';
import { checkExpr, inferType } from '../exec/expr/index.js';
import { and, col, columnsOf, type Expr, exprToString as printExpr, someNode } from '../exec/expr/expr.js';

/** Expressions are immutable: their SQL text (the builder's structural key) is computed once. */
const texts = new WeakMap<Expr, string>();
function exprToString(e: Expr): string {
  let t = texts.get(e);
  if (t === undefined) texts.set(e, (t = printExpr(e)));
  return t;
}
import { rewriteTopDown } from './expr-rewrite.js';
import { InvalidError, NotFoundError } from '../src/errors.js';
import type { IndexDef } from '../src/index/index-def.js';
import type { Metric } from '../src/index/vector/distance.js';
import type { RegionSpec } from '../src/region/region-spec.js';
import type {
  CreateIndexStatement,
  DeleteStatement,
  InsertStatement,
  SelectItem,
  SelectStatement,
  Statement,
} from '../src/sql/statement.js';
import {
  type AggregateCall,
  type AggregateFn,
  type LogicalPlan,
  type NamedExpr,
  node,
  type SortKey,
  type TextSearchPlan,
  type VectorSearchPlan,
} from './logical-plan.js';

/** What the builder needs to know about a table. */
export interface TableInfo {
  readonly name: string;
  /** The user's columns. */
  readonly schema: Schema;
  readonly primaryKey: readonly string[];
  readonly indexes: readonly IndexDef[];
}

export interface PlanningCatalog {
  /** The table, or undefined when it does not exist. */
  table(name: string): TableInfo | undefined;
}

export interface PlanOptions {
  /** IVF-PQ partitions to probe (default: the index's default). */
  readonly nprobes?: number;
  /** IVF-PQ refine factor. */
  readonly refine?: number;
}

export const AGGREGATES = new Set(['count', 'sum', 'avg', 'min', 'max']);
export const DISTANCE_FUNCTIONS: Readonly<Record<string, Metric>> = { l2_distance: 'l2', cosine_distance: 'cosine', dot_distance: 'dot' };
/** A count statement's result: one row, one BIGINT column `count`. */
export const COUNT_SCHEMA = new Schema([new Field('count', new Int64(), false)]);

export function isAggregate(e: Expr): boolean {
  return e.kind === 'call' && AGGREGATES.has(e.name);
}

function containsAggregate(e: Expr): boolean {
  return someNode(e, isAggregate);
}

function containsCall(e: Expr, name: string): boolean {
  return someNode(e, (x) => x.kind === 'call' && x.name === name);
}

function splitAnd(e: Expr | null): Expr[] {
  if (!e) return [];
  return e.kind === 'and' ? [...e.operands] : [e];
}

export function requireTable(catalog: PlanningCatalog, name: string): TableInfo {
  const t = catalog.table(name);
  if (!t) throw new NotFoundError(`table ${name} does not exist`);
  return t;
}

/** Builds the logical plan of a statement. `params` are read only for LIMIT / OFFSET counts. */
export function buildPlan(statement: Statement, catalog: PlanningCatalog, params: readonly unknown[], options: PlanOptions = {}): LogicalPlan {
  const b = new Builder(catalog, params, options);
  return b.statement(statement);
}

class Builder {
  constructor(
    private readonly catalog: PlanningCatalog,
    private readonly params: readonly unknown[],
    private readonly options: PlanOptions,
  ) {}

  statement(s: Statement): LogicalPlan {
    switch (s.kind) {
      case 'select':
        return this.select(s);
      case 'insert':
        return this.insert(s);
      case 'delete':
        return this.delete(s);
      case 'create_table':
        return node({ kind: 'create_table', table: s.table, columns: s.columns, primaryKey: s.primaryKey, regionSpec: regionSpecOf(s.table, s.options), ifNotExists: s.ifNotExists, schema: COUNT_SCHEMA });
      case 'drop_table':
        return node({ kind: 'drop_table', tables: s.tables, ifExists: s.ifExists, schema: COUNT_SCHEMA });
      case 'create_index':
        return this.createIndex(s);
      case 'drop_index':
        return node({ kind: 'drop_index', name: s.name, ifExists: s.ifExists, schema: COUNT_SCHEMA });
      case 'explain':
        return node({ kind: 'explain', input: this.statement(s.statement), analyze: s.analyze, schema: new Schema([new Field('plan', new Utf8(), false)]) });
    }
  }

  // ------------------------------------------------------------------------------------------
  // SELECT

  select(s: SelectStatement): LogicalPlan {
    const info = s.from ? requireTable(this.catalog, s.from.table) : null;
    const tableSchema = info?.schema ?? new Schema([]);
    // Output items, `*` expanded to the table's columns.
    const items: { expr: Expr; name: string }[] = [];
    for (const item of s.items as SelectItem[]) {
      if (item.kind === 'star') {
        if (!info) throw new InvalidError('SELECT * needs a FROM clause');
        for (const f of tableSchema.fields) items.push({ expr: col(f.name), name: f.name });
      } else {
        items.push({ expr: item.expr, name: item.alias ?? outputName(item.expr) });
      }
    }
    if (items.length === 0) throw new InvalidError('SELECT needs at least one output column');

    // ORDER BY keys: an ordinal or an output name refers to that output item (PostgreSQL).
    const orderExprs = s.orderBy.map((o) => this.resolveOutputRef(o.expr, items, tableSchema, 'ORDER BY'));
    const conjuncts = splitAnd(s.where);
    for (const c of conjuncts) {
      if (containsAggregate(c)) throw new InvalidError('aggregate functions are not allowed in WHERE');
    }
    const matches = conjuncts.filter((c) => c.kind === 'call' && c.name === 'match');
    const rest = conjuncts.filter((c) => !(c.kind === 'call' && c.name === 'match'));
    for (const c of rest) if (containsCall(c, 'match')) throw new InvalidError('match() must be a condition of its own in WHERE, AND-ed with the others (not inside OR, NOT or an expression)');
    for (const it of items) if (containsCall(it.expr, 'match')) throw new InvalidError('match() is a WHERE condition; select _score for the relevance');
    if (matches.length > 1) throw new InvalidError('one match() per query');

    const limit = this.count(s.limit, 'LIMIT');
    const offset = this.count(s.offset, 'OFFSET') ?? 0;

    // The source: a hybrid search, a text search (match() in WHERE) or a scan.
    let source: LogicalPlan;
    let pseudo: Record<string, Expr> = {};
    const first = orderExprs[0];
    if (first && first.kind === 'call' && first.name === 'rrf') {
      if (!info) throw new InvalidError('rrf() needs a FROM clause');
      source = this.hybrid(info, first, s, limit, offset, rest, matches);
      // The fused order is the search's own; the ORDER BY key becomes its score.
      orderExprs[0] = col('_relevance_score');
    } else if (matches.length === 1) {
      source = this.textSearch(info!, matches[0], null, null);
    } else {
      if (!info) {
        source = node({ kind: 'values', rows: [[]], schema: new Schema([]) });
      } else {
        source = node({ kind: 'scan', table: info.name, columns: tableSchema.fields.map((f) => f.name), filter: null, schema: tableSchema });
      }
    }
    // `_distance` without a vector search: the query's one distance call.
    if (source.kind !== 'hybrid_search') {
      const distanceCalls = [...orderExprs, ...items.map((i) => i.expr)].flatMap((e) => findCalls(e, (n) => n in DISTANCE_FUNCTIONS));
      const distinctCalls = new Map(distanceCalls.map((c) => [exprToString(c), c]));
      if (distinctCalls.size === 1) pseudo = { _distance: [...distinctCalls.values()][0] };
    }
    const withPseudo = (e: Expr) => replacePseudo(e, pseudo, source.schema);
    const filterExprs = rest.map(withPseudo);

    let plan: LogicalPlan = source;
    if (filterExprs.length > 0 && source.kind !== 'hybrid_search') {
      const predicate = checkExpr(and(...filterExprs), plan.schema);
      plan = node({ kind: 'filter', input: plan, predicate, schema: plan.schema });
    }

    let outputs: NamedExpr[] = items.map((i) => ({ expr: withPseudo(i.expr), name: i.name }));
    let sortExprs = orderExprs.map(withPseudo);
    let having = s.having ? withPseudo(s.having) : null;

    const aggregated = s.groupBy.length > 0 || outputs.some((o) => containsAggregate(o.expr)) || (having !== null) || sortExprs.some(containsAggregate);
    if (aggregated) {
      const groupExprs = s.groupBy.map((g) => withPseudo(this.resolveOutputRef(g, items, tableSchema, 'GROUP BY')));
      const r = this.aggregate(plan, groupExprs, outputs, sortExprs, having);
      plan = r.plan;
      outputs = r.outputs;
      sortExprs = r.sortExprs;
      having = null;
    } else if (s.having) {
      throw new InvalidError('HAVING needs GROUP BY or an aggregate');
    }

    // Items and hidden sort keys, under internal names.
    const projected: NamedExpr[] = outputs.map((o, i) => ({ expr: o.expr, name: `__c${i}` }));
    const keys: SortKey[] = [];
    sortExprs.forEach((e, i) => {
      const o = s.orderBy[i];
      const same = projected.findIndex((p, j) => j < outputs.length && exprToString(p.expr) === exprToString(e));
      let name: string;
      if (same >= 0) name = projected[same].name;
      else {
        if (s.distinct) throw new InvalidError('for SELECT DISTINCT, ORDER BY expressions must appear in the select list');
        name = `__s${i}`;
        projected.push({ expr: e, name });
      }
      keys.push({ expr: col(name), descending: o.descending, nullsFirst: o.nullsFirst ?? o.descending });
    });
    plan = this.project(plan, projected);
    if (s.distinct) {
      const groups = projected.map((p) => ({ expr: col(p.name), name: p.name }));
      plan = node({ kind: 'aggregate', input: plan, groups, aggregates: [], schema: plan.schema });
    }
    if (keys.length > 0) plan = node({ kind: 'sort', input: plan, keys, schema: plan.schema });
    if (limit !== null || offset > 0) plan = node({ kind: 'limit', input: plan, limit, offset, schema: plan.schema });
    return this.project(
      plan,
      outputs.map((o, i) => ({ expr: col(`__c${i}`), name: o.name })),
    );
  }

  /** A name or ordinal in ORDER BY / GROUP BY that refers to an output item. */
  private resolveOutputRef(e: Expr, items: readonly { expr: Expr; name: string }[], table: Schema, clause: string): Expr {
    if (e.kind === 'literal' && typeof e.value === 'number' && Number.isInteger(e.value)) {
      if (e.value < 1 || e.value > items.length) throw new InvalidError(`${clause} position ${e.value} is not in the select list (1..${items.length})`);
      return items[e.value - 1].expr;
    }
    if (e.kind === 'column') {
      const isTableColumn = table.fields.some((f) => f.name === e.name || f.name.toLowerCase() === e.name.toLowerCase());
      // PostgreSQL: ORDER BY prefers an output name; GROUP BY prefers an input column.
      if (clause === 'ORDER BY' || !isTableColumn) {
        const named = items.filter((i) => i.name === e.name);
        if (named.length > 1 && !named.every((n) => exprToString(n.expr) === exprToString(named[0].expr)))
          throw new InvalidError(`${clause} "${e.name}" is ambiguous`);
        if (named.length >= 1) return named[0].expr;
      }
    }
    return e;
  }

  private count(e: Expr | null, clause: string): number | null {
    if (!e) return null;
    let v: unknown;
    if (e.kind === 'literal') v = e.value;
    else if (e.kind === 'param') {
      if (e.index > this.params.length) throw new InvalidError(`${clause} uses $${e.index} but only ${this.params.length} parameter(s) were given`);
      v = this.params[e.index - 1];
    } else throw new InvalidError(`${clause} must be a constant or a parameter`);
    if (v === null) return null;
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new InvalidError(`${clause} must be a non-negative integer, got ${String(v)}`);
    return n;
  }

  private project(input: LogicalPlan, items: readonly NamedExpr[]): LogicalPlan {
    const checked = items.map((i) => ({ expr: checkExpr(i.expr, input.schema), name: i.name }));
    const fields = checked.map((i) => {
      const existing = i.expr.kind === 'column' ? input.schema.fields.find((f) => f.name === (i.expr as { name: string }).name) : undefined;
      const type: DataType = existing ? existing.type : inferType(i.expr, input.schema, this.params);
      return new Field(i.name, type, true);
    });
    return node({ kind: 'project', input, items: checked, schema: new Schema(fields) });
  }

  private aggregate(
    input: LogicalPlan,
    groupExprs: Expr[],
    outputs: NamedExpr[],
    sortExprs: Expr[],
    having: Expr | null,
  ): { plan: LogicalPlan; outputs: NamedExpr[]; sortExprs: Expr[] } {
    const groups: NamedExpr[] = groupExprs.map((g, i) => {
      if (containsAggregate(g)) throw new InvalidError('aggregate functions are not allowed in GROUP BY');
      return { expr: checkExpr(g, input.schema), name: `__g${i}` };
    });
    const aggregates: AggregateCall[] = [];
    const aggKeys = new Map<string, string>();
    const collect = (e: Expr) => {
      for (const c of findCalls(e, (n) => AGGREGATES.has(n))) {
        const key = exprToString(c);
        if (aggKeys.has(key)) continue;
        if (c.kind !== 'call') continue;
        for (const a of c.args) if (containsAggregate(a)) throw new InvalidError('aggregate function calls cannot be nested');
        const name = `__a${aggregates.length}`;
        aggKeys.set(key, name);
        aggregates.push(aggregateCall(c, name, input.schema));
      }
    };
    outputs.forEach((o) => collect(o.expr));
    sortExprs.forEach(collect);
    if (having) collect(having);
    const groupKeys = new Map(groups.map((g, i) => [exprToString(g.expr), `__g${i}`]));
    const groupByNames = new Map(groupExprs.map((g, i) => [exprToString(g), `__g${i}`]));
    const rewrite = (e: Expr, where: string): Expr => {
      const out = rewriteTopDown(e, (x) => {
        const k = exprToString(x);
        const a = aggKeys.get(k);
        if (a && isAggregate(x)) return col(a);
        const g = groupKeys.get(k) ?? groupByNames.get(k) ?? (x.kind === 'column' ? groupKeys.get(exprToString(checkExprSafe(x, input.schema))) : undefined);
        if (g) return col(g);
        return undefined;
      });
      for (const c of columnsOf(out)) {
        if (!c.startsWith('__g') && !c.startsWith('__a'))
          throw new InvalidError(`column ${c} must appear in the GROUP BY clause or be used in an aggregate function (${where})`);
      }
      return out;
    };
    const fields = [
      ...groups.map((g) => new Field(g.name, inferType(g.expr, input.schema, this.params), true)),
      ...aggregates.map((a) => new Field(a.name, aggregateType(a, input.schema, this.params), true)),
    ];
    let plan: LogicalPlan = node({ kind: 'aggregate', input, groups, aggregates, schema: new Schema(fields) });
    if (having) {
      const predicate = checkExpr(rewrite(having, 'HAVING'), plan.schema);
      plan = node({ kind: 'filter', input: plan, predicate, schema: plan.schema });
    }
    return {
      plan,
      outputs: outputs.map((o) => ({ expr: rewrite(o.expr, 'select list'), name: o.name })),
      sortExprs: sortExprs.map((e) => rewrite(e, 'ORDER BY')),
    };
  }

  // ------------------------------------------------------------------------------------------
  // Searches

  textSearch(info: TableInfo, match: Expr, k: number | null, filter: Expr | null): TextSearchPlan {
    if (match.kind !== 'call' || match.args.length !== 2) throw new InvalidError("match() takes a text column and a query string: match(body, 'quick fox')");
    const [c, q] = match.args;
    if (c.kind !== 'column') throw new InvalidError('the first argument of match() must be a column');
    const field = resolveColumn(info, c.name);
    const def = info.indexes.find((d) => d.type === 'fts' && d.column === field.name);
    if (!def) throw new InvalidError(`match(): no full-text index on column ${field.name} of table ${info.name}; create one with CREATE INDEX ON ${info.name} USING fts (${field.name})`);
    if (!(q.kind === 'literal' && typeof q.value === 'string') && q.kind !== 'param') throw new InvalidError('the query of match() must be a string literal or a parameter');
    const schema = new Schema([...info.schema.fields, new Field('_score', new Float32Type(), false)]);
    return node({ kind: 'text_search', table: info.name, columns: info.schema.fields.map((f) => f.name), column: field.name, query: q, k, filter, schema });
  }

  private hybrid(info: TableInfo, rrf: Expr, s: SelectStatement, limit: number | null, offset: number, rest: Expr[], matches: Expr[]): LogicalPlan {
    if (rrf.kind !== 'call' || rrf.args.length !== 2) throw new InvalidError("rrf() fuses a distance and a match: ORDER BY rrf(l2_distance(embedding, $1), match(body, 'fox')) DESC LIMIT 10");
    if (!s.orderBy[0].descending) throw new InvalidError('order hybrid results by rrf(…) DESC (higher fused relevance first)');
    if (limit === null) throw new InvalidError('a hybrid search needs a LIMIT');
    if (matches.length > 0) throw new InvalidError('with rrf(), give the full-text query inside rrf(), not as a WHERE match()');
    if (s.groupBy.length > 0) throw new InvalidError('a hybrid search cannot be grouped');
    const [d, m] = rrf.args;
    if (d.kind !== 'call' || !(d.name in DISTANCE_FUNCTIONS) || m.kind !== 'call' || m.name !== 'match')
      throw new InvalidError('rrf() takes a distance call and a match() call, in that order');
    const filter = rest.length ? checkExpr(and(...rest), info.schema) : null;
    const k = limit + offset;
    const vector = this.vectorSearch(info, d, k, filter);
    const text = this.textSearch(info, m, k, filter);
    const schema = new Schema([
      ...info.schema.fields,
      new Field('_distance', new Float32Type(), true),
      new Field('_score', new Float32Type(), true),
      new Field('_relevance_score', new Float32Type(), false),
    ]);
    return node({ kind: 'hybrid_search', vector, text, k, schema });
  }

  /** A VectorSearch node for `distance(column, query)` (also used by the vector rule). */
  vectorSearch(info: TableInfo, distance: Expr, k: number, filter: Expr | null): VectorSearchPlan {
    const v = vectorCall(info, distance);
    if (!v) throw new InvalidError(`${exprToString(distance)}: a distance takes a vector column of ${info.name} and a query vector (a $n parameter, ARRAY[…] or '[…]')`);
    const schema = new Schema([...info.schema.fields, new Field('_distance', new Float32Type(), false)]);
    return node({
      kind: 'vector_search',
      table: info.name,
      columns: info.schema.fields.map((f) => f.name),
      column: v.column,
      query: v.query,
      metric: v.metric,
      k,
      filter,
      nprobes: this.options.nprobes ?? null,
      refine: this.options.refine ?? null,
      schema,
    });
  }

  // ------------------------------------------------------------------------------------------
  // INSERT, DELETE, CREATE INDEX

  private insert(s: InsertStatement): LogicalPlan {
    const info = requireTable(this.catalog, s.table);
    const target = s.columns ? s.columns.map((c) => resolveColumn(info, c).name) : info.schema.fields.map((f) => f.name);
    const dup = target.find((c, i) => target.indexOf(c) !== i);
    if (dup) throw new InvalidError(`column ${dup} is given twice in INSERT`);
    for (const k of info.primaryKey) if (!target.includes(k)) throw new InvalidError(`INSERT into ${info.name} must give the primary key column ${k}`);
    let input: LogicalPlan;
    if (s.values) {
      s.values.forEach((row, r) => {
        if (row.length !== target.length) throw new InvalidError(`INSERT row ${r + 1} has ${row.length} value(s) for ${target.length} column(s)`);
        for (const e of row) if (columnsOf(e).length > 0) throw new InvalidError(`INSERT … VALUES takes constants and parameters, not columns (${exprToString(e)})`);
      });
      const first = s.values[0];
      const types = first.map((e, i) => {
        const field = resolveColumn(info, target[i]);
        return field.type;
      });
      input = node({ kind: 'values', rows: s.values, schema: new Schema(target.map((name, i) => new Field(name, types[i], true))) });
    } else {
      input = this.select(s.select!);
      if (input.schema.fields.length !== target.length) throw new InvalidError(`INSERT … SELECT gives ${input.schema.fields.length} column(s) for ${target.length}`);
      // Columns by position: the SELECT's last Project renames its internal columns; rename
      // them to the target columns instead (output names may repeat, e.g. two `?column?`).
      const last = input;
      if (last.kind !== 'project') throw new InvalidError('INSERT … SELECT: unexpected plan shape');
      input = this.project(
        last.input,
        last.items.map((item, i) => ({ expr: item.expr, name: target[i] })),
      );
    }
    // The Insert node converts to the table's types (CAST's rules) and fills missing columns with NULL.
    return node({ kind: 'insert', table: info.name, input, schema: COUNT_SCHEMA });
  }

  private delete(s: DeleteStatement): LogicalPlan {
    const info = requireTable(this.catalog, s.table);
    if (s.where && containsAggregate(s.where)) throw new InvalidError('aggregate functions are not allowed in WHERE');
    const conj = splitAnd(s.where);
    const matches = conj.filter((c) => c.kind === 'call' && c.name === 'match');
    const rest = conj.filter((c) => !(c.kind === 'call' && c.name === 'match'));
    let input: LogicalPlan = matches.length
      ? this.textSearch(info, matches[0], null, null)
      : node({ kind: 'scan', table: info.name, columns: info.schema.fields.map((f) => f.name), filter: null, schema: info.schema });
    if (rest.length) input = node({ kind: 'filter', input, predicate: checkExpr(and(...rest), input.schema), schema: input.schema });
    input = this.project(
      input,
      info.primaryKey.map((k) => ({ expr: col(k), name: k })),
    );
    return node({ kind: 'delete', table: info.name, input, schema: COUNT_SCHEMA });
  }

  private createIndex(s: CreateIndexStatement): LogicalPlan {
    const info = requireTable(this.catalog, s.table);
    const field = resolveColumn(info, s.column);
    const o = s.options;
    const known: Record<string, string[]> = { ivf_pq: ['metric', 'partitions', 'num_partitions', 'sub_vectors', 'num_sub_vectors', 'subvectors'], fts: ['stem', 'stop_words', 'stopwords'], scalar: [] };
    for (const key of Object.keys(o)) if (!known[s.method].includes(key)) throw new InvalidError(`CREATE INDEX … USING ${s.method}: unknown option ${key}${known[s.method].length ? ` (known: ${known[s.method].join(', ')})` : ''}`);
    const num = (v: unknown, key: string) => {
      if (v === undefined) return undefined;
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new InvalidError(`CREATE INDEX: ${key} must be a positive integer`);
      return v;
    };
    const bool = (v: unknown, key: string) => {
      if (v === undefined) return undefined;
      if (typeof v !== 'boolean') throw new InvalidError(`CREATE INDEX: ${key} must be true or false`);
      return v;
    };
    const options =
      s.method === 'ivf_pq'
        ? {
            type: 'ivf_pq' as const,
            metric: o.metric as Metric | undefined,
            partitions: num(o.partitions ?? o.num_partitions, 'partitions'),
            subVectors: num(o.sub_vectors ?? o.num_sub_vectors ?? o.subvectors, 'sub_vectors'),
          }
        : s.method === 'fts'
          ? { type: 'fts' as const, stem: bool(o.stem, 'stem'), stopWords: bool(o.stop_words ?? o.stopwords, 'stop_words') }
          : { type: 'scalar' as const };
    return node({ kind: 'create_index', table: info.name, column: field.name, options, name: s.name, ifNotExists: s.ifNotExists, schema: COUNT_SCHEMA });
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** CREATE TABLE's `WITH (region_spec = 'bucket' | 'identity' | 'unsharded', region_column = …, buckets = N)`. */
function regionSpecOf(table: string, o: Readonly<Record<string, string | number | boolean>>): RegionSpec | undefined {
  const known = ['region_spec', 'region_column', 'buckets'];
  for (const k of Object.keys(o)) if (!known.includes(k)) throw new InvalidError(`CREATE TABLE ${table}: unknown option ${k} (known: ${known.join(', ')})`);
  if (o.region_spec === undefined) {
    if (o.region_column !== undefined || o.buckets !== undefined) throw new InvalidError(`CREATE TABLE ${table}: region_column and buckets need region_spec = 'bucket' or 'identity'`);
    return undefined;
  }
  const column = o.region_column === undefined ? undefined : String(o.region_column);
  switch (o.region_spec) {
    case 'unsharded':
      return { kind: 'unsharded' };
    case 'bucket':
      if (typeof o.buckets !== 'number') throw new InvalidError(`CREATE TABLE ${table}: region_spec = 'bucket' needs buckets = N`);
      return { kind: 'bucket', column, buckets: o.buckets } as RegionSpec;
    case 'identity':
      if (!column) throw new InvalidError(`CREATE TABLE ${table}: region_spec = 'identity' needs region_column`);
      return { kind: 'identity', column };
    default:
      throw new InvalidError(`CREATE TABLE ${table}: region_spec must be 'unsharded', 'bucket' or 'identity', got ${String(o.region_spec)}`);
  }
}

/** PostgreSQL's output column name for an unaliased expression. */
export function outputName(e: Expr): string {
  switch (e.kind) {
    case 'column':
      return e.name;
    case 'call':
      return e.name;
    case 'cast':
      return e.operand.kind === 'column' ? e.operand.name : e.to;
    case 'case':
      return 'case';
    default:
      return '?column?';
  }
}

export function resolveColumn(info: TableInfo, name: string): Field {
  const exact = info.schema.fields.find((f) => f.name === name);
  if (exact) return exact;
  const folded = info.schema.fields.filter((f) => f.name.toLowerCase() === name.toLowerCase());
  if (folded.length === 1) return folded[0];
  throw new InvalidError(`column ${name} does not exist in table ${info.name} (columns: ${info.schema.fields.map((f) => f.name).join(', ')})`);
}

function findCalls(e: Expr, pred: (name: string) => boolean): Expr[] {
  const out: Expr[] = [];
  someNode(e, (x) => {
    if (x.kind === 'call' && pred(x.name)) out.push(x);
    return false;
  });
  return out;
}

/** Replaces pseudo-column references (`_distance` → the query's distance call). */
function replacePseudo(e: Expr, pseudo: Record<string, Expr>, schema: Schema): Expr {
  if (Object.keys(pseudo).length === 0) return e;
  return rewriteTopDown(e, (x) => (x.kind === 'column' && pseudo[x.name] && !schema.fields.some((f) => f.name === x.name) ? pseudo[x.name] : undefined));
}

function checkExprSafe(e: Expr, schema: Schema): Expr {
  try {
    return checkExpr(e, schema);
  } catch {
    return e;
  }
}

function aggregateCall(c: Expr, name: string, schema: Schema): AggregateCall {
  if (c.kind !== 'call') throw new InvalidError('not an aggregate');
  if (c.star) {
    if (c.name !== 'count') throw new InvalidError(`${c.name}(*) is not a function; did you mean count(*)?`);
    return { fn: 'count_star', arg: null, distinct: false, name };
  }
  if (c.args.length !== 1) throw new InvalidError(`${c.name}() takes one argument`);
  const arg = checkExpr(c.args[0], schema);
  return { fn: c.name as AggregateFn, arg, distinct: c.distinct, name };
}

function aggregateType(a: AggregateCall, schema: Schema, params: readonly unknown[]): DataType {
  if (a.fn === 'count' || a.fn === 'count_star') return new Int64();
  const t = inferType(a.arg!, schema, params);
  const typeId = t.typeId as number;
  // Arrow Type ids: Int = 2, Float = 3.
  if (a.fn === 'avg') {
    if (typeId !== 2 && typeId !== 3) throw new InvalidError(`avg() needs a numeric argument, got ${String(t)}`);
    return new Float64Type();
  }
  if (a.fn === 'sum') {
    if (typeId === 2) return new Int64();
    if (typeId === 3) return new Float64Type();
    throw new InvalidError(`sum() needs a numeric argument, got ${String(t)}`);
  }
  if ((t as { listSize?: number }).listSize !== undefined) throw new InvalidError(`${a.fn}() cannot compare vectors`);
  return t;
}

/** `distance(column, query)` (either order) → its parts, or null when it is not that shape. */
export function vectorCall(info: TableInfo, e: Expr): { column: string; query: Expr; metric: Metric } | null {
  if (e.kind !== 'call' || !(e.name in DISTANCE_FUNCTIONS) || e.args.length !== 2) return null;
  const [a, b] = e.args;
  const isQuery = (x: Expr) => x.kind === 'param' || (x.kind === 'literal' && typeof x.value === 'string') || (x.kind === 'call' && x.name === 'array');
  const pick = a.kind === 'column' && isQuery(b) ? { c: a, q: b } : b.kind === 'column' && isQuery(a) ? { c: b, q: a } : null;
  if (!pick || pick.c.kind !== 'column') return null;
  const field = resolveColumn(info, pick.c.name);
  return { column: field.name, query: pick.q, metric: DISTANCE_FUNCTIONS[e.name] };
}

