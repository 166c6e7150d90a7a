/**
 * SQL value types and PostgreSQL's typing rules, as Arrow `DataType`s.
 *
 * Every type the expression layer reasons about is one `SqlKind`: a column's Arrow type maps to
 * the smallest PostgreSQL type that holds it (Int8/UInt8 → smallint, UInt16 → int, UInt32 and
 * UInt64 → bigint, any Date → date, any Timestamp → timestamp, Utf8 and dictionary-encoded Utf8
 * → text, FixedSizeList<Float32> → vector). Computed values always have the canonical Arrow type
 * of their kind (`ARROW`): Int16, Int32, Int64, Float32, Float64, Utf8, Bool, Date32 (days),
 * Timestamp(µs), FixedSizeList<Float32>; a bare column keeps its own Arrow type.
 *
 * Rules (PostgreSQL's; check.ts applies them, evaluate.ts produces exactly these types):
 * - integer literal → int if it fits in 32 bits, else bigint (beyond 64 bits: double);
 *   a literal with a decimal point or exponent → double;
 * - int op int → the wider of the two (smallint < int < bigint); real op real → real; any other
 *   mix of numbers → double; `/` between integers divides truncating toward zero;
 * - `||` → text (one side must be text; the other is converted to text, as PostgreSQL's
 *   `anynonarray || text` does); comparisons and logic → boolean; CAST → its target;
 * - CASE, COALESCE, NULLIF, GREATEST, LEAST → the common type of their branches: numbers widen
 *   as above, a date meets a timestamp as timestamp, an untyped string literal takes the type of
 *   the others (as PostgreSQL's `unknown` does), NULL fits anything;
 * - `$n` → from the bound JS value: an integral number is int when it fits in 32 bits, else
 *   bigint when safe (|x| ≤ 2^53), else double; a non-integral number double; bigint → bigint;
 *   string → text; boolean → boolean; Date → timestamp; Float32Array / number[] → vector; null
 *   → NULL (fits anything). Without bound values (`checkExpr`) a parameter is untyped and takes
 *   the type of what it meets.
 */
import {
  Bool,
  type DataType,
  DateDay,
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Null,
  TimestampMicrosecond,
  Type,
  Utf8,
} from 'apache-arrow';
import type { SqlTypeName } from './expr.js';

export type SqlKind =
  | 'smallint'
  | 'int'
  | 'bigint'
  | 'real'
  | 'double'
  | 'text'
  | 'boolean'
  | 'date'
  | 'timestamp'
  | 'vector'
  | 'null';

export const ARROW = {
  smallint: new Int16(),
  int: new Int32(),
  bigint: new Int64(),
  real: new Float32(),
  double: new Float64(),
  text: new Utf8(),
  boolean: new Bool(),
  date: new DateDay(),
  timestamp: new TimestampMicrosecond(),
  null: new Null(),
} as const;

/** FixedSizeList<Float32> of `dim` items: the vector type (`FLOAT4[dim]`). */
export function vectorType(dim: number): FixedSizeList<Float32> {
  return new FixedSizeList(dim, new Field('item', new Float32(), true));
}

/** The SQL kind of an Arrow type; undefined for types SQL expressions cannot use (structs, Float16, …). */
export function sqlKind(type: DataType): SqlKind | undefined {
  switch (type.typeId) {
    case Type.Int: {
      const t = type as unknown as { bitWidth: number; isSigned: boolean };
      if (t.bitWidth === 8) return 'smallint';
      if (t.bitWidth === 16) return t.isSigned ? 'smallint' : 'int';
      if (t.bitWidth === 32) return t.isSigned ? 'int' : 'bigint';
      return 'bigint';
    }
    case Type.Float: {
      const p = (type as unknown as { precision: number }).precision;
      return p === 1 ? 'real' : p === 2 ? 'double' : undefined;
    }
    case Type.Utf8:
      return 'text';
    case Type.Dictionary:
      return (type as unknown as { dictionary: DataType }).dictionary.typeId === Type.Utf8 ? 'text' : undefined;
    case Type.Bool:
      return 'boolean';
    case Type.Date:
      return 'date';
    case Type.Timestamp:
      return 'timestamp';
    case Type.Null:
      return 'null';
    case Type.FixedSizeList: {
      const child = (type as FixedSizeList).children[0]?.type;
      return child && child.typeId === Type.Float && (child as Float32).precision === 1 ? 'vector' : undefined;
    }
  }
  return undefined;
}

/** The canonical Arrow type of a kind (vectors need their dimension: use `vectorType`). */
export function arrowOf(kind: Exclude<SqlKind, 'vector'>): DataType {
  return ARROW[kind];
}

