/**
 * How SQL values meet Arrow columns: which column types a filter can read, and how a literal or
 * a `$n` parameter becomes a value directly comparable with a column's *stored* values.
 *
 * The evaluator never converts a column to fit a constant; it converts the constant once to
 * the column's storage (days for Date32, the unit count for Timestamp, bigint for 64-bit
 * integers, UTF-8 for strings), so that the per-row loops compare raw typed-array values. When a
 * constant falls between two storable values (`int64_col < 2.5`, a timestamp in microseconds
 * against Timestamp(s)) the exact position is kept as floor + "inexact" instead of rounding, and
 * each operator turns that into the right integer bound.
 *
 * Type rules (also enforced statically by check.ts): numbers compare with numbers (ints with
 * floats numerically), strings with strings, booleans with booleans, dates and timestamps with
 * each other (columns, computed values and literals; a date is midnight of its day) and with
 * strings that parse as ISO dates / timestamps (no offset = UTC).
 * Parameters may also pass a JS `Date`, and for date/timestamp columns a raw stored value
 * (number or bigint in the column's unit).
 */
import { type DataType, Type, type Dictionary } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { dateObjectNanos, exactQuotient, parseDate, parseTimestampNanos, temporalUnitNanos } from './temporal.js';

export type ValueClass = 'int' | 'float' | 'string' | 'bool' | 'date' | 'timestamp';

/** How a column's values are stored: JS numbers in a typed array, bigints, or UTF-8 bytes. */
export type Storage = 'number' | 'bigint' | 'string';

export interface ColumnDomain {
  readonly cls: ValueClass;
  readonly storage: Storage;
  /** Date/Timestamp: nanoseconds per stored unit. */
  readonly unitNanos?: bigint;
  readonly unsigned?: boolean;
}

const NUMBER_INT: ColumnDomain = { cls: 'int', storage: 'number' };
const BIG_INT: ColumnDomain = { cls: 'int', storage: 'bigint' };
const BIG_UINT: ColumnDomain = { cls: 'int', storage: 'bigint', unsigned: true };
const FLOAT: ColumnDomain = { cls: 'float', storage: 'number' };
const STRING: ColumnDomain = { cls: 'string', storage: 'string' };
const BOOL: ColumnDomain = { cls: 'bool', storage: 'number' };
export const BOOL_DOMAIN = BOOL;

/** The domain of an Arrow type, or undefined when filters cannot read that type. */
export function domainOf(type: DataType): ColumnDomain | undefined {
  switch (type.typeId) {
    case Type.Int: {
      const t = type as unknown as { bitWidth: number; isSigned: boolean };
      if (t.bitWidth === 64) return t.isSigned ? BIG_INT : BIG_UINT;
      return NUMBER_INT;
    }
    case Type.Float: {
      // Float16 is stored as raw half-precision bits: not readable as numbers.
      const precision = (type as unknown as { precision: number }).precision;
      return precision === 0 ? undefined : FLOAT;
    }
    case Type.Utf8:
      return STRING;
    case Type.Bool:
      return BOOL;
    case Type.Date: {
      const unitNanos = temporalUnitNanos(type)!;
      return { cls: 'date', storage: unitNanos === 86_400_000_000_000n ? 'number' : 'bigint', unitNanos };
    }
    case Type.Timestamp:
      return { cls: 'timestamp', storage: 'bigint', unitNanos: temporalUnitNanos(type)! };
    case Type.Dictionary: {
      const d = type as unknown as Dictionary;
      return d.dictionary.typeId === Type.Utf8 ? STRING : undefined;
    }
  }
  return undefined;
}

export function isNumericClass(c: ValueClass): boolean {
  return c === 'int' || c === 'float';
}

export function isTemporalClass(c: ValueClass): boolean {
  return c === 'date' || c === 'timestamp';
}

/**
 * Whether two column classes can be compared with each other: numbers with numbers, and dates
 * with timestamps (the date as midnight of its day, as PostgreSQL promotes date to timestamp).
 */
export function classesComparable(a: ValueClass, b: ValueClass): boolean {
  return a === b || (isNumericClass(a) && isNumericClass(b)) || (isTemporalClass(a) && isTemporalClass(b));
}

/** The class a literal or parameter value naturally has; undefined for unsupported JS values. */
export function classOfValue(value: unknown, temporal?: 'date' | 'timestamp'): ValueClass | 'null' | undefined {
  if (value === null || value === undefined) return 'null';
  if (temporal) return temporal;
  switch (typeof value) {
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    case 'bigint':
      return 'int';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
  }
  if (value instanceof Date) return 'timestamp';
  return undefined;
}

