/**
 * Scalar expression trees: the values WHERE clauses, projections, GROUP BY keys and ORDER BY
 * keys are made of.
 *
 * Nodes are immutable, frozen plain objects with a string `kind` (a discriminated union), made
 * only by the factory functions below — the same shape as the logical plan nodes, so a planner
 * rule can rewrite a filter with ordinary object spreads, and `visitExpr` makes a forgotten
 * node kind a compile error wherever an exhaustive visitor is written.
 *
 * The tree is untyped on purpose: `checkExpr` / `checkFilter` resolve names and check types
 * against an Arrow schema, `inferType` gives a node's result type (check.ts, types.ts), and the
 * evaluator coerces literals and `$n` parameters to the type they meet (evaluate.ts). Booleans
 * are SQL three-valued throughout.
 */

/** A literal as written: numbers (integers beyond 2^53 as bigint), strings, booleans, NULL. */
export type LiteralValue = number | bigint | string | boolean | null;

export type CompareOp = '=' | '<>' | '<' | '<=' | '>' | '>=';

export interface ColumnExpr {
  readonly kind: 'column';
  readonly name: string;
}
export interface LiteralExpr {
  readonly kind: 'literal';
  readonly value: LiteralValue;
  /** Set for `DATE '...'` / `TIMESTAMP '...'`; the value is then the string as written. */
  readonly temporal?: 'date' | 'timestamp';
  /**
   * Set for a numeric literal written with a decimal point or an exponent (`2.0`, `1e3`): it is
   * typed double precision even when its value is integral. Non-integral numbers are double
   * precision anyway.
   */
  readonly float?: true;
}
export interface ParamExpr {
  readonly kind: 'param';
  /** 1-based, as in `$1`. */
  readonly index: number;
}
export interface CompareExpr {
  readonly kind: 'compare';
  readonly op: CompareOp;
  readonly left: Expr;
  readonly right: Expr;
}
export interface AndExpr {
  readonly kind: 'and';
  /** Two or more; nested ANDs are flattened by `and()`. */
  readonly operands: readonly Expr[];
}
export interface OrExpr {
  readonly kind: 'or';
  readonly operands: readonly Expr[];
}
export interface NotExpr {
  readonly kind: 'not';
  readonly operand: Expr;
}
export interface InListExpr {
  readonly kind: 'in';
  readonly operand: Expr;
  readonly list: readonly Expr[];
  /** NOT IN */
  readonly negated: boolean;
}
export interface BetweenExpr {
  readonly kind: 'between';
  readonly operand: Expr;
  readonly low: Expr;
  readonly high: Expr;
  /** NOT BETWEEN */
  readonly negated: boolean;
}
export interface IsExpr {
  readonly kind: 'is';
  readonly operand: Expr;
  /** IS NULL, IS TRUE, IS FALSE; never NULL itself. */
  readonly test: 'null' | 'true' | 'false';
  /** IS NOT ... */
  readonly negated: boolean;
}
export interface LikeExpr {
  readonly kind: 'like';
  readonly operand: Expr;
  /** A string literal or a parameter; `%` any run, `_` one character. */
  readonly pattern: Expr;
  readonly negated: boolean;
  /** ILIKE */
  readonly caseInsensitive: boolean;
  /** The escape character; PostgreSQL's default is backslash. */
  readonly escape: string;
}

/** Binary value operators; `||` is string concatenation. */
export type ArithOp = '+' | '-' | '*' | '/' | '%' | '||';
export interface ArithExpr {
  readonly kind: 'arith';
  readonly op: ArithOp;
  readonly left: Expr;
  readonly right: Expr;
}
/** Unary minus over a non-literal (a negative literal is folded into the literal). */
export interface NegateExpr {
  readonly kind: 'negate';
  readonly operand: Expr;
}
/**
 * A function call, name in lower case: scalar functions (`abs`, `lower`, `coalesce`, …), the
 * vector distances (`l2_distance`, …), `match(column, 'query')`, `array(…)` for `ARRAY[…]`, and
 * aggregates (`count`, `sum`, …; `star` for `count(*)`, `distinct` for `count(DISTINCT x)`).
 * Which names exist and what they accept is decided by the checker and the planner, not here.
 */
