/**
 * Column builders for `quiver load`: values as they come from a file (CSV text, JSON values,
 * Parquet's decoded values, apache-arrow's `get`) appended into typed arrays of the target
 * table's column type, then finished as Arrow Data.
 *
 * A value that does not fit the type throws a BadValue with a message naming the column and
 * the value; the loader adds the row/line number. Text is read the way PostgreSQL reads it:
 * integers exactly (BigInt for BIGINT, never through a double), booleans as true/false/t/f/
 * yes/no/1/0, dates as YYYY-MM-DD, timestamps as ISO 8601 (`T` or a space; a `Z` or offset is
 * converted to UTC), vectors as `[1, 2, 3]`.
 */
import {
  type Data,
  type DataType,
  type Field,
  FixedSizeList,
  makeData,
  TimeUnit,
  Type,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';

export class BadValue extends Error {}

/** A time as an exact count of units (Parquet's decoded timestamps), converted to the column's unit. */
export class EpochTime {
  constructor(
    readonly value: bigint,
    readonly perSecond: bigint,
  ) {}
}

export interface ColumnBuilder {
  readonly field: Field;
  /** Appends one value (null / undefined / '' from CSV = NULL). */
  append(value: unknown): void;
  /** The appended values as Data; the builder starts empty again. */
  finish(): Data;
  /** Drops the values appended since the last finish past `length` (a rejected row). */
  truncate(length: number): void;
  readonly length: number;
}

function describe(value: unknown): string {
  const s = typeof value === 'string' ? JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value) : String(value);
  return s;
}

class Validity {
  bits = new Uint8Array(1024);
  nulls = 0;
  set(i: number, valid: boolean): void {
    if (i >> 3 >= this.bits.length) {
      const grown = new Uint8Array(this.bits.length * 2);
      grown.set(this.bits);
      this.bits = grown;
    }
    if (valid) this.bits[i >> 3] |= 1 << (i & 7);
    else {
      this.bits[i >> 3] &= ~(1 << (i & 7));
      this.nulls++;
    }
  }
  recount(length: number): void {
    let nulls = 0;
    for (let i = 0; i < length; i++) if (!(this.bits[i >> 3] & (1 << (i & 7)))) nulls++;
    this.nulls = nulls;
  }
  take(length: number): { bitmap: Uint8Array | undefined; nulls: number } {
    const out = this.nulls ? this.bits.slice(0, (length + 7) >> 3) : undefined;
    const nulls = this.nulls;
    this.bits = new Uint8Array(1024);
    this.nulls = 0;
    return { bitmap: out, nulls };
  }
}

const isNull = (v: unknown) => v === null || v === undefined || v === '';

type Parse<T> = (value: unknown) => T;

/** A builder over a growable typed array. */
function typedBuilder<A extends BigInt64Array | Int32Array | Int16Array | Int8Array | Float64Array | Float32Array>(
  field: Field,
  make: (n: number) => A,
  parse: Parse<A[number]>,
): ColumnBuilder {
  let values = make(1024);
  let length = 0;
  const validity = new Validity();
  return {
    field,
    get length() {
      return length;
    },
    append(value) {
      if (length === values.length) {
        const grown = make(values.length * 2);
        grown.set(values as never);
        values = grown;
      }
      if (isNull(value)) {
        if (!field.nullable) throw new BadValue(`column ${field.name} is NOT NULL but the value is empty`);
        validity.set(length++, false);
        return;
      }
      values[length] = parse(value);
      validity.set(length++, true);
    },
    truncate(n) {
      length = n;
      validity.recount(n);
    },
    finish() {
      const { bitmap, nulls } = validity.take(length);
      const data = makeData({ type: field.type as never, length, nullCount: nulls, nullBitmap: bitmap, data: values.slice(0, length) } as never) as Data;
      values = make(1024);
      length = 0;
      return data;
    },
  };
}

const INT_TEXT = /^\s*[+-]?\d+\s*$/;

function parseBigInt(field: Field): Parse<bigint> {
  return (v) => {
    if (typeof v === 'bigint') return BigInt.asIntN(64, v) === v ? v : fail(field, v, 'BIGINT (out of range)');
    if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : fail(field, v, 'BIGINT');
    if (typeof v === 'string' && INT_TEXT.test(v)) {
      const b = BigInt(v.trim());
      if (BigInt.asIntN(64, b) !== b) fail(field, v, 'BIGINT (out of range)');
      return b;
    }
    return fail(field, v, 'BIGINT');
  };
}

