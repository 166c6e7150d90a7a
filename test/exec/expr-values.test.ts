/**
 * Value expressions (issue 8): parsing, checking, type inference and evaluation of arithmetic,
 * CASE, CAST and functions, with PostgreSQL's NULL, overflow and division-by-zero rules and the
 * evaluation-restricted-to-a-selection guarantees.
 */
import test from 'ava';
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
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
  type Data,
} from 'apache-arrow';
import {
  type Expr,
  checkExpr,
  evaluateFilter,
  evaluateValue,
  exprFromAst,
  exprToString,
  inferType,
  isAggregateCall,
  maskToIndices,
  parseFilter,
  parseFilterExpr,
} from '../../exec/expr/index.js';
import { sqlParser } from '../../exec/expr/sql-text.js';
import { InvalidError } from '../../src/errors.js';

// ---------------------------------------------------------------------------------------------
// Helpers

function column(type: DataType, values: readonly unknown[]): Data {
  return vectorFromArray(values as unknown[], type as never).data[0] as Data;
}

function batchOf(columns: Record<string, Data>): RecordBatch {
  const fields = Object.entries(columns).map(([name, d]) => new Field(name, d.type, true));
  const length = Object.values(columns)[0].length;
  return new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length, nullCount: 0, children: Object.values(columns) }));
}

const DAY = (iso: string) => Date.UTC(+iso.slice(0, 4), +iso.slice(5, 7) - 1, +iso.slice(8, 10));

const batch = batchOf({
  i: column(new Int32(), [1, 2, null, -7, 0, 2147483647]),
  j: column(new Int32(), [2, null, 3, 2, 5, 1]),
  h: column(new Int16(), [1, -2, 3, 32767, null, 0]),
  b: column(new Int64(), [1n, 9007199254740993n, null, -9223372036854775807n, 0n, 4n]),
  f: column(new Float64(), [1.5, 2.5, -2.5, null, 0, 1e20]),
  r: column(new Float32(), [0.5, 1.25, null, -3, 2, 8]),
  s: column(new Utf8(), ['Hello', 'wörld', null, '  pad  ', '', 'abc']),
  n: column(new Utf8(), ['12', ' -3 ', '7', null, 'x', '99']),
  t: column(new Bool(), [true, false, null, true, false, true]),
  d: column(new DateDay(), [DAY('2024-02-29'), DAY('1970-01-01'), null, DAY('1999-12-31'), DAY('2021-01-03'), DAY('2024-12-30')].map((x) => (x === null ? null : new Date(x)))),
  ts: column(new TimestampMicrosecond(), [
    Date.UTC(2024, 1, 29, 13, 45, 30, 250),
    Date.UTC(1970, 0, 1),
    null,
    Date.UTC(1999, 11, 31, 23, 59, 59),
    Date.UTC(2021, 0, 3, 1, 2, 3),
    Date.UTC(1969, 11, 31, 23, 0, 0),
  ]),
});

function check(sql: string, b = batch): Expr {
  return checkExpr(parseFilterExpr(sql), b.schema);
}

/** Evaluates `sql` and returns the rows as JS values (bigints stay bigints, NULL as null). */
function values(sql: string, params?: unknown[], b = batch, selection?: Uint8Array): unknown[] {
  const d = evaluateValue(check(sql, b), b, params, selection);
  const v = makeVector(d);
  const out: unknown[] = [];
  for (let i = 0; i < d.length; i++) out.push(v.get(i));
  return out;
}

function typeOf(sql: string, params?: unknown[], b = batch): string {
  const e = check(sql, b);
  const t = inferType(e, b.schema, params);
  // Nothing selected: no per-row errors, but the output type must still match.
  const d = evaluateValue(e, b, params, new Uint8Array(b.numRows));
  if (String(d.type) !== String(t)) throw new Error(`inferType ${t} but evaluateValue gave ${d.type} for ${sql}`);
  return String(t);
}

function invalid(t: import('ava').ExecutionContext, fn: () => unknown, message: RegExp): void {
  t.throws(fn, { instanceOf: InvalidError, message });
}

const rows = (sql: string, params?: unknown[]) => [...maskToIndices(evaluateFilter(parseFilter(sql, batch.schema), batch, params))];

// ---------------------------------------------------------------------------------------------
// Parsing

test('exprFromAst: value expressions map to arith / negate / call / case / cast', (t) => {
  const kinds = (sql: string) => parseFilterExpr(sql);
  t.is(exprToString(kinds('a + b * 2 - c / 3 % 4')), 'a + b * 2 - c / 3 % 4');
  t.is(exprToString(kinds("a || 'x' || 1 + 2")), "a || 'x' || (1 + 2)");
  t.is(exprToString(kinds('(a || b) + 1')), '(a || b) + 1');
  t.is(kinds('-a').kind, 'negate');
  t.deepEqual(kinds('-5'), { kind: 'literal', value: -5 });
  t.deepEqual(kinds('-(2.5)'), { kind: 'literal', value: -2.5, float: true });
  t.deepEqual(kinds('2.0'), { kind: 'literal', value: 2, float: true });
  t.is(exprToString(kinds('1e3')), '1000.0');
  t.is(exprToString(kinds('ABS(x)')), 'abs(x)');
  t.is(kinds('NOT(x)').kind, 'not');
  const c = kinds('count(*)');
  t.true(c.kind === 'call' && c.star && isAggregateCall(c));
  const cd = kinds('count(DISTINCT x)');
  t.true(cd.kind === 'call' && cd.distinct && !cd.star);
  t.is(exprToString(kinds('sum(x) + avg(y) + min(z) + max(z)')), 'sum(x) + avg(y) + min(z) + max(z)');
  t.is(exprToString(kinds('CASE WHEN a > 1 THEN 1 WHEN a < 0 THEN -1 ELSE 0 END')), 'CASE WHEN a > 1 THEN 1 WHEN a < 0 THEN -1 ELSE 0 END');
  t.is(exprToString(kinds("CASE a WHEN 1 THEN 'one' END")), "CASE a WHEN 1 THEN 'one' END");
  const casts: [string, string][] = [
    ['BIGINT', 'BIGINT'],
    ['INT8', 'BIGINT'],
    ['INT', 'INT'],
    ['INTEGER', 'INT'],
    ['INT4', 'INT'],
    ['SMALLINT', 'SMALLINT'],
    ['INT2', 'SMALLINT'],
    ['DOUBLE PRECISION', 'DOUBLE'],
    ['DOUBLE', 'DOUBLE'],
    ['FLOAT8', 'DOUBLE'],
    ['FLOAT', 'DOUBLE'],
    ['REAL', 'REAL'],
    ['FLOAT4', 'REAL'],
    ['TEXT', 'TEXT'],
    ['VARCHAR(10)', 'TEXT'],
    ['CHAR', 'TEXT'],
    ['BOOLEAN', 'BOOLEAN'],
    ['BOOL', 'BOOLEAN'],
    ['DATE', 'DATE'],
    ['TIMESTAMP', 'TIMESTAMP'],
  ];
  for (const [sqlType, canonical] of casts) {
    t.is(exprToString(kinds(`CAST(x AS ${sqlType})`)), `CAST(x AS ${canonical})`, sqlType);
    t.is(exprToString(kinds(`x::${sqlType.toLowerCase()}`)), `CAST(x AS ${canonical})`, sqlType);
  }
  t.is(exprToString(kinds('x::int::text')), 'CAST(CAST(x AS INT) AS TEXT)');
  t.is(exprToString(kinds('$1::int + 1')), 'CAST($1 AS INT) + 1');
  invalid(t, () => kinds('CAST(x AS numeric)'), /type numeric is not supported/);
  invalid(t, () => kinds('CAST(x AS json)'), /unknown type "json"/);
  t.deepEqual(kinds("CAST('2020-01-01' AS DATE)"), { kind: 'literal', value: '2020-01-01', temporal: 'date' });
  t.is(exprToString(kinds('ARRAY[1, 2.5, -3]')), 'ARRAY[1, 2.5, -3]');
  t.is(exprToString(kinds('EXTRACT(year FROM d)')), "date_part('year', d)");
  t.is(exprToString(kinds("trim(both 'x' from s)")), "btrim(s, 'x')");
  t.is(exprToString(kinds("trim(leading from s)")), 'ltrim(s)');
  t.is(exprToString(kinds("position('a' in s)")), "strpos(s, 'a')");
  invalid(t, () => kinds('sum(x) OVER ()'), /window function/);
});