export interface CallExpr {
  readonly kind: 'call';
  readonly name: string;
  readonly args: readonly Expr[];
  readonly distinct: boolean;
  readonly star: boolean;
}
export interface CaseWhen {
  readonly when: Expr;
  readonly then: Expr;
}
/** `CASE [operand] WHEN … THEN … [ELSE …] END`; with an operand each `when` is compared to it. */
export interface CaseExpr {
  readonly kind: 'case';
  readonly operand: Expr | null;
  readonly whens: readonly CaseWhen[];
  readonly otherwise: Expr | null;
}
/** SQL type names a CAST can name (DESIGN.md's type table, canonical spelling). */
export type SqlTypeName = 'bigint' | 'int' | 'smallint' | 'double' | 'real' | 'text' | 'boolean' | 'date' | 'timestamp';
export interface CastExpr {
  readonly kind: 'cast';
  readonly operand: Expr;
  readonly to: SqlTypeName;
}

export type Expr =
  | ColumnExpr
  | ArithExpr
  | NegateExpr
  | CallExpr
  | CaseExpr
  | CastExpr
  | LiteralExpr
  | ParamExpr
  | CompareExpr
  | AndExpr
  | OrExpr
  | NotExpr
  | InListExpr
  | BetweenExpr
  | IsExpr
  | LikeExpr;

export type ExprKind = Expr['kind'];

// ---------------------------------------------------------------------------------------------
// Factories

export function col(name: string): ColumnExpr {
  return Object.freeze({ kind: 'column', name });
}

export function lit(value: LiteralValue, temporal?: 'date' | 'timestamp'): LiteralExpr {
  return Object.freeze(temporal ? { kind: 'literal', value, temporal } : { kind: 'literal', value });
}

/** A double-precision literal (`2.0`): typed Float64 even when the value is integral. */
export function floatLit(value: number): LiteralExpr {
  return Object.freeze({ kind: 'literal', value, float: true });
}

export function param(index: number): ParamExpr {
  if (!Number.isInteger(index) || index < 1) throw new RangeError(`parameter index must be 1 or more, got ${index}`);
  return Object.freeze({ kind: 'param', index });
}

export function compare(op: CompareOp, left: Expr, right: Expr): CompareExpr {
  return Object.freeze({ kind: 'compare', op, left, right });
}
export const eq = (l: Expr, r: Expr) => compare('=', l, r);
export const ne = (l: Expr, r: Expr) => compare('<>', l, r);
export const lt = (l: Expr, r: Expr) => compare('<', l, r);
export const le = (l: Expr, r: Expr) => compare('<=', l, r);
export const gt = (l: Expr, r: Expr) => compare('>', l, r);
export const ge = (l: Expr, r: Expr) => compare('>=', l, r);

/** AND of the operands, flattening nested ANDs; one operand is returned as is. */
export function and(...operands: Expr[]): Expr {
  const flat = operands.flatMap((e) => (e.kind === 'and' ? e.operands : [e]));
  if (flat.length === 0) throw new RangeError('and() needs at least one operand');
  return flat.length === 1 ? flat[0] : Object.freeze({ kind: 'and', operands: Object.freeze(flat) });
}

/** OR of the operands, flattening nested ORs; one operand is returned as is. */
export function or(...operands: Expr[]): Expr {
  const flat = operands.flatMap((e) => (e.kind === 'or' ? e.operands : [e]));
  if (flat.length === 0) throw new RangeError('or() needs at least one operand');
  return flat.length === 1 ? flat[0] : Object.freeze({ kind: 'or', operands: Object.freeze(flat) });
}

