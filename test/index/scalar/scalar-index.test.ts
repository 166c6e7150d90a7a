import test from 'ava';
import {
  Bool,
  type Data,
  type DataType,
  DateDay,
  DateMillisecond,
  Field,
  FixedSizeList,
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
  Table,
  tableFromIPC,
  tableToIPC,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { ScalarIndex, type ScalarPredicate } from '../../../src/index/scalar/scalar-index.js';
import { DataError, InvalidError } from '../../../src/errors.js';
import { and, col, compare, type Expr, inList, lit, type LiteralValue } from '../../../exec/expr/expr.js';
import { evaluateFilter } from '../../../exec/expr/evaluate.js';
import { maskToIndices } from '../../../exec/expr/selection.js';
import { mulberry32 } from '../../helpers/rng.js';

// ---------------------------------------------------------------------------------------------
// Helpers

const rng = mulberry32;

type Raw = number | bigint | string | boolean;
type TypedCtor = { new (n: number): { [i: number]: number | bigint; length: number } };

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

function cpCompare(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

/** -1 / 0 / 1, or NaN when unordered (NaN involved). Mixed number/bigint compare exactly. */
function rawCompare(a: Raw, b: Raw): number {
  if (typeof a === 'string' && typeof b === 'string') return cpCompare(a, b);
  const x = typeof a === 'boolean' ? Number(a) : (a as number | bigint);
  const y = typeof b === 'boolean' ? Number(b) : (b as number | bigint);
  return x < y ? -1 : x > y ? 1 : x == y ? 0 : NaN;
}

const ISO_BASE_NS = BigInt(Date.UTC(2024, 0, 1)) * 1_000_000n;
function isoFromNanos(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const frac = String(ns % 1_000_000_000n).padStart(9, '0');
  return new Date(Number(ms)).toISOString().slice(0, 19) + '.' + frac + 'Z';
}

interface TypeCase {
  name: string;
  type: DataType;
  /** A random raw value (may repeat). */
  gen: (r: () => number) => Raw;
  build: (values: readonly (Raw | null)[]) => Data;
  /** A query value as a caller would pass it, and the raw value it means. */
  query?: (raw: Raw, r: () => number) => [unknown, Raw];
  /** Values that exist in no row (between or beyond). */
  near: (raw: Raw, r: () => number) => Raw;
}

const pick = <T>(r: () => number, xs: readonly T[]) => xs[Math.floor(r() * xs.length)];

const intCase = (name: string, type: DataType, Ctor: TypedCtor, lo: number, hi: number): TypeCase => ({
  name,
  type,
  gen: (r) => (r() < 0.05 ? pick(r, [lo, hi]) : Math.floor(lo / 2 + r() * 20)),
  build: (vs) => prim(type, Ctor, vs as (number | null)[]),
  near: (v, r) => (v as number) + pick(r, [0.5, -0.5, 1, -1, 1e12, -1e12]),
});

const bigCase = (name: string, type: DataType, Ctor: TypedCtor, values: bigint[], near: (v: bigint, r: () => number) => Raw): TypeCase => ({
  name,
  type,
  gen: (r) => pick(r, values),
  build: (vs) => prim(type, Ctor, vs as (bigint | null)[]),
  near: (v, r) => near(v as bigint, r),
});

const STRINGS = ['', 'a', 'ab', 'abc', 'b', 'B', 'é', 'e\u0301', '😀', '\uFFFD', '\uFFFF', 'ﬀ', 'zz', 'Apple', 'apple', '日本', 'a\u0000b'];

const temporalNear = (step: bigint) => (v: Raw, r: () => number): Raw => (v as bigint) + pick(r, [1n, -1n, step / 2n || 1n]);

const CASES: TypeCase[] = [
  intCase('Int8', new Int8(), Int8Array, -128, 127),
  intCase('Int16', new Int16(), Int16Array, -32768, 32767),
  intCase('Int32', new Int32(), Int32Array, -2147483648, 2147483647),
  intCase('UInt8', new Uint8(), Uint8Array, 0, 255),
  intCase('UInt16', new Uint16(), Uint16Array, 0, 65535),
  intCase('UInt32', new Uint32(), Uint32Array, 0, 4294967295),
  bigCase(
    'Int64',
    new Int64(),
    BigInt64Array,
    [-(2n ** 63n), 2n ** 63n - 1n, 9007199254740993n, -9007199254740993n, 0n, 1n, -1n, 5n, 6n, 7n, 100n],
    (v, r) => pick(r, [v + 1n, v - 1n, Number(v) + 0.5, Number(v) - 0.5, 2n ** 70n, -(2n ** 70n)]),
  ),
  bigCase(
    'UInt64',
    new Uint64(),
    BigUint64Array,
    [0n, 1n, 2n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 63n - 1n, 9007199254740993n, 50n],
    (v, r) => pick(r, [v + 1n, v - 1n, -1, Number(v) + 0.5, 2n ** 64n]),
  ),
  {
    name: 'Float32',
    type: new Float32(),
    gen: (r) => Math.fround(pick(r, [NaN, Infinity, -Infinity, -0, 0, 0.1, 1.5, -2.25, Math.floor(r() * 10) / 4])),
    build: (vs) => prim(new Float32(), Float32Array, vs as (number | null)[]),
    near: (v, r) => (Number.isFinite(v as number) ? (v as number) + pick(r, [1e-3, -1e-3, 0.1]) : 0.1),
  },
  {
    name: 'Float64',
    type: new Float64(),
    gen: (r) => pick(r, [NaN, Infinity, -Infinity, -0, 0, 0.1, 1e300, -1e-300, Math.floor(r() * 10) / 4]),
    build: (vs) => prim(new Float64(), Float64Array, vs as (number | null)[]),
    near: (v, r) => (Number.isFinite(v as number) ? (v as number) + pick(r, [1e-9, -1e-9, 0.5]) : pick(r, [Infinity, -Infinity, 0])),
  },
  {
    name: 'Utf8',
    type: new Utf8(),
    gen: (r) => pick(r, STRINGS),
    build: (vs) => vectorFromArray(vs as (string | null)[], new Utf8()).data[0],
    near: (v, r) => (v as string) + pick(r, ['\u0000', 'a', '😀']),
  },
  {
    name: 'Bool',
    type: new Bool(),
    gen: (r) => r() < 0.3,
    build: (vs) => vectorFromArray(vs as (boolean | null)[], new Bool()).data[0],
    near: (v) => !v,
  },
  {
    name: 'Date32',
    type: new DateDay(),
    gen: (r) => 19700 + Math.floor(r() * 40),
    build: (vs) => prim(new DateDay(), Int32Array, vs as (number | null)[]),
    // Queries as ISO date strings, Date objects, or raw day numbers.
    query: (raw, r) => {
      const d = raw as number;
      const iso = new Date(d * 86_400_000).toISOString().slice(0, 10);
      return [pick(r, [iso, new Date(d * 86_400_000), d]), d];
    },
    near: (v, r) => (v as number) + pick(r, [1, -1, 100]),
  },
  {
    name: 'Date64',
    type: new DateMillisecond(),
    gen: (r) => BigInt(19700 + Math.floor(r() * 40)) * 86_400_000n,
    build: (vs) => prim(new DateMillisecond(), BigInt64Array, vs as (bigint | null)[]),
    near: (v, r) => (v as bigint) + pick(r, [1n, -1n, 86_400_000n]),
  },
  ...(
    [
      ['Timestamp(s)', new TimestampSecond(), 1_000_000_000n],
      ['Timestamp(ms)', new TimestampMillisecond(), 1_000_000n],
      ['Timestamp(us)', new TimestampMicrosecond(), 1_000n],
      ['Timestamp(ns)', new TimestampNanosecond(), 1n],
    ] as const
  ).map(
    ([name, type, unitNs]): TypeCase => ({
      name,
      type,
      gen: (r) => ISO_BASE_NS / unitNs + BigInt(Math.floor(r() * 30)),
      build: (vs) => prim(type, BigInt64Array, vs as (bigint | null)[]),
      // Queries as ISO strings (nanosecond digits) or raw stored values.
      query: (raw, r) => [r() < 0.6 ? isoFromNanos((raw as bigint) * unitNs) : raw, raw],
      near: temporalNear(unitNs === 1n ? 2n : 2n),
    }),
  ),
];

interface Row {
  pos: number;
  value: Raw;
}

/** Builds an index from `n` random rows added in random chunks (some sliced, some with gaps). */
function buildRandom(tc: TypeCase, n: number, r: () => number): { index: ScalarIndex; rows: Row[]; end: number; chunks: { first: number; data: Data }[] } {
  const values: (Raw | null)[] = Array.from({ length: n }, () => (r() < 0.1 ? null : tc.gen(r)));
  const whole = tc.build(values);
  const index = new ScalarIndex(tc.type);
  const rows: Row[] = [];
  const chunks: { first: number; data: Data }[] = [];
  let pos = 0;
  let i = 0;
  while (i < n) {
    const len = Math.min(n - i, 1 + Math.floor(r() * (r() < 0.2 ? 300 : 20)));
    if (r() < 0.1) pos += 1 + Math.floor(r() * 5); // a gap (rows of another kind, deletions, ...)
    const data = whole.slice(i, len);
    index.add(pos, data);
    chunks.push({ first: pos, data });
    for (let k = 0; k < len; k++) {
      const v = values[i + k];
      if (v !== null && !(typeof v === 'number' && Number.isNaN(v))) rows.push({ pos: pos + k, value: v });
    }
    pos += len;
    i += len;
  }
  return { index, rows, end: pos, chunks };
}

function reference(rows: readonly Row[], pred: ScalarPredicate, raw: { eq?: Raw; lo?: Raw; hi?: Raw; ins?: (Raw | null)[] }, maxPosition = Infinity): number[] {
  const out: number[] = [];
  for (const { pos, value } of rows) {
    if (pos >= maxPosition) continue;
    let ok: boolean;
    if (pred.op === 'eq') ok = rawCompare(value, raw.eq!) === 0;
    else if (pred.op === 'in') ok = raw.ins!.some((q) => q !== null && rawCompare(value, q) === 0);
    else {
      ok = true;
      if (pred.lower) {
        const c = rawCompare(value, raw.lo!);
        ok &&= pred.lower.inclusive ? c >= 0 : c > 0;
      }
      if (pred.upper) {
        const c = rawCompare(value, raw.hi!);
        ok &&= pred.upper.inclusive ? c <= 0 : c < 0;
      }
    }
    if (ok) out.push(pos);
  }
  return out.sort((a, b) => a - b);
}

// ---------------------------------------------------------------------------------------------

test('bounds: both sides of every bound, inclusive and exclusive', (t) => {
  const index = new ScalarIndex(new Int32());
  index.add(0, prim(new Int32(), Int32Array, [3, 1, 2, 2, 4, 2, null, 5]));
  const look = (pred: ScalarPredicate, max?: number) => [...index.lookup(pred, max)];
  const range = (lo?: [number, boolean], hi?: [number, boolean]) =>
    look({ op: 'range', lower: lo && { value: lo[0], inclusive: lo[1] }, upper: hi && { value: hi[0], inclusive: hi[1] } });
  t.deepEqual(look({ op: 'eq', value: 2 }), [2, 3, 5]);
  t.deepEqual(range([2, true]), [0, 2, 3, 4, 5, 7]); // >= 2
  t.deepEqual(range([2, false]), [0, 4, 7]); // > 2
  t.deepEqual(range(undefined, [2, true]), [1, 2, 3, 5]); // <= 2
  t.deepEqual(range(undefined, [2, false]), [1]); // < 2
  t.deepEqual(range([2, true], [3, true]), [0, 2, 3, 5]);
  t.deepEqual(range([2, false], [3, true]), [0]);
  t.deepEqual(range([2, true], [3, false]), [2, 3, 5]);
  t.deepEqual(range([2, false], [3, false]), []);
  t.deepEqual(range([2, true], [2, true]), [2, 3, 5]);
  t.deepEqual(range([2, false], [2, true]), []);
  t.deepEqual(range([3, true], [2, true]), [], 'empty when lower > upper');
  t.deepEqual(range(), [0, 1, 2, 3, 4, 5, 7], 'no bounds: every non-null row');
  t.deepEqual(range([1.5, true], [4.5, false]), [0, 2, 3, 4, 5]);
  t.deepEqual(range([0, false], [1, false]), []);
  t.deepEqual(range([5, true]), [7]);
  t.deepEqual(range([5, false]), []);
  t.deepEqual(range(undefined, [1, true]), [1]);
  t.deepEqual(look({ op: 'in', values: [5, 2, 99, 2, null] }), [2, 3, 5, 7]);
  t.deepEqual(look({ op: 'in', values: [] }), []);
  t.deepEqual(look({ op: 'eq', value: null }), []);
  t.deepEqual(look({ op: 'eq', value: 2.5 }), []);
  t.deepEqual(look({ op: 'range', lower: { value: null, inclusive: true } }), []);
  t.deepEqual(look({ op: 'eq', value: 2 }, 5), [2, 3]);
  t.deepEqual(look({ op: 'eq', value: 2 }, 0), []);
  t.deepEqual(range([2, true]).filter((p) => p < 4), look({ op: 'range', lower: { value: 2, inclusive: true } }, 4));
});

test('64-bit keys: exact beyond 2^53, fractional and out-of-range bounds', (t) => {
  const index = new ScalarIndex(new Int64());
  const big = 9007199254740993n;
  index.add(10, prim(new Int64(), BigInt64Array, [big, big - 1n, -(2n ** 63n), 2n ** 63n - 1n, 5n, 6n, null]));
  const look = (pred: ScalarPredicate) => [...index.lookup(pred)];
  t.deepEqual(look({ op: 'eq', value: big }), [10]);
  t.deepEqual(look({ op: 'eq', value: 5 }), [14]);
  t.deepEqual(look({ op: 'eq', value: 5.5 }), []);
  t.deepEqual(look({ op: 'range', lower: { value: 5.5, inclusive: true } }), [10, 11, 13, 15]);
  t.deepEqual(look({ op: 'range', lower: { value: 5.5, inclusive: false }, upper: { value: 6.5, inclusive: false } }), [15]);
  t.deepEqual(look({ op: 'range', upper: { value: 5.5, inclusive: false } }), [12, 14]);
  t.deepEqual(look({ op: 'range', lower: { value: big - 1n, inclusive: false } }), [10, 13]);
  t.deepEqual(look({ op: 'range', lower: { value: -(2n ** 70n), inclusive: true }, upper: { value: 0, inclusive: true } }), [12]);
  t.deepEqual(look({ op: 'range', lower: { value: 2n ** 70n, inclusive: true } }), []);
  t.deepEqual(look({ op: 'range', upper: { value: Infinity, inclusive: false } }), [10, 11, 12, 13, 14, 15]);
  t.deepEqual(look({ op: 'range', lower: { value: -Infinity, inclusive: false } }), [10, 11, 12, 13, 14, 15]);
  t.deepEqual(look({ op: 'range', lower: { value: NaN, inclusive: true } }), []);
  t.deepEqual(look({ op: 'in', values: [big, 6, 6.5, 2n ** 63n - 1n] }), [10, 13, 15]);
  const u = new ScalarIndex(new Uint64());
  u.add(0, prim(new Uint64(), BigUint64Array, [2n ** 64n - 1n, 0n, 2n ** 63n]));
  t.deepEqual([...u.lookup({ op: 'range', lower: { value: -1, inclusive: true } })], [0, 1, 2]);
  t.deepEqual([...u.lookup({ op: 'range', lower: { value: 2n ** 63n, inclusive: false } })], [0]);
  t.deepEqual([...u.lookup({ op: 'eq', value: 2n ** 64n - 1n })], [0]);
});

test('strings compare by UTF-8 bytes, i.e. code point order (not UTF-16 order)', (t) => {
  const index = new ScalarIndex(new Utf8());
  const vals = ['😀', '\uFFFD', 'a', '', 'ab', 'é', null, 'B'];
  index.add(0, vectorFromArray(vals, new Utf8()).data[0]);
  const look = (pred: ScalarPredicate) => [...index.lookup(pred)];
  t.deepEqual(look({ op: 'range', lower: { value: '\uFFFD', inclusive: false } }), [0]); // only U+1F600
  t.deepEqual(look({ op: 'range', upper: { value: '😀', inclusive: false } }), [1, 2, 3, 4, 5, 7]);
  t.deepEqual(look({ op: 'range', lower: { value: 'a', inclusive: true }, upper: { value: 'b', inclusive: false } }), [2, 4]);
  t.deepEqual(look({ op: 'eq', value: '' }), [3]);
  t.deepEqual(look({ op: 'in', values: ['é', 'zz', 'B', 'a'] }), [2, 5, 7]);
  t.throws(() => index.lookup({ op: 'eq', value: 5 }), { instanceOf: InvalidError, message: /cannot compare/ });
});

test('dates and timestamps: ISO strings, Date objects and raw stored values', (t) => {
  const days = (iso: string) => Date.parse(iso) / 86_400_000;
  const d = new ScalarIndex(new DateDay());
  d.add(0, prim(new DateDay(), Int32Array, ['2024-01-30', '2024-01-31', '2024-02-01', '2023-12-31'].map(days)));
  t.deepEqual([...d.lookup({ op: 'eq', value: '2024-01-31' })], [1]);
  t.deepEqual([...d.lookup({ op: 'eq', value: new Date('2024-01-31T00:00:00Z') })], [1]);
  t.deepEqual([...d.lookup({ op: 'eq', value: days('2024-02-01') })], [2]);
  t.deepEqual([...d.lookup({ op: 'range', lower: { value: '2024-01-31', inclusive: false } })], [2]);
  t.deepEqual([...d.lookup({ op: 'range', upper: { value: '2024-01-01', inclusive: true } })], [3]);
  t.throws(() => d.lookup({ op: 'eq', value: '2024-02-30' }), { instanceOf: InvalidError, message: /not a valid date/ });
  const ts = new ScalarIndex(new TimestampMicrosecond());
  const noon = BigInt(Date.UTC(2024, 0, 31, 12)) * 1000n;
  ts.add(0, prim(new TimestampMicrosecond(), BigInt64Array, [noon, noon + 1n, noon - 1_000_000n]));
  t.deepEqual([...ts.lookup({ op: 'eq', value: '2024-01-31T12:00:00Z' })], [0]);
  t.deepEqual([...ts.lookup({ op: 'eq', value: '2024-01-31T12:00:00.000001Z' })], [1]);
  t.deepEqual([...ts.lookup({ op: 'range', lower: { value: '2024-01-31 12:00:00', inclusive: false } })], [1]);
  t.deepEqual([...ts.lookup({ op: 'range', lower: { value: '2024-01-31T11:59:59.9999995Z', inclusive: true } })], [0, 1]);
  t.deepEqual([...ts.lookup({ op: 'range', upper: { value: new Date(Date.UTC(2024, 0, 31, 12)), inclusive: false } })], [2]);
  t.deepEqual([...ts.lookup({ op: 'in', values: [noon - 1_000_000n, '2024-01-31T12:00:00.0000005Z'] })], [2]);
});

test('booleans and floats: FALSE < TRUE; NaN is never indexed or matched', (t) => {
  const b = new ScalarIndex(new Bool());
  // Data.slice(offset, length): a bit offset of 1 into the packed booleans.
  b.add(3, vectorFromArray([true, false, null, true, false, true, true, false, true], new Bool()).data[0].slice(1, 7));
  // rows: 3:false 4:null 5:true 6:false 7:true 8:true 9:false
  t.deepEqual([...b.lookup({ op: 'eq', value: true })], [5, 7, 8]);
  t.deepEqual([...b.lookup({ op: 'range', upper: { value: true, inclusive: false } })], [3, 6, 9]);
  t.deepEqual([...b.lookup({ op: 'in', values: [false, true] })], [3, 5, 6, 7, 8, 9]);
  t.is(b.size, 6);
  const f = new ScalarIndex(new Float64());
  f.add(0, prim(new Float64(), Float64Array, [NaN, 1, -0, 0, Infinity, null, -Infinity]));
  t.is(f.size, 5);
  t.deepEqual([...f.lookup({ op: 'eq', value: 0 })], [2, 3]);
  t.deepEqual([...f.lookup({ op: 'eq', value: NaN })], []);
  t.deepEqual([...f.lookup({ op: 'range', lower: { value: NaN, inclusive: true } })], []);
  t.deepEqual([...f.lookup({ op: 'range', lower: { value: 0.5, inclusive: true } })], [1, 4]);
  t.deepEqual([...f.lookup({ op: 'range', upper: { value: -Infinity, inclusive: true } })], [6]);
  t.deepEqual([...f.lookup({ op: 'range' })], [1, 2, 3, 4, 6]);
});

test('continuous appends keep O(log n) runs and lookups stay correct', (t) => {
  const index = new ScalarIndex(new Int32());
  const r = rng(5);
  let pos = 0;
  const rows: Row[] = [];
  for (let round = 0; round < 2000; round++) {
    const len = 1 + Math.floor(r() * 16);
    const vals = Array.from({ length: len }, () => Math.floor(r() * 100));
    index.add(pos, prim(new Int32(), Int32Array, vals));
    vals.forEach((v, k) => rows.push({ pos: pos + k, value: v }));
    pos += len;
    t.true(index.runCount <= Math.floor(Math.log2(index.size)) + 1, `${index.runCount} runs for ${index.size} rows`);
    if (round % 97 === 0) {
      const q = Math.floor(r() * 100);
      t.deepEqual([...index.lookup({ op: 'eq', value: q })], reference(rows, { op: 'eq', value: q }, { eq: q }));
    }
  }
  t.is(index.size, rows.length);
  // Already-sorted chunks (timestamps, ids) take the no-sort path.
  const ids = new ScalarIndex(new Int64());
  for (let c = 0; c < 50; c++) ids.add(c * 100, prim(new Int64(), BigInt64Array, Array.from({ length: 100 }, (_, k) => BigInt(c * 100 + k))));
  t.deepEqual([...ids.lookup({ op: 'range', lower: { value: 4990n, inclusive: true } })], [4990, 4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998, 4999]);
});

test('rows must be appended in increasing position order; bad types are rejected', (t) => {
  const index = new ScalarIndex(new Int32());
  index.add(5, prim(new Int32(), Int32Array, [1, 2]));
  t.throws(() => index.add(6, prim(new Int32(), Int32Array, [3])), { instanceOf: InvalidError, message: /increasing position order/ });
  t.throws(() => index.add(7, vectorFromArray(['x'], new Utf8()).data[0]), { instanceOf: InvalidError, message: /cannot add Utf8/ });
  t.throws(() => index.add(-1, prim(new Int32(), Int32Array, [1])), { instanceOf: InvalidError });
  t.throws(() => index.add(2 ** 32 - 1, prim(new Int32(), Int32Array, [1, 2])), { instanceOf: InvalidError, message: /2\^32/ });
  t.notThrows(() => index.add(7, prim(new Int32(), Int32Array, [])));
  t.throws(() => new ScalarIndex(new FixedSizeList(2, new Field('x', new Float32()))), { instanceOf: InvalidError, message: /cannot be built/ });
  t.throws(() => index.lookup({ op: 'like', value: 1 } as never), { instanceOf: InvalidError });
});

test('toArrow / fromArrow round trip (through IPC) keeps every answer', (t) => {
  const r = rng(11);
  for (const tc of CASES) {
    const { index, rows } = buildRandom(tc, 400, r);
    const sidecar = index.toArrow();
    t.is(sidecar.numRows, rows.length, tc.name);
    t.is(sidecar.schema.metadata.get('quiver.index'), 'scalar');
    t.is(String(sidecar.schema.fields[0].type), String(tc.type), tc.name);
    t.is(String(sidecar.schema.fields[1].type), 'Uint32');
    t.is(index.runCount, rows.length ? 1 : 0, 'toArrow compacts');
    const restored = ScalarIndex.fromArrow(tc.type, tableFromIPC(tableToIPC(sidecar)));
    t.is(restored.size, index.size);
    // Sorted by (value, position).
    const values = sidecar.getChild('value')!.toArray() as ArrayLike<unknown>;
    const positions = sidecar.getChild('position')!.toArray() as Uint32Array;
    for (let i = 1; i < sidecar.numRows; i++) {
      const c = rawCompare(values[i - 1] as Raw, values[i] as Raw);
      t.true(c < 0 || (c === 0 && positions[i - 1] < positions[i]), `${tc.name} row ${i}`);
    }
    for (let q = 0; q < 30; q++) {
      const v = rows.length ? rows[Math.floor(r() * rows.length)].value : tc.gen(r);
      const pred: ScalarPredicate = q % 2 ? { op: 'eq', value: v } : { op: 'range', lower: { value: v, inclusive: q % 3 === 0 } };
      t.deepEqual([...restored.lookup(pred)], [...index.lookup(pred)], tc.name);
    }
  }
  // An empty index round-trips too.
  const empty = ScalarIndex.fromArrow(new Utf8(), tableFromIPC(tableToIPC(new ScalarIndex(new Utf8()).toArrow())));
  t.is(empty.size, 0);
  t.deepEqual([...empty.lookup({ op: 'range' })], []);
});

test('fromArrow rejects malformed sidecars with a DataError', (t) => {
  const sidecar = (values: Data, positions: number[]) => {
    const schema = new Schema([new Field('value', values.type, false), new Field('position', new Uint32(), false)]);
    const pos = makeData({ type: new Uint32(), length: positions.length, nullCount: 0, data: Uint32Array.from(positions) });
    return new Table(schema, [new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: positions.length, nullCount: 0, children: [values, pos] }))]);
  };
  const ints = (xs: number[]) => prim(new Int32(), Int32Array, xs);
  t.notThrows(() => ScalarIndex.fromArrow(new Int32(), sidecar(ints([1, 1, 2]), [4, 7, 0])));
  t.throws(() => ScalarIndex.fromArrow(new Int32(), sidecar(ints([2, 1]), [0, 1])), { instanceOf: DataError, message: /not sorted/ });
  t.throws(() => ScalarIndex.fromArrow(new Int32(), sidecar(ints([1, 1]), [5, 5])), { instanceOf: DataError, message: /not sorted/ });
  t.throws(() => ScalarIndex.fromArrow(new Int64(), sidecar(ints([1]), [0])), { instanceOf: DataError, message: /holds Int32 keys/ });
  t.throws(() => ScalarIndex.fromArrow(new Int32(), sidecar(prim(new Int32(), Int32Array, [1, null]), [0, 1])), { instanceOf: DataError, message: /nulls/ });
  const noPos = new Table({ value: vectorFromArray([1], new Int32()) });
  t.throws(() => ScalarIndex.fromArrow(new Int32(), noPos), { instanceOf: DataError, message: /"value" and "position"/ });
  t.throws(() => ScalarIndex.fromArrow(new TimestampSecond(), ScalarIndex.prototype.toArrow.call(new ScalarIndex(new TimestampMillisecond()))), {
    instanceOf: DataError,
  });
});

