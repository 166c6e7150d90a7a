/**
 * Name resolution and type checking of a filter expression against an Arrow schema.
 *
 * Runs once per (query, schema) before any batch is read, so that a bad filter fails with an
 * `InvalidError` naming the problem instead of part-way through a scan: an unknown column (the
 * message lists the available ones), a column type filters cannot read (vectors, structs), a
 * comparison between incompatible types (`name = 5`, `price > 'cheap'`, `day = 'yesterday'`),
 * a non-boolean where a condition is needed (`WHERE price`).
 *
 * Identifiers match a field exactly, else case-insensitively when that is unambiguous
 * (PostgreSQL folds unquoted identifiers to lower case; Arrow schemas often keep camelCase).
 * Parameters (`$n`) are typed late: the evaluator checks the bound values.
 */
import type { DataType, Field, Schema } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import {
  classesComparable,
  classOfValue,
  type ColumnDomain,
  describeDomain,
  domainOf,
  isTemporalClass,
  toStored,
  type ValueClass,
} from './coerce.js';
import {
  and,
  between,
  col,
  compare,
  type Expr,
  exprToString,
  inList,
  isTest,
  like,
  type LiteralExpr,
  not,
  or,
} from './expr.js';

/** What is statically known about a sub-expression. */
type Static =
  | { readonly k: 'column'; readonly domain: ColumnDomain; readonly label: string }
  | { readonly k: 'predicate'; readonly label: string }
  | { readonly k: 'literal'; readonly cls: ValueClass | 'null'; readonly expr: LiteralExpr; readonly label: string }
  | { readonly k: 'param'; readonly label: string };

export function describeArrowType(type: DataType): string {
  return String(type);
}

/** Finds a field by name: exact match first, then a unique case-insensitive match. */
export function resolveField(schema: Schema, name: string): Field {
  const exact = schema.fields.find((f) => f.name === name);
  if (exact) return exact;
  const lower = name.toLowerCase();
  const folded = schema.fields.filter((f) => f.name.toLowerCase() === lower);
  if (folded.length === 1) return folded[0];
  const available = schema.fields.map((f) => f.name).join(', ') || '(none)';
  if (folded.length > 1)
    throw new InvalidError(
      `column name "${name}" is ambiguous: it matches ${folded.map((f) => `"${f.name}"`).join(' and ')}; quote the exact name`,
    );
  throw new InvalidError(`unknown column "${name}" in filter; available columns: ${available}`);
}

/**
 * Checks `expr` against `schema` and returns it with column names replaced by the exact field
 * names. Throws `InvalidError` on unknown columns, unsupported column types or type mismatches.
 */
export function checkFilter(expr: Expr, schema: Schema): Expr {
  const checker = new Checker(schema);
  const { expr: resolved, info } = checker.check(expr);
  checker.requirePredicate(info, 'a filter', resolved);
  return resolved;
}

class Checker {
  constructor(private readonly schema: Schema) {}

