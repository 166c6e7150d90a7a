/**
 * Logical plan nodes: what a statement computes, before any choice of how.
 *
 * Kysely's operation nodes, for queries: frozen plain objects with a string `kind` (a
 * discriminated union), made by the factories below, each carrying its output Arrow `schema` so
 * rules and the physical planner never re-derive types. Rules (rules.ts) are functions from
 * plan to plan built with ordinary spreads; `visitPlan` makes a forgotten kind a compile error
 * wherever an exhaustive visitor table is written.
 *
 * Expressions inside a node refer to the columns of that node's input by name (already
 * resolved to the exact field names by the builder); `$n` parameters stay parameters, so a plan
 * is independent of the values bound, except for LIMIT / OFFSET counts and search parameters
 * the builder had to read.
 */
import type { Schema } from 'apache-arrow';
import type { Expr } from '../exec/expr/expr.js';
import type { CreateIndexOptions } from '../src/index/index-def.js';
import type { Metric } from '../src/index/vector/distance.js';
import type { ColumnDefinition } from '../src/sql/statement.js';
import type { RegionSpec } from '../src/region/region-spec.js';

export interface NamedExpr {
  readonly expr: Expr;
  readonly name: string;
}

export interface SortKey {
  readonly expr: Expr;
  readonly descending: boolean;
  /** Resolved: PostgreSQL's default is NULLS LAST ascending, NULLS FIRST descending. */
  readonly nullsFirst: boolean;
}

export type AggregateFn = 'count' | 'count_star' | 'sum' | 'avg' | 'min' | 'max';

export interface AggregateCall {
  readonly fn: AggregateFn;
  readonly arg: Expr | null;
  readonly distinct: boolean;
  readonly name: string;
}

/** Reads the live rows of a table (newest version per key, no tombstones), `filter` applied. */
export interface ScanPlan {
  readonly kind: 'scan';
  readonly table: string;
  /** The table columns produced, in order. */
  readonly columns: readonly string[];
  /** A prefilter over table columns, applied after key dedup (null = none). */
  readonly filter: Expr | null;
  readonly schema: Schema;
}

export interface VectorSearchPlan {
  readonly kind: 'vector_search';
  readonly table: string;
  readonly columns: readonly string[];
  /** The vector column searched. */
  readonly column: string;
  /** The query vector: a `$n` parameter, `ARRAY[…]` or a '[…]' literal. */
  readonly query: Expr;
  readonly metric: Metric;
  /** Nearest rows wanted (LIMIT + OFFSET). */
  readonly k: number;
  readonly filter: Expr | null;
  readonly nprobes: number | null;
  readonly refine: number | null;
  /** Table columns + `_distance`. */
  readonly schema: Schema;
}

export interface TextSearchPlan {
  readonly kind: 'text_search';
  readonly table: string;
  readonly columns: readonly string[];
  readonly column: string;
  /** The query string expression (a literal or `$n`). */
  readonly query: Expr;
  /** Best rows wanted, or null for every matching row. */
  readonly k: number | null;
  readonly filter: Expr | null;
  /** Table columns + `_score`. */
  readonly schema: Schema;
}

export interface HybridSearchPlan {
  readonly kind: 'hybrid_search';
  readonly vector: VectorSearchPlan;
  readonly text: TextSearchPlan;
  readonly k: number;
  /** Table columns + `_distance`, `_score`, `_relevance_score`. */
  readonly schema: Schema;
}

export interface FilterPlan {
  readonly kind: 'filter';
  readonly input: LogicalPlan;
  readonly predicate: Expr;
  readonly schema: Schema;
}

export interface ProjectPlan {
  readonly kind: 'project';
  readonly input: LogicalPlan;
  readonly items: readonly NamedExpr[];
  readonly schema: Schema;
}

export interface AggregatePlan {
  readonly kind: 'aggregate';
  readonly input: LogicalPlan;
  readonly groups: readonly NamedExpr[];
  readonly aggregates: readonly AggregateCall[];
  /** Group columns, then aggregate columns. */
  readonly schema: Schema;
}

