import test from 'ava';
import {
  Bool,
  type Data,
  type DataType,
  DateDay,
  DateMillisecond,
  Dictionary,
  Field,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import {
  type AndExpr,
  and,
  andMasks,
  andNotMasks,
  between,
  clearFilterCache,
  col,
  compare,
  type CompareOp,
  countSelected,
  eq,
  evaluateFilter,
  evaluatePredicate,
  type Expr,
  exprToString,
  filterCacheSize,
  gt,
  indicesToMask,
  inList,
  intersectIndices,
  isNull,
  isTest,
  like,
  lit,
  type LiteralValue,
  maskToIndices,
  not,
  notMask,
  or,
  orMasks,
  param,
  parseFilter,
  parseFilterExpr,
  unionIndices,
  columnsOf,
  mapExpr,
  maxParamIndex,
} from '../../exec/expr/index.js';
import { InvalidError, isQuiverError } from '../../src/errors.js';
import { mulberry32 } from '../helpers/rng.js';

// ---------------------------------------------------------------------------------------------
// Helpers

const rng = mulberry32;

type TypedCtor = { new (n: number): { [i: number]: number | bigint; length: number } };

/** A primitive column built straight from values (nulls as a validity bitmap). */
function prim(type: DataType, Ctor: TypedCtor, values: readonly (number | bigint | null)[]): Data {
  const n = values.length;
  const data = new Ctor(n);
  const bitmap = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  values.forEach((v, i) => {
    if (v === null) nulls++;
    else {
      data[i] = v;
      bitmap[i >> 3] |= 1 << (i & 7);
    }
  });
  return makeData({ type: type as never, length: n, nullCount: nulls, nullBitmap: nulls ? bitmap : undefined, data: data as never });
}

function batchOf(columns: Record<string, Data>): RecordBatch {
  const fields = Object.entries(columns).map(([name, d]) => new Field(name, d.type, true));
  const schema = new Schema(fields);
  const length = Object.values(columns)[0].length;
  return new RecordBatch(schema, makeData({ type: new Struct(fields), length, nullCount: 0, children: Object.values(columns) }));
}

const rows = (mask: Uint8Array) => [...maskToIndices(mask)];

function filterRows(batch: RecordBatch, sql: string, params?: unknown[]): number[] {
  return rows(evaluateFilter(parseFilter(sql, batch.schema), batch, params));
}

/** 'T' / 'F' / 'N' per row for a three-valued result. */
function tri(batch: RecordBatch, e: Expr | string, params?: unknown[]): string {
  const expr = typeof e === 'string' ? parseFilter(e, batch.schema) : e;
  const p = evaluatePredicate(expr, batch, params);
  let s = '';
  for (let i = 0; i < p.length; i++) s += p.validity && !p.validity[i] ? 'N' : p.values[i] ? 'T' : 'F';
  return s;
}

function invalid(t: import('ava').ExecutionContext, fn: () => unknown, message: RegExp): InvalidError {
  const err = t.throws(fn, { instanceOf: InvalidError, message });
  t.true(isQuiverError(err, 'invalid'));
  return err as InvalidError;
}

const DAY_NS = 86_400_000_000_000n;
const days = (iso: string) => Date.UTC(+iso.slice(0, 4), +iso.slice(5, 7) - 1, +iso.slice(8, 10)) / 86_400_000;

// ---------------------------------------------------------------------------------------------
// Expression tree

test('factories build frozen, flattened nodes; printing and traversal', (t) => {
  const e = and(gt(col('a'), lit(1)), and(eq(col('b'), param(2)), not(isNull(col('c')))));
  t.true(Object.isFrozen(e));
  t.is(e.kind, 'and');
  t.is((e as AndExpr).operands.length, 3);
  t.true(Object.isFrozen((e as AndExpr).operands));
  t.is(exprToString(e), 'a > 1 AND b = $2 AND NOT c IS NULL');
  t.is(exprToString(or(and(col('p'), col('q')), col('r'))), 'p AND q OR r');
  t.is(exprToString(and(or(col('p'), col('q')), col('r'))), '(p OR q) AND r');
  t.is(exprToString(inList(col('Name'), [lit("it's"), lit(null)], true)), `"Name" NOT IN ('it''s', NULL)`);
  t.is(exprToString(like(col('s'), lit('a!%'), { escape: '!', caseInsensitive: true })), "s ILIKE 'a!%' ESCAPE '!'");
  t.deepEqual(columnsOf(e), ['a', 'b', 'c']);
  t.is(maxParamIndex(e), 2);
  t.throws(() => param(0), { instanceOf: RangeError });
  t.throws(() => inList(col('a'), []), { instanceOf: RangeError });
});

// ---------------------------------------------------------------------------------------------
// Operators and types

test('comparisons on every integer width, signed and unsigned, with nulls', (t) => {
  const cases: [DataType, TypedCtor, (number | bigint)[]][] = [
    [new Int8(), Int8Array, [-128, -1, 0, 5, 127]],
    [new Int16(), Int16Array, [-32768, -1, 0, 5, 32767]],
    [new Int32(), Int32Array, [-2147483648, -1, 0, 5, 2147483647]],
    [new Uint8(), Uint8Array, [0, 1, 5, 200, 255]],
    [new Uint16(), Uint16Array, [0, 1, 5, 40000, 65535]],
    [new Uint32(), Uint32Array, [0, 1, 5, 3000000000, 4294967295]],
    [new Int64(), BigInt64Array, [-(2n ** 63n), -1n, 0n, 5n, 2n ** 63n - 1n]],
    [new Uint64(), BigUint64Array, [0n, 1n, 5n, 2n ** 63n, 2n ** 64n - 1n]],
  ];
  for (const [type, Ctor, vals] of cases) {
    const batch = batchOf({ x: prim(type, Ctor, [...vals, null]) });
    const label = String(type);
    t.deepEqual(filterRows(batch, 'x = 5'), [vals.findIndex((v) => v == 5)], label);
    t.deepEqual(filterRows(batch, 'x <> 5'), [0, 1, 2, 3, 4].filter((i) => vals[i] != 5), label);
    t.deepEqual(filterRows(batch, 'x != 5'), filterRows(batch, 'x <> 5'), label);
    t.deepEqual(filterRows(batch, 'x < 5'), [0, 1, 2, 3, 4].filter((i) => vals[i] < 5), label);
    t.deepEqual(filterRows(batch, 'x <= 5'), [0, 1, 2, 3, 4].filter((i) => vals[i] <= 5), label);
    t.deepEqual(filterRows(batch, 'x > 5'), [0, 1, 2, 3, 4].filter((i) => vals[i] > 5), label);
    t.deepEqual(filterRows(batch, 'x >= 5'), [0, 1, 2, 3, 4].filter((i) => vals[i] >= 5), label);
    // Fractions between integers, and constants beyond the type's range.
    t.deepEqual(filterRows(batch, 'x > 4.5'), filterRows(batch, 'x >= 5'), label);
    t.deepEqual(filterRows(batch, 'x < 5.5'), filterRows(batch, 'x <= 5'), label);
    t.deepEqual(filterRows(batch, 'x = 5.5'), [], label);
    t.deepEqual(filterRows(batch, 'x <> 5.5'), [0, 1, 2, 3, 4], label);
    t.deepEqual(filterRows(batch, 'x < 99999999999999999999999'), [0, 1, 2, 3, 4], label);
    t.deepEqual(filterRows(batch, 'x > -99999999999999999999999'), [0, 1, 2, 3, 4], label);
    t.deepEqual(filterRows(batch, 'x = 99999999999999999999999'), [], label);
    // The extremes themselves.
    t.deepEqual(filterRows(batch, `x = ${vals[4]}`), [4], label);
    t.deepEqual(filterRows(batch, `x >= ${vals[4]}`), [4], label);
    t.deepEqual(filterRows(batch, `x <= ${vals[0]}`), [0], label);
    t.deepEqual(filterRows(batch, `x < ${vals[0]}`), [], label);
    t.deepEqual(filterRows(batch, 'x IS NULL'), [5], label);
  }
});

test('64-bit integers keep full precision beyond 2^53, literals and parameters', (t) => {
  const big = 9007199254740993n; // 2^53 + 1, not representable as a double
  const batch = batchOf({
    x: prim(new Int64(), BigInt64Array, [big - 1n, big, big + 1n, -big, null]),
    u: prim(new Uint64(), BigUint64Array, [2n ** 64n - 2n, 2n ** 64n - 1n, 0n, 2n ** 63n, null]),
  });
  t.deepEqual(filterRows(batch, `x = ${big}`), [1]);
  t.deepEqual(filterRows(batch, `x > ${big}`), [2]);
  t.deepEqual(filterRows(batch, `x = -${big}`), [3]);
  t.deepEqual(filterRows(batch, 'x = $1', [big + 1n]), [2]);
  t.deepEqual(filterRows(batch, 'x IN ($1, 1)', [-big]), [3]);
  t.deepEqual(filterRows(batch, `x IN (${big}, ${big + 1n})`), [1, 2]);
  t.deepEqual(filterRows(batch, 'u = 18446744073709551615'), [1]);
  t.deepEqual(filterRows(batch, 'u >= 9223372036854775808'), [0, 1, 3]);
  t.deepEqual(filterRows(batch, 'u > -1'), [0, 1, 2, 3]);
  t.deepEqual(filterRows(batch, 'u IN (0, 18446744073709551614)'), [0, 2]);
  t.deepEqual(filterRows(batch, 'x < u'), [0, 1, 3]);
  // The minimum Int64 literal (node-sql-parser alone would round it).
  const minBatch = batchOf({ x: prim(new Int64(), BigInt64Array, [-(2n ** 63n), -(2n ** 63n) + 1n]) });
  t.deepEqual(filterRows(minBatch, 'x = -9223372036854775808'), [0]);
  t.deepEqual(filterRows(minBatch, 'x IN (-9223372036854775807)'), [1]);
});

test('floats: ints compare with floats numerically; NaN, infinities and -0 follow IEEE 754', (t) => {
  const vals = [1.5, NaN, -0, Infinity, -Infinity, 2, null];
  const batch = batchOf({
    f: prim(new Float64(), Float64Array, vals),
    g: prim(new Float32(), Float32Array, [1.5, 0.1, 3, 4, 5, 6, null]),
    i: prim(new Int32(), Int32Array, [1, 2, 0, 4, -1, 2, 7]),
  });
  t.deepEqual(filterRows(batch, 'f > 1'), [0, 3, 5]);
  t.deepEqual(filterRows(batch, 'f = 0'), [2]);
  t.deepEqual(filterRows(batch, 'f <> 2'), [0, 1, 2, 3, 4]); // NaN <> 2 is true
  t.deepEqual(filterRows(batch, 'f = 2 OR f <= 2'), [0, 2, 4, 5]); // NaN is neither
  t.deepEqual(filterRows(batch, 'f IN (1.5, 2)'), [0, 5]);
  t.deepEqual(filterRows(batch, 'i = 1.5'), []);
  t.deepEqual(filterRows(batch, 'i < 1.5'), [0, 2, 4]);
  t.deepEqual(filterRows(batch, 'f > i'), [0, 3]);
  t.deepEqual(filterRows(batch, 'g = 1.5'), [0]);
  t.deepEqual(filterRows(batch, 'g > 0.1'), [0, 1, 2, 3, 4, 5]); // float32(0.1) > double 0.1
  t.deepEqual(filterRows(batch, 'g > $1', [Math.fround(0.1)]), [0, 2, 3, 4, 5]);
  t.deepEqual(rows(evaluateFilter(compare('=', col('f'), lit(NaN)), batch)), []);
  t.deepEqual(rows(evaluateFilter(compare('<>', col('f'), lit(NaN)), batch)), [0, 1, 2, 3, 4, 5]);
});

test('strings: equality, UTF-8 byte (code point) order, IN, empty strings', (t) => {
  const vals = ['', 'a', 'ab', 'b', 'B', 'é', '\uFFFD', '😀', null, 'ab'];
  const batch = batchOf({ s: vectorFromArray(vals, new Utf8()).data[0] });
  t.deepEqual(filterRows(batch, "s = 'ab'"), [2, 9]);
  t.deepEqual(filterRows(batch, "s = ''"), [0]);
  t.deepEqual(filterRows(batch, "s <> 'ab'"), [0, 1, 3, 4, 5, 6, 7]);
  t.deepEqual(filterRows(batch, "s < 'b'"), [0, 1, 2, 4, 9]);
  t.deepEqual(filterRows(batch, "s >= 'b'"), [3, 5, 6, 7]);
  // Code point order: U+FFFD < U+1F600, though '😀' < '\uFFFD' in JS (UTF-16) order.
  t.deepEqual(filterRows(batch, "s > '\uFFFD'"), [7]);
  t.deepEqual(filterRows(batch, "s IN ('ab', 'é', 'zz', '')"), [0, 2, 5, 9]);
  t.deepEqual(filterRows(batch, "s NOT IN ('ab', 'é')"), [0, 1, 3, 4, 6, 7]);
  t.deepEqual(filterRows(batch, "s = 'it''s'"), []);
  const quoted = batchOf({ s: vectorFromArray(["it's", 'a\\nb', 'a\nb'], new Utf8()).data[0] });
  t.deepEqual(filterRows(quoted, "s = 'it''s'"), [0]);
  // PostgreSQL standard strings: a backslash is an ordinary character.
  t.deepEqual(filterRows(quoted, "s = 'a\\nb'"), [1]);
  t.deepEqual(filterRows(quoted, 's = $1', ['a\nb']), [2]);
});

test('LIKE / NOT LIKE / ILIKE with %, _, escapes and multi-byte characters', (t) => {
  const vals = ['apple', 'Apple', 'banana', 'grape', 'a%b', 'a_b', 'axb', '', 'ápple', '日本語', null, 'pineapple'];
  const batch = batchOf({ s: vectorFromArray(vals, new Utf8()).data[0] });
  const L = (p: string) => filterRows(batch, `s LIKE '${p.replace(/'/g, "''")}'`);
  t.deepEqual(L('a%'), [0, 4, 5, 6]);
  t.deepEqual(L('%apple'), [0, 11]);
  t.deepEqual(L('%an%'), [2]);
  t.deepEqual(L('%p%l%'), [0, 1, 8, 11]);
  t.deepEqual(L('apple'), [0]);
  t.deepEqual(L('%'), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11]);
  t.deepEqual(L(''), [7]);
  t.deepEqual(L('_pple'), [0, 1, 8]); // _ is one character, also a two-byte one
  t.deepEqual(L('日_語'), [9]);
  t.deepEqual(L('a_b'), [4, 5, 6]);
  t.deepEqual(L('a\\_b'), [5]);
  t.deepEqual(L('a\\%b'), [4]);
  t.deepEqual(filterRows(batch, "s LIKE 'a!%b' ESCAPE '!'"), [4]);
  t.deepEqual(filterRows(batch, "s LIKE 'a\\%b' ESCAPE '\\'"), [4]);
  t.deepEqual(filterRows(batch, "s NOT LIKE '%a%'"), [1, 7, 8, 9]); // 'Apple', '', 'ápple', '日本語'
  t.deepEqual(filterRows(batch, "s ILIKE 'APPLE'"), [0, 1]);
  t.deepEqual(filterRows(batch, "s NOT ILIKE '%APP%'"), [2, 3, 4, 5, 6, 7, 8, 9]);
  t.deepEqual(filterRows(batch, 's LIKE $1', ['%na%']), [2]);
  t.deepEqual(filterRows(batch, 's LIKE $1', [null]), []);
  invalid(t, () => filterRows(batch, "s LIKE 'abc\\'"), /must not end with the escape character/);
});

