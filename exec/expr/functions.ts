/**
 * The function catalogue: which function names exist, what arguments they take and what type
 * they return. The checker (check.ts) types calls through `functionResultType`; the evaluator
 * (values.ts) implements the same names and converts arguments to the kinds typed here.
 *
 * Aggregates (`AGGREGATE_FUNCTIONS`) are typed here too but never evaluated by the expression
 * layer: the planner finds them (`isAggregateCall`) and computes them in its aggregate node.
 * `match(column, 'query')` is a full-text predicate the planner turns into an index search; it
 * types as boolean and the evaluator refuses it.
 */
import type { DataType } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import type { CallExpr, Expr, LiteralValue } from './expr.js';
import {
  ARROW,
  arrowOf,
  commonKind,
  isIntKind,
  isNumericKind,
  isTemporalKind,
  kindName,
  type SqlKind,
  vectorDim,
  vectorType,
} from './types.js';

export const AGGREGATE_FUNCTIONS: ReadonlySet<string> = new Set(['count', 'sum', 'avg', 'min', 'max']);

/** Whether `e` is a call of an aggregate function (count, sum, avg, min, max). */
export function isAggregateCall(e: Expr): e is CallExpr {
  return e.kind === 'call' && AGGREGATE_FUNCTIONS.has(e.name);
}

export const DISTANCE_FUNCTIONS: ReadonlySet<string> = new Set(['l2_distance', 'cosine_distance', 'dot_distance']);

/** Scalar functions the evaluator implements (plus `match`, typed only). */
export const SCALAR_FUNCTIONS: ReadonlySet<string> = new Set([
  'abs',
  'round',
  'ceil',
  'ceiling',
  'floor',
  'trunc',
  'sqrt',
  'power',
  'pow',
  'mod',
  'sign',
  'exp',
  'ln',
  'coalesce',
  'nullif',
  'greatest',
  'least',
  'lower',
  'upper',
  'length',
  'char_length',
  'character_length',
  'substr',
  'substring',
  'trim',
  'btrim',
  'ltrim',
  'rtrim',
  'concat',
  'replace',
  'starts_with',
  'strpos',
  'position',
  'left',
  'right',
  'date_part',
  'date_trunc',
  'array',
  'l2_distance',
  'cosine_distance',
  'dot_distance',
  'match',
]);

/** Fields `date_part` / EXTRACT accept, and units `date_trunc` accepts. */
export const DATE_PART_FIELDS: ReadonlySet<string> = new Set([
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'second',
  'dow',
  'isodow',
  'doy',
  'epoch',
  'quarter',
  'week',
  'millisecond',
  'microsecond',
  'decade',
  'century',
]);
export const DATE_TRUNC_UNITS: ReadonlySet<string> = new Set([
  'microseconds',
  'milliseconds',
  'second',
  'minute',
  'hour',
  'day',
  'week',
  'month',
  'quarter',
  'year',
  'decade',
  'century',
]);

/** What the checker knows about one argument. */
export interface ArgInfo {
  /** 'unknown': an unbound parameter (takes the type it needs). */
  readonly kind: SqlKind | 'unknown' | undefined;
  readonly type: DataType | null;
  readonly label: string;
  /** Set for literals: the value as written. */
  readonly literal?: { readonly value: LiteralValue };
  /** An untyped string literal ('…' without DATE/TIMESTAMP): adapts like PostgreSQL's unknown. */
  readonly untypedString: boolean;
}

function fail(message: string): never {
  throw new InvalidError(message);
}

function argCount(name: string, args: readonly ArgInfo[], min: number, max = min): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    fail(`${name}() takes ${want} argument${min === 1 && max === 1 ? '' : 's'}, got ${args.length}`);
  }
}

const ok = (a: ArgInfo, test: (k: SqlKind) => boolean) => a.kind === 'unknown' || a.kind === 'null' || (a.kind !== undefined && test(a.kind));

function want(name: string, a: ArgInfo, what: string, test: (k: SqlKind) => boolean, position: number): void {
  if (!ok(a, test))
    fail(`type mismatch: argument ${position} of ${name}() must be ${what}, but ${a.label} is ${kindName(a.kind === 'unknown' ? undefined : a.kind)}`);
}

const numeric = (k: SqlKind) => isNumericKind(k);
const integer = (k: SqlKind) => isIntKind(k);
const text = (k: SqlKind) => k === 'text';
const temporal = (k: SqlKind) => isTemporalKind(k);

/** `text` arguments: text, or an untyped string literal. */
function wantText(name: string, a: ArgInfo, position: number): void {
  if (a.untypedString) return;
  want(name, a, 'text', text, position);
}