export interface SortPlan {
  readonly kind: 'sort';
  readonly input: LogicalPlan;
  readonly keys: readonly SortKey[];
  readonly schema: Schema;
}

export interface LimitPlan {
  readonly kind: 'limit';
  readonly input: LogicalPlan;
  /** null = no limit (OFFSET only). */
  readonly limit: number | null;
  readonly offset: number;
  readonly schema: Schema;
}

/** Sort + Limit fused: keep the best `limit + offset` rows, emit from `offset`. */
export interface TopKPlan {
  readonly kind: 'top_k';
  readonly input: LogicalPlan;
  readonly keys: readonly SortKey[];
  readonly limit: number;
  readonly offset: number;
  readonly schema: Schema;
}

export interface ValuesPlan {
  readonly kind: 'values';
  /** Constant expressions, one list per row. */
  readonly rows: readonly (readonly Expr[])[];
  readonly schema: Schema;
}

export interface InsertPlan {
  readonly kind: 'insert';
  readonly table: string;
  /** Rows to write, with the table's columns (missing ones NULL), already cast to its types. */
  readonly input: LogicalPlan;
  readonly schema: Schema;
}

export interface DeletePlan {
  readonly kind: 'delete';
  readonly table: string;
  /** Rows whose keys are deleted: a scan of the key columns with the predicate. */
  readonly input: LogicalPlan;
  readonly schema: Schema;
}

export interface CreateTablePlan {
  readonly kind: 'create_table';
  readonly table: string;
  readonly columns: readonly ColumnDefinition[];
  readonly primaryKey: readonly string[];
  readonly regionSpec: RegionSpec | undefined;
  readonly ifNotExists: boolean;
  readonly schema: Schema;
}

export interface DropTablePlan {
  readonly kind: 'drop_table';
  readonly tables: readonly string[];
  readonly ifExists: boolean;
  readonly schema: Schema;
}

export interface CreateIndexPlan {
  readonly kind: 'create_index';
  readonly table: string;
  readonly column: string;
  readonly options: CreateIndexOptions;
  readonly name: string | null;
  readonly ifNotExists: boolean;
  readonly schema: Schema;
}

export interface DropIndexPlan {
  readonly kind: 'drop_index';
  readonly name: string;
  readonly ifExists: boolean;
  readonly schema: Schema;
}

export interface ExplainPlan {
  readonly kind: 'explain';
  readonly input: LogicalPlan;
  readonly analyze: boolean;
  readonly schema: Schema;
}

export type LogicalPlan =
  | ScanPlan
  | VectorSearchPlan
  | TextSearchPlan
  | HybridSearchPlan
  | FilterPlan
  | ProjectPlan
  | AggregatePlan
  | SortPlan
  | LimitPlan
  | TopKPlan
  | ValuesPlan
  | InsertPlan
  | DeletePlan
  | CreateTablePlan
  | DropTablePlan
  | CreateIndexPlan
  | DropIndexPlan
  | ExplainPlan;

export type PlanKind = LogicalPlan['kind'];

/** One handler per node kind: adding a kind makes every visitor table a compile error. */
export type PlanVisitor<R> = { readonly [K in PlanKind]: (plan: Extract<LogicalPlan, { kind: K }>) => R };

export function visitPlan<R>(plan: LogicalPlan, visitor: PlanVisitor<R>): R {
  return (visitor[plan.kind] as (p: LogicalPlan) => R)(plan);
}

/** Freezes a node (the factories of builder.ts and rules.ts go through this). */
export function node<P extends LogicalPlan>(plan: P): P {
  return Object.freeze(plan);
}

/** The direct inputs of a node. */
export function inputsOf(plan: LogicalPlan): readonly LogicalPlan[] {
  switch (plan.kind) {
    case 'filter':
    case 'project':
    case 'aggregate':
    case 'sort':
    case 'limit':
    case 'top_k':
    case 'insert':
    case 'delete':
    case 'explain':
      return [plan.input];
    case 'hybrid_search':
      return [plan.vector, plan.text];
    default:
      return [];
  }
}