export function not(operand: Expr): NotExpr {
  return Object.freeze({ kind: 'not', operand });
}

export function inList(operand: Expr, list: readonly Expr[], negated = false): InListExpr {
  if (list.length === 0) throw new RangeError('IN needs at least one list item');
  return Object.freeze({ kind: 'in', operand, list: Object.freeze([...list]), negated });
}

export function between(operand: Expr, low: Expr, high: Expr, negated = false): BetweenExpr {
  return Object.freeze({ kind: 'between', operand, low, high, negated });
}

export function isNull(operand: Expr, negated = false): IsExpr {
  return Object.freeze({ kind: 'is', operand, test: 'null', negated });
}

export function isTest(operand: Expr, test: IsExpr['test'], negated = false): IsExpr {
  return Object.freeze({ kind: 'is', operand, test, negated });
}

export function like(
  operand: Expr,
  pattern: Expr,
  options: { negated?: boolean; caseInsensitive?: boolean; escape?: string } = {},
): LikeExpr {
  const escape = options.escape ?? '\\';
  if ([...escape].length > 1) throw new RangeError('a LIKE escape must be one character (or empty for none)');
  return Object.freeze({
    kind: 'like',
    operand,
    pattern,
    negated: options.negated ?? false,
    caseInsensitive: options.caseInsensitive ?? false,
    escape,
  });
}

export function arith(op: ArithOp, left: Expr, right: Expr): ArithExpr {
  return Object.freeze({ kind: 'arith', op, left, right });
}

export function negate(operand: Expr): NegateExpr {
  return Object.freeze({ kind: 'negate', operand });
}

export function call(name: string, args: readonly Expr[], options: { distinct?: boolean; star?: boolean } = {}): CallExpr {
  return Object.freeze({
    kind: 'call',
    name: name.toLowerCase(),
    args: Object.freeze([...args]),
    distinct: options.distinct ?? false,
    star: options.star ?? false,
  });
}

export function caseWhen(operand: Expr | null, whens: readonly CaseWhen[], otherwise: Expr | null = null): CaseExpr {
  if (whens.length === 0) throw new RangeError('CASE needs at least one WHEN');
  return Object.freeze({
    kind: 'case',
    operand,
    whens: Object.freeze(whens.map((w) => Object.freeze({ when: w.when, then: w.then }))),
    otherwise,
  });
}

export function cast(operand: Expr, to: SqlTypeName): CastExpr {
  return Object.freeze({ kind: 'cast', operand, to });
}

// ---------------------------------------------------------------------------------------------
// Traversal

/** One handler per node kind: adding a kind makes every visitor table a compile error. */
export type ExprVisitor<R> = { readonly [K in ExprKind]: (expr: Extract<Expr, { kind: K }>) => R };

export function visitExpr<R>(expr: Expr, visitor: ExprVisitor<R>): R {
  return (visitor[expr.kind] as (e: Expr) => R)(expr);
}

/** The direct children of a node, in evaluation order. */
export function childrenOf(expr: Expr): readonly Expr[] {
  return visitExpr(expr, CHILDREN);
}

const NO_CHILDREN: readonly Expr[] = Object.freeze([]);
/** One table for every call (planning walks expressions a lot; no visitor object per node). */
const CHILDREN: ExprVisitor<readonly Expr[]> = {
  column: () => NO_CHILDREN,
  literal: () => NO_CHILDREN,
  param: () => NO_CHILDREN,
  compare: (e) => [e.left, e.right],
  and: (e) => e.operands,
  or: (e) => e.operands,
  not: (e) => [e.operand],
  in: (e) => [e.operand, ...e.list],
  between: (e) => [e.operand, e.low, e.high],
  is: (e) => [e.operand],
  like: (e) => [e.operand, e.pattern],
  arith: (e) => [e.left, e.right],
  negate: (e) => [e.operand],
  call: (e) => e.args,
  case: (e) => [...(e.operand ? [e.operand] : []), ...e.whens.flatMap((w) => [w.when, w.then]), ...(e.otherwise ? [e.otherwise] : [])],
  cast: (e) => [e.operand],
};