/** The kind of a numeric argument for result typing ('unknown' → double, NULL → int). */
function numKind(a: ArgInfo): SqlKind {
  if (a.kind === 'unknown') return 'double';
  if (a.kind === 'null' || a.kind === undefined) return 'int';
  return a.kind;
}

/** The common type of branch-like arguments (coalesce, greatest, …); throws naming them. */
export function commonArgType(what: string, args: readonly ArgInfo[]): DataType {
  const typed = args.filter((a) => a.kind !== 'unknown' && !a.untypedString && a.kind !== 'null');
  const kinds = typed.map((a) => a.kind as SqlKind);
  if (typed.some((a) => a.kind === undefined)) {
    const bad = typed.find((a) => a.kind === undefined)!;
    fail(`${bad.label} has a type ${what} cannot use`);
  }
  if (kinds.length === 0) return args.some((a) => a.untypedString) ? ARROW.text : args.some((a) => a.kind === 'unknown') ? ARROW.text : ARROW.null;
  if (kinds.includes('vector')) {
    const dims = new Set(typed.map((a) => vectorDim(a.type!)));
    if (kinds.every((k) => k === 'vector') && dims.size === 1) return typed[0].type!;
    fail(`type mismatch: ${what} cannot mix ${typed.map((a) => a.label).join(', ')}`);
  }
  const k = commonKind(kinds);
  if (k === undefined)
    fail(
      `type mismatch: ${what} types ${[...new Set(kinds.map(kindName))].join(' and ')} cannot be matched (${typed.map((a) => a.label).join(', ')}); use CAST`,
    );
  return arrowOf(k as Exclude<SqlKind, 'vector'>);
}

/**
 * The result type of `name(args)`; throws `InvalidError` for unknown functions, wrong argument
 * counts or types. `call` gives star/distinct for aggregates.
 */
