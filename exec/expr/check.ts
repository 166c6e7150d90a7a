/**
 * Name resolution and type checking of expressions against an Arrow schema: `checkExpr` for
 * any expression (boolean or value), `checkFilter` for a WHERE condition, `inferType` for the
 * result type of a checked expression (types.ts has the rules, functions.ts the catalogue).
 *
 * Runs once per (query, schema) before any batch is read, so that a bad expression fails with
 * an `InvalidError` naming the problem instead of part-way through a scan: an unknown column
 * (the message lists the available ones), an unknown function, a wrong argument count or type,
 * a column type expressions cannot read (structs; vectors outside the distance functions), text
 * compared with or added to a number (PostgreSQL never converts implicitly), a non-boolean
 * where a condition is needed (`WHERE price`), an aggregate where none is allowed.
 *
 * Identifiers match a field exactly, else case-insensitively when that is unambiguous
 * (PostgreSQL folds unquoted identifiers to lower case; Arrow schemas often keep camelCase).
 * Parameters (`$n`) are typed from their bound values when they are given (`inferType`, the
 * evaluator) and otherwise take the type of what they meet; comparisons with them are checked
 * by the evaluator.
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
  arith,
  between,
  call,
  cast,
  caseWhen,
  col,
  compare,
  type Expr,
  exprToString,
  inList,
  isTest,
  like,
  type LiteralExpr,
  negate,
  not,
  or,
} from './expr.js';
import { AGGREGATE_FUNCTIONS, type ArgInfo, commonArgType, DISTANCE_FUNCTIONS, functionResultType } from './functions.js';
import {
  ARROW,
  arrowOf,
  castTargetType,
  isFloatKind,
  isIntKind,
  isNumericKind,
  isTemporalKind,
  kindName,
  literalType,
  numericResult,
  paramType,
  type SqlKind,
  sqlKind,
} from './types.js';

/** What is statically known about a sub-expression. */
interface Static {
  /** column: a column reference; value: any other non-boolean-operator node. */
  readonly k: 'column' | 'value' | 'predicate' | 'literal' | 'param';
  /** null: an unbound parameter (or an expression of them) whose type is not known yet. */
  readonly type: DataType | null;
  /** 'unknown' when `type` is null; undefined for types expressions cannot use. */
  readonly kind: SqlKind | 'unknown' | undefined;
  readonly label: string;
  /** column / value: how comparisons read it (undefined: not comparable). */
  readonly domain?: ColumnDomain;
  /** literal: its class and node. */
  readonly cls?: ValueClass | 'null';
  readonly expr?: LiteralExpr;
}

export interface CheckOptions {
  /** Whether aggregate calls are allowed (default true); nested aggregates are always rejected. */
  readonly aggregates?: boolean;
  /** The clause for the "aggregate functions are not allowed in …" message (default "this context"). */
  readonly clause?: string;
  /** Bound parameter values (`params[0]` is `$1`): parameters are typed from them. */
  readonly params?: readonly unknown[];
}

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
  throw new InvalidError(`unknown column "${name}"; available columns: ${available}`);
}

/**
 * Checks any expression against `schema` and returns it with column names replaced by the exact
 * field names. Throws `InvalidError` naming the problem (see the header).
 */
export function checkExpr(expr: Expr, schema: Schema, options: CheckOptions = {}): Expr {
  return new Checker(schema, options).check(expr).expr;
}

/**
 * Checks a WHERE condition: `checkExpr` without aggregates, and the result must be boolean.
 */
export function checkFilter(expr: Expr, schema: Schema): Expr {
  const checker = new Checker(schema, { aggregates: false, clause: 'WHERE' });
  const { expr: resolved, info } = checker.check(expr);
  checker.requirePredicate(info, 'a filter', resolved);
  return resolved;
}

/**
 * The Arrow type `evaluateValue` returns for `expr` (types.ts has the rules). `params` bind
 * `$1`, `$2`, …: parameters are typed from their values; without them a parameter takes the
 * type of what it meets, and one whose type cannot be determined is an error.
 */
export function inferType(expr: Expr, schema: Schema, params?: readonly unknown[]): DataType {
  const { info } = new Checker(schema, { params: params ?? undefined }).check(expr);
  if (info.type === null)
    throw new InvalidError(`could not determine the type of ${exprToString(expr)}: bind its parameters or CAST them (CAST($1 AS int))`);
  return info.type;
}