/** Whether `pred` holds for the expression or any node below it (without rebuilding anything). */
export function someNode(expr: Expr, pred: (e: Expr) => boolean): boolean {
  if (pred(expr)) return true;
  for (const c of childrenOf(expr)) if (someNode(c, pred)) return true;
  return false;
}

/** Rebuilds a node bottom-up with `fn` applied to every node after its children. */
export function mapExpr(expr: Expr, fn: (e: Expr) => Expr): Expr {
  const m = (e: Expr) => mapExpr(e, fn);
  const rebuilt = visitExpr<Expr>(expr, {
    column: (e) => e,
    literal: (e) => e,
    param: (e) => e,
    compare: (e) => compare(e.op, m(e.left), m(e.right)),
    and: (e) => and(...e.operands.map(m)),
    or: (e) => or(...e.operands.map(m)),
    not: (e) => not(m(e.operand)),
    in: (e) => inList(m(e.operand), e.list.map(m), e.negated),
    between: (e) => between(m(e.operand), m(e.low), m(e.high), e.negated),
    is: (e) => isTest(m(e.operand), e.test, e.negated),
    like: (e) => like(m(e.operand), m(e.pattern), e),
    arith: (e) => arith(e.op, m(e.left), m(e.right)),
    negate: (e) => negate(m(e.operand)),
    call: (e) => call(e.name, e.args.map(m), e),
    case: (e) => caseWhen(e.operand && m(e.operand), e.whens.map((w) => ({ when: m(w.when), then: m(w.then) })), e.otherwise && m(e.otherwise)),
    cast: (e) => cast(m(e.operand), e.to),
  });
  return fn(rebuilt);
}

/** Names of the columns an expression reads, in first-use order. */
export function columnsOf(expr: Expr): string[] {
  const out = new Set<string>();
  collectColumns(expr, out);
  return [...out];
}

function collectColumns(e: Expr, out: Set<string>): void {
  if (e.kind === 'column') out.add(e.name);
  else for (const c of childrenOf(e)) collectColumns(c, out);
}

/** The highest `$n` an expression uses (0 when none). */
export function maxParamIndex(expr: Expr): number {
  if (expr.kind === 'param') return expr.index;
  let max = 0;
  for (const c of childrenOf(expr)) max = Math.max(max, maxParamIndex(c));
  return max;
}

/** The operator that gives the same answer with the operands swapped (`a < b` ⇔ `b > a`). */
export function flipCompareOp(op: CompareOp): CompareOp {
  switch (op) {
    case '<':
      return '>';
    case '<=':
      return '>=';
    case '>':
      return '<';
    case '>=':
      return '<=';
    default:
      return op;
  }
}

// ---------------------------------------------------------------------------------------------
// Printing (EXPLAIN, error messages)

const PRECEDENCE: Record<ExprKind, number> = {
  or: 1,
  and: 2,
  not: 3,
  compare: 4,
  in: 4,
  between: 4,
  is: 4,
  like: 4,
  arith: 5,
  negate: 7,
  call: 9,
  case: 9,
  cast: 8,
  column: 9,
  literal: 9,
  param: 9,
};

function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

export function literalToSql(value: LiteralValue, float = false): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return `'${value.replace(/'/g, "''")}'`;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `CAST('${Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity'}' AS DOUBLE)`;
    const s = String(value);
    // Keep a double literal a double when it round-trips through SQL text (2.0, not 2).
    return float && /^-?\d+$/.test(s) ? s + '.0' : s;
  }
  return String(value);
}