function parseInt(field: Field, bits: number, name: string): Parse<number> {
  const max = 2 ** (bits - 1);
  return (v) => {
    const n = typeof v === 'string' ? (INT_TEXT.test(v) ? Number(v) : NaN) : typeof v === 'bigint' ? Number(v) : (v as number);
    if (typeof n !== 'number' || !Number.isInteger(n)) return fail(field, v, name);
    if (n < -max || n >= max) return fail(field, v, `${name} (out of range)`);
    return n;
  };
}

function parseFloat(field: Field, name: string): Parse<number> {
  return (v) => {
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint') return Number(v);
    if (typeof v === 'string') {
      const t = v.trim();
      if (/^[+-]?nan$/i.test(t)) return NaN;
      if (/^[+-]?inf(inity)?$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
      const n = Number(t);
      if (t !== '' && !Number.isNaN(n)) return n;
    }
    return fail(field, v, name);
  };
}

function fail(field: Field, value: unknown, type: string): never {
  throw new BadValue(`column ${field.name}: ${describe(value)} is not a valid ${type}`);
}

const DATE_TEXT = /^\s*(-?\d{4,})-(\d{2})-(\d{2})\s*$/;
const TIMESTAMP_TEXT = /^\s*(-?\d{4,})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?\s*$/i;

function dateDays(field: Field, v: unknown): number {
  if (v instanceof Date) return Math.floor(v.getTime() / 86_400_000);
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  const m = typeof v === 'string' ? DATE_TEXT.exec(v) : null;
  if (!m) return fail(field, v, 'DATE (YYYY-MM-DD)');
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const d = new Date(ms);
  if (d.getUTCMonth() !== Number(m[2]) - 1 || d.getUTCDate() !== Number(m[3])) fail(field, v, 'DATE');
  return Math.floor(ms / 86_400_000);
}

const UNIT_PER_SECOND: Record<number, bigint> = {
  [TimeUnit.SECOND]: 1n,
  [TimeUnit.MILLISECOND]: 1_000n,
  [TimeUnit.MICROSECOND]: 1_000_000n,
  [TimeUnit.NANOSECOND]: 1_000_000_000n,
};

/** A timestamp in the column's unit; bigint inputs are taken as already in that unit. */
function timestampValue(field: Field, perSecond: bigint, v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (v instanceof EpochTime) return v.perSecond === perSecond ? v.value : (v.value * perSecond) / v.perSecond;
  if (v instanceof Date) return (BigInt(v.getTime()) * perSecond) / 1000n;
  const m = typeof v === 'string' ? TIMESTAMP_TEXT.exec(v) : null;
  if (!m) return fail(field, v, 'TIMESTAMP (ISO 8601)');
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Number.isNaN(ms) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) fail(field, v, 'TIMESTAMP');
  let value = (BigInt(ms) / 1000n) * perSecond;
  const digits = String(perSecond).length - 1;
  if (frac) value += BigInt(frac.slice(0, digits).padEnd(digits, '0') || '0');
  if (zone && zone.toUpperCase() !== 'Z') {
    const zm = /([+-])(\d{2}):?(\d{2})?/.exec(zone)!;
    const offset = (BigInt(zm[2]) * 3600n + BigInt(zm[3] ?? '0') * 60n) * perSecond;
    value += zm[1] === '+' ? -offset : offset;
  }
  return value;
}

function vectorValues(field: Field, size: number, v: unknown): ArrayLike<number> {
  let arr: unknown = v;
  if (typeof v === 'string') {
    try {
      arr = JSON.parse(v);
    } catch {
      fail(field, v, `FLOAT4[${size}] ([v, …])`);
    }
  }
  if (ArrayBuffer.isView(arr) && !(arr instanceof DataView)) arr = Array.from(arr as unknown as ArrayLike<number>);
  if (arr && typeof arr === 'object' && 'toArray' in arr && typeof (arr as { toArray: unknown }).toArray === 'function') arr = Array.from((arr as { toArray(): ArrayLike<number> }).toArray());
  if (!Array.isArray(arr) || !arr.every((x) => typeof x === 'number')) return fail(field, v, `FLOAT4[${size}]`);
  if (arr.length !== size) throw new BadValue(`column ${field.name}: a vector of ${arr.length} values, the column holds ${size}`);
  return arr as number[];
}

