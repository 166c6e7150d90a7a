/**
 * How EXPLAIN names columns. The planner gives intermediate columns internal names (`__c0` for a
 * select item, `__s0` a hidden sort key, `__g0` a group key, `__arg0` an aggregate's argument,
 * `__a0` an aggregate; planner/builder.ts) so odd or duplicate user names never confuse
 * resolution. A plan printed with them (`TopK … by __c1`, `Filter: __a0 > 0`) makes the reader
 * trace every name down the tree, so EXPLAIN shows each one as the expression it stands for, in
 * terms of the columns below it — `TopK … by _score`, `Filter: count(*) > 0` — as PostgreSQL's
 * EXPLAIN VERBOSE does. Display only: the nodes run on the internal names.
 */
import { col, exprToString, mapExpr, type Expr } from '../expr/expr.js';

/** What `ExplainNames.of` reads of an exec node (exec-node.ts's `ExecNode` has both). */
interface NamingNode {
  readonly children: readonly NamingNode[];
  defineNames?(names: ExplainNames): void;
}

/** The planner's internal column names (planner/builder.ts). */
const INTERNAL_NAME = /^__[a-z]+\d+$/;

export class ExplainNames {
  /** Internal name → the expression it stands for, itself free of internal names. */
  private readonly defs = new Map<string, Expr>();

  /** No renaming: every column shown by its own name. */
  static readonly NONE = new ExplainNames();

  /**
   * The names a tree defines: every internal-named item of a Project (and aggregate of a
   * HashAggregate) below the root. The root's own items are the statement's output columns,
   * named by the user even when a name looks internal.
   */
  static of(root: NamingNode): ExplainNames {
    const names = new ExplainNames();
    const walk = (n: NamingNode) => {
      for (const c of n.children) walk(c);
      if (n !== root) n.defineNames?.(names);
    };
    walk(root);
    return names;
  }

  /** Records that column `name` holds `expr` (over the columns below it). */
  define(name: string, expr: Expr): void {
    if (this !== ExplainNames.NONE && INTERNAL_NAME.test(name)) this.defs.set(name, this.inline(expr));
  }

  /** True when EXPLAIN shows `name` as an expression rather than by name. */
  isInternal(name: string): boolean {
    return this.defs.has(name);
  }

  /** `e` with every internal column replaced by what it stands for. */
  inline(e: Expr): Expr {
    if (this.defs.size === 0) return e;
    return mapExpr(e, (x) => (x.kind === 'column' ? this.defs.get(x.name) ?? x : x));
  }

  /** SQL text of `e` as EXPLAIN shows it. */
  expr(e: Expr): string {
    return exprToString(this.inline(e));
  }

  /** SQL text of a reference to column `name`. */
  column(name: string): string {
    return this.expr(col(name));
  }

  /** `expr AS name`, or just the expression when `name` is internal or says the same. */
  item(expr: Expr, name: string): string {
    const text = this.expr(expr);
    return this.isInternal(name) || text === exprToString(col(name)) ? text : `${text} AS ${name}`;
  }
}