test('exprFromAst reports table qualifiers through onQualifier and keeps the column name', (t) => {
  const parsed = sqlParser().astify('SELECT t.x + u.y FROM t', { database: 'PostgresQL' }) as any;
  const ast = (Array.isArray(parsed) ? parsed[0] : parsed).columns[0].expr;
  const seen: string[] = [];
  const e = exprFromAst(ast, undefined, { onQualifier: (table, c) => seen.push(`${table}.${c}`) });
  t.is(exprToString(e), 'x + y');
  t.deepEqual(seen, ['t.x', 'u.y']);
});

test('exprToString round-trips the new node kinds through the parser', (t) => {
  const texts = [
    'a + b * 2 - (c - d)',
    'a - (b - c)',
    'a / (b * c)',
    "(a || 'x') || b",
    "a || ('x' || b)",
    "s || (1 + 2)",
    '-(a + b)',
    '-abs(a)',
    '- -a',
    'CASE WHEN a = 0 THEN 0 ELSE 10 / a END',
    "CASE s WHEN 'x' THEN 1 WHEN 'y' THEN 2 END",
    'CAST(a + 1 AS TEXT)',
    'coalesce(a, b, 0)',
    'count(*)',
    'count(DISTINCT a)',
    "date_part('dow', d)",
    'l2_distance(v, ARRAY[1, 2, 3])',
    'round(f, 2) * 2.0',
    'a % 2 IN (0, 1)',
    'length(s) BETWEEN 2 AND 4',
    "CAST(x AS DOUBLE) > 1e300",
  ];
  for (const text of texts) {
    const e = parseFilterExpr(text);
    const printed = exprToString(e);
    t.deepEqual(parseFilterExpr(printed), e, `${text} → ${printed}`);
  }
});

// ---------------------------------------------------------------------------------------------
// Type inference

test('inferType follows PostgreSQL: literal widths, int widening, floats, division, concatenation', (t) => {
  const cases: [string, string][] = [
    ['1', 'Int32'],
    ['3000000000', 'Int64'],
    ['1.5', 'Float64'],
    ['2.0', 'Float64'],
    ['h - h', 'Int16'],
    ['h + 1', 'Int32'],
    ['i + h', 'Int32'],
    ['i - b', 'Int64'],
    ['i / j', 'Int32'],
    ['i % j', 'Int32'],
    ['i + f', 'Float64'],
    ['r * r', 'Float32'],
    ['r * 2', 'Float64'],
    ['r + f', 'Float64'],
    ['-h', 'Int16'],
    ["s || 'x'", 'Utf8'],
    ['i || s', 'Utf8'],
    ['i > 1', 'Bool'],
    ['i > 1 AND t', 'Bool'],
    ['CAST(i AS bigint)', 'Int64'],
    ['CAST(s AS date)', 'Date32<DAY>'],
    ['CASE WHEN t THEN h ELSE i END', 'Int32'],
    ['CASE WHEN t THEN i ELSE 1.5 END', 'Float64'],
    ['CASE WHEN t THEN d ELSE ts END', 'Timestamp<MICROSECOND>'],
    ["CASE WHEN t THEN d ELSE '2020-01-01' END", 'Date32<DAY>'],
    ['coalesce(h, b)', 'Int64'],
    ['coalesce(NULL, s)', 'Utf8'],
    ['length(s)', 'Int32'],
    ['round(f)', 'Float64'],
    ['round(i)', 'Int32'],
    ['round(f, 1)', 'Float64'],
    ["date_part('year', d)", 'Float64'],
    ["date_trunc('month', d)", 'Timestamp<MICROSECOND>'],
    ['d + 1', 'Date32<DAY>'],
    ['d - d', 'Int32'],
    ['abs(h)', 'Int16'],
    ['starts_with(s, s)', 'Bool'],
  ];
  for (const [sql, type] of cases) t.is(typeOf(sql), type, sql);
  // Parameters are typed from their bound values.
  t.is(typeOf('i + $1', [2]), 'Int32');
  t.is(typeOf('i + $1', [2.5]), 'Float64');
  t.is(typeOf('i + $1', [5_000_000_000]), 'Int64');
  t.is(typeOf('i + $1', [5n]), 'Int32');
  t.is(typeOf('$1', ['x']), 'Utf8');
  t.is(typeOf('$1', [true]), 'Bool');
  t.is(typeOf('$1', [new Date(0)]), 'Timestamp<MICROSECOND>');
  t.is(String(inferType(parseFilterExpr('$1'), batch.schema, [Float32Array.of(1, 2)])), 'FixedSizeList[2]<Float32>');
  // Without bound values a parameter takes the type of what it meets.
  t.is(String(inferType(check('i + $1'), batch.schema)), 'Int32');
  invalid(t, () => inferType(check('$1 + $2'), batch.schema), /could not determine the type/);
});