/**
 * The type of every node of `expr` (keyed by node identity, as given), for the evaluator.
 * Same rules and errors as `inferType`.
 */
export function nodeTypes(expr: Expr, schema: Schema, params?: readonly unknown[]): Map<Expr, DataType | null> {
  const checker = new Checker(schema, { params: params ?? [] });
  checker.check(expr);
  return checker.types;
}

const isStringish = (s: Static) =>
  s.k === 'param' ||
  s.kind === 'text' ||
  (s.k === 'literal' && (s.cls === 'string' || s.cls === 'null') && !s.expr!.temporal) ||
  s.kind === 'null';

class Checker {
  readonly types = new Map<Expr, DataType | null>();
  private inAggregate = false;

  constructor(
    private readonly schema: Schema,
    private readonly options: CheckOptions,
  ) {}

  check(e: Expr): { expr: Expr; info: Static } {
    const r = this.checkNode(e);
    this.types.set(e, r.info.type);
    return r;
  }

  private predicate(out: Expr): { expr: Expr; info: Static } {
    // Labels only name a node in an error message: written out when one is (IN lists of many
    // literals made them a fifth of a point query).
    return { expr: out, info: { k: 'predicate', type: ARROW.boolean, kind: 'boolean', get label() { return exprToString(out); } } };
  }

  private value(out: Expr, type: DataType | null): { expr: Expr; info: Static } {
    const kind = type === null ? 'unknown' : sqlKind(type);
    return {
      expr: out,
      info: {
        k: 'value',
        type,
        kind,
        get label() {
          return `${exprToString(out)} (${type === null ? 'unknown type' : kindName(kind as SqlKind)})`;
        },
        domain: type === null ? undefined : domainOf(type),
      },
    };
  }