function vectorBuilder(field: Field): ColumnBuilder {
  const type = field.type as FixedSizeList;
  const size = type.listSize;
  let values = new Float32Array(1024 * size);
  let length = 0;
  const validity = new Validity();
  return {
    field,
    get length() {
      return length;
    },
    append(value) {
      if ((length + 1) * size > values.length) {
        const grown = new Float32Array(values.length * 2);
        grown.set(values);
        values = grown;
      }
      if (isNull(value)) {
        if (!field.nullable) throw new BadValue(`column ${field.name} is NOT NULL but the value is empty`);
        validity.set(length++, false);
        return;
      }
      values.set(vectorValues(field, size, value), length * size);
      validity.set(length++, true);
    },
    truncate(n) {
      length = n;
      validity.recount(n);
    },
    finish() {
      const { bitmap, nulls } = validity.take(length);
      const child = makeData({ type: type.children[0].type as never, length: length * size, nullCount: 0, data: values.slice(0, length * size) } as never) as Data;
      values = new Float32Array(1024 * size);
      const n = length;
      length = 0;
      return makeData({ type, length: n, nullCount: nulls, nullBitmap: bitmap, child } as never) as Data;
    },
  };
}

function generalBuilder(field: Field, convert: (v: unknown) => unknown): ColumnBuilder {
  let values: unknown[] = [];
  return {
    field,
    get length() {
      return values.length;
    },
    append(value) {
      // Text keeps '' (CSV passes null for an unquoted empty field, '' for a quoted one).
      if (value === null || value === undefined || (value === '' && field.type.typeId !== Type.Utf8)) {
        if (!field.nullable) throw new BadValue(`column ${field.name} is NOT NULL but the value is empty`);
        values.push(null);
        return;
      }
      values.push(convert(value));
    },
    truncate(n) {
      values.length = n;
    },
    finish() {
      const data = vectorFromArray(values as never[], field.type as DataType).data[0] as Data;
      values = [];
      return data;
    },
  };
}

function boolValue(field: Field, v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  const t = typeof v === 'string' ? v.trim().toLowerCase() : '';
  if (['true', 't', 'yes', 'y', '1', 'on'].includes(t)) return true;
  if (['false', 'f', 'no', 'n', '0', 'off'].includes(t)) return false;
  return fail(field, v, 'BOOLEAN');
}

function textValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof EpochTime) return String(v.value);
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}

/** A builder for one column of the target table. */
export function columnBuilder(field: Field): ColumnBuilder {
  const type = field.type;
  switch (type.typeId) {
    case Type.Int: {
      const bits = (type as unknown as { bitWidth: number }).bitWidth;
      const signed = (type as unknown as { isSigned: boolean }).isSigned;
      if (signed && bits === 64) return typedBuilder(field, (n) => new BigInt64Array(n), parseBigInt(field));
      if (signed && bits === 32) return typedBuilder(field, (n) => new Int32Array(n), parseInt(field, 32, 'INTEGER'));
      if (signed && bits === 16) return typedBuilder(field, (n) => new Int16Array(n), parseInt(field, 16, 'SMALLINT'));
      if (signed && bits === 8) return typedBuilder(field, (n) => new Int8Array(n), parseInt(field, 8, 'TINYINT'));
      break;
    }
    case Type.Float: {
      const precision = (type as unknown as { precision: number }).precision;
      if (precision === 2) return typedBuilder(field, (n) => new Float64Array(n), parseFloat(field, 'DOUBLE'));
      if (precision === 1) return typedBuilder(field, (n) => new Float32Array(n), parseFloat(field, 'REAL'));
      break;
    }
    case Type.Date: {
      if ((type as unknown as { unit: number }).unit === 0) return typedBuilder(field, (n) => new Int32Array(n), (v) => dateDays(field, v));
      break;
    }
    case Type.Timestamp: {
      const per = UNIT_PER_SECOND[(type as unknown as { unit: TimeUnit }).unit];
      return typedBuilder(field, (n) => new BigInt64Array(n), (v) => timestampValue(field, per, v));
    }
    case Type.FixedSizeList: {
      const child = (type as FixedSizeList).children[0].type;
      if (child.typeId === Type.Float && (child as unknown as { precision: number }).precision === 1) return vectorBuilder(field);
      break;
    }
    case Type.Bool:
      return generalBuilder(field, (v) => boolValue(field, v));
    case Type.Utf8:
      return generalBuilder(field, textValue);
  }
  if (type instanceof Utf8) return generalBuilder(field, textValue);
  return generalBuilder(field, (v) => v);
}