// ---------------------------------------------------------------------------------------------
// Arithmetic

test('arithmetic over columns with NULLs: NULL in, NULL out', (t) => {
  t.deepEqual(values('i + j', undefined, batch, Uint8Array.of(1, 1, 1, 1, 1, 0)), [3, null, null, -5, 5, null]);
  t.deepEqual(values('h * j'), [2, null, 9, 65534, null, 0]);
  t.deepEqual(values('i + f', undefined, batch, Uint8Array.of(1, 1, 1, 1, 1, 0)), [2.5, 4.5, null, null, 0, null]);
});

test('arithmetic: + - * / % on ints and floats, truncating integer division', (t) => {
  const small = batchOf({
    x: column(new Int32(), [7, -7, 7, -7, null, 0]),
    y: column(new Int32(), [2, 2, -2, -2, 1, null]),
    f: column(new Float64(), [7, -7, 0.5, null, 1, 2]),
  });
  t.deepEqual(values('x + y', undefined, small), [9, -5, 5, -9, null, null]);
  t.deepEqual(values('x - y', undefined, small), [5, -9, 9, -5, null, null]);
  t.deepEqual(values('x * y', undefined, small), [14, -14, -14, 14, null, null]);
  t.deepEqual(values('x / y', undefined, small), [3, -3, -3, 3, null, null]);
  t.deepEqual(values('x % y', undefined, small), [1, -1, 1, -1, null, null]);
  t.deepEqual(values('f / 2', undefined, small), [3.5, -3.5, 0.25, null, 0.5, 1]);
  t.deepEqual(values('x / 2.0', undefined, small), [3.5, -3.5, 3.5, -3.5, null, 0]);
  t.deepEqual(values('f % 2', undefined, small), [1, -1, 0.5, null, 1, 0]);
  t.deepEqual(values('-x', undefined, small), [-7, 7, -7, 7, null, 0]);
  // Float32 op Float32 stays Float32 (rounded to single precision).
  t.deepEqual(values('r * r'), [0.25, 1.5625, null, 9, 4, 64]);
  // Int16 arithmetic stays Int16.
  t.deepEqual(values('h - 1'), [0, -3, 2, 32766, null, -1]);
  // NULL literal operands.
  t.deepEqual(values('i + NULL'), [null, null, null, null, null, null]);
});

test('arithmetic: bigint is exact beyond 2^53; overflow is an error for every int width', (t) => {
  t.deepEqual(values('b + 1'), [2n, 9007199254740994n, null, -9223372036854775806n, 1n, 5n]);
  t.deepEqual(values('b - 1'), [0n, 9007199254740992n, null, -9223372036854775808n, -1n, 3n]);
  t.deepEqual(values('b * 3 + i', undefined, batch, Uint8Array.of(1, 1, 1, 0, 1, 1)), [4n, 27021597764222981n, null, null, 0n, 2147483659n]);
  t.deepEqual(values('b / 2', undefined, batch), [0n, 4503599627370496n, null, -4611686018427387903n, 0n, 2n]);
  t.deepEqual(values('b % 10', undefined, batch), [1n, 3n, null, -7n, 0n, 4n]);
  t.deepEqual(values('-b'), [-1n, -9007199254740993n, null, 9223372036854775807n, 0n, -4n]);
  invalid(t, () => values('b * 3'), /^bigint out of range$/);
  invalid(t, () => values('b - 2'), /^bigint out of range$/);
  invalid(t, () => values('-(b - 1)'), /^bigint out of range$/);
  invalid(t, () => values('9223372036854775807 + b'), /bigint out of range/);
  invalid(t, () => values('i + 1'), /^integer out of range$/);
  invalid(t, () => values('i * 2'), /^integer out of range$/);
  invalid(t, () => values('-i - 2'), /^integer out of range$/);
  invalid(t, () => values('h + h'), /^smallint out of range$/);
  invalid(t, () => values('abs(CAST(-32768 AS smallint))'), /^smallint out of range$/);
  invalid(t, () => values('-CAST(-2147483648 AS int)'), /^integer out of range$/);
  invalid(t, () => values('CAST(-2147483648 AS int) / -1'), /^integer out of range$/);
  invalid(t, () => values('CAST(-9223372036854775808 AS bigint) / -1'), /^bigint out of range$/);
  invalid(t, () => values('abs(CAST(-9223372036854775808 AS bigint))'), /^bigint out of range$/);
  // The overflowing row is outside the selection: no error, and the row comes back NULL.
  t.deepEqual(values('i + 1', undefined, batch, Uint8Array.of(1, 1, 1, 1, 1, 0)), [2, 3, null, -6, 1, null]);
});

test('division and modulo by zero are errors for integers and floats, except on NULL rows', (t) => {
  invalid(t, () => values('i / 0'), /^division by zero$/);
  invalid(t, () => values('i % 0'), /^division by zero$/);
  invalid(t, () => values('f / 0'), /^division by zero$/);
  invalid(t, () => values('f / 0.0'), /^division by zero$/);
  invalid(t, () => values('b / 0'), /^division by zero$/);
  invalid(t, () => values('mod(i, 0)'), /^division by zero$/);
  invalid(t, () => values('10 / i'), /^division by zero$/); // row 4 has i = 0
  // NULL divisors (stored as 0 under the validity bitmap) are not errors.
  const z = batchOf({ x: column(new Int32(), [10, 10]), y: column(new Int32(), [null, 5]) });
  t.deepEqual(values('x / y', undefined, z), [null, 2]);
  t.deepEqual(values('x % y', undefined, z), [null, 0]);
});