test('randomized: every type against a brute-force reference (duplicates, nulls, bounds, IN, cutoffs)', (t) => {
  const r = rng(Number(process.env.QUIVER_FUZZ_SEED ?? 424242));
  let checks = 0;
  for (const tc of CASES) {
    const { index, rows, end } = buildRandom(tc, 2500, r);
    const existing = () => (rows.length && r() < 0.75 ? rows[Math.floor(r() * rows.length)].value : tc.near(rows.length ? rows[Math.floor(r() * rows.length)].value : tc.gen(r), r));
    const asQuery = (raw: Raw): [unknown, Raw] => (tc.query ? tc.query(raw, r) : [raw, raw]);
    for (let q = 0; q < 200; q++) {
      const maxPosition = r() < 0.3 ? Math.floor(r() * (end + 2)) : undefined;
      const kind = r();
      let pred: ScalarPredicate;
      let raw: { eq?: Raw; lo?: Raw; hi?: Raw; ins?: (Raw | null)[] };
      if (kind < 0.3) {
        const [v, rv] = asQuery(existing());
        pred = { op: 'eq', value: v };
        raw = { eq: rv };
      } else if (kind < 0.8) {
        const [lv, lr] = asQuery(existing());
        const [hv, hr] = asQuery(existing());
        const sides = Math.floor(r() * 4); // 0: both, 1: lower only, 2: upper only, 3: none
        pred = {
          op: 'range',
          lower: sides === 0 || sides === 1 ? { value: lv, inclusive: r() < 0.5 } : undefined,
          upper: sides === 0 || sides === 2 ? { value: hv, inclusive: r() < 0.5 } : undefined,
        };
        raw = { lo: lr, hi: hr };
      } else {
        const items = Array.from({ length: 1 + Math.floor(r() * 5) }, () => (r() < 0.1 ? ([null, null] as const) : asQuery(existing())));
        pred = { op: 'in', values: items.map(([v]) => v) };
        raw = { ins: items.map(([, rv]) => rv) };
      }
      const got = [...index.lookup(pred, maxPosition)];
      const want = reference(rows, pred, raw, maxPosition);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.fail(`${tc.name}: ${JSON.stringify(pred, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))} max ${maxPosition}\n got ${got.slice(0, 20)}\nwant ${want.slice(0, 20)}`);
        return;
      }
      checks++;
    }
  }
  t.is(checks, CASES.length * 200);
});