test('booleans: as conditions, compared, IS TRUE / IS FALSE', (t) => {
  const batch = batchOf({
    b: vectorFromArray([true, false, null, true], new Bool()).data[0],
    c: vectorFromArray([true, true, false, null], new Bool()).data[0],
  });
  t.deepEqual(filterRows(batch, 'b'), [0, 3]);
  t.deepEqual(filterRows(batch, 'NOT b'), [1]);
  t.deepEqual(filterRows(batch, 'b = TRUE'), [0, 3]);
  t.deepEqual(filterRows(batch, 'b = c'), [0]);
  t.deepEqual(filterRows(batch, 'b < c'), [1]);
  t.deepEqual(filterRows(batch, 'b IN (FALSE)'), [1]);
  t.is(tri(batch, 'b IS TRUE'), 'TFFT');
  t.is(tri(batch, 'b IS NOT TRUE'), 'FTTF');
  t.is(tri(batch, 'b IS FALSE'), 'FTFF');
  t.is(tri(batch, 'b IS NOT FALSE'), 'TFTT');
  t.is(tri(batch, '(b AND c) IS NULL'), 'FFFT');
});

test('dates and timestamps compare with ISO strings, DATE/TIMESTAMP literals and Date parameters', (t) => {
  const dayValues = ['2024-01-30', '2024-01-31', '2024-02-01', '2023-12-31'].map(days);
  const tsMicros = [Date.UTC(2024, 0, 31, 0, 0, 0), Date.UTC(2024, 0, 31, 12, 0, 0), Date.UTC(2024, 1, 1)].map((ms) => BigInt(ms) * 1000n);
  tsMicros.push(tsMicros[1] + 1n); // one microsecond after noon
  const batch = batchOf({
    d: prim(new DateDay(), Int32Array, [...dayValues, null]),
    d64: prim(new DateMillisecond(), BigInt64Array, [...dayValues.map((d) => BigInt(d) * 86_400_000n), null]),
    ts: prim(new TimestampMicrosecond(), BigInt64Array, [...tsMicros, null]),
    tss: prim(new TimestampSecond(), BigInt64Array, [...tsMicros.map((m) => m / 1_000_000n), null]),
  });
  t.deepEqual(filterRows(batch, "d = '2024-01-31'"), [1]);
  t.deepEqual(filterRows(batch, "d >= '2024-01-31'"), [1, 2]);
  t.deepEqual(filterRows(batch, "d < DATE '2024-01-01'"), [3]);
  t.deepEqual(filterRows(batch, "d BETWEEN '2024-01-01' AND '2024-01-31'"), [0, 1]);
  t.deepEqual(filterRows(batch, "d IN ('2024-02-01', '2023-12-31')"), [2, 3]);
  t.deepEqual(filterRows(batch, "d64 >= '2024-01-31'"), [1, 2]);
  t.deepEqual(filterRows(batch, 'd = d64'), [0, 1, 2, 3]);
  // A timestamp literal against a date column: the date is midnight of its day.
  t.deepEqual(filterRows(batch, "d > TIMESTAMP '2024-01-31 12:00:00'"), [2]);
  t.deepEqual(filterRows(batch, "d <= TIMESTAMP '2024-01-31 12:00:00'"), [0, 1, 3]);
  t.deepEqual(filterRows(batch, "d = TIMESTAMP '2024-01-31 12:00:00'"), []);
  t.deepEqual(filterRows(batch, "ts = '2024-01-31T12:00:00Z'"), [1]);
  t.deepEqual(filterRows(batch, "ts > '2024-01-31 12:00:00'"), [2, 3]);
  t.deepEqual(filterRows(batch, "ts >= '2024-01-31'"), [0, 1, 2, 3]);
  t.deepEqual(filterRows(batch, "ts = '2024-01-31T12:00:00.000001Z'"), [3]);
  t.deepEqual(filterRows(batch, "ts < '2024-01-31T13:00:00+01:00'"), [0]);
  t.deepEqual(filterRows(batch, "ts >= TIMESTAMP '2024-02-01 00:00:00'"), [2]);
  t.deepEqual(filterRows(batch, "ts > DATE '2024-01-31'"), [1, 2, 3]);
  // Sub-second literal against Timestamp(s): bounds, not rounding.
  t.deepEqual(filterRows(batch, "tss > '2024-01-31T11:59:59.5Z'"), [1, 2, 3]);
  t.deepEqual(filterRows(batch, "tss < '2024-01-31T12:00:00.5Z'"), [0, 1, 3]);
  t.deepEqual(filterRows(batch, "tss = '2024-01-31T12:00:00.5Z'"), []);
  t.deepEqual(filterRows(batch, 'tss = ts'), [0, 1, 2]);
  t.deepEqual(filterRows(batch, 'ts >= $1', [new Date(Date.UTC(2024, 1, 1))]), [2]);
  t.deepEqual(filterRows(batch, 'd = $1', [new Date(Date.UTC(2024, 0, 31))]), [1]);
  t.deepEqual(filterRows(batch, 'd = $1', ['2024-01-30']), [0]);
  t.deepEqual(filterRows(batch, 'd = $1', [dayValues[2]]), [2], 'a number parameter is a raw stored value');
  t.deepEqual(filterRows(batch, 'ts = $1', [tsMicros[3]]), [3]);
  invalid(t, () => parseFilter("d = '2024-02-30'", batch.schema), /'2024-02-30' is not a valid date for column d/);
  invalid(t, () => parseFilter("ts > 'yesterday'", batch.schema), /not a valid timestamp for column ts/);
  invalid(t, () => parseFilter("d > DATE '2024-13-01'", batch.schema), /not a valid date/);
  invalid(t, () => parseFilter('d > 5', batch.schema), /cannot compare column d .* with the number 5.*YYYY-MM-DD/);
  // A date meets a timestamp as midnight of its day, as in PostgreSQL (more in expr-date-timestamp.test.ts).
  t.deepEqual(filterRows(batch, 'd = ts'), [2]);
  t.deepEqual(filterRows(batch, 'd < ts'), [0, 1, 3]);
});