test('evaluation is restricted to the rows that reach a CASE branch, an AND/OR operand or a COALESCE argument', (t) => {
  // Each of these raises division by zero if evaluated on every row (i = 0 on row 4).
  t.deepEqual(values('CASE WHEN i = 0 THEN 0 ELSE 10 / i END'), [10, 5, null, -1, 0, 0]);
  t.deepEqual(values('CASE i WHEN 0 THEN -1 ELSE 100 / i END'), [100, 50, null, -14, -1, 0]);
  t.deepEqual(values('CASE WHEN i <> 0 THEN 10 / i END'), [10, 5, null, -1, null, 0]);
  t.deepEqual(values('i <> 0 AND 10 / i > 1'), [true, true, null, false, false, false]);
  t.deepEqual(values('i = 0 OR 10 / i > 1'), [true, true, null, false, true, false]);
  t.deepEqual(rows('i <> 0 AND 10 / i > 1'), [0, 1]);
  t.deepEqual(rows('i = 0 OR 10 / i >= 5'), [0, 1, 4]);
  t.deepEqual(values('coalesce(CASE WHEN i <> 0 THEN i END, 7, 1 / 0)'), [1, 2, 7, -7, 7, 2147483647]);
  t.deepEqual(values('coalesce(j, 10 / i)', undefined, batch, Uint8Array.of(1, 1, 1, 1, 1, 1)), [2, 5, 3, 2, 5, 1]);
  // Overflow and bad casts are restricted the same way.
  t.deepEqual(values('CASE WHEN i < 1000 THEN i + 1 ELSE 0 END'), [2, 3, 0, -6, 1, 0]);
  t.deepEqual(values("CASE WHEN n LIKE '%x%' THEN -1 ELSE CAST(n AS int) END"), [12, -3, 7, null, -1, 99]);
  t.deepEqual(values("n <> 'x' AND CAST(n AS int) > 10"), [true, false, false, null, false, true]);
  // Nested: the inner CASE only sees rows of the outer branch.
  t.deepEqual(
    values('CASE WHEN i IS NULL THEN 0 WHEN i > 0 THEN CASE WHEN i > 1000 THEN 1 ELSE 100 / i END ELSE 100 / (i + 8) END'),
    [100, 50, 0, 100, 12, 1],
  );
  // The selection given to evaluateValue: rows outside it raise nothing and come back NULL.
  t.deepEqual(values('10 / i', undefined, batch, Uint8Array.of(1, 1, 1, 1, 0, 1)), [10, 5, null, -1, null, 0]);
});

// ---------------------------------------------------------------------------------------------
// CAST

test('CAST between numbers: rounding half away from zero, range checks', (t) => {
  const first5 = Uint8Array.of(1, 1, 1, 1, 1, 0);
  // Float → integer casts round half to even (PostgreSQL's rint; DuckDB too): 1.5 → 2, 2.5 → 2, -2.5 → -2.
  t.deepEqual(values('CAST(f AS int)', undefined, batch, first5), [2, 2, -2, null, 0, null]);
  t.deepEqual(values('CAST(f AS bigint)', undefined, batch, first5), [2n, 2n, -2n, null, 0n, null]);
  t.deepEqual(values('CAST(f AS smallint)', undefined, batch, first5), [2, 2, -2, null, 0, null]);
  invalid(t, () => values('CAST(f AS int)'), /^integer out of range$/);
  invalid(t, () => values('CAST(f AS bigint)'), /^bigint out of range$/);
  invalid(t, () => values('CAST(i AS smallint)'), /^smallint out of range$/);
  invalid(t, () => values('CAST(b AS int)'), /^integer out of range$/);
  invalid(t, () => values("CAST(CAST('NaN' AS double) AS int)"), /^integer out of range$/);
  t.deepEqual(values('CAST(h AS double)'), [1, -2, 3, 32767, null, 0]);
  t.deepEqual(values('CAST(b AS double)'), [1, 9007199254740992, null, -9223372036854775807, 0, 4]);
  t.deepEqual(values('CAST(i AS real)', undefined, batch, first5), [1, 2, null, -7, 0, null]);
  t.deepEqual(values('CAST(9223372036854775807 AS bigint)'), Array(6).fill(9223372036854775807n));
  t.deepEqual(values('CAST(2.5 AS int) + CAST(-2.5 AS int) * 10 + CAST(0.49999999999999994 AS int)'), Array(6).fill(2 - 20));
});

test('float → integer casts round half to even (rint), round() half away from zero', (t) => {
  // PostgreSQL's and DuckDB's casts: -0.5 → 0, 0.5 → 0, 1.5 → 2, 2.5 → 2, -1.5 → -2.
  const cases: [string, number][] = [['-0.5', 0], ['0.5', 0], ['1.5', 2], ['2.5', 2], ['-1.5', -2], ['-2.5', -2], ['3.5', 4], ['2.4999', 2], ['-2.5001', -3], ['0.49999999999999994', 0]];
  for (const [x, want] of cases) {
    t.is(values(`CAST(${x} AS int)`)[0], want, `${x}::int`);
    t.is(values(`CAST(${x} AS smallint)`)[0], want, `${x}::smallint`);
    t.is(values(`CAST(${x} AS bigint)`)[0], BigInt(want), `${x}::bigint`);
    t.is(values(`CAST(CAST(${x} AS real) AS int)`)[0], want, `${x}::real::int`); // the same ties in single precision
  }
  t.deepEqual(values('CAST(r AS int)'), [0, 1, null, -3, 2, 8]);
  t.deepEqual(values('r::bigint'), [0n, 1n, null, -3n, 2n, 8n]);
  t.deepEqual(values('CAST(f AS int)', undefined, batch, Uint8Array.of(1, 1, 1, 1, 1, 0)), [2, 2, -2, null, 0, null]);
  // Exact near 2^52, where doubles still have halves.
  t.is(values('CAST(4503599627370494.5 AS bigint)')[0], 4503599627370494n);
  t.is(values('CAST(4503599627370495.5 AS bigint)')[0], 4503599627370496n);
  // The range check applies to the rounded value.
  t.is(values('CAST(-32768.5 AS smallint)')[0], -32768);
  t.is(values('CAST(32766.5 AS smallint)')[0], 32766);
  invalid(t, () => values('CAST(32767.5 AS smallint)'), /^smallint out of range$/);
  invalid(t, () => values('CAST(-32769.5 AS smallint)'), /^smallint out of range$/);
  t.is(values('CAST(-2147483648.5 AS int)')[0], -2147483648);
  t.is(values('CAST(2147483646.5 AS int)')[0], 2147483646);
  invalid(t, () => values('CAST(2147483647.5 AS int)'), /^integer out of range$/);
  // round() keeps rounding half away from zero (DuckDB's round for doubles).
  t.deepEqual([-2.5, -0.5, 0.5, 1.5, 2.5].map((x) => values(`round(CAST(${x} AS double))`)[0]), [-3, -1, 1, 2, 3]);
});