export function castTargetType(to: SqlTypeName): DataType {
  switch (to) {
    case 'bigint':
      return ARROW.bigint;
    case 'int':
      return ARROW.int;
    case 'smallint':
      return ARROW.smallint;
    case 'double':
      return ARROW.double;
    case 'real':
      return ARROW.real;
    case 'text':
      return ARROW.text;
    case 'boolean':
      return ARROW.boolean;
    case 'date':
      return ARROW.date;
    case 'timestamp':
      return ARROW.timestamp;
  }
}

/** PostgreSQL's name of a kind, for messages ("operator does not exist: text + integer"). */
export function kindName(kind: SqlKind | undefined): string {
  switch (kind) {
    case 'smallint':
      return 'smallint';
    case 'int':
      return 'integer';
    case 'bigint':
      return 'bigint';
    case 'real':
      return 'real';
    case 'double':
      return 'double precision';
    case 'text':
      return 'text';
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'date';
    case 'timestamp':
      return 'timestamp';
    case 'vector':
      return 'real[] (vector)';
    case 'null':
      return 'NULL';
    default:
      return 'an unsupported type';
  }
}

export const isIntKind = (k: SqlKind | undefined): k is 'smallint' | 'int' | 'bigint' => k === 'smallint' || k === 'int' || k === 'bigint';
export const isFloatKind = (k: SqlKind | undefined): k is 'real' | 'double' => k === 'real' || k === 'double';
export const isNumericKind = (k: SqlKind | undefined): k is 'smallint' | 'int' | 'bigint' | 'real' | 'double' => isIntKind(k) || isFloatKind(k);
export const isTemporalKind = (k: SqlKind | undefined): k is 'date' | 'timestamp' => k === 'date' || k === 'timestamp';

const RANK = { smallint: 1, int: 2, bigint: 3, real: 4, double: 5 } as const;

/** The result kind of a numeric operator on two numeric kinds. */
export function numericResult(a: SqlKind, b: SqlKind): 'smallint' | 'int' | 'bigint' | 'real' | 'double' {
  const ka = a as keyof typeof RANK;
  const kb = b as keyof typeof RANK;
  if (isFloatKind(ka) || isFloatKind(kb)) return ka === 'real' && kb === 'real' ? 'real' : 'double';
  return RANK[ka] >= RANK[kb] ? ka : kb;
}

/** Integer range of an int kind (for "integer out of range"). */
export const INT_RANGE = {
  smallint: [-32768, 32767],
  int: [-2147483648, 2147483647],
} as const;

/**
 * The common kind of CASE / COALESCE branches (NULL and untyped string literals excluded by
 * the caller); undefined when they do not meet (text with integer, …).
 */
export function commonKind(kinds: readonly SqlKind[]): SqlKind | undefined {
  const ks = kinds.filter((k) => k !== 'null');
  if (ks.length === 0) return 'null';
  let acc = ks[0];
  for (const k of ks.slice(1)) {
    if (k === acc) continue;
    if (isNumericKind(acc) && isNumericKind(k)) acc = numericResult(acc, k);
    else if (isTemporalKind(acc) && isTemporalKind(k)) acc = 'timestamp';
    else return undefined;
  }
  return acc;
}

/** The type of a literal as written. */
export function literalType(value: unknown, temporal?: 'date' | 'timestamp', float?: boolean): DataType {
  if (value === null || value === undefined) return ARROW.null;
  if (temporal) return temporal === 'date' ? ARROW.date : ARROW.timestamp;
  switch (typeof value) {
    case 'number':
      if (float || !Number.isInteger(value)) return ARROW.double;
      if (value >= -2147483648 && value <= 2147483647) return ARROW.int;
      return Number.isSafeInteger(value) ? ARROW.bigint : ARROW.double;
    case 'bigint':
      return value >= -(1n << 63n) && value < 1n << 63n ? (value >= -2147483648n && value <= 2147483647n ? ARROW.int : ARROW.bigint) : ARROW.double;
    case 'string':
      return ARROW.text;
    case 'boolean':
      return ARROW.boolean;
  }
  return ARROW.null;
}

/** The type of a bound `$n` value (see the header); undefined for unsupported JS values. */
export function paramType(value: unknown): DataType | undefined {
  if (value === null) return ARROW.null;
  if (value instanceof Date) return ARROW.timestamp;
  if (value instanceof Float32Array || value instanceof Float64Array) return vectorType(value.length);
  if (Array.isArray(value)) return value.every((x) => typeof x === 'number') ? vectorType(value.length) : undefined;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' || typeof value === 'boolean')
    return literalType(value);
  return undefined;
}

/** Dimension of a vector type. */
export function vectorDim(type: DataType): number {
  return (type as FixedSizeList).listSize;
}