test('dictionary-encoded strings are evaluated on the dictionary and gathered', (t) => {
  const vals = ['red', 'green', null, 'blue', 'green', 'red'];
  const dict = vectorFromArray(vals, new Dictionary(new Utf8(), new Int32())).data[0];
  const plain = vectorFromArray(['red', 'red', 'x', 'blue', 'x', 'x'], new Utf8()).data[0];
  const batch = batchOf({ c: dict, p: plain });
  t.deepEqual(filterRows(batch, "c = 'green'"), [1, 4]);
  t.deepEqual(filterRows(batch, "c <> 'green'"), [0, 3, 5]);
  t.deepEqual(filterRows(batch, "c IN ('red', 'blue')"), [0, 3, 5]);
  t.deepEqual(filterRows(batch, "c LIKE '%e%'"), [0, 1, 3, 4, 5]);
  t.deepEqual(filterRows(batch, "c NOT LIKE 'r%'"), [1, 3, 4]);
  t.deepEqual(filterRows(batch, 'c IS NULL'), [2]);
  t.deepEqual(filterRows(batch, 'c = p'), [0, 3]);
  t.deepEqual(filterRows(batch.slice(2, 6), "c = 'green'"), [2]);
});

test('IN / NOT IN and BETWEEN / NOT BETWEEN, with columns and NULLs in the list', (t) => {
  const batch = batchOf({
    a: prim(new Int32(), Int32Array, [1, 2, 3, 4, 5, null]),
    b: prim(new Int32(), Int32Array, [1, 9, 3, null, 0, 1]),
  });
  t.is(tri(batch, 'a IN (1, 3)'), 'TFTFFN');
  t.is(tri(batch, 'a NOT IN (1, 3)'), 'FTFTTN');
  t.is(tri(batch, 'a IN (1, NULL)'), 'TNNNNN');
  t.is(tri(batch, 'a NOT IN (1, NULL)'), 'FNNNNN');
  t.is(tri(batch, 'a IN (b, 5)'), 'TFTNTN');
  t.is(tri(batch, 'a IN (1.5, 2.0)'), 'FTFFFN');
  t.is(tri(batch, 'a BETWEEN 2 AND 4'), 'FTTTFN');
  t.is(tri(batch, 'a NOT BETWEEN 2 AND 4'), 'TFFFTN');
  t.is(tri(batch, 'a BETWEEN 4 AND 2'), 'FFFFFN');
  t.is(tri(batch, 'a BETWEEN b AND 4'), 'TFTNFN');
  t.is(tri(batch, 'a BETWEEN NULL AND 2'), 'NNFFFN'); // a <= 2 fails for 3, 4, 5 → FALSE
  t.is(tri(batch, '3 IN (a, b)'), 'FFTNFN');
});

