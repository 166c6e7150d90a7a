/**
 * Exact text for Arrow values, per column, read straight from the column's buffers.
 *
 * apache-arrow's `Vector.get` rounds on the way out (a microsecond timestamp becomes a float of
 * milliseconds, a Float32 a widened double), so each column gets a reader that formats from the
 * raw values instead:
 *
 * - 64-bit integers as exact decimal digits (never through a double);
 * - Float64 as JavaScript's shortest round-trip text, Float32 as the shortest text that reads back
 *   as the same float32 (`0.1`, not `0.10000000149011612`); NaN / ±Infinity as `NaN`, `Infinity`;
 * - DATE as `YYYY-MM-DD`, TIMESTAMP as ISO 8601 with the column's full precision and no trailing
 *   zeros (`2024-01-02T03:04:05.123456`; a `Z` only when the column has a UTC time zone);
 * - lists and vectors as `[v, v, …]` of their values' text;
 * - binary as hex.
 *
 * Each reader gives `text(row)` (null for NULL) and whether the value is a JSON number/boolean/
 * array literal as is (`raw`) or must be quoted as a JSON string.
 */
import { type Data, type DataType, type Field, makeVector, TimeUnit, Type, type Vector } from 'apache-arrow';

export interface ColumnReader {
  readonly field: Field;
  /** The value's text, or null for NULL. */
  text(row: number): string | null;
  /** The value as JSON text (`null`, a number written with all its digits, a string, an array). */
  json(row: number): string;
  /** True for numeric columns (right-aligned in tables). */
  readonly numeric: boolean;
  /** For list / vector columns: the number of values in the row, and their texts (for abbreviation). */
  list?(row: number): string[] | null;
}

/** Shortest decimal text that reads back as the same float32. */
export function float32Text(v: number): string {
  if (!Number.isFinite(v)) return nonFinite(v);
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  for (let p = 6; p <= 9; p++) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === v) return String(Number(s));
  }
  return String(v);
}

function float64Text(v: number): string {
  return Number.isFinite(v) ? String(v) : nonFinite(v);
}

function nonFinite(v: number): string {
  return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
}

const MS_PER_DAY = 86_400_000;

export function dateText(days: number): string {
  return new Date(days * MS_PER_DAY).toISOString().slice(0, 10);
}

