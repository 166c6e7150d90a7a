/**
 * Dates compared with timestamps (issue 8): PostgreSQL promotes the date to midnight of its day,
 * so `updated > created` between a Timestamp(µs) and a Date32 column works in the checker, in
 * filters (`evaluateFilter`, `evaluatePredicate`) and in value expressions (`evaluateValue`),
 * for =, <>, <, <=, >, >=, BETWEEN and IN, against a BigInt reference — including rows beyond
 * 2^53 µs (before 1685 / after 2255), where the kernel leaves doubles for BigInt.
 */
import test from 'ava';
import {
  type Data,
  type DataType,
  DateDay,
  DateMillisecond,
  Field,
  Int32,
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  TimestampNanosecond,
  TimestampSecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import {
  checkExpr,
  checkFilter,
  evaluateFilter,
  evaluatePredicate,
  evaluateValue,
  inferType,
  maskToIndices,
  parseFilter,
  parseFilterExpr,
} from '../../exec/expr/index.js';
import { InvalidError } from '../../src/errors.js';

const US_PER_DAY = 86_400_000_000n;

function column(type: DataType, values: readonly unknown[]): Data {
  return vectorFromArray(values as unknown[], type as never).data[0] as Data;
}

/** A column from raw stored values (days, µs…), nulls where the value is null. */
function raw(type: DataType, values: readonly (number | bigint | null)[], Ctor: Int32ArrayConstructor | BigInt64ArrayConstructor): Data {
  const n = values.length;
  const data = Ctor === Int32Array ? new Int32Array(n) : new BigInt64Array(n);
  const bitmap = new Uint8Array((n + 7) >> 3);
  let nullCount = 0;
  values.forEach((v, i) => {
    if (v === null) nullCount++;
    else {
      bitmap[i >> 3] |= 1 << (i & 7);
      (data as unknown as (number | bigint)[])[i] = v;
    }
  });
  return makeData({ type: type as never, length: n, nullCount, nullBitmap: nullCount ? bitmap : undefined, data } as never);
}

function batchOf(columns: Record<string, Data>): RecordBatch {
  const fields = Object.entries(columns).map(([name, d]) => new Field(name, d.type, true));
  const length = Object.values(columns)[0].length;
  return new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length, nullCount: 0, children: Object.values(columns) }));
}

// Days and microseconds chosen around midnight, before 1970, and beyond 2^53 µs (±285 years).
const D = 19_782; // 2024-02-29
const FAR = 120_000; // 2298-07-…: D·86.4e9 > 2^53
const days: (number | null)[] = [D, D, D, D, null, D, -1, -1, FAR, FAR, -FAR, -FAR, 0, D + 1, D];
const micros: (bigint | null)[] = [
  BigInt(D) * US_PER_DAY, // exactly midnight: equal
  BigInt(D) * US_PER_DAY + 1n, // one µs after
  BigInt(D) * US_PER_DAY - 1n, // one µs before
  BigInt(D + 1) * US_PER_DAY - 1n, // last µs of the day
  BigInt(D) * US_PER_DAY, // date NULL
  null, // timestamp NULL
  -US_PER_DAY, // 1969-12-31 midnight
  -US_PER_DAY + 1n,
  BigInt(FAR) * US_PER_DAY, // beyond 2^53: BigInt per row
  BigInt(FAR) * US_PER_DAY - 1n,
  -BigInt(FAR) * US_PER_DAY,
  -BigInt(FAR) * US_PER_DAY + 1n,
  0n,
  BigInt(D) * US_PER_DAY + 5n,
  BigInt(FAR) * US_PER_DAY, // a near date against a far timestamp
];

const batch = batchOf({
  d: raw(new DateDay(), days, Int32Array),
  ts: raw(new TimestampMicrosecond(), micros, BigInt64Array),
  i: column(new Int32(), days.map((_, k) => k)),
  s: column(new Utf8(), days.map(() => '2024-02-29')),
});

const OPS = ['=', '<>', '<', '<=', '>', '>='] as const;

function holds(op: (typeof OPS)[number], x: bigint, y: bigint): boolean {
  switch (op) {
    case '=':
      return x === y;
    case '<>':
      return x !== y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
  }
}