export function functionResultType(name: string, args: readonly ArgInfo[], call: { star: boolean; distinct: boolean }): DataType {
  if (AGGREGATE_FUNCTIONS.has(name)) return aggregateType(name, args, call);
  if (call.star) fail(`${name}(*) is not valid; only count(*) takes *`);
  if (call.distinct) fail(`DISTINCT is only valid in aggregate functions, not in ${name}()`);
  switch (name) {
    case 'abs':
    case 'sign':
      argCount(name, args, 1);
      want(name, args[0], 'a number', numeric, 1);
      return arrowOf(numKind(args[0]) as 'int');
    case 'ceil':
    case 'ceiling':
    case 'floor':
    case 'trunc':
    case 'round': {
      argCount(name, args, 1, name === 'round' || name === 'trunc' ? 2 : 1);
      want(name, args[0], 'a number', numeric, 1);
      if (args.length === 2) {
        want(name, args[1], 'an integer', integer, 2);
        return ARROW.double;
      }
      const k = numKind(args[0]);
      return isIntKind(k) ? arrowOf(k) : ARROW.double;
    }
    case 'sqrt':
    case 'exp':
    case 'ln':
      argCount(name, args, 1);
      want(name, args[0], 'a number', numeric, 1);
      return ARROW.double;
    case 'power':
    case 'pow':
      argCount(name, args, 2);
      want(name, args[0], 'a number', numeric, 1);
      want(name, args[1], 'a number', numeric, 2);
      return ARROW.double;
    case 'mod': {
      argCount(name, args, 2);
      want(name, args[0], 'a number', numeric, 1);
      want(name, args[1], 'a number', numeric, 2);
      return commonArgType('mod()', args);
    }
    case 'coalesce':
      argCount(name, args, 1, Infinity);
      return commonArgType('COALESCE', args);
    case 'greatest':
    case 'least': {
      argCount(name, args, 1, Infinity);
      const t = commonArgType(name.toUpperCase(), args);
      if (args.some((a) => a.kind === 'vector')) fail(`${name}() cannot compare vectors`);
      return t;
    }
    case 'nullif': {
      argCount(name, args, 2);
      const t = commonArgType('NULLIF', args);
      const first = args[0];
      // The result has the first argument's type (PostgreSQL); the comparison uses the common one.
      if (first.kind === 'unknown' || first.kind === 'null' || first.untypedString) return t;
      return first.kind === undefined || first.kind === 'vector' ? fail(`NULLIF cannot compare ${first.label}`) : arrowOf(first.kind);
    }
    case 'lower':
    case 'upper':
      argCount(name, args, 1);
      wantText(name, args[0], 1);
      return ARROW.text;
    case 'length':
    case 'char_length':
    case 'character_length':
      argCount(name, args, 1);
      wantText(name, args[0], 1);
      return ARROW.int;
    case 'substr':
    case 'substring':
      argCount(name, args, 2, 3);
      wantText(name, args[0], 1);
      want(name, args[1], 'an integer', integer, 2);
      if (args.length === 3) want(name, args[2], 'an integer', integer, 3);
      return ARROW.text;
    case 'trim':
    case 'btrim':
    case 'ltrim':
    case 'rtrim':
      argCount(name, args, 1, 2);
      wantText(name, args[0], 1);
      if (args.length === 2) wantText(name, args[1], 2);
      return ARROW.text;
    case 'concat':
      for (const a of args) if (a.kind === undefined || a.kind === 'vector') fail(`concat() cannot convert ${a.label} to text`);
      return ARROW.text;
    case 'replace':
      argCount(name, args, 3);
      args.forEach((a, i) => wantText(name, a, i + 1));
      return ARROW.text;
    case 'starts_with':
      argCount(name, args, 2);
      args.forEach((a, i) => wantText(name, a, i + 1));
      return ARROW.boolean;
    case 'strpos':
    case 'position':
      argCount(name, args, 2);
      args.forEach((a, i) => wantText(name, a, i + 1));
      return ARROW.int;
    case 'left':
    case 'right':
      argCount(name, args, 2);
      wantText(name, args[0], 1);
      want(name, args[1], 'an integer', integer, 2);
      return ARROW.text;
    case 'date_part':
    case 'date_trunc': {
      argCount(name, args, 2);
      const f = args[0];
      const set = name === 'date_part' ? DATE_PART_FIELDS : DATE_TRUNC_UNITS;
      if (f.literal) {
        const field = typeof f.literal.value === 'string' ? f.literal.value.toLowerCase() : undefined;
        if (field === undefined || !(set.has(field) || (name === 'date_trunc' && set.has(field + 's'))))
          fail(`${name}(): unknown ${name === 'date_part' ? 'field' : 'unit'} ${f.label}; expected one of ${[...set].join(', ')}`);
      } else wantText(name, f, 1);
      if (!args[1].untypedString) want(name, args[1], 'a date or timestamp', temporal, 2);
      return name === 'date_part' ? ARROW.double : ARROW.timestamp;
    }
    case 'array': {
      if (args.length === 0) fail('ARRAY[] needs at least one item (the vector dimension)');
      args.forEach((a, i) => want('ARRAY', a, 'a number', numeric, i + 1));
      return vectorType(args.length);
    }
    case 'l2_distance':
    case 'cosine_distance':
    case 'dot_distance': {
      argCount(name, args, 2);
      const dims = args.map((a, i) => {
        if (a.kind === 'vector') return vectorDim(a.type!);
        if (a.kind === 'unknown' || a.kind === 'null' || a.untypedString) return undefined;
        return fail(`type mismatch: argument ${i + 1} of ${name}() must be a vector (FLOAT4[n], a $n parameter, ARRAY[…] or '[…]'), but ${a.label} is ${kindName(a.kind)}`);
      });
      if (dims[0] !== undefined && dims[1] !== undefined && dims[0] !== dims[1])
        fail(`${name}(): vector dimensions differ: ${args[0].label} has ${dims[0]}, ${args[1].label} has ${dims[1]}`);
      return ARROW.real;
    }
    case 'match':
      argCount(name, args, 2);
      wantText(name, args[0], 1);
      wantText(name, args[1], 2);
      return ARROW.boolean;
    default:
      return fail(`unknown function ${name}()`);
  }
}

function aggregateType(name: string, args: readonly ArgInfo[], call: { star: boolean; distinct: boolean }): DataType {
  if (call.star) {
    if (name !== 'count') fail(`${name}(*) is not valid; only count(*) takes *`);
    return ARROW.bigint;
  }
  argCount(name, args, 1);
  const a = args[0];
  switch (name) {
    case 'count':
      return ARROW.bigint;
    case 'sum': {
      want(name, a, 'a number', numeric, 1);
      const k = numKind(a);
      // PostgreSQL: sum of smallint/int is bigint, of bigint numeric (here bigint, overflow-checked), of real real.
      return isIntKind(k) ? ARROW.bigint : arrowOf(k as 'real' | 'double');
    }
    case 'avg':
      want(name, a, 'a number', numeric, 1);
      return ARROW.double;
    default: {
      // min / max
      if (a.kind === 'vector' || a.kind === undefined) fail(`${name}() cannot order ${a.label}`);
      if (a.kind === 'unknown' || a.untypedString) return ARROW.text;
      return arrowOf(a.kind as Exclude<SqlKind, 'vector'>);
    }
  }
}