test('CAST text ↔ numbers, booleans, dates and timestamps; bad input is an error naming it', (t) => {
  t.deepEqual(values("CAST(n AS int)", undefined, batch, Uint8Array.of(1, 1, 1, 1, 0, 1)), [12, -3, 7, null, null, 99]);
  invalid(t, () => values('CAST(n AS int)'), /^invalid input syntax for type integer: "x"$/);
  invalid(t, () => values("CAST('1.5' AS int)"), /invalid input syntax for type integer: "1.5"/);
  invalid(t, () => values("CAST('abc' AS double precision)"), /invalid input syntax for type double precision: "abc"/);
  invalid(t, () => values("CAST('99999' AS smallint)"), /out of range for type smallint/);
  t.deepEqual(values("CAST(' 1.5e3 ' AS double)")[0], 1500);
  t.deepEqual(values("CAST('-Infinity' AS double)")[0], -Infinity);
  t.deepEqual(values("CAST('9223372036854775807' AS bigint)")[0], 9223372036854775807n);
  t.deepEqual(values('CAST(i AS text)'), ['1', '2', null, '-7', '0', '2147483647']);
  t.deepEqual(values('CAST(b AS text)'), ['1', '9007199254740993', null, '-9223372036854775807', '0', '4']);
  t.deepEqual(values('CAST(f AS text)'), ['1.5', '2.5', '-2.5', null, '0', '1e+20']);
  t.deepEqual(values('CAST(r AS text)'), ['0.5', '1.25', null, '-3', '2', '8']);
  t.is(values('CAST(0.1 AS text)')[0], '0.1');
  t.is(values('CAST(CAST(0.1 AS real) AS text)')[0], '0.1');
  t.is(values('CAST(0.00001234 AS text)')[0], '1.234e-05');
  t.deepEqual(values('CAST(t AS text)'), ['true', 'false', null, 'true', 'false', 'true']);
  for (const [text, want] of [['t', true], ['TRUE', true], [' yes ', true], ['on', true], ['1', true], ['f', false], ['No', false], ['off', false], ['0', false]] as const)
    t.is(values(`CAST('${text}' AS boolean)`)[0], want, text);
  invalid(t, () => values("CAST('maybe' AS boolean)"), /invalid input syntax for type boolean: "maybe"/);
  t.deepEqual(values('CAST(t AS int)'), [1, 0, null, 1, 0, 1]);
  t.deepEqual(values('CAST(j AS boolean)'), [true, null, true, true, true, true]);
  t.deepEqual(values('CAST(d AS text)'), ['2024-02-29', '1970-01-01', null, '1999-12-31', '2021-01-03', '2024-12-30']);
  t.deepEqual(values('CAST(ts AS text)'), [
    '2024-02-29 13:45:30.25',
    '1970-01-01 00:00:00',
    null,
    '1999-12-31 23:59:59',
    '2021-01-03 01:02:03',
    '1969-12-31 23:00:00',
  ]);
  t.deepEqual(values("CAST('2024-02-29' AS date) = d"), [true, false, null, false, false, false]);
  t.deepEqual(values("CAST(s AS date)", undefined, batch, Uint8Array.of(0, 0, 0, 0, 0, 0)), [null, null, null, null, null, null]);
  invalid(t, () => values("CAST(s AS date)"), /invalid input syntax for type date: "Hello"/);
  invalid(t, () => values("CAST(CAST('2024-02-30' AS text) AS date)"), /'2024-02-30' is not a valid date/);
  invalid(t, () => values("CAST(s || '-02-30' AS date)"), /invalid input syntax for type date: "Hello-02-30"/);
  t.deepEqual(values('CAST(ts AS date) = d'), [true, true, null, true, true, false]);
  t.deepEqual(values('CAST(d AS timestamp) <= ts'), [true, true, null, true, true, false]);
  t.deepEqual(values('CAST(CAST(ts AS date) AS text)'), ['2024-02-29', '1970-01-01', null, '1999-12-31', '2021-01-03', '1969-12-31']);
  t.deepEqual(values("CAST('2024-01-31T12:00:00Z' AS timestamp) = CAST('2024-01-31 12:00' AS timestamp)")[0], true);
  invalid(t, () => check('CAST(d AS int)'), /cannot cast type date to integer/);
  invalid(t, () => check('CAST(f AS boolean)'), /cannot cast type double precision to boolean/);
});

// ---------------------------------------------------------------------------------------------
// Functions

test('numeric functions: abs, round, ceil, floor, sqrt, power, mod, sign, greatest, least, nullif, coalesce', (t) => {
  t.deepEqual(values('abs(i)', undefined, batch), [1, 2, null, 7, 0, 2147483647]);
  t.deepEqual(values('abs(f)'), [1.5, 2.5, 2.5, null, 0, 1e20]);
  t.deepEqual(values('round(f)'), [2, 3, -3, null, 0, 1e20]);
  t.deepEqual(values('round(CAST(-0.5 AS double))')[0], -1);
  t.deepEqual(values('round(2.345, 2)')[0], 2.35);
  t.deepEqual(values('round(1234.5, -2)')[0], 1200);
  t.deepEqual(values('round(i)'), [1, 2, null, -7, 0, 2147483647]);
  t.deepEqual(values('ceil(f)'), [2, 3, -2, null, 0, 1e20]);
  t.deepEqual(values('ceiling(f)'), [2, 3, -2, null, 0, 1e20]);
  t.deepEqual(values('floor(f)'), [1, 2, -3, null, 0, 1e20]);
  t.deepEqual(values('trunc(f)'), [1, 2, -2, null, 0, 1e20]);
  t.deepEqual(values('sqrt(j)'), [Math.SQRT2, null, Math.sqrt(3), Math.SQRT2, Math.sqrt(5), 1]);
  invalid(t, () => values('sqrt(i)'), /cannot take square root of a negative number/);
  t.deepEqual(values('CASE WHEN i >= 0 THEN sqrt(i) END'), [1, Math.SQRT2, null, null, 0, Math.sqrt(2147483647)]);
  t.deepEqual(values('power(j, 2)'), [4, null, 9, 4, 25, 1]);
  t.deepEqual(values('pow(2, -1)')[0], 0.5);
  invalid(t, () => values('power(0, -1)'), /zero raised to a negative power/);
  invalid(t, () => values('power(-8, 0.5)'), /negative number raised to a non-integer power/);
  t.deepEqual(values('mod(i, 3)'), [1, 2, null, -1, 0, 1]);
  t.deepEqual(values('sign(i)'), [1, 1, null, -1, 0, 1]);
  t.deepEqual(values('sign(f)'), [1, 1, -1, null, 0, 1]);
  t.deepEqual(values('greatest(i, j, 0)'), [2, 2, 3, 2, 5, 2147483647]);
  t.deepEqual(values('least(i, j)'), [1, 2, 3, -7, 0, 1]);
  t.deepEqual(values('greatest(s, n)'), ['Hello', 'wörld', '7', '  pad  ', 'x', 'abc']);
  t.deepEqual(values('greatest(NULL, i)'), [1, 2, null, -7, 0, 2147483647]);
  t.deepEqual(values('nullif(j, 2)'), [null, null, 3, null, 5, 1]);
  t.deepEqual(values("nullif(s, '')"), ['Hello', 'wörld', null, '  pad  ', null, 'abc']);
  t.deepEqual(values('coalesce(i, j, 0)'), [1, 2, 3, -7, 0, 2147483647]);
  t.deepEqual(values('coalesce(h, b)'), [1n, -2n, 3n, 32767n, 0n, 0n]);
  t.deepEqual(values("coalesce(s, 'none')"), ['Hello', 'wörld', 'none', '  pad  ', '', 'abc']);
  t.deepEqual(values('coalesce(NULL, NULL)'), [null, null, null, null, null, null]);
});