test('index lookups agree with the filter evaluator on the same rows', (t) => {
  const r = rng(99);
  for (const tc of CASES) {
    const { index, rows, chunks } = buildRandom(tc, 1500, r);
    if (rows.length === 0) continue;
    const sample = () => literalFor(tc, rows[Math.floor(r() * rows.length)].value);
    for (let q = 0; q < 20; q++) {
      const lit1 = sample();
      const lit2 = sample();
      const forms: [ScalarPredicate, Expr][] = [
        [{ op: 'eq', value: lit1 }, compare('=', col('v'), lit(lit1))],
        [
          { op: 'range', lower: { value: lit1, inclusive: false }, upper: { value: lit2, inclusive: true } },
          and(compare('>', col('v'), lit(lit1)), compare('<=', col('v'), lit(lit2))),
        ],
        [{ op: 'range', lower: { value: lit2, inclusive: true } }, compare('>=', col('v'), lit(lit2))],
        [{ op: 'range', upper: { value: lit2, inclusive: false } }, compare('<', col('v'), lit(lit2))],
        [{ op: 'in', values: [lit1, lit2] }, inList(col('v'), [lit(lit1), lit(lit2)])],
      ];
      for (const [pred, expr] of forms) {
        const viaFilter: number[] = [];
        for (const c of chunks) {
          const batch = new RecordBatch({ v: c.data });
          for (const i of maskToIndices(evaluateFilter(expr, batch))) viaFilter.push(c.first + i);
        }
        const label = `${tc.name} ${JSON.stringify(pred, (_, x) => (typeof x === 'bigint' ? `${x}n` : x))}`;
        t.deepEqual([...index.lookup(pred)], viaFilter, label);
      }
    }
  }
});

