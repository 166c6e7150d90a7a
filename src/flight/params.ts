/**
 * Bound parameters: Flight SQL clients bind a prepared statement's parameters as an Arrow record
 * batch (DoPut), one row per parameter set, column i binding `$i+1`. The engine takes JS values
 * (number | bigint | string | boolean | null | Date | Float32Array | number[]), so each cell is
 * converted here, by the column's Arrow type:
 *
 *   Int8..Int32, Uint8..Uint32, Float*  -> number        Int64 / Uint64 -> bigint
 *   Utf8 / LargeUtf8 -> string                           Bool -> boolean
 *   Date / Timestamp -> Date                             null -> null
 *   FixedSizeList / List of numbers -> Float32Array (a query vector)
 *   Dictionary -> its value, converted the same way
 *
 * Also the SQL text helpers that go with parameters: counting `$n` placeholders (for the
 * parameter schema of a prepared statement, planned before any value is known) and rewriting
 * InfluxDB-style named `$name` parameters to positions.
 */
import { type DataType, Field, Null, type RecordBatch, Schema, Type, type Vector } from 'apache-arrow';
import { InvalidError } from '../errors.js';

export type ParamValue = number | bigint | string | boolean | null | Date | Float32Array | number[];

/** Every row of a parameter batch as one parameter set. */
export function parameterSets(batch: RecordBatch): ParamValue[][] {
  const columns = batch.schema.fields.map((f, i) => ({ field: f, vector: batch.getChildAt(i)! }));
  const sets: ParamValue[][] = [];
  for (let row = 0; row < batch.numRows; row++) sets.push(columns.map(({ field, vector }) => cellValue(vector, field.type, row, field.name)));
  return sets;
}

function cellValue(vector: Vector, type: DataType, row: number, name: string): ParamValue {
  if (!vector.isValid(row)) return null;
  const v = vector.get(row);
  return convert(v, type, name);
}

function convert(v: unknown, type: DataType, name: string): ParamValue {
  if (v === null || v === undefined) return null;
  switch (type.typeId) {
    case Type.Null:
      return null;
    case Type.Int: {
      const bits = (type as unknown as { bitWidth: number }).bitWidth;
      if (bits === 64) return typeof v === 'bigint' ? v : BigInt(v as number);
      return Number(v);
    }
    case Type.Float:
    case Type.Decimal:
      return Number(v);
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Utf8View:
      return String(v);
    case Type.Bool:
      return Boolean(v);
    case Type.Date:
    case Type.Timestamp:
      return v instanceof Date ? v : new Date(Number(v));
    case Type.FixedSizeList:
    case Type.List:
    case Type.LargeList: {
      const items = v as Vector;
      const child = (type as unknown as { children: Field[] }).children[0].type;
      if (child.typeId !== Type.Float && child.typeId !== Type.Int) {
        throw new InvalidError(`parameter ${name}: lists of ${String(child)} are not supported (vectors are lists of numbers)`);
      }
      const out = new Float32Array(items.length);
      for (let i = 0; i < items.length; i++) {
        const x = items.get(i);
        if (x === null) throw new InvalidError(`parameter ${name}: a vector may not contain NULL`);
        out[i] = Number(x);
      }
      return out;
    }
    case Type.Dictionary:
      return convert(v, (type as unknown as { dictionary: DataType }).dictionary, name);
    case Type.DenseUnion:
    case Type.SparseUnion:
      // A union-typed parameter column (clients that bind untyped parameters): the row's value as it comes.
      return plainValue(v, name);
    default:
      throw new InvalidError(`parameter ${name}: Arrow type ${String(type)} is not supported as a SQL parameter`);
  }
}

function plainValue(v: unknown, name: string): ParamValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string' || typeof v === 'boolean' || v instanceof Date) return v;
  if (v instanceof Float32Array) return v;
  if (typeof (v as Vector).toArray === 'function') return Float32Array.from((v as Vector).toArray() as ArrayLike<number>, Number);
  throw new InvalidError(`parameter ${name}: unsupported value`);
}

/**
 * Highest `$n` in a statement, outside string literals, quoted identifiers and comments
 * (0 = none). A prepared statement's parameter schema has this many fields.
 */
export function countParameters(sql: string): number {
  let max = 0;
  forEachCode(sql, (code) => {
    for (const m of code.matchAll(/\$(\d+)/g)) max = Math.max(max, Number(m[1]));
  });
  return max;
}

/** The parameter schema of a statement before values are known: `$1`..`$n`, type Null (untyped). */
export function parameterSchema(sql: string): Schema {
  const n = countParameters(sql);
  return new Schema(Array.from({ length: n }, (_, i) => new Field(`$${i + 1}`, new Null(), true)));
}

/**
 * Rewrites named parameters (`$name`, InfluxDB's JSON ticket `params`) to positions: returns the
 * SQL with `$name` replaced by `$k` and the values in position order.
 */
export function bindNamedParameters(sql: string, params: Readonly<Record<string, unknown>>): { sql: string; values: ParamValue[] } {
  const names = Object.keys(params);
  if (names.length === 0) return { sql, values: [] };
  if (names.every((n) => /^\d+$/.test(n))) {
    const values: ParamValue[] = [];
    for (const n of names) values[Number(n) - 1] = jsonParam(params[n], n);
    return { sql, values: Array.from(values, (v) => v ?? null) };
  }
  const index = new Map(names.map((n, i) => [n, i + 1]));
  let out = '';
  let last = 0;
  forEachCode(sql, (code, start) => {
    for (const m of code.matchAll(/\$([A-Za-z_][A-Za-z0-9_]*)/g)) {
      const k = index.get(m[1]);
      if (k === undefined) throw new InvalidError(`parameter $${m[1]} has no value in params`);
      const at = start + m.index!;
      out += sql.slice(last, at) + `$${k}`;
      last = at + m[0].length;
    }
  });
  out += sql.slice(last);
  return { sql: out, values: names.map((n) => jsonParam(params[n], n)) };
}

function jsonParam(v: unknown, name: string): ParamValue {
  if (v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return Float32Array.from(v);
  throw new InvalidError(`parameter ${name}: unsupported JSON value`);
}

/** Calls `fn` with each stretch of SQL code outside literals, quoted identifiers and comments. */
function forEachCode(sql: string, fn: (code: string, start: number) => void): void {
  let i = 0;
  let start = 0;
  const flush = (end: number) => {
    if (end > start) fn(sql.slice(start, end), start);
  };
  while (i < sql.length) {
    const c = sql[i];
    const next = sql[i + 1];
    let end = -1;
    if (c === "'" || c === '"') {
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) break;
        if (sql[j] === c) {
          if (sql[j + 1] === c) j += 2;
          else break;
        } else j++;
      }
      end = j + 1;
    } else if (c === '-' && next === '-') {
      const nl = sql.indexOf('\n', i);
      end = nl < 0 ? sql.length : nl + 1;
    } else if (c === '/' && next === '*') {
      const close = sql.indexOf('*/', i + 2);
      end = close < 0 ? sql.length : close + 2;
    }
    if (end >= 0) {
      flush(i);
      i = end;
      start = end;
    } else i++;
  }
  flush(sql.length);
}

/** The parameter sets of a batch that binds nothing: one empty set. */
export const NO_PARAMETERS: ParamValue[][] = [[]];