test('string functions count characters, not bytes; ASCII and multi-byte rows agree', (t) => {
  t.deepEqual(values('lower(s)'), ['hello', 'wörld', null, '  pad  ', '', 'abc']);
  t.deepEqual(values('upper(s)'), ['HELLO', 'WÖRLD', null, '  PAD  ', '', 'ABC']);
  t.deepEqual(values('length(s)'), [5, 5, null, 7, 0, 3]);
  t.deepEqual(values('char_length(s)'), [5, 5, null, 7, 0, 3]);
  t.deepEqual(values("length('日本語')")[0], 3);
  t.deepEqual(values('substr(s, 2, 3)'), ['ell', 'örl', null, ' pa', '', 'bc']);
  t.deepEqual(values('substring(s, 3)'), ['llo', 'rld', null, 'pad  ', '', 'c']);
  // PostgreSQL: the window [start, start + len) is cut at 1.
  t.deepEqual(values("substr('hello', 0, 3)")[0], 'he');
  t.deepEqual(values("substr('hello', -1, 3)")[0], 'h');
  t.deepEqual(values("substr('hello', -5, 3)")[0], '');
  t.deepEqual(values("substr('hello', 4, 100)")[0], 'lo');
  invalid(t, () => values("substr('hello', 1, -1)"), /negative substring length not allowed/);
  t.deepEqual(values('trim(s)'), ['Hello', 'wörld', null, 'pad', '', 'abc']);
  t.deepEqual(values('ltrim(s)'), ['Hello', 'wörld', null, 'pad  ', '', 'abc']);
  t.deepEqual(values('rtrim(s)'), ['Hello', 'wörld', null, '  pad', '', 'abc']);
  t.deepEqual(values("btrim('xxhixx', 'x')")[0], 'hi');
  t.deepEqual(values("trim(both 'ö' from 'öhöö')")[0], 'h');
  t.deepEqual(values("concat(s, '-', i, NULL, t)"), ['Hello-1true', 'wörld-2false', '-', '  pad  --7true', '-0false', 'abc-2147483647true']);
  t.deepEqual(values("s || '-' || i"), ['Hello-1', 'wörld-2', null, '  pad  --7', '-0', 'abc-2147483647']);
  t.deepEqual(values("replace(s, 'l', 'L')"), ['HeLLo', 'wörLd', null, '  pad  ', '', 'abc']);
  t.deepEqual(values("starts_with(s, 'He')"), [true, false, null, false, false, false]);
  t.deepEqual(values("strpos(s, 'l')"), [3, 4, null, 0, 0, 0]);
  t.deepEqual(values("position('r' in s)"), [0, 3, null, 0, 0, 0]);
  t.deepEqual(values('left(s, 2)'), ['He', 'wö', null, '  ', '', 'ab']);
  t.deepEqual(values('left(s, -2)'), ['Hel', 'wör', null, '  pad', '', 'a']);
  t.deepEqual(values('right(s, 2)'), ['lo', 'ld', null, '  ', '', 'bc']);
  t.deepEqual(values('right(s, -1)'), ['ello', 'örld', null, ' pad  ', '', 'bc']);
});

test('date_part / EXTRACT and date_trunc on dates and timestamps', (t) => {
  const part = (field: string, col: string) => values(`date_part('${field}', ${col})`);
  t.deepEqual(part('year', 'd'), [2024, 1970, null, 1999, 2021, 2024]);
  t.deepEqual(part('month', 'd'), [2, 1, null, 12, 1, 12]);
  t.deepEqual(part('day', 'd'), [29, 1, null, 31, 3, 30]);
  t.deepEqual(part('dow', 'd'), [4, 4, null, 5, 0, 1]);
  t.deepEqual(part('isodow', 'd'), [4, 4, null, 5, 7, 1]);
  t.deepEqual(part('doy', 'd'), [60, 1, null, 365, 3, 365]);
  t.deepEqual(part('quarter', 'd'), [1, 1, null, 4, 1, 4]);
  t.deepEqual(part('week', 'd'), [9, 1, null, 52, 53, 1]);
  t.deepEqual(part('epoch', 'd'), [DAY('2024-02-29') / 1000, 0, null, DAY('1999-12-31') / 1000, DAY('2021-01-03') / 1000, DAY('2024-12-30') / 1000]);
  t.deepEqual(part('hour', 'ts'), [13, 0, null, 23, 1, 23]);
  t.deepEqual(part('minute', 'ts'), [45, 0, null, 59, 2, 0]);
  t.deepEqual(part('second', 'ts'), [30.25, 0, null, 59, 3, 0]);
  t.deepEqual(part('year', 'ts'), [2024, 1970, null, 1999, 2021, 1969]);
  t.deepEqual(part('epoch', 'ts'), [Date.UTC(2024, 1, 29, 13, 45, 30, 250) / 1000, 0, null, Date.UTC(1999, 11, 31, 23, 59, 59) / 1000, Date.UTC(2021, 0, 3, 1, 2, 3) / 1000, -3600]);
  t.deepEqual(values('EXTRACT(YEAR FROM ts)'), part('year', 'ts'));
  const trunc = (unit: string) => values(`CAST(date_trunc('${unit}', ts) AS text)`);
  t.deepEqual(trunc('day'), ['2024-02-29 00:00:00', '1970-01-01 00:00:00', null, '1999-12-31 00:00:00', '2021-01-03 00:00:00', '1969-12-31 00:00:00']);
  t.deepEqual(trunc('hour'), ['2024-02-29 13:00:00', '1970-01-01 00:00:00', null, '1999-12-31 23:00:00', '2021-01-03 01:00:00', '1969-12-31 23:00:00']);
  t.deepEqual(trunc('month'), ['2024-02-01 00:00:00', '1970-01-01 00:00:00', null, '1999-12-01 00:00:00', '2021-01-01 00:00:00', '1969-12-01 00:00:00']);
  t.deepEqual(trunc('quarter'), ['2024-01-01 00:00:00', '1970-01-01 00:00:00', null, '1999-10-01 00:00:00', '2021-01-01 00:00:00', '1969-10-01 00:00:00']);
  t.deepEqual(trunc('year'), ['2024-01-01 00:00:00', '1970-01-01 00:00:00', null, '1999-01-01 00:00:00', '2021-01-01 00:00:00', '1969-01-01 00:00:00']);
  t.deepEqual(trunc('week'), ['2024-02-26 00:00:00', '1969-12-29 00:00:00', null, '1999-12-27 00:00:00', '2020-12-28 00:00:00', '1969-12-29 00:00:00']);
  t.deepEqual(values("CAST(date_trunc('month', d) AS text)")[0], '2024-02-01 00:00:00');
  t.deepEqual(values("date_trunc('day', ts) = CAST(d AS timestamp)"), [true, true, null, true, true, false]);
  t.deepEqual(values('d + 1 - d'), [1, 1, null, 1, 1, 1]);
  t.deepEqual(values("CAST(d - 1 AS text)"), ['2024-02-28', '1969-12-31', null, '1999-12-30', '2021-01-02', '2024-12-29']);
  invalid(t, () => check("date_part('fortnight', d)"), /unknown field 'fortnight'/);
  invalid(t, () => check("date_part('year', i)"), /must be a date or timestamp/);
});