/** Binding strength of an arithmetic operator (PostgreSQL: `* / %` over `+ -` over `||`). */
function arithPrecedence(op: ArithOp): number {
  return op === '*' || op === '/' || op === '%' ? 6 : op === '||' ? 5 : 5.5;
}

/** SQL text for an expression, parenthesised only where precedence needs it. */
export function exprToString(expr: Expr): string {
  return visitExpr<string>(expr, TO_SQL_TEXT);
}

/** A child's text, parenthesised when it binds no tighter than its parent. */
function childText(child: Expr, parent: number): string {
  const s = exprToString(child);
  return PRECEDENCE[child.kind] <= parent ? `(${s})` : s;
}

// One visitor for every call (built per call, its closures showed in profiles of IN lists).
const TO_SQL_TEXT: ExprVisitor<string> = {
  column: (e) => quoteIdent(e.name),
  literal: (e) => (e.temporal ? `${e.temporal.toUpperCase()} ` : '') + literalToSql(e.value, e.float === true),
  param: (e) => `$${e.index}`,
  compare: (e) => `${childText(e.left, 4)} ${e.op} ${childText(e.right, 4)}`,
  and: (e) => e.operands.map((o) => childText(o, 2)).join(' AND '),
  or: (e) => e.operands.map((o) => childText(o, 1)).join(' OR '),
  not: (e) => `NOT ${childText(e.operand, 3)}`,
  in: (e) => `${childText(e.operand, 4)} ${e.negated ? 'NOT IN' : 'IN'} (${e.list.map((x) => exprToString(x)).join(', ')})`,
  between: (e) => `${childText(e.operand, 4)} ${e.negated ? 'NOT BETWEEN' : 'BETWEEN'} ${childText(e.low, 4)} AND ${childText(e.high, 4)}`,
  is: (e) => `${childText(e.operand, 4)} IS ${e.negated ? 'NOT ' : ''}${e.test.toUpperCase()}`,
  like: (e) =>
    `${childText(e.operand, 4)} ${e.negated ? 'NOT ' : ''}${e.caseInsensitive ? 'ILIKE' : 'LIKE'} ${childText(e.pattern, 4)}` +
    (e.escape === '\\' ? '' : ` ESCAPE ${literalToSql(e.escape)}`),
  // `* / %` bind tighter than `+ -`, which bind tighter than `||`; all associate left. An
  // arithmetic operand of `||` is always parenthesised: node-sql-parser gives `||` the
  // precedence of `*`, so `a || (b + c)` must not be printed as `a || b + c`.
  arith: (e) => {
    const own = arithPrecedence(e.op);
    const side = (x: Expr, right: boolean) => {
      const s = exprToString(x);
      const xp = x.kind === 'arith' ? arithPrecedence(x.op) : PRECEDENCE[x.kind];
      const paren = xp < own || (right && xp === own) || (x.kind === 'arith' && (e.op === '||') !== (x.op === '||'));
      return paren ? `(${s})` : s;
    };
    return `${side(e.left, false)} ${e.op} ${side(e.right, true)}`;
  },
  negate: (e) => {
    const s = childText(e.operand, 7);
    return s.startsWith('-') ? `-(${s})` : `-${s}`;
  },
  call: (e) =>
    e.name === 'array'
      ? `ARRAY[${e.args.map((a) => exprToString(a)).join(', ')}]`
      : `${e.name}(${e.star ? '*' : (e.distinct ? 'DISTINCT ' : '') + e.args.map((a) => exprToString(a)).join(', ')})`,
  case: (e) =>
    `CASE${e.operand ? ' ' + exprToString(e.operand) : ''}` +
    e.whens.map((w) => ` WHEN ${exprToString(w.when)} THEN ${exprToString(w.then)}`).join('') +
    (e.otherwise ? ` ELSE ${exprToString(e.otherwise)}` : '') +
    ' END',
  cast: (e) => `CAST(${exprToString(e.operand)} AS ${e.to.toUpperCase()})`,
};