// ---------------------------------------------------------------------------------------------
// Three-valued logic

test('three-valued logic: AND, OR, NOT truth tables', (t) => {
  const P = [true, true, true, false, false, false, null, null, null];
  const Q = [true, false, null, true, false, null, true, false, null];
  const batch = batchOf({ p: vectorFromArray(P, new Bool()).data[0], q: vectorFromArray(Q, new Bool()).data[0] });
  t.is(tri(batch, 'p AND q'), 'TFNFFFNFN');
  t.is(tri(batch, 'p OR q'), 'TTTTFNTNN');
  t.is(tri(batch, 'NOT p'), 'FFFTTTNNN');
  t.is(tri(batch, 'NOT (p AND q)'), 'FTNTTTNTN');
  t.is(tri(batch, 'NOT (p OR q)'), 'FFFFTNFNN');
  t.is(tri(batch, 'NOT NOT p'), 'TTTFFFNNN');
  t.is(tri(batch, 'p AND TRUE'), 'TTTFFFNNN');
  t.is(tri(batch, 'p AND FALSE'), 'FFFFFFFFF');
  t.is(tri(batch, 'p AND NULL'), 'NNNFFFNNN');
  t.is(tri(batch, 'p OR NULL'), 'TTTNNNNNN');
  t.is(tri(batch, 'p OR TRUE'), 'TTTTTTTTT');
  t.is(tri(batch, 'p OR FALSE'), 'TTTFFFNNN');
  t.is(tri(batch, 'NULL AND FALSE'), 'FFFFFFFFF');
  t.is(tri(batch, 'NULL OR TRUE'), 'TTTTTTTTT');
  t.is(tri(batch, 'NOT NULL'), 'NNNNNNNNN');
  t.is(tri(batch, 'p = q'), 'TFNFTNNNN');
  t.is(tri(batch, 'p <> q'), 'FTNTFNNNN');
  t.is(tri(batch, 'p AND q AND p'), 'TFNFFFNFN');
  t.is(tri(batch, 'p OR q OR p'), 'TTTTFNTNN');
  // Only TRUE passes a filter.
  t.deepEqual(filterRows(batch, 'p OR q'), [0, 1, 2, 3, 6]);
  t.deepEqual(filterRows(batch, 'NOT (p AND q)'), [1, 3, 4, 5, 7]);
});

test('three-valued logic: comparisons with NULL are NULL; IS NULL is never NULL', (t) => {
  const batch = batchOf({ a: prim(new Int32(), Int32Array, [1, null, 3]), s: vectorFromArray(['x', 'y', null], new Utf8()).data[0] });
  t.is(tri(batch, 'a = NULL'), 'NNN');
  t.is(tri(batch, 'a <> NULL'), 'NNN');
  t.is(tri(batch, 'NULL = NULL'), 'NNN');
  t.is(tri(batch, 'a > 2'), 'FNT');
  t.is(tri(batch, 'NOT a > 2'), 'TNF');
  t.is(tri(batch, 'a IS NULL'), 'FTF');
  t.is(tri(batch, 'a IS NOT NULL'), 'TFT');
  t.is(tri(batch, "s = 'x'"), 'TFN');
  t.is(tri(batch, "a > 2 OR s = 'y'"), 'FTT');
  t.is(tri(batch, "a > 2 AND s = 'y'"), 'FNN');
  t.is(tri(batch, 'a = $1', [null]), 'NNN');
  t.is(tri(batch, "s LIKE 'x%' OR a IS NULL"), 'TTN');
  t.is(tri(batch, '1 = 1'), 'TTT');
  t.is(tri(batch, "'a' < 'b'"), 'TTT');
  t.is(tri(batch, '$1 > 2', [3n]), 'TTT');
});

// ---------------------------------------------------------------------------------------------
// Slices