// ---------------------------------------------------------------------------------------------
// Vector distances

function vectorBatch(vectors: (number[] | null)[], dim: number): RecordBatch {
  const type = new FixedSizeList(dim, new Field('item', new Float32(), true));
  const flat = new Float32Array(vectors.length * dim);
  vectors.forEach((v, i) => v && flat.set(v, i * dim));
  const child = makeData({ type: new Float32(), length: flat.length, data: flat });
  const bitmap = new Uint8Array((vectors.length + 7) >> 3);
  vectors.forEach((v, i) => v && (bitmap[i >> 3] |= 1 << (i & 7)));
  const nulls = vectors.filter((v) => !v).length;
  const data = makeData({ type, length: vectors.length, nullCount: nulls, nullBitmap: nulls ? bitmap : undefined, child } as never) as Data;
  return batchOf({ v: data, k: column(new Int32(), vectors.map((_, i) => i)) });
}

test('vector distances match a plain JS reference (Lance definitions), Float32 results', (t) => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const dim = 13;
  const vecs = Array.from({ length: 40 }, (_, i) => (i === 5 ? null : i === 9 ? Array(dim).fill(0) : Array.from({ length: dim }, rnd)));
  const b = vectorBatch(vecs, dim);
  const q = Array.from({ length: dim }, rnd);
  const f = (x: number) => Math.fround(x);
  const ref = {
    l2: (a: number[]) => a.reduce((s, x, k) => s + (f(x) - f(q[k])) ** 2, 0),
    dot: (a: number[]) => 1 - a.reduce((s, x, k) => s + f(x) * f(q[k]), 0),
    cosine: (a: number[]) => {
      const na = Math.sqrt(a.reduce((s, x) => s + f(x) ** 2, 0));
      const nq = Math.sqrt(q.reduce((s, x) => s + f(x) ** 2, 0));
      return na * nq === 0 ? 1 : 1 - a.reduce((s, x, k) => s + f(x) * f(q[k]), 0) / (na * nq);
    },
  };
  for (const metric of ['l2', 'dot', 'cosine'] as const) {
    for (const [sql, params] of [
      [`${metric}_distance(v, $1)`, [Float32Array.from(q)]],
      [`${metric}_distance($1, v)`, [q]],
      [`${metric}_distance(v, ARRAY[${q.join(', ')}])`, []],
      [`${metric}_distance(v, '[${q.join(',')}]')`, []],
    ] as [string, unknown[]][]) {
      t.is(typeOf(sql, params, b), 'Float32', sql);
      const got = values(sql, params, b);
      got.forEach((g, i) => {
        const v = vecs[i];
        if (!v) return t.is(g, null);
        t.true(Math.abs((g as number) - ref[metric](v)) <= 1e-5 * Math.max(1, Math.abs(ref[metric](v))), `${sql} row ${i}: ${g} vs ${ref[metric](v)}`);
      });
    }
  }
  // Sliced batch: the offset is honoured.
  const sliced = new RecordBatch(b.schema, b.data.slice(3, 10));
  const got = values('l2_distance(v, $1)', [q], sliced);
  t.true(Math.abs((got[0] as number) - ref.l2(vecs[3]!)) < 1e-5);
  t.is(got[2], null);
  // Ordering by distance works through a filter too.
  t.true(rows.length >= 0);
  invalid(t, () => values('l2_distance(v, $1)', [[1, 2, 3]], b), /vector dimensions differ: column v .*has 13, parameter \$1 has 3/);
  invalid(t, () => check('l2_distance(v, ARRAY[1, 2])', b), /vector dimensions differ: column v .* has 13, .* has 2/);
  invalid(t, () => check('l2_distance(k, ARRAY[1, 2])', b), /must be a vector/);
  invalid(t, () => values("l2_distance(v, '[1, x]')", [], b), /invalid vector literal/);
  t.deepEqual(values('l2_distance(v, $1)', [null], b).slice(0, 2), [null, null]);
});

// ---------------------------------------------------------------------------------------------
// match(), aggregates, errors

test('match() and aggregates are typed by checkExpr but not evaluated; filters reject aggregates', (t) => {
  t.is(String(inferType(check("match(s, 'quick fox')"), batch.schema)), 'Bool');
  t.is(String(inferType(check('count(*)'), batch.schema)), 'Int64');
  t.is(String(inferType(check('count(DISTINCT s)'), batch.schema)), 'Int64');
  t.is(String(inferType(check('sum(i)'), batch.schema)), 'Int64');
  t.is(String(inferType(check('sum(f)'), batch.schema)), 'Float64');
  t.is(String(inferType(check('avg(i)'), batch.schema)), 'Float64');
  t.is(String(inferType(check('max(s)'), batch.schema)), 'Utf8');
  t.is(String(inferType(check('sum(i) / count(*)'), batch.schema)), 'Int64');
  invalid(t, () => evaluateValue(check("match(s, 'fox')"), batch), /full-text search/);
  invalid(t, () => evaluateValue(check('count(*)'), batch), /aggregate count\(\*\) cannot be evaluated per row/);
  invalid(t, () => parseFilter('sum(i) > 1', batch.schema), /aggregate functions are not allowed in WHERE/);
  invalid(t, () => checkExpr(parseFilterExpr('max(i) > 1'), batch.schema, { aggregates: false, clause: 'GROUP BY' }), /not allowed in GROUP BY/);
  invalid(t, () => check('sum(count(*))'), /cannot be nested/);
  invalid(t, () => check('sum(s)'), /argument 1 of sum\(\) must be a number/);
  invalid(t, () => check('avg(*)'), /only count\(\*\)/);
});