/** A constant in a column's storage representation. */
export type StoredConstant =
  | { readonly t: 'null' }
  /** number storage; may be fractional for an integer column, which compares correctly as is */
  | { readonly t: 'num'; readonly v: number }
  /** bigint storage: the constant equals `floor` when exact, else lies strictly in (floor, floor+1) */
  | { readonly t: 'big'; readonly floor: bigint; readonly exact: boolean }
  /** NaN met a bigint column: every comparison is false except `<>` (IEEE 754, as in JS) */
  | { readonly t: 'nan' }
  | { readonly t: 'str'; readonly v: string };

const BIG_INFINITY = 1n << 80n;

/** A JS number as an exact rational against integers (floor + exactness); ±Infinity saturate. */
export function numberToBig(v: number): StoredConstant {
  if (Number.isNaN(v)) return { t: 'nan' };
  if (v === Infinity) return { t: 'big', floor: BIG_INFINITY, exact: false };
  if (v === -Infinity) return { t: 'big', floor: -BIG_INFINITY - 1n, exact: false };
  const f = Math.floor(v);
  return { t: 'big', floor: BigInt(f), exact: f === v };
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return `the string '${value.length > 40 ? value.slice(0, 40) + '…' : value}'`;
  if (typeof value === 'bigint') return `the integer ${value}`;
  if (typeof value === 'number') return `the number ${value}`;
  if (typeof value === 'boolean') return `the boolean ${value ? 'TRUE' : 'FALSE'}`;
  if (value instanceof Date) return `the date ${Number.isFinite(value.getTime()) ? value.toISOString() : 'Invalid Date'}`;
  return `a ${typeof value} value`;
}

export function describeDomain(d: ColumnDomain): string {
  switch (d.cls) {
    case 'int':
      return 'integer';
    case 'float':
      return 'floating-point';
    case 'string':
      return 'string';
    case 'bool':
      return 'boolean';
    case 'date':
      return 'date';
    case 'timestamp':
      return 'timestamp';
  }
}

/**
 * Converts a literal or parameter to a constant comparable with values of `domain`.
 * `target` names the other side for the error message (e.g. "column price (Float64)").
 * `allowRaw`: a number/bigint given for a date/timestamp column is taken as a stored value
 * (parameters only; SQL text must write dates as strings).
 */
export function toStored(
  value: unknown,
  domain: ColumnDomain,
  target: string,
  opts: { temporal?: 'date' | 'timestamp'; allowRaw?: boolean; what?: string } = {},
): StoredConstant {
  if (value === null || value === undefined) return { t: 'null' };
  const mismatch = (hint = '') =>
    new InvalidError(
      `type mismatch: cannot compare ${target} with ${opts.what ? opts.what + ', ' : ''}${describeValue(value)}${hint}`,
    );
  if (opts.temporal && !isTemporalClass(domain.cls)) {
    throw mismatch(` (a ${opts.temporal.toUpperCase()} literal)`);
  }
  switch (domain.cls) {
    case 'int':
    case 'float': {
      if (typeof value === 'number') return domain.storage === 'bigint' ? numberToBig(value) : { t: 'num', v: value };
      if (typeof value === 'bigint')
        return domain.storage === 'bigint' ? { t: 'big', floor: value, exact: true } : { t: 'num', v: Number(value) };
      throw mismatch();
    }
    case 'bool':
      if (typeof value === 'boolean') return { t: 'num', v: value ? 1 : 0 };
      throw mismatch();
    case 'string':
      if (typeof value === 'string') return { t: 'str', v: value };
      throw mismatch();
    case 'date':
    case 'timestamp': {
      const unit = domain.unitNanos!;
      let nanos: bigint | undefined;
      if (typeof value === 'string') {
        const asDate = domain.cls === 'date' && opts.temporal !== 'timestamp';
        if (asDate) {
          const days = parseDate(value);
          if (days === undefined)
            throw new InvalidError(`'${value}' is not a valid date for ${target} (expected YYYY-MM-DD)`);
          nanos = BigInt(days) * 86_400_000_000_000n;
        } else {
          nanos = parseTimestampNanos(value);
          if (nanos === undefined)
            throw new InvalidError(
              `'${value}' is not a valid timestamp for ${target} (expected ISO 8601, e.g. 2024-01-31T12:00:00Z)`,
            );
        }
      } else if (value instanceof Date) {
        nanos = dateObjectNanos(value);
        if (nanos === undefined) throw new InvalidError(`an invalid Date cannot be compared with ${target}`);
      } else if (opts.allowRaw && (typeof value === 'number' || typeof value === 'bigint')) {
        if (domain.storage === 'number') return { t: 'num', v: Number(value) };
        return typeof value === 'bigint' ? { t: 'big', floor: value, exact: true } : numberToBig(value);
      } else {
        throw mismatch(domain.cls === 'date' ? " (write dates as 'YYYY-MM-DD')" : " (write timestamps as ISO 8601 strings)");
      }
      const q = exactQuotient(nanos, unit);
      if (domain.storage === 'number') return { t: 'num', v: Number(q.floor) + (q.exact ? 0 : 0.5) };
      return { t: 'big', floor: q.floor, exact: q.exact };
    }
  }
}
