/**
 * The typed AST facade: the statements the planner reads, independent of node-sql-parser's
 * untyped output. parse.ts builds these from the parser's AST (and from Quiver's own grammar for
 * the forms the parser cannot read: `EXPLAIN`, `CREATE INDEX … USING ivf_pq|fts`, `DROP INDEX`).
 *
 * Expressions are `exec/expr` trees, unchecked: names are resolved and types checked by the
 * planner against the table the statement reads, so a cached statement can meet a table whose
 * schema changed since (dropped and re-created) and still get a correct error.
 */
import type { DataType } from 'apache-arrow';
import type { Expr } from '../../exec/expr/expr.js';

export interface TableRef {
  readonly table: string;
  readonly alias: string | null;
}

export type SelectItem =
  | { readonly kind: 'star'; readonly qualifier: string | null }
  | {
      readonly kind: 'expr';
      readonly expr: Expr;
      readonly alias: string | null;
    };

export interface OrderItem {
  readonly expr: Expr;
  readonly descending: boolean;
  /** As written; null = PostgreSQL's default (last ascending, first descending). */
  readonly nullsFirst: boolean | null;
}

export interface SelectStatement {
  readonly kind: 'select';
  readonly distinct: boolean;
  readonly items: readonly SelectItem[];
  readonly from: TableRef | null;
  readonly where: Expr | null;
  readonly groupBy: readonly Expr[];
  readonly having: Expr | null;
  readonly orderBy: readonly OrderItem[];
  readonly limit: Expr | null;
  readonly offset: Expr | null;
}

export interface InsertStatement {
  readonly kind: 'insert';
  readonly table: string;
  /** Named target columns, or null for the table's columns in order. */
  readonly columns: readonly string[] | null;
  readonly values: readonly (readonly Expr[])[] | null;
  readonly select: SelectStatement | null;
}

export interface DeleteStatement {
  readonly kind: 'delete';
  readonly table: string;
  readonly where: Expr | null;
}

export interface ColumnDefinition {
  readonly name: string;
  readonly type: DataType;
  /** The type as written, for messages. */
  readonly typeText: string;
  readonly notNull: boolean;
  readonly primaryKey: boolean;
}

export interface CreateTableStatement {
  readonly kind: 'create_table';
  readonly table: string;
  readonly ifNotExists: boolean;
  readonly columns: readonly ColumnDefinition[];
  /** From a column's PRIMARY KEY or a table-level PRIMARY KEY (…). */
  readonly primaryKey: readonly string[];
  /** `WITH (region_spec = 'bucket', region_column = 'id', buckets = 8)`, keys lower-cased. */
  readonly options: Readonly<Record<string, string | number | boolean>>;
}

export interface DropTableStatement {
  readonly kind: 'drop_table';
  readonly tables: readonly string[];
  readonly ifExists: boolean;
}

export type IndexMethod = 'ivf_pq' | 'fts' | 'scalar';

export interface CreateIndexStatement {
  readonly kind: 'create_index';
  readonly name: string | null;
  readonly table: string;
  readonly column: string;
  readonly method: IndexMethod;
  /** `WITH (metric = 'cosine', partitions = 256, …)`, keys lower-cased. */
  readonly options: Readonly<Record<string, string | number | boolean>>;
  readonly ifNotExists: boolean;
}

export interface DropIndexStatement {
  readonly kind: 'drop_index';
  readonly name: string;
  readonly ifExists: boolean;
}

export interface ExplainStatement {
  readonly kind: 'explain';
  readonly analyze: boolean;
  readonly statement: Statement;
}

export type Statement =
  | SelectStatement
  | InsertStatement
  | DeleteStatement
  | CreateTableStatement
  | DropTableStatement
  | CreateIndexStatement
  | DropIndexStatement
  | ExplainStatement;

export type StatementKind = Statement['kind'];