/** Reference: `ts op d` with the date at midnight; null when either is NULL. */
function reference(op: (typeof OPS)[number], swap = false): (boolean | null)[] {
  return days.map((dd, k) => {
    const t = micros[k];
    if (dd === null || t === null) return null;
    const m = BigInt(dd) * US_PER_DAY;
    return swap ? holds(op, m, t) : holds(op, t, m);
  });
}

const rows = (sql: string, params?: unknown[], b = batch) => [...maskToIndices(evaluateFilter(parseFilter(sql, b.schema), b, params))];
const trueRows = (ref: (boolean | null)[]) => ref.flatMap((v, k) => (v === true ? [k] : []));

function predicate(sql: string, b = batch): (boolean | null)[] {
  const p = evaluatePredicate(checkFilter(parseFilterExpr(sql), b.schema), b);
  return Array.from(p.values, (v, k) => (p.validity && !p.validity[k] ? null : v === 1));
}

function values(sql: string, b = batch): unknown[] {
  const e = checkExpr(parseFilterExpr(sql), b.schema);
  const d = evaluateValue(e, b);
  t_typeMatches(String(inferType(e, b.schema)), String(d.type), sql);
  const v = makeVector(d);
  return Array.from({ length: d.length }, (_, k) => v.get(k));
}

function t_typeMatches(inferred: string, got: string, sql: string): void {
  if (inferred !== got) throw new Error(`inferType ${inferred} but evaluateValue gave ${got} for ${sql}`);
}

test('timestamp column op date column: every operator, both orders, in filters, predicates and values', (t) => {
  for (const op of OPS) {
    const ref = reference(op);
    t.deepEqual(rows(`ts ${op} d`), trueRows(ref), `ts ${op} d`);
    t.deepEqual(predicate(`ts ${op} d`), ref, `ts ${op} d (three-valued)`);
    t.deepEqual(values(`ts ${op} d`), ref, `ts ${op} d (evaluateValue)`);
    const swapped = reference(op, true);
    t.deepEqual(rows(`d ${op} ts`), trueRows(swapped), `d ${op} ts`);
    t.deepEqual(predicate(`d ${op} ts`), swapped, `d ${op} ts (three-valued)`);
  }
  // The corpus statement's shape: the timestamp later than the midnight of the date.
  t.deepEqual(rows('ts > d'), [1, 3, 7, 11, 14]);
});

test('BETWEEN and IN mix dates and timestamps', (t) => {
  const ref = days.map((dd, k) => {
    const ts = micros[k];
    if (dd === null || ts === null) return null;
    return ts >= BigInt(dd) * US_PER_DAY && ts <= BigInt(dd + 1) * US_PER_DAY;
  });
  t.deepEqual(predicate('ts BETWEEN d AND d + 1'), ref);
  t.deepEqual(rows('ts NOT BETWEEN d AND d + 1'), trueRows(ref.map((v) => (v === null ? null : !v))));
  t.deepEqual(rows('d BETWEEN ts AND ts'), trueRows(reference('=')));
  // IN with column items is ORed equality; with constants a set lookup in the column's storage.
  t.deepEqual(rows('ts IN (d, d + 1)'), trueRows(days.map((dd, k) => (dd === null || micros[k] === null ? null : micros[k] === BigInt(dd) * US_PER_DAY || micros[k] === BigInt(dd + 1) * US_PER_DAY))));
  t.deepEqual(rows('d NOT IN (ts)'), trueRows(reference('<>')));
  t.deepEqual(rows("ts IN (DATE '2024-02-29', DATE '1969-12-31')"), [0, 4, 6]);
  t.deepEqual(rows("d IN (TIMESTAMP '2024-02-29 00:00:00', TIMESTAMP '2024-03-01 00:00:01')"), [0, 1, 2, 3, 5, 14]);
});

test('literals and parameters: a date meets a timestamp column and a timestamp a date column', (t) => {
  t.deepEqual(rows("ts >= DATE '2024-02-29'"), [0, 1, 3, 4, 8, 9, 13, 14]);
  t.deepEqual(rows("ts < DATE '1970-01-01'"), [6, 7, 10, 11]);
  // A date is midnight: it equals a timestamp only at 00:00:00.
  t.deepEqual(rows("d = TIMESTAMP '2024-02-29 00:00:00'"), [0, 1, 2, 3, 5, 14]);
  t.deepEqual(rows("d = TIMESTAMP '2024-02-29 00:00:01'"), []);
  t.deepEqual(rows("d < TIMESTAMP '2024-02-29 00:00:01'"), [0, 1, 2, 3, 5, 6, 7, 10, 11, 12, 14]);
  t.deepEqual(rows("d > TIMESTAMP '2024-02-29 23:59:59'"), [8, 9, 13]);
  t.deepEqual(rows('d >= $1', [new Date(Date.UTC(2024, 1, 29, 12))]), [8, 9, 13]);
  // Two constants fold: DATE '…' = midnight TIMESTAMP.
  t.deepEqual(values("DATE '2024-02-29' = TIMESTAMP '2024-02-29 00:00:00'")[0], true);
  t.deepEqual(values("DATE '2024-02-29' < TIMESTAMP '2024-02-29 00:00:00.000001'")[0], true);
});