/** An epoch value in `perSecond` units as ISO 8601 without trailing fractional zeros. */
export function timestampText(value: bigint, perSecond: bigint, utc: boolean): string {
  let seconds = value / perSecond;
  let fraction = value % perSecond;
  if (fraction < 0n) {
    fraction += perSecond;
    seconds -= 1n;
  }
  const iso = new Date(Number(seconds) * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  let text = iso.slice(0, iso.indexOf('.'));
  if (fraction !== 0n) {
    const digits = String(perSecond).length - 1;
    text += `.${fraction.toString().padStart(digits, '0').replace(/0+$/, '')}`;
  }
  return utc ? `${text}Z` : text;
}

const PER_SECOND: Record<number, bigint> = {
  [TimeUnit.SECOND]: 1n,
  [TimeUnit.MILLISECOND]: 1_000n,
  [TimeUnit.MICROSECOND]: 1_000_000n,
  [TimeUnit.NANOSECOND]: 1_000_000_000n,
};

function isUtc(tz: string | null | undefined): boolean {
  return !!tz && /^(utc|z|\+00:?00|etc\/utc|gmt)$/i.test(tz);
}

type Values = ArrayLike<number | bigint> & { [i: number]: number | bigint };

/** A function from a row of `data` to its text (non-null rows only). */
function valueText(type: DataType, data: Data): ((row: number) => string) | null {
  const values = data.values as Values;
  const at = data.offset;
  switch (type.typeId) {
    case Type.Int: {
      const bits = (type as unknown as { bitWidth: number }).bitWidth;
      if (bits === 64) return (r) => BigInt(values[at + r]).toString();
      return (r) => String(values[at + r]);
    }
    case Type.Float: {
      const precision = (type as unknown as { precision: number }).precision;
      if (precision === 1) return (r) => float32Text(values[at + r] as number);
      if (precision === 0) {
        const v = makeVector(data);
        return (r) => float64Text(Number(v.get(r)));
      }
      return (r) => float64Text(values[at + r] as number);
    }
    case Type.Bool: {
      const v = makeVector(data);
      return (r) => (v.get(r) ? 'true' : 'false');
    }
    case Type.Date: {
      const unit = (type as unknown as { unit: number }).unit;
      if (unit === 0 /* DateUnit.DAY */) return (r) => dateText(Number(values[at + r]));
      return (r) => new Date(Number(values[at + r])).toISOString().slice(0, 10);
    }
    case Type.Timestamp: {
      const t = type as unknown as { unit: TimeUnit; timezone?: string | null };
      const per = PER_SECOND[t.unit];
      const utc = isUtc(t.timezone);
      return (r) => timestampText(BigInt(values[at + r]), per, utc);
    }
    case Type.Binary:
    case Type.LargeBinary:
    case Type.FixedSizeBinary: {
      const v = makeVector(data);
      return (r) => `\\x${Buffer.from(v.get(r) as Uint8Array).toString('hex')}`;
    }
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Dictionary: {
      const v = makeVector(data);
      return (r) => String(v.get(r));
    }
    case Type.FixedSizeList:
    case Type.List: {
      const items = listItems(type, data);
      return (r) => `[${items(r).join(', ')}]`;
    }
    default:
      return null;
  }
}

/** Texts of the items of a list / fixed-size-list row. */
function listItems(type: DataType, data: Data): (row: number) => string[] {
  const child = data.children[0];
  const childType = child.type;
  const itemText = valueText(childType, child) ?? genericText(child);
  const childValid = (i: number) => child.nullCount === 0 || child.getValid(i);
  const item = (i: number) => (childValid(i) ? itemText(i) : 'NULL');
  if (type.typeId === Type.FixedSizeList) {
    const size = (type as unknown as { listSize: number }).listSize;
    return (r) => {
      const start = (data.offset + r) * size;
      const out = new Array<string>(size);
      for (let k = 0; k < size; k++) out[k] = item(start + k);
      return out;
    };
  }
  const offsets = data.valueOffsets as Int32Array;
  return (r) => {
    const start = offsets[data.offset + r];
    const end = offsets[data.offset + r + 1];
    const out = new Array<string>(end - start);
    for (let k = start; k < end; k++) out[k - start] = item(k);
    return out;
  };
}

function genericText(data: Data): (row: number) => string {
  const v = makeVector(data);
  return (r) => {
    const x = v.get(r);
    if (typeof x === 'bigint') return x.toString();
    if (x !== null && typeof x === 'object') return JSON.stringify(x, (_k, y) => (typeof y === 'bigint' ? y.toString() : y));
    return String(x);
  };
}

function isNumericType(type: DataType): boolean {
  return type.typeId === Type.Int || type.typeId === Type.Float || type.typeId === Type.Decimal;
}

/** JSON text of an item text: numbers and booleans as they are, other values quoted. */
function jsonItem(type: DataType, text: string): string {
  if (text === 'NULL') return 'null';
  if (isNumericType(type)) return /^-?\d/.test(text) ? text : JSON.stringify(text);
  if (type.typeId === Type.Bool) return text;
  return JSON.stringify(text);
}

/** A reader for one column of one batch (`data` = the batch's child). */
export function columnReader(field: Field, data: Data): ColumnReader {
  const type = data.type;
  const text0 = valueText(type, data) ?? genericText(data);
  const valid = type.typeId === Type.Null ? () => false : data.nullCount === 0 ? () => true : (r: number) => data.getValid(r);
  const text = (r: number) => (valid(r) ? text0(r) : null);
  const numeric = isNumericType(type);
  const isList = type.typeId === Type.FixedSizeList || type.typeId === Type.List;
  let json: (r: number) => string;
  let list: ColumnReader['list'];
  if (isList) {
    const items = listItems(type, data);
    const childType = data.children[0].type;
    list = (r) => (valid(r) ? items(r) : null);
    json = (r) => (valid(r) ? `[${items(r).map((t) => jsonItem(childType, t)).join(',')}]` : 'null');
  } else if (numeric) {
    json = (r) => {
      const t = text(r);
      return t === null ? 'null' : /^-?\d/.test(t) ? t : JSON.stringify(t);
    };
  } else if (type.typeId === Type.Bool) {
    json = (r) => text(r) ?? 'null';
  } else {
    json = (r) => {
      const t = text(r);
      return t === null ? 'null' : JSON.stringify(t);
    };
  }
  return { field, text, json, numeric, list };
}

/** Readers for every column of a batch. */
export function batchReaders(batch: { schema: { fields: Field[] }; data: { children: readonly Data[] } }): ColumnReader[] {
  return batch.schema.fields.map((f, i) => columnReader(f, batch.data.children[i]));
}

export type { Vector };