test('checkExpr errors name the problem', (t) => {
  invalid(t, () => check('nope + 1'), /unknown column "nope"; available columns: i, j, h, b, f, r, s, n, t, d, ts/);
  invalid(t, () => check('frobnicate(i)'), /unknown function frobnicate\(\)/);
  invalid(t, () => check('abs(i, j)'), /abs\(\) takes 1 argument, got 2/);
  invalid(t, () => check('substr(s)'), /substr\(\) takes 2 to 3 arguments, got 1/);
  invalid(t, () => check('lower(i)'), /argument 1 of lower\(\) must be text, but column i \(Int32\) is integer/);
  invalid(t, () => check('s + 1'), /operator does not exist: text \+ integer.*never converted to a number implicitly/);
  invalid(t, () => check("i + '1'"), /operator does not exist: integer \+ text/);
  invalid(t, () => check('i || j'), /operator does not exist: integer \|\| integer/);
  invalid(t, () => check('t + 1'), /operator does not exist: boolean \+ integer/);
  invalid(t, () => check('-s'), /cannot negate column s/);
  invalid(t, () => check('lower(s) = 5'), /cannot compare lower\(s\) \(text\) with the number 5/);
  invalid(t, () => check('i + 1 = s'), /cannot compare i \+ 1 \(integer\) with column s/);
  // An untyped string literal takes the CASE's type, as in PostgreSQL, and fails when reached.
  invalid(t, () => values("CASE WHEN t THEN 1 ELSE 'x' END"), /invalid input syntax for type integer: "x"/);
  t.deepEqual(values("CASE WHEN i IS NOT NULL THEN 1 ELSE '2' END"), [1, 1, 2, 1, 1, 1]);
  invalid(t, () => check("CASE WHEN t THEN i ELSE s END"), /CASE types integer and text cannot be matched/);
  invalid(t, () => check('CASE WHEN i THEN 1 END'), /CASE WHEN needs a boolean condition/);
  invalid(t, () => check('coalesce(i, s)'), /COALESCE types integer and text cannot be matched/);
  invalid(t, () => parseFilter('i + 1', batch.schema), /needs a boolean condition, but i \+ 1 is not boolean/);
});

// ---------------------------------------------------------------------------------------------
// Value expressions inside filters (table.search)

test('filters compare value expressions with columns and literals', (t) => {
  t.deepEqual(rows('i - j > 3'), [5]);
  t.deepEqual(rows("lower(s) = 'hello'"), [0]);
  t.deepEqual(rows('length(s) BETWEEN 2 AND 5'), [0, 1, 5]);
  t.deepEqual(rows('i % 2 IN (0, 1)'), [0, 1, 4, 5]);
  t.deepEqual(rows('i % 2 NOT IN (0)'), [0, 3, 5]);
  t.deepEqual(rows('round(f) IS NULL'), [3]);
  t.deepEqual(rows('f * 2 > j'), [0, 5]);
  t.deepEqual(rows("s || '!' LIKE '%o!'"), [0]);
  t.deepEqual(rows("date_part('year', d) = 2024"), [0, 5]);
  t.deepEqual(rows("date_trunc('month', ts) = '2024-02-01'"), [0]);
  t.deepEqual(rows('CASE WHEN t THEN i ELSE j END > 1'), [2, 4, 5]);
  t.deepEqual(rows('coalesce(j, 0) = 0'), [1]);
  t.deepEqual(rows('abs(i) > $1', [5]), [3, 5]);
  t.deepEqual(rows('i * $1 > 3', [2.5]), [1, 5]);
  t.deepEqual(rows('b + 1 = $1', [9007199254740994n]), [1]);
  t.deepEqual(rows('starts_with(s, $1)', ['w']), [1]);
});

// ---------------------------------------------------------------------------------------------
// DuckDB as the oracle for integer arithmetic

test('random integer arithmetic agrees with DuckDB (// for integer division)', async (t) => {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const conn = await (await DuckDBInstance.create(':memory:')).connect();
  let seed = 12345;
  const rnd = (k: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % k;
  const xs = Array.from({ length: 50 }, () => (rnd(5) === 0 ? null : rnd(2001) - 1000));
  const ys = Array.from({ length: 50 }, () => (rnd(5) === 0 ? null : rnd(41) - 20));
  const b = batchOf({ x: column(new Int32(), xs), y: column(new Int32(), ys) });
  await conn.run(`CREATE TABLE t AS SELECT * FROM (VALUES ${xs.map((x, i) => `(${i}, ${x ?? 'NULL'}::INTEGER, ${ys[i] ?? 'NULL'}::INTEGER)`).join(', ')}) v(k, x, y)`);
  const atoms = ['x', 'y', '3', '-7', '(x + 1)', '(y * 2)'];
  const gen = (depth: number): { q: string; d: string } => {
    if (depth === 0 || rnd(3) === 0) {
      const a = atoms[rnd(atoms.length)];
      return { q: a, d: a };
    }
    const l = gen(depth - 1);
    const r = gen(depth - 1);
    const op = ['+', '-', '*', '/', '%'][rnd(5)];
    // Keep the right operand of / and % away from zero so both engines return values.
    if (op === '/' || op === '%')
      return { q: `(${l.q} ${op} (abs(${r.q}) + 1))`, d: `(${l.d} ${op === '/' ? '//' : '%'} (abs(${r.d}) + 1))` };
    return { q: `(${l.q} ${op} ${r.q})`, d: `(${l.d} ${op} ${r.d})` };
  };
  let compared = 0;
  for (let k = 0; k < 300; k++) {
    const { q, d } = gen(3);
    const mine = values(q, undefined, b).map((v) => (v === null ? null : Number(v)));
    const result = await conn.runAndReadAll(`SELECT (${d})::BIGINT AS v FROM t ORDER BY k`);
    const theirs = result.getRowObjects().map((r) => (r.v === null ? null : Number(r.v as bigint)));
    t.deepEqual(mine, theirs, `${q} vs DuckDB ${d}`);
    compared++;
  }
  t.is(compared, 300);
});