test('sliced batches (offset not a multiple of 8) read bitmaps, offsets and values correctly', (t) => {
  const n = 100;
  const r = rng(7);
  const ints = Array.from({ length: n }, (_, i) => (i % 7 === 3 ? null : Math.floor(r() * 10)));
  const bigs = ints.map((v) => (v === null ? null : BigInt(v) * 1_000_000_000_000n));
  const strs = ints.map((v) => (v === null ? null : 'k' + v));
  const bools = ints.map((v) => (v === null ? null : v % 2 === 0));
  const batch = batchOf({
    i: prim(new Int32(), Int32Array, ints),
    g: prim(new Int64(), BigInt64Array, bigs),
    s: vectorFromArray(strs, new Utf8()).data[0],
    b: vectorFromArray(bools, new Bool()).data[0],
    d: prim(new DateDay(), Int32Array, ints.map((v) => (v === null ? null : 19000 + v))),
  });
  const filters = [
    'i > 4',
    'g >= 5000000000000',
    "s IN ('k1', 'k5')",
    "s LIKE 'k%'",
    'b',
    'NOT b',
    'b IS NULL',
    "d < '2022-01-06'",
    'i = 3 OR b',
    'i IS NOT NULL AND NOT b',
  ];
  for (const [begin, end] of [
    [3, 50],
    [13, 14],
    [1, 99],
    [64, 100],
    [37, 37],
  ]) {
    const slice = batch.slice(begin, end);
    t.true(end === begin || slice.data.children[0].offset === begin);
    for (const f of filters) {
      const whole = filterRows(batch, f).filter((i) => i >= begin && i < end).map((i) => i - begin);
      t.deepEqual(filterRows(slice, f), whole, `${f} on [${begin}, ${end})`);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Parameters

test('parameters bind $n by position and are type-checked when bound', (t) => {
  const batch = batchOf({
    a: prim(new Int32(), Int32Array, [1, 2, 3, 4]),
    s: vectorFromArray(['w', 'x', 'y', 'z'], new Utf8()).data[0],
  });
  const e = parseFilter('a > $1 AND s <> $2', batch.schema);
  t.deepEqual(rows(evaluateFilter(e, batch, [1, 'z'])), [1, 2]);
  t.deepEqual(rows(evaluateFilter(e, batch, [2n, 'y'])), [3]);
  t.deepEqual(rows(evaluateFilter(e, batch, [0.5, 'q'])), [0, 1, 2, 3]);
  t.deepEqual(filterRows(batch, 'a IN ($1, $2, $3)', [4, 2, null]), [1, 3]);
  t.deepEqual(filterRows(batch, 'a BETWEEN $1 AND $2', [2, 3]), [1, 2]);
  t.deepEqual(filterRows(batch, '$1 < a', [3]), [3]);
  t.deepEqual(filterRows(batch, '$1', [true]), [0, 1, 2, 3]);
  invalid(t, () => evaluateFilter(e, batch), /uses \$1 but no parameters were given/);
  invalid(t, () => evaluateFilter(e, batch, [1]), /uses \$2 but only 1 parameter/);
  invalid(t, () => evaluateFilter(e, batch, ['1', 'x']), /cannot compare column a \(Int32\) with parameter \$1, the string '1'/);
  invalid(t, () => evaluateFilter(e, batch, [1, 2]), /cannot compare column s \(Utf8\) with parameter \$2, the number 2/);
  invalid(t, () => filterRows(batch, '$1', [5]), /not a boolean/);
});

// ---------------------------------------------------------------------------------------------
// Errors

test('unknown columns name the column and list the available ones', (t) => {
  const schema = new Schema([new Field('id', new Int64()), new Field('title', new Utf8()), new Field('Year', new Int32())]);
  const err = invalid(t, () => parseFilter('yr > 2020', schema), /unknown column "yr"/);
  t.regex(err.message, /available columns: id, title, Year/);
  invalid(t, () => parseFilter("title = 'x' AND nope IS NULL", schema), /unknown column "nope"/);
  // Unquoted identifiers also match case-insensitively when unambiguous.
  t.deepEqual(columnsOf(parseFilter('year > 2020 AND ID = 1', schema)), ['Year', 'id']);
  const twin = new Schema([new Field('a', new Int32()), new Field('A', new Int32())]);
  t.deepEqual(columnsOf(parseFilter('A = 1', twin)), ['A']);
  invalid(t, () => parseFilter('"b" = 1', twin), /unknown column "b"/);
  const ambiguous = new Schema([new Field('Ab', new Int32()), new Field('aB', new Int32())]);
  invalid(t, () => parseFilter('ab = 1', ambiguous), /ambiguous/);
  // Columns of types filters cannot read.
  const vec = new Schema([new Field('v', new Struct([new Field('x', new Int32())]))]);
  invalid(t, () => parseFilter('v = 1', vec), /column "v" has type Struct.*cannot compare/);
});

test('type mismatches are clear errors', (t) => {
  const schema = new Schema([
    new Field('s', new Utf8()),
    new Field('n', new Int32()),
    new Field('f', new Float64()),
    new Field('b', new Bool()),
    new Field('d', new DateDay()),
  ]);
  invalid(t, () => parseFilter('s = 5', schema), /type mismatch: cannot compare column s \(Utf8\) with the number 5/);
  invalid(t, () => parseFilter("n > 'abc'", schema), /cannot compare column n \(Int32\) with the string 'abc'/);
  invalid(t, () => parseFilter("5 = s", schema), /cannot compare column s/);
  invalid(t, () => parseFilter('s = n', schema), /cannot compare column s \(Utf8\) with column n \(Int32\)/);
  invalid(t, () => parseFilter('b = 1', schema), /cannot compare column b \(Bool\) with the number 1/);
  invalid(t, () => parseFilter('s IN (1, 2)', schema), /cannot compare column s/);
  invalid(t, () => parseFilter("n BETWEEN 1 AND 'x'", schema), /cannot compare column n/);
  invalid(t, () => parseFilter('n', schema), /needs a boolean condition, but column n \(Int32\) is integer/);
  invalid(t, () => parseFilter('n AND b', schema), /AND needs a boolean condition/);
  invalid(t, () => parseFilter('NOT s', schema), /NOT needs a boolean condition/);
  invalid(t, () => parseFilter("n LIKE 'a%'", schema), /LIKE needs a string/);
  invalid(t, () => parseFilter('s LIKE s', schema), /patterns must be a string literal or a parameter/);
  invalid(t, () => parseFilter('s LIKE 5', schema), /pattern 5 is not a string/);
  invalid(t, () => parseFilter('n IS TRUE', schema), /IS TRUE needs a boolean condition/);
  invalid(t, () => parseFilter("1 = 'a'", schema), /cannot compare 1 with 'a'/);
  invalid(t, () => parseFilter("s = DATE '2024-01-01'", schema), /cannot compare column s .* DATE literal/);
  // Numbers of any kind compare with each other.
  t.notThrows(() => parseFilter('n < f AND f = 2 AND n = 2.5 AND f IN (1, 2.5, 3000000000000000000000)', schema));
  // Mismatches in hand-built trees are caught when evaluated, too.
  const batch = batchOf({ s: vectorFromArray(['x'], new Utf8()).data[0] });
  invalid(t, () => evaluateFilter(eq(col('s'), lit(1)), batch), /cannot compare column s/);
  invalid(t, () => evaluateFilter(eq(col('zz'), lit(1)), batch), /unknown column "zz"/);
});

test('syntax errors are short, positioned and classified as invalid', (t) => {
  const schema = new Schema([new Field('a', new Int32()), new Field('s', new Utf8())]);
  const e1 = invalid(t, () => parseFilter('a = = 1', schema), /syntax error in filter at line 1, column 5: unexpected "="/);
  t.notRegex(e1.message, /Expected/);
  t.true(e1.message.length < 200, e1.message);
  t.regex(e1.message, /a = = 1\n {4}\^/);
  invalid(t, () => parseFilter('(a = 1', schema), /column 7: unexpected end of filter/);
  invalid(t, () => parseFilter("s = 'x' AND = 1", schema), /line 1, column 13/);
  invalid(t, () => parseFilter("s = 'a'\nAND a = = 2", schema), /line 2, column 9/);
  invalid(t, () => parseFilter("s = 'open", schema), /column 5: unterminated string literal/);
  invalid(t, () => parseFilter('', schema), /empty filter/);
  invalid(t, () => parseFilter('   ', schema), /empty filter/);
  invalid(t, () => parseFilter('a = 1; DROP TABLE t', schema), /one condition/);
  invalid(t, () => parseFilter('a = 1 ORDER BY a', schema), /ORDER BY is not allowed/);
  invalid(t, () => parseFilter('a = 1 LIMIT 1', schema), /LIMIT\/OFFSET is not allowed/);
  invalid(t, () => parseFilter('a = 1 GROUP BY a', schema), /GROUP BY is not allowed/);
  invalid(t, () => parseFilter('a = 1 UNION SELECT * FROM t', schema), /UNION/);
  invalid(t, () => parseFilter('a IN (SELECT 1)', schema), /subquery is not supported/);
  // Value expressions are accepted since issue 8 (test/exec/expr-*.test.ts); aggregates are not.
  invalid(t, () => parseFilter('count(a) > 1', schema), /aggregate functions are not allowed in WHERE/);
  invalid(t, () => parseFilter('nosuchfn(a) > 1', schema), /unknown function nosuchfn\(\)/);
  invalid(t, () => parseFilter('a = :x', schema), /named parameter :x/);
  invalid(t, () => parseFilter('a = $0', schema), /numbered from \$1/);
  invalid(t, () => parseFilter("s = E'x'", schema), /E'...' escape string/);
});

test('AND binds tighter than OR (node-sql-parser alone gets this wrong)', (t) => {
  const kinds = (e: Expr): unknown =>
    e.kind === 'and' || e.kind === 'or' ? { [e.kind]: e.operands.map(kinds) } : e.kind === 'column' ? e.name : e.kind;
  t.deepEqual(kinds(parseFilterExpr('p OR q AND r')), { or: ['p', { and: ['q', 'r'] }] });
  t.deepEqual(kinds(parseFilterExpr('p AND q OR r AND s')), { or: [{ and: ['p', 'q'] }, { and: ['r', 's'] }] });
  t.deepEqual(kinds(parseFilterExpr('(p OR q) AND r')), { and: [{ or: ['p', 'q'] }, 'r'] });
  t.deepEqual(kinds(parseFilterExpr('r AND (p OR q) OR s')), { or: [{ and: ['r', { or: ['p', 'q'] }] }, 's'] });
  t.deepEqual(kinds(parseFilterExpr('p OR q OR r AND s AND t OR u')), { or: ['p', 'q', { and: ['r', 's', 't'] }, 'u'] });
  t.deepEqual(kinds(parseFilterExpr('a BETWEEN 1 AND 2 AND b OR c')), { or: [{ and: ['between', 'b'] }, 'c'] });
  t.deepEqual(kinds(parseFilterExpr('NOT p OR q AND r')), { or: ['not', { and: ['q', 'r'] }] });
  t.deepEqual(kinds(parseFilterExpr('p IS NULL OR q AND r')), { or: ['is', { and: ['q', 'r'] }] });
  // NOT binds looser than IS and comparisons, also when written NOT (...).
  const shape = (sql: string) => exprToString(parseFilterExpr(sql));
  t.is(shape('NOT (p OR q) IS TRUE'), 'NOT (p OR q) IS TRUE');
  t.is((parseFilterExpr('NOT (p OR q) IS TRUE') as { kind: string }).kind, 'not');
  t.is((parseFilterExpr('NOT (a) = b') as { kind: string }).kind, 'not');
  t.is((parseFilterExpr('NOT (a) AND b') as { kind: string }).kind, 'and');
  t.is((parseFilterExpr('NOT a IS NULL') as { kind: string }).kind, 'not');
  const batch = batchOf({
    a: prim(new Int32(), Int32Array, [1, 2, 3]),
    b: prim(new Int32(), Int32Array, [9, 2, 0]),
  });
  // a = 1 OR (b = 2 AND a = 2): rows 0 and 1; the mis-parse (a = 1 OR b = 2) AND a = 2 gives row 1 only.
  t.deepEqual(filterRows(batch, 'a = 1 OR b = 2 AND a = 2'), [0, 1]);
});

test('parses are cached by text (LRU) and checked per schema', (t) => {
  clearFilterCache();
  const a = parseFilterExpr('x > 1');
  t.is(parseFilterExpr('x > 1'), a);
  t.is(filterCacheSize(), 1);
  for (let i = 0; i < 300; i++) parseFilterExpr(`x > ${i + 2}`);
  t.true(filterCacheSize() <= 256);
  t.not(parseFilterExpr('x > 1'), a, 'evicted');
  // The same text against two schemas: resolved and checked each time.
  const s1 = new Schema([new Field('x', new Int32())]);
  const s2 = new Schema([new Field('X', new Utf8())]);
  t.deepEqual(columnsOf(parseFilter('x > 1', s1)), ['x']);
  invalid(t, () => parseFilter('x > 1', s2), /cannot compare column X \(Utf8\) with the number 1/);
  invalid(t, () => parseFilter('x > 1', s2), /cannot compare column X/); // a failed check is not remembered
  // The checked tree is kept per schema object and text.
  const checked = parseFilter('x > 1', s1);
  t.is(parseFilter('x > 1', s1), checked);
  clearFilterCache();
  t.not(parseFilter('x > 1', s1), checked);
});

// ---------------------------------------------------------------------------------------------
// Selection helpers

test('selection helpers: masks to indices and back, combining masks and index lists', (t) => {
  const a = Uint8Array.of(1, 0, 1, 1, 0, 0, 1);
  const b = Uint8Array.of(0, 0, 1, 0, 1, 0, 1);
  t.deepEqual([...maskToIndices(a)], [0, 2, 3, 6]);
  t.is(countSelected(a), 4);
  t.deepEqual([...andMasks(a, b)], [0, 0, 1, 0, 0, 0, 1]);
  t.deepEqual([...orMasks(a, b)], [1, 0, 1, 1, 1, 0, 1]);
  t.deepEqual([...andNotMasks(a, b)], [1, 0, 0, 1, 0, 0, 0]);
  t.deepEqual([...notMask(a)], [0, 1, 0, 0, 1, 1, 0]);
  t.deepEqual([...indicesToMask(Uint32Array.of(0, 2, 3, 6), 7)], [...a]);
  t.throws(() => indicesToMask([7], 7), { instanceOf: RangeError });
  t.throws(() => andMasks(a, Uint8Array.of(1)), { instanceOf: RangeError });
  const x = Uint32Array.of(1, 3, 5, 7);
  const y = Uint32Array.of(3, 4, 7, 9);
  t.deepEqual([...intersectIndices(x, y)], [3, 7]);
  t.deepEqual([...unionIndices(x, y)], [1, 3, 4, 5, 7, 9]);
  const m = andMasks(a, b, a);
  t.is(m, a, 'in place');
});

// ---------------------------------------------------------------------------------------------
// Randomized comparison with a row-by-row reference evaluator

type Ref = null | number | bigint | string | boolean;
type Tri = boolean | null;

/** Code point order, written independently of the engine's byte comparison. */
function cpCompare(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

function refCompare(a: Ref, b: Ref, op: CompareOp): Tri {
  if (a === null || b === null) return null;
  let s: number;
  if (typeof a === 'string' && typeof b === 'string') s = cpCompare(a, b);
  else {
    const x = typeof a === 'boolean' ? Number(a) : (a as number | bigint);
    const y = typeof b === 'boolean' ? Number(b) : (b as number | bigint);
    if (x < y) s = -1;
    else if (x > y) s = 1;
    else if (x == y) s = 0;
    else return op === '<>'; // NaN
  }
  switch (op) {
    case '=':
      return s === 0;
    case '<>':
      return s !== 0;
    case '<':
      return s < 0;
    case '<=':
      return s <= 0;
    case '>':
      return s > 0;
    case '>=':
      return s >= 0;
  }
}

const refAnd = (a: Tri, b: Tri): Tri => (a === false || b === false ? false : a === null || b === null ? null : true);
const refOr = (a: Tri, b: Tri): Tri => (a === true || b === true ? true : a === null || b === null ? null : false);
const refNot = (a: Tri): Tri => (a === null ? null : !a);

function refLike(s: string, pattern: string): boolean {
  let re = '';
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === '\\') re += chars[++i].replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    else if (c === '%') re += '[\\s\\S]*';
    else if (c === '_') re += '[\\s\\S]';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'u').test(s);
}

type Kind = 'num' | 'big' | 'str' | 'bool' | 'date' | 'ts';
interface RandomColumn {
  name: string;
  kind: Kind;
  /** Reference values per row: numbers, bigints, strings, booleans; temporal as nanoseconds. */
  ref: Ref[];
  data: Data;
  /** A literal near or equal to a value of this column: [engine literal, reference value]. */
  literal(r: () => number): [LiteralValue, Ref];
}

function isoDate(nanos: bigint): string {
  return new Date(Number(nanos / 1_000_000n)).toISOString().slice(0, 10);
}
function isoMicros(nanos: bigint): string {
  const micros = nanos / 1000n;
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const sub = ((micros % 1000n) + 1000n) % 1000n;
  return new Date(Number(ms)).toISOString().replace('Z', String(sub).padStart(3, '0') + 'Z');
}

function randomColumns(n: number, r: () => number): RandomColumn[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const withNulls = <T>(gen: () => T): (T | null)[] => Array.from({ length: n }, () => (r() < 0.15 ? null : gen()));
  const out: RandomColumn[] = [];
  const existing = (c: { ref: Ref[] }) => {
    for (let k = 0; k < 20; k++) {
      const v = c.ref[Math.floor(r() * c.ref.length)];
      if (v !== null) return v;
    }
    return c.ref.find((v) => v !== null) ?? null;
  };
  const num = (name: string, type: DataType, Ctor: TypedCtor, gen: () => number, fractional: boolean) => {
    const vals = withNulls(gen);
    const c: RandomColumn = {
      name,
      kind: 'num',
      ref: vals,
      data: prim(type, Ctor, vals),
      literal: (rr) => {
        const v = existing(c) as number;
        const x = rr() < 0.6 || !Number.isFinite(v) ? v : rr() < 0.5 ? v + (fractional ? rr() : 1) : v - 0.5;
        const y = Number.isFinite(x) ? x : 1.5; // NaN / Infinity have no SQL literal
        return [y, y];
      },
    };
    out.push(c);
  };
  num('i8', new Int8(), Int8Array, () => Math.floor(r() * 11) - 5, false);
  num('i16', new Int16(), Int16Array, () => pick([-32768, 32767, 0, 7, -7, 100]), false);
  num('i32', new Int32(), Int32Array, () => Math.floor(r() * 2001) - 1000, false);
  num('u8', new Uint8(), Uint8Array, () => Math.floor(r() * 256), false);
  num('u16', new Uint16(), Uint16Array, () => pick([0, 1, 65535, 40000, 3]), false);
  num('u32', new Uint32(), Uint32Array, () => pick([0, 1, 4294967295, 3000000000, 2147483648, 5]), false);
  num('f32', new Float32(), Float32Array, () => Math.fround(pick([-0, 0, 1.5, -2.25, Infinity, NaN]) + (r() < 0.5 ? Math.floor(r() * 10) / 4 : 0)), true);
  num('f64', new Float64(), Float64Array, () => pick([-0, 0.1, 1e300, -Infinity, NaN, Math.floor(r() * 100) / 8 - 6]), true);
  const big = (name: string, type: DataType, Ctor: TypedCtor, gen: () => bigint) => {
    const vals = withNulls(gen);
    const c: RandomColumn = {
      name,
      kind: 'big',
      ref: vals,
      data: prim(type, Ctor, vals),
      literal: (rr) => {
        const v = existing(c) as bigint;
        const choice = rr();
        if (choice < 0.5) return [v, v];
        if (choice < 0.7) return [v + 1n, v + 1n];
        const f = Number(v) + 0.5; // a fraction between integers (when representable)
        return Number.isSafeInteger(Number(v)) ? [f, f] : [v - 1n, v - 1n];
      },
    };
    out.push(c);
  };
  big('i64', new Int64(), BigInt64Array, () =>
    pick([-(2n ** 63n), 2n ** 63n - 1n, 9007199254740993n, -9007199254740993n, 0n, 5n, -5n, BigInt(Math.floor(r() * 1e6))]),
  );
  big('u64', new Uint64(), BigUint64Array, () => pick([0n, 2n ** 64n - 1n, 2n ** 63n, 2n ** 63n - 1n, BigInt(Math.floor(r() * 1000))]));
  const STR_POOL = ['', 'a', 'ab', 'abc', 'b', 'B', 'é', 'e\u0301', '😀', '\uFFFD', 'ﬀ', 'a%b', 'a_b', 'zz', 'Apple', 'apple', '日本', 'pineapple'];
  const str = (name: string) => {
    const vals = withNulls(() => pick(STR_POOL));
    const c: RandomColumn = {
      name,
      kind: 'str',
      ref: vals,
      data: vectorFromArray(vals, new Utf8()).data[0],
      literal: (rr) => {
        const v = rr() < 0.7 ? (existing(c) as string) : pick(['aa', 'c', '😀x', 'é']);
        return [v, v];
      },
    };
    out.push(c);
  };
  str('s');
  str('s2');
  const bool = (name: string) => {
    const vals = withNulls(() => r() < 0.5);
    out.push({
      name,
      kind: 'bool',
      ref: vals,
      data: vectorFromArray(vals, new Bool()).data[0],
      literal: (rr) => {
        const b = rr() < 0.5;
        return [b, b];
      },
    });
  };
  bool('b');
  bool('b2');
  const baseDay = 19700;
  const dayVals = withNulls(() => baseDay + Math.floor(r() * 60) - 30);
  const dateCol: RandomColumn = {
    name: 'd',
    kind: 'date',
    ref: dayVals.map((d) => (d === null ? null : BigInt(d) * DAY_NS)),
    data: prim(new DateDay(), Int32Array, dayVals),
    literal: (rr) => {
      const v = existing(dateCol) as bigint;
      const shifted = v + BigInt(Math.floor(rr() * 3) - 1) * DAY_NS;
      return [isoDate(shifted), shifted];
    },
  };
  out.push(dateCol);
  const d64Vals = withNulls(() => BigInt(baseDay + Math.floor(r() * 60) - 30) * 86_400_000n);
  out.push({
    name: 'd64',
    kind: 'date',
    ref: d64Vals.map((v) => (v === null ? null : v * 1_000_000n)),
    data: prim(new DateMillisecond(), BigInt64Array, d64Vals),
    literal: () => {
      throw new Error('unused');
    },
  });
  const baseMicros = BigInt(Date.UTC(2024, 0, 1)) * 1000n;
  const tsVals = withNulls(() => baseMicros + BigInt(Math.floor(r() * 5)) * 1_000_000n + BigInt(Math.floor(r() * 3)));
  const tsCol: RandomColumn = {
    name: 'ts',
    kind: 'ts',
    ref: tsVals.map((v) => (v === null ? null : v * 1000n)),
    data: prim(new TimestampMicrosecond(), BigInt64Array, tsVals),
    literal: (rr) => {
      const v = existing(tsCol) as bigint;
      const shifted = v + BigInt(Math.floor(rr() * 3) - 1) * 1000n;
      return [isoMicros(shifted), shifted];
    },
  };
  out.push(tsCol);
  const tsMsVals = withNulls(() => baseMicros / 1000n + BigInt(Math.floor(r() * 5)) * 1000n);
  out.push({
    name: 'ts_ms',
    kind: 'ts',
    ref: tsMsVals.map((v) => (v === null ? null : v * 1_000_000n)),
    data: prim(new TimestampMillisecond(), BigInt64Array, tsMsVals),
    literal: () => {
      throw new Error('unused');
    },
  });
  return out;
}

interface Gen {
  e: Expr;
  f: (row: number) => Tri;
}

function randomPredicate(cols: RandomColumn[], r: () => number, depth: number): Gen {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  const OPS: CompareOp[] = ['=', '<>', '<', '<=', '>', '>='];
  const withLiterals = cols.filter((c) => c.name !== 'd64' && c.name !== 'ts_ms');
  const choice = depth > 0 ? r() : 0.5 + r() * 0.5;
  if (choice < 0.18) {
    const a = randomPredicate(cols, r, depth - 1);
    const b = randomPredicate(cols, r, depth - 1);
    return { e: and(a.e, b.e), f: (i) => refAnd(a.f(i), b.f(i)) };
  }
  if (choice < 0.36) {
    const a = randomPredicate(cols, r, depth - 1);
    const b = randomPredicate(cols, r, depth - 1);
    return { e: or(a.e, b.e), f: (i) => refOr(a.f(i), b.f(i)) };
  }
  if (choice < 0.45) {
    const a = randomPredicate(cols, r, depth - 1);
    return { e: not(a.e), f: (i) => refNot(a.f(i)) };
  }
  if (choice < 0.5) {
    const a = randomPredicate(cols, r, depth - 1);
    const test = pick(['true', 'false'] as const);
    const neg = r() < 0.5;
    return { e: isTest(a.e, test, neg), f: (i) => (a.f(i) === (test === 'true')) !== neg };
  }
  const c = pick(withLiterals);
  const v = (i: number) => c.ref[i];
  const form = r();
  if (form < 0.35) {
    const [l, ref] = r() < 0.05 ? [null, null] : c.literal(r);
    const op = pick(OPS);
    if (r() < 0.5) return { e: compare(op, col(c.name), lit(l)), f: (i) => refCompare(v(i), ref, op) };
    return { e: compare(op, lit(l), col(c.name)), f: (i) => refCompare(ref, v(i), op) };
  }
  if (form < 0.5) {
    // Column against column of a comparable kind.
    const kinds: Record<Kind, Kind[]> = { num: ['num', 'big'], big: ['num', 'big'], str: ['str'], bool: ['bool'], date: ['date'], ts: ['ts'] };
    const other = pick(cols.filter((o) => kinds[c.kind].includes(o.kind)));
    const op = pick(OPS);
    // Int64 against Float columns compares as doubles; keep to exactly representable cases.
    if ((c.kind === 'big' && other.name.startsWith('f')) || (other.kind === 'big' && c.name.startsWith('f')))
      return { e: isNull(col(c.name)), f: (i) => v(i) === null };
    return { e: compare(op, col(c.name), col(other.name)), f: (i) => refCompare(v(i), other.ref[i], op) };
  }
  if (form < 0.65) {
    const n = 1 + Math.floor(r() * 4);
    const items = Array.from({ length: n }, () => (r() < 0.1 ? ([null, null] as [null, null]) : c.literal(r)));
    const neg = r() < 0.4;
    return {
      e: inList(col(c.name), items.map(([l]) => lit(l)), neg),
      f: (i) => {
        let acc: Tri = false;
        for (const [, ref] of items) acc = refOr(acc, refCompare(v(i), ref, '='));
        return neg ? refNot(acc) : acc;
      },
    };
  }
  if (form < 0.75) {
    const [l1, r1] = c.literal(r);
    const [l2, r2] = c.literal(r);
    const neg = r() < 0.4;
    return {
      e: between(col(c.name), lit(l1), lit(l2), neg),
      f: (i) => {
        const x = refAnd(refCompare(v(i), r1, '>='), refCompare(v(i), r2, '<='));
        return neg ? refNot(x) : x;
      },
    };
  }
  if (form < 0.83) {
    const neg = r() < 0.5;
    return { e: isNull(col(c.name), neg), f: (i) => (v(i) === null) !== neg };
  }
  if (form < 0.93 && c.kind === 'str') {
    const base = (c.literal(r)[0] as string) || 'a';
    const chars = [...base];
    const k = Math.floor(r() * (chars.length + 1));
    const esc = (s: string) => s.replace(/[\\%_]/g, '\\$&');
    const patterns = [
      esc(chars.slice(0, k).join('')) + '%',
      '%' + esc(chars.slice(k).join('')),
      '%' + esc(chars.slice(Math.max(0, k - 1), k + 1).join('')) + '%',
      chars.map((ch, j) => (j === k ? '_' : esc(ch))).join(''),
      esc(base),
      '%',
      'a%b%',
      '%_',
    ];
    const p = pick(patterns);
    const neg = r() < 0.4;
    return { e: like(col(c.name), lit(p), { negated: neg }), f: (i) => (v(i) === null ? null : refLike(v(i) as string, p) !== neg) };
  }
  const b = pick(cols.filter((o) => o.kind === 'bool'));
  return { e: col(b.name), f: (i) => b.ref[i] as Tri };
}

test('randomized: evaluator agrees with a row-by-row reference on 3000 rows with nulls', (t) => {
  // QUIVER_FUZZ_SEED reruns the comparison with other data and expressions.
  const r = rng(Number(process.env.QUIVER_FUZZ_SEED ?? 20240131));
  const n = 3000;
  const cols = randomColumns(n, r);
  const batch = batchOf(Object.fromEntries(cols.map((c) => [c.name, c.data])));
  const slices: [number, number][] = [
    [0, n],
    [3, n - 5],
    [1001, 1777],
  ];
  let checked = 0;
  for (let q = 0; q < 400; q++) {
    const g = randomPredicate(cols, r, 3);
    // Half of the trees go through SQL text (print → parse → check), a quarter bind their
    // constants as $n parameters instead.
    const sql = exprToString(g.e);
    let expr = q % 2 === 0 ? parseFilter(sql, batch.schema) : g.e;
    const params: unknown[] = [];
    if (q % 4 === 1) expr = mapExpr(g.e, (e) => (e.kind === 'literal' ? (params.push(e.value), param(params.length)) : e));
    for (const [begin, end] of slices) {
      const b = begin === 0 && end === n ? batch : batch.slice(begin, end);
      const p = evaluatePredicate(expr, b, params);
      const mask = evaluateFilter(expr, b, params);
      for (let i = 0; i < end - begin; i++) {
        const want = g.f(begin + i);
        const got: Tri = p.validity && !p.validity[i] ? null : p.values[i] === 1;
        if (got !== want || mask[i] !== (want === true ? 1 : 0)) {
          const values = cols.map((c) => `${c.name}=${String(c.ref[begin + i])}`).join(' ');
          t.fail(`${sql}${params.length ? ' with parameters' : ''}\nrow ${begin + i}: got ${got}, want ${want}; mask ${mask[i]}\n${values}`);
          return;
        }
        checked++;
      }
    }
  }
  t.true(checked > 1_000_000);
});