test('computed dates and timestamps compare too (value nodes, CASE, NULLIF, GREATEST)', (t) => {
  const next = days.map((dd, k) => (dd === null || micros[k] === null ? null : micros[k]! < BigInt(dd + 1) * US_PER_DAY));
  t.deepEqual(predicate('d + 1 > ts'), next);
  t.deepEqual(rows('ts < d + 1 AND i < 12'), trueRows(next).filter((k) => k < 12));
  t.deepEqual(
    values('CASE WHEN ts > d THEN 1 WHEN ts = d THEN 0 ELSE -1 END'),
    days.map((dd, k) => {
      const ts = micros[k];
      if (dd === null || ts === null) return -1;
      const m = BigInt(dd) * US_PER_DAY;
      return ts > m ? 1 : ts === m ? 0 : -1;
    }),
  );
  t.deepEqual(values('CASE d WHEN ts THEN 1 ELSE 0 END'), reference('=').map((v) => (v ? 1 : 0)));
  t.deepEqual(
    values('NULLIF(ts, d) IS NULL'),
    reference('=').map((v, k) => v === true || micros[k] === null),
  );
  // GREATEST ignores NULLs: where d is NULL it is ts.
  t.deepEqual(rows('GREATEST(ts, d) = ts'), [...trueRows(reference('>=')), 4].sort((x, y) => x - y));
  t.deepEqual(rows('CAST(ts AS date) = d'), trueRows(days.map((dd, k) => (dd === null || micros[k] === null ? null : micros[k]! / US_PER_DAY - (micros[k]! < 0n && micros[k]! % US_PER_DAY !== 0n ? 1n : 0n) === BigInt(dd)))));
});

test('other units: Timestamp(s) and Timestamp(ns) against Date32, Date64 against Date32 and timestamps', (t) => {
  const dd = [0, 1, -1, 19_782, null, 5];
  const b = batchOf({
    d: raw(new DateDay(), dd, Int32Array),
    sec: raw(new TimestampSecond(), [0n, 86_399n, -86_400n, 19_782n * 86_400n + 1n, 0n, null], BigInt64Array),
    ns: raw(new TimestampNanosecond(), [0n, 86_400_000_000_000n, -86_399_999_999_999n, 19_782n * 86_400_000_000_000n, 0n, 1n], BigInt64Array),
    ms: column(new DateMillisecond(), [new Date(0), new Date(86_400_000), new Date(-86_400_000), new Date(Date.UTC(2024, 1, 29)), new Date(0), null]),
  });
  t.deepEqual(rows('sec > d', undefined, b), [3]);
  t.deepEqual(rows('sec < d', undefined, b), [1]);
  t.deepEqual(rows('sec = d', undefined, b), [0, 2]);
  t.deepEqual(rows('ns = d', undefined, b), [0, 1, 3]);
  t.deepEqual(rows('ns > d', undefined, b), [2]);
  t.deepEqual(rows('ms = d', undefined, b), [0, 1, 2, 3]);
  t.deepEqual(rows('ms <= sec', undefined, b), [0, 2, 3, 4]);
  t.deepEqual(rows('ns >= sec', undefined, b), [0, 1, 2, 4]);
});

test('dates and timestamps still do not compare with numbers or text columns', (t) => {
  for (const sql of ['ts > i', 'd = i', 'ts = s', 'd < s'])
    t.throws(() => parseFilter(sql, batch.schema), { instanceOf: InvalidError, message: /type mismatch: cannot compare/ }, sql);
  t.throws(() => checkExpr(parseFilterExpr('CASE WHEN d > i THEN 1 END'), batch.schema), { instanceOf: InvalidError, message: /cannot compare/ });
});