  private checkNode(e: Expr): { expr: Expr; info: Static } {
    switch (e.kind) {
      case 'column': {
        const field = resolveField(this.schema, e.name);
        return {
          expr: field.name === e.name ? e : col(field.name),
          info: {
            k: 'column',
            type: field.type,
            kind: sqlKind(field.type),
            domain: domainOf(field.type),
            label: `column ${field.name} (${describeArrowType(field.type)})`,
          },
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
        const type = literalType(e.value, e.temporal, e.float === true);
        return { expr: e, info: { k: 'literal', cls, expr: e, type, kind: sqlKind(type), get label() { return exprToString(e); } } };
      }
      case 'param': {
        let type: DataType | null = null;
        const params = this.options.params;
        if (params) {
          if (e.index > params.length || params[e.index - 1] === undefined)
            throw new InvalidError(
              `the expression uses $${e.index} but ${params.length === 0 ? 'no parameters were' : `only ${params.length} parameter(s) were`} given`,
            );
          const t = paramType(params[e.index - 1]);
          if (!t) throw new InvalidError(`parameter $${e.index} has an unsupported value (${typeof params[e.index - 1]})`);
          type = t;
        }
        return { expr: e, info: { k: 'param', type, kind: type === null ? 'unknown' : sqlKind(type), label: `parameter $${e.index}` } };
      }
      case 'compare': {
        const l = this.check(e.left);
        const r = this.check(e.right);
        this.requireComparable(l.info, r.info, e.op);
        return this.predicate(l.expr === e.left && r.expr === e.right ? e : compare(e.op, l.expr, r.expr));
      }
      case 'and':
      case 'or': {
        const parts = e.operands.map((o) => this.check(o));
        parts.forEach((p) => this.requirePredicate(p.info, e.kind.toUpperCase(), p.expr));
        return this.predicate(e.kind === 'and' ? and(...parts.map((p) => p.expr)) : or(...parts.map((p) => p.expr)));
      }
      case 'not': {
        const c = this.check(e.operand);
        this.requirePredicate(c.info, 'NOT', c.expr);
        return this.predicate(not(c.expr));
      }
      case 'in': {
        const operand = this.check(e.operand);
        const items = e.list.map((x) => this.check(x));
        items.forEach((it) => this.requireComparable(operand.info, it.info, e.negated ? 'NOT IN' : 'IN'));
        return this.predicate(inList(operand.expr, items.map((i) => i.expr), e.negated));
      }
      case 'between': {
        const operand = this.check(e.operand);
        const low = this.check(e.low);
        const high = this.check(e.high);
        this.requireComparable(operand.info, low.info, 'BETWEEN');
        this.requireComparable(operand.info, high.info, 'BETWEEN');
        return this.predicate(between(operand.expr, low.expr, high.expr, e.negated));
      }
      case 'is': {
        const c = this.check(e.operand);
        if (e.test !== 'null') this.requirePredicate(c.info, `IS ${e.test.toUpperCase()}`, c.expr);
        return this.predicate(isTest(c.expr, e.test, e.negated));
      }
      case 'like': {
        const op = e.caseInsensitive ? 'ILIKE' : 'LIKE';
        const c = this.check(e.operand);
        const p = this.check(e.pattern);
        if (!isStringish(c.info)) throw new InvalidError(`type mismatch: ${op} needs a string, but ${c.info.label} is not one`);
        if (p.info.k !== 'literal' && p.info.k !== 'param')
          throw new InvalidError(`${op} patterns must be a string literal or a parameter, not ${p.info.label}`);
        if (!isStringish(p.info)) throw new InvalidError(`type mismatch: ${op} pattern ${p.info.label} is not a string`);
        return this.predicate(like(c.expr, p.expr, e));
      }
      case 'arith': {
        const l = this.check(e.left);
        const r = this.check(e.right);
        const out = l.expr === e.left && r.expr === e.right ? e : arith(e.op, l.expr, r.expr);
        return this.value(out, this.arithType(e.op, l.info, r.info, out));
      }
      case 'negate': {
        const c = this.check(e.operand);
        const k = c.info.kind;
        const out = c.expr === e.operand ? e : negate(c.expr);
        if (k === 'unknown') return this.value(out, null);
        if (k === 'null') return this.value(out, ARROW.null);
        if (!isNumericKind(k))
          throw new InvalidError(`type mismatch: cannot negate ${c.info.label}: unary minus needs a number`);
        return this.value(out, arrowOf(k));
      }
      case 'cast': {
        const c = this.check(e.operand);
        const out = c.expr === e.operand ? e : cast(c.expr, e.to);
        const from = c.info.kind;
        const target = castTargetType(e.to);
        const to = sqlKind(target)!;
        if (from === undefined || from === 'vector')
          throw new InvalidError(`cannot cast ${c.info.label} to ${kindName(to)}`);
        if (from !== 'unknown' && from !== 'null' && !castAllowed(from, to))
          throw new InvalidError(`cannot cast type ${kindName(from)} to ${kindName(to)} (${c.info.label})`);
        return this.value(out, target);
      }
      case 'call':
        return this.checkCall(e);
      case 'case':
        return this.checkCase(e);
    }
  }

  private checkCall(e: Extract<Expr, { kind: 'call' }>): { expr: Expr; info: Static } {
    const aggregate = AGGREGATE_FUNCTIONS.has(e.name);
    if (aggregate) {
      if (this.options.aggregates === false)
        throw new InvalidError(`aggregate functions are not allowed in ${this.options.clause ?? 'this context'} (${exprToString(e)})`);
      if (this.inAggregate) throw new InvalidError(`aggregate function calls cannot be nested (${exprToString(e)})`);
    }
    const outer = this.inAggregate;
    this.inAggregate = outer || aggregate;
    let args: { expr: Expr; info: Static }[];
    try {
      args = e.args.map((a) => this.check(a));
    } finally {
      this.inAggregate = outer;
    }
    const distance = DISTANCE_FUNCTIONS.has(e.name);
    for (const a of args)
      if (a.info.kind === undefined && a.info.k === 'column' && !distance)
        throw new InvalidError(`${a.info.label} cannot be used in ${e.name}()`);
    const infos: ArgInfo[] = args.map((a) => argInfo(a.info));
    const type = functionResultType(e.name, infos, e);
    if (e.name === 'array' && args.some((a) => a.info.k === 'column' || a.info.k === 'value'))
      throw new InvalidError('ARRAY[…] items must be constants (numbers or parameters)');
    if (e.name === 'match' && args[1]?.info.k !== 'literal' && args[1]?.info.k !== 'param')
      throw new InvalidError('match() takes the query as a string literal or a parameter');
    if ((e.name === 'date_part' || e.name === 'date_trunc') && args[0]?.info.k !== 'literal' && args[0]?.info.k !== 'param')
      throw new InvalidError(`${e.name}() takes the field as a string literal`);
    const changed = args.some((a, i) => a.expr !== e.args[i]);
    const out = changed ? call(e.name, args.map((a) => a.expr), e) : e;
    if (type.typeId === ARROW.boolean.typeId && e.name !== 'coalesce' && e.name !== 'nullif' && e.name !== 'greatest' && e.name !== 'least')
      return this.predicate(out);
    return this.value(out, type);
  }

  private checkCase(e: Extract<Expr, { kind: 'case' }>): { expr: Expr; info: Static } {
    const operand = e.operand ? this.check(e.operand) : null;
    const whens = e.whens.map((w) => {
      const when = this.check(w.when);
      if (operand) this.requireComparable(operand.info, when.info, 'CASE … WHEN');
      else this.requirePredicate(when.info, 'CASE WHEN', when.expr);
      return { when, then: this.check(w.then) };
    });
    const otherwise = e.otherwise ? this.check(e.otherwise) : null;
    const branches = [...whens.map((w) => w.then), ...(otherwise ? [otherwise] : [])];
    const type = commonArgType('CASE', branches.map((b) => argInfo(b.info)));
    const changed =
      (operand && operand.expr !== e.operand) ||
      whens.some((w, i) => w.when.expr !== e.whens[i].when || w.then.expr !== e.whens[i].then) ||
      (otherwise && otherwise.expr !== e.otherwise);
    const out = changed
      ? caseWhen(operand?.expr ?? null, whens.map((w) => ({ when: w.when.expr, then: w.then.expr })), otherwise?.expr ?? null)
      : e;
    const allUnknown = branches.every((b) => b.info.kind === 'unknown');
    return this.value(out, allUnknown ? null : type);
  }

  private arithType(op: string, l: Static, r: Static, out: Expr): DataType | null {
    const lk = l.kind;
    const rk = r.kind;
    const text = (s: Static) => s.kind === 'text' || (s.k === 'literal' && s.cls === 'string' && !s.expr!.temporal);
    if (op === '||') {
      if (lk === undefined || rk === undefined || lk === 'vector' || rk === 'vector')
        throw new InvalidError(`type mismatch: cannot apply || to ${(lk === undefined || lk === 'vector' ? l : r).label}`);
      if (text(l) || text(r) || lk === 'unknown' || rk === 'unknown' || lk === 'null' || rk === 'null') return ARROW.text;
      throw new InvalidError(
        `type mismatch: operator does not exist: ${kindName(lk)} || ${kindName(rk)} (${exprToString(out)}); || concatenates text — CAST one side to text`,
      );
    }
    const mismatch = () =>
      new InvalidError(
        `type mismatch: operator does not exist: ${kindName(lk === 'unknown' ? undefined : lk)} ${op} ${kindName(rk === 'unknown' ? undefined : rk)} ` +
          `(${l.label} ${op} ${r.label})` +
          (text(l) || text(r) ? '; text is never converted to a number implicitly — use CAST(… AS …)' : ''),
      );
    if (lk === undefined || rk === undefined) throw mismatch();
    if (text(l) || text(r) || lk === 'boolean' || rk === 'boolean' || lk === 'vector' || rk === 'vector') throw mismatch();
    // Date arithmetic (PostgreSQL): date ± integer → date, date − date → integer.
    if (lk === 'date' || rk === 'date' || lk === 'timestamp' || rk === 'timestamp') {
      const intish = (k: typeof lk) => isIntKind(k as SqlKind) || k === 'unknown' || k === 'null';
      if (lk === 'date' && intish(rk) && (op === '+' || op === '-')) return ARROW.date;
      if (rk === 'date' && intish(lk) && op === '+') return ARROW.date;
      if (lk === 'date' && rk === 'date' && op === '-') return ARROW.int;
      throw mismatch();
    }
    if (lk === 'unknown' && rk === 'unknown') return null;
    if (lk === 'unknown' || lk === 'null') return rk === 'unknown' || rk === 'null' ? (rk === 'null' && lk === 'null' ? ARROW.null : null) : arrowOf(rk);
    if (rk === 'unknown' || rk === 'null') return arrowOf(lk);
    if (!isNumericKind(lk) || !isNumericKind(rk)) throw mismatch();
    return arrowOf(numericResult(lk, rk));
  }

  requirePredicate(s: Static, context: string, expr: Expr): void {
    if (s.k === 'predicate' || s.k === 'param') return;
    if (s.kind === 'boolean' || s.kind === 'null' || s.kind === 'unknown') return;
    const what =
      s.k === 'column' ? `${s.label} is ${s.domain ? describeDomain(s.domain) : describeArrowType(s.type!)}` : `${exprToString(expr)} is not boolean`;
    throw new InvalidError(`type mismatch: ${context} needs a boolean condition, but ${what}`);
  }

  requireComparable(a: Static, b: Static, op: string): void {
    if (a.k === 'param' || b.k === 'param') return;
    if (a.kind === 'unknown' || b.kind === 'unknown') return;
    const clsOf = (s: Static): ValueClass | 'null' => {
      if (s.k === 'literal') return s.cls!;
      if (s.k === 'predicate') return 'bool';
      if (s.kind === 'null') return 'null';
      if (!s.domain) {
        if (s.k === 'column')
          throw new InvalidError(
            `column "${s.label.replace(/^column (\S+) .*$/, '$1')}" has type ${describeArrowType(s.type!)}, which filters cannot compare ` +
              '(supported: integers, floats, strings, booleans, dates, timestamps)',
          );
        throw new InvalidError(`${s.label} cannot be compared (${op})`);
      }
      return s.domain.cls;
    };
    const ca = clsOf(a);
    const cb = clsOf(b);
    if (ca === 'null' || cb === 'null') return;
    const vecLike = (s: Static) => s.k === 'column' || s.k === 'value';
    // A literal meeting a column: convert it now so bad dates and mismatches fail here.
    if (vecLike(a) && b.k === 'literal') return this.literalMeetsColumn(b, a.domain!, a.label, op);
    if (vecLike(b) && a.k === 'literal') return this.literalMeetsColumn(a, b.domain!, b.label, op);
    if (a.k === 'literal' && b.k === 'literal') {
      const temporal = (s: Static) => s.k === 'literal' && ((s.cls !== 'null' && isTemporalClass(s.cls as ValueClass)) || s.expr!.temporal !== undefined);
      if (temporal(a) && (temporal(b) || cb === 'string')) return;
      if (temporal(b) && ca === 'string') return;
    }
    if (classesComparable(ca, cb)) return;
    throw new InvalidError(`type mismatch: cannot compare ${a.label} with ${b.label} (${op})`);
  }

  private literalMeetsColumn(lit: Static, domain: ColumnDomain, label: string, op: string): void {
    const v = lit.expr!.value;
    if (isTemporalClass(domain.cls) && (typeof v === 'number' || typeof v === 'bigint'))
      throw new InvalidError(
        `type mismatch: cannot compare ${label} with the number ${String(v)} (${op}); ` +
          (domain.cls === 'date' ? "write dates as 'YYYY-MM-DD'" : "write timestamps as ISO 8601 strings, e.g. '2024-01-31T12:00:00Z'"),
      );
    toStored(v, domain, label, { temporal: lit.expr!.temporal });
  }
}

function argInfo(s: Static): ArgInfo {
  return {
    kind: s.kind,
    type: s.type,
    get label() {
      return s.label;
    },
    literal: s.k === 'literal' ? { value: s.expr!.value } : undefined,
    untypedString: s.k === 'literal' && s.cls === 'string' && !s.expr!.temporal,
  };
}

/** Which casts exist (PostgreSQL's, among the supported types). */
export function castAllowed(from: SqlKind, to: SqlKind): boolean {
  if (from === to || from === 'null' || from === 'text' || to === 'text') return from !== 'vector' && to !== 'vector';
  if (isNumericKind(from) && isNumericKind(to)) return true;
  if (from === 'boolean') return isIntKind(to);
  if (to === 'boolean') return isIntKind(from);
  if (isTemporalKind(from) && isTemporalKind(to)) return true;
  void isFloatKind;
  return false;
}