  check(e: Expr): { expr: Expr; info: Static } {
    switch (e.kind) {
      case 'column': {
        const field = resolveField(this.schema, e.name);
        const domain = domainOf(field.type);
        if (!domain)
          throw new InvalidError(
            `column "${field.name}" has type ${describeArrowType(field.type)}, which filters cannot compare ` +
              '(supported: integers, floats, strings, booleans, dates, timestamps)',
          );
        return {
          expr: field.name === e.name ? e : col(field.name),
          info: { k: 'column', domain, label: `column ${field.name} (${describeArrowType(field.type)})` },
        };
      }
      case 'literal': {
        const cls = classOfValue(e.value, e.temporal);
        if (cls === undefined) throw new InvalidError(`unsupported literal ${String(e.value)}`);
        if (e.temporal && typeof e.value === 'string') {
          // Validate the text now: DATE '2024-02-30' is an error even before it meets a column.
          const domain: ColumnDomain =
            e.temporal === 'date'
              ? { cls: 'date', storage: 'number', unitNanos: 86_400_000_000_000n }
              : { cls: 'timestamp', storage: 'bigint', unitNanos: 1n };
          toStored(e.value, domain, `a ${e.temporal.toUpperCase()} literal`, { temporal: e.temporal });
        }
        return { expr: e, info: { k: 'literal', cls, expr: e, label: exprToString(e) } };
      }
      case 'param':
        return { expr: e, info: { k: 'param', label: `parameter $${e.index}` } };
      case 'compare': {
        const l = this.check(e.left);
        const r = this.check(e.right);
        this.requireComparable(l.info, r.info, e.op);
        const out = l.expr === e.left && r.expr === e.right ? e : compare(e.op, l.expr, r.expr);
        return { expr: out, info: { k: 'predicate', label: exprToString(out) } };
      }
      case 'and':
      case 'or': {
        const parts = e.operands.map((o) => this.check(o));
        parts.forEach((p) => this.requirePredicate(p.info, e.kind.toUpperCase(), p.expr));
        const out = e.kind === 'and' ? and(...parts.map((p) => p.expr)) : or(...parts.map((p) => p.expr));
        return { expr: out, info: { k: 'predicate', label: exprToString(out) } };
      }
      case 'not': {
        const c = this.check(e.operand);
        this.requirePredicate(c.info, 'NOT', c.expr);
        const out = not(c.expr);
        return { expr: out, info: { k: 'predicate', label: exprToString(out) } };
      }
      case 'in': {
        const operand = this.check(e.operand);
        const items = e.list.map((x) => this.check(x));
        items.forEach((it) => this.requireComparable(operand.info, it.info, e.negated ? 'NOT IN' : 'IN'));
        const out = inList(operand.expr, items.map((i) => i.expr), e.negated);
        return { expr: out, info: { k: 'predicate', label: exprToString(out) } };
      }
      case 'between': {
        const operand = this.check(e.operand);
        const low = this.check(e.low);
        const high = this.check(e.high);
        this.requireComparable(operand.info, low.info, 'BETWEEN');
        this.requireComparable(operand.info, high.info, 'BETWEEN');
        const out = between(operand.expr, low.expr, high.expr, e.negated);
        return { expr: out, info: { k: 'predicate', label: exprToString(out) } };
      }
      case 'is': {
        const c = this.check(e.operand);
        if (e.test !== 'null') this.requirePredicate(c.info, `IS ${e.test.toUpperCase()}`, c.expr);
        const out = isTest(c.expr, e.test, e.negated);
        return { expr: out, info: { k: 'predicate', label: exprToString(out) } };
      }
      case 'like': {
        const op = e.caseInsensitive ? 'ILIKE' : 'LIKE';
        const c = this.check(e.operand);
        const p = this.check(e.pattern);
        const isString = (s: Static) =>
          s.k === 'param' ||
          (s.k === 'column' && s.domain.cls === 'string') ||
          (s.k === 'literal' && (s.cls === 'string' || s.cls === 'null') && !s.expr.temporal);
        if (!isString(c.info)) throw new InvalidError(`type mismatch: ${op} needs a string, but ${c.info.label} is not one`);
        if (p.info.k === 'column' || p.info.k === 'predicate')
          throw new InvalidError(`${op} patterns must be a string literal or a parameter, not ${p.info.label}`);
        if (!isString(p.info)) throw new InvalidError(`type mismatch: ${op} pattern ${p.info.label} is not a string`);
        const out = like(c.expr, p.expr, e);
        return { expr: out, info: { k: 'predicate', label: exprToString(out) } };
      }
    }
  }

  requirePredicate(s: Static, context: string, expr: Expr): void {
    if (s.k === 'predicate' || s.k === 'param') return;
    if (s.k === 'column' && s.domain.cls === 'bool') return;
    if (s.k === 'literal' && (s.cls === 'bool' || s.cls === 'null')) return;
    const what = s.k === 'column' ? `${s.label} is ${describeDomain(s.domain)}` : `${exprToString(expr)} is not boolean`;
    throw new InvalidError(`type mismatch: ${context} needs a boolean condition, but ${what}`);
  }

  requireComparable(a: Static, b: Static, op: string): void {
    if (a.k === 'param' || b.k === 'param') return;
    const clsOf = (s: Static): ValueClass | 'null' =>
      s.k === 'column' ? s.domain.cls : s.k === 'literal' ? s.cls : 'bool';
    const ca = clsOf(a);
    const cb = clsOf(b);
    if (ca === 'null' || cb === 'null') return;
    // A literal meeting a column: convert it now so bad dates and mismatches fail here.
    if (a.k === 'column' && b.k === 'literal') return this.literalMeetsColumn(b, a.domain, a.label, op);
    if (b.k === 'column' && a.k === 'literal') return this.literalMeetsColumn(a, b.domain, b.label, op);
    if (a.k === 'literal' && b.k === 'literal') {
      const temporal = (s: Static) => s.k === 'literal' && ((s.cls !== 'null' && isTemporalClass(s.cls)) || s.expr.temporal !== undefined);
      if (temporal(a) && (temporal(b) || cb === 'string')) return;
      if (temporal(b) && ca === 'string') return;
    }
    if (classesComparable(ca, cb)) return;
    throw new InvalidError(`type mismatch: cannot compare ${a.label} with ${b.label} (${op})`);
  }

  private literalMeetsColumn(lit: Static & { k: 'literal' }, domain: ColumnDomain, label: string, op: string): void {
    const v = lit.expr.value;
    if (isTemporalClass(domain.cls) && (typeof v === 'number' || typeof v === 'bigint'))
      throw new InvalidError(
        `type mismatch: cannot compare ${label} with the number ${String(v)} (${op}); ` +
          (domain.cls === 'date' ? "write dates as 'YYYY-MM-DD'" : "write timestamps as ISO 8601 strings, e.g. '2024-01-31T12:00:00Z'"),
      );
    toStored(v, domain, label, { temporal: lit.expr.temporal });
  }
}