/** A SQL literal for a raw stored value: dates and timestamps as ISO strings. */
function literalFor(tc: TypeCase, raw: Raw): LiteralValue {
  if (tc.name === 'Date32') return new Date((raw as number) * 86_400_000).toISOString().slice(0, 10);
  if (tc.name === 'Date64') return new Date(Number(raw as bigint)).toISOString().slice(0, 10);
  if (tc.name.startsWith('Timestamp')) {
    const units: Record<string, bigint> = { 'Timestamp(s)': 1_000_000_000n, 'Timestamp(ms)': 1_000_000n, 'Timestamp(us)': 1_000n, 'Timestamp(ns)': 1n };
    return isoFromNanos((raw as bigint) * units[tc.name]);
  }
  return raw;
}

test('remappedSteps and toArrowSteps pause between runs and merges; readers between steps get every answer', (t) => {
  const r = rng(23);
  // Many small appends: many runs, so both have merges to pause between.
  const index = new ScalarIndex(new Int32());
  const rows: Row[] = [];
  let pos = 0;
  for (let round = 0; round < 300; round++) {
    const vals = Array.from({ length: 1 + Math.floor(r() * 40) }, () => Math.floor(r() * 50));
    index.add(pos, prim(new Int32(), Int32Array, vals));
    vals.forEach((v, k) => rows.push({ pos: pos + k, value: v }));
    pos += vals.length;
  }
  t.true(index.runCount > 2, 'several runs');
  // Drop every fifth row (a flush's dedup), keep the others in order.
  const newPosition = new Int32Array(pos);
  let kept = 0;
  for (let i = 0; i < pos; i++) newPosition[i] = i % 5 === 0 ? -1 : kept++;
  const preds: ScalarPredicate[] = [{ op: 'eq', value: 7 }, { op: 'range', lower: { value: 20, inclusive: true }, upper: { value: 30, inclusive: false } }, { op: 'range' }];
  const before = preds.map((p) => [...index.lookup(p)]);
  const steps = index.remappedSteps(newPosition);
  let pauses = 0;
  let step = steps.next();
  while (!step.done) {
    pauses++;
    // The index being remapped is only read: it answers as before between steps.
    t.deepEqual(preds.map((p) => [...index.lookup(p)]), before);
    step = steps.next();
  }
  t.true(pauses >= 2, `remappedSteps paused ${pauses} times`);
  const remapped = step.value;
  const expected = index.remapped(newPosition);
  t.deepEqual(preds.map((p) => [...remapped.lookup(p)]), preds.map((p) => [...expected.lookup(p)]));
  t.deepEqual(
    preds.map((p) => [...remapped.lookup(p)]),
    preds.map((p) => before[preds.indexOf(p)]!.filter((q) => newPosition[q]! >= 0).map((q) => newPosition[q]!)),
    'the surviving rows at their new positions',
  );
  // toArrowSteps: a merge a step; lookups between steps see all rows.
  const runs = remapped.runCount;
  const arrow = remapped.toArrowSteps();
  let merges = 0;
  let a = arrow.next();
  const after = preds.map((p) => [...remapped.lookup(p)]);
  while (!a.done) {
    merges++;
    t.deepEqual(preds.map((p) => [...remapped.lookup(p)]), after);
    a = arrow.next();
  }
  t.is(merges, Math.max(0, runs - 2), 'a pause after every merge but the last');
  t.is(remapped.runCount, 1);
  t.deepEqual(tableToIPC(a.value), tableToIPC(expected.toArrow()), 'the same sidecar as toArrow');
});
