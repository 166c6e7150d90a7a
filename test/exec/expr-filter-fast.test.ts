/**
 * evaluateFilter's fast paths (issue 8): `column op constant` run by per-typed-array-class
 * kernels straight on the output mask (write, AND, or only the listed rows once few are left),
 * NULLs cleared from the Arrow bitmap, and the top-level AND that switches to row lists when
 * the mask gets sparse. Every result is checked against a row-by-row oracle over the JS values
 * the columns were built from (not against the engine's other paths), on every typed-array
 * class, with and without NULLs, on sliced batches (offsets not a multiple of 8), with NaN and
 * with constants between, at and beyond the stored values.
 */
import test from 'ava';
import {
  type Data,
  type DataType,
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
  TimestampMillisecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { columnConstantFilter } from '../../exec/expr/compare.js';
import { Context } from '../../exec/expr/eval-context.js';
import { evalNode } from '../../exec/expr/evaluate.js';
import {
  and,
  arith,
  col,
  compare,
  type CompareOp,
  evaluateFilter,
  evaluatePredicate,
  type Expr,
  exprToString,
  lit,
  or,
  param,
} from '../../exec/expr/index.js';
import { numKernels, signedBigKernels, unsignedBigKernels } from '../../exec/expr/kernels.js';
import { InvalidError } from '../../src/errors.js';
import { mulberry32 } from '../helpers/rng.js';

type Value = number | bigint | null;
type TypedCtor = { new (n: number): { [i: number]: number | bigint; length: number } };

const OPS: readonly CompareOp[] = ['=', '<>', '<', '<=', '>', '>='];

/** JS's own comparison (mixed number/bigint compare exactly; NaN: only `<>` holds). */
function holds(x: number | bigint, op: CompareOp, c: number | bigint): boolean {
  switch (op) {
    case '=':
      return x == c; // eslint-disable-line eqeqeq
    case '<>':
      return x != c; // eslint-disable-line eqeqeq
    case '<':
      return x < c;
    case '<=':
      return x <= c;
    case '>':
      return x > c;
    case '>=':
      return x >= c;
  }
}

/** A primitive column from values (nulls as a validity bitmap). */
function prim(type: DataType, Ctor: TypedCtor, values: readonly Value[]): Data {
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
  const length = Object.values(columns)[0].length;
  return new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length, nullCount: 0, children: Object.values(columns) }));
}

interface Spec {
  name: string;
  type: () => DataType;
  ctor: TypedCtor;
  /** A random stored value (clustered around a few values so = and <> both hit). */
  gen: (r: () => number) => number | bigint;
  /** Constants to compare with: stored values, between them, beyond the type's range. */
  constants: readonly (number | bigint)[];
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const intGen = (lo: number, hi: number) => (r: () => number) =>
  r() < 0.6 ? pick(r, [lo, hi, -3, -1, 0, 1, 2, 3].filter((v) => v >= lo && v <= hi)) : lo + Math.floor(r() * (hi - lo + 1));
const floats = [NaN, Infinity, -Infinity, -0, 0, 0.1, -2.5, 1, 1e300, -1e-300];

const SPECS: readonly Spec[] = [
  { name: 'Int8', type: () => new Int8(), ctor: Int8Array, gen: intGen(-128, 127), constants: [0, 2, -128, 127, 2.5, -0.5, 1e9, -1e9, NaN] },
  { name: 'Uint8', type: () => new Uint8(), ctor: Uint8Array, gen: intGen(0, 255), constants: [0, 3, 255, 1.5, -1, 256, NaN] },
  { name: 'Int16', type: () => new Int16(), ctor: Int16Array, gen: intGen(-32768, 32767), constants: [0, -3, 32767, -32768, 0.25, 1e6, NaN] },
  { name: 'Uint16', type: () => new Uint16(), ctor: Uint16Array, gen: intGen(0, 65535), constants: [0, 2, 65535, 65535.5, -7, NaN] },
  { name: 'Int32', type: () => new Int32(), ctor: Int32Array, gen: intGen(-2147483648, 2147483647), constants: [0, 1, -2147483648, 2147483647, -1.5, 3e9, -3e9, 2n, NaN] },
  { name: 'Uint32', type: () => new Uint32(), ctor: Uint32Array, gen: intGen(0, 4294967295), constants: [0, 3, 4294967295, 2147483648, 2.5, -1, 5e9, NaN] },
  {
    name: 'Float32',
    type: () => new Float32(),
    ctor: Float32Array,
    gen: (r) => (r() < 0.4 ? pick(r, floats.map(Math.fround)) : Math.fround(r() * 200 - 100)),
    constants: [0, -0, 0.1, Math.fround(0.1), 1, -2.5, Infinity, -Infinity, 1e300, NaN],
  },
  {
    name: 'Float64',
    type: () => new Float64(),
    ctor: Float64Array,
    gen: (r) => (r() < 0.4 ? pick(r, floats) : r() * 200 - 100),
    constants: [0, -0, 0.1, 1, -2.5, Infinity, -Infinity, 1e300, -1e-300, 5n, NaN],
  },
  {
    name: 'Int64',
    type: () => new Int64(),
    ctor: BigInt64Array,
    gen: (r) =>
      r() < 0.5
        ? pick(r, [0n, 1n, -1n, 2n, 4294967295n, 4294967296n, -4294967296n, -4294967297n, (1n << 63n) - 1n, -(1n << 63n), 5n << 40n])
        : BigInt.asIntN(64, (BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32))),
    constants: [0n, 1n, -1n, 4294967296n, -4294967296n, 5n << 40n, (1n << 63n) - 1n, -(1n << 63n), 1n << 63n, -(1n << 64n), 0.5, -0.5, 4294967295.5, 2 ** 62, 1e30, -1e30, NaN],
  },
  {
    name: 'Uint64',
    type: () => new Uint64(),
    ctor: BigUint64Array,
    gen: (r) =>
      r() < 0.5
        ? pick(r, [0n, 1n, 2n, 4294967295n, 4294967296n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 1n])
        : (BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32)),
    constants: [0n, 2n, 4294967296n, 1n << 63n, (1n << 64n) - 1n, 1n << 64n, -1n, 0.5, 2 ** 63, 1e30, -3, NaN],
  },
];

/** A column's values: `n` rows, every `nullEvery`th NULL (0 = none). */
function values(spec: Spec, n: number, seed: number, nullEvery: number): Value[] {
  const r = mulberry32(seed);
  return Array.from({ length: n }, (_, i) => (nullEvery && i % nullEvery === 3 ? null : spec.gen(r)));
}

/** Whether a row passes `x op c`: NULL never does. */
const passes = (x: Value, op: CompareOp, c: number | bigint) => x !== null && holds(x, op, c);

const rowsOf = (mask: Uint8Array) => [...mask.keys()].filter((i) => mask[i] === 1);

// ---------------------------------------------------------------------------------------------
// Kernels, each form, each class

test('the generated kernels (set, and, sel, with and without a validity bitmap) agree with JS comparisons on every typed-array class', (t) => {
  const n = 203;
  // A validity bitmap read from bit `off` on (not byte-aligned), ~1/4 NULL.
  const off = 13;
  const rb = mulberry32(9);
  const bits = Uint8Array.from({ length: (n + off + 7) >> 3 }, () => Math.floor(rb() * 256) | Math.floor(rb() * 256));
  const bit = (i: number) => (bits[(off + i) >> 3] >> ((off + i) & 7)) & 1;
  for (const spec of SPECS) {
    const vals = values(spec, n, 11, 0) as (number | bigint)[];
    const x = new spec.ctor(n);
    vals.forEach((v, i) => (x[i] = v));
    const r = mulberry32(5);
    const prior = Uint8Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0));
    const listed = rowsOf(prior);
    for (const c of spec.constants) {
      for (const op of OPS) {
        const label = `${spec.name} ${op} ${String(c)}`;
        const want = vals.map((v) => (holds(v, op, c) ? 1 : 0));
        const wantAnd = want.map((w, i) => w & prior[i]);
        const count = (a: number[]) => a.reduce((s, v) => s + v, 0);
        const set = new Uint8Array(n).fill(7);
        const anded = prior.slice();
        const sel = prior.slice();
        const idx = Uint32Array.from(listed);
        let kSet: number, kAnd: number, kSel: number;
        // The same with the bitmap: NULL rows (bit 0) come out 0.
        const setV = new Uint8Array(n).fill(7);
        const andedV = prior.slice();
        const selV = prior.slice();
        const idxV = Uint32Array.from(listed);
        let kSetV: number, kAndV: number, kSelV: number;
        if (x instanceof BigInt64Array || x instanceof BigUint64Array) {
          // The 64-bit kernels compare halves with an exact integer bound; check them on
          // integer constants in range (the bound itself is integerBound's, tested below).
          if (typeof c !== 'bigint' || c < (x instanceof BigUint64Array ? 0n : -(1n << 63n)) || c >= (x instanceof BigUint64Array ? 1n << 64n : 1n << 63n))
            continue;
          const lo = new Uint32Array(x.buffer);
          const unsigned = x instanceof BigUint64Array;
          const ch = Number(unsigned ? BigInt.asUintN(32, c >> 32n) : BigInt.asIntN(32, c >> 32n));
          const cl = Number(BigInt.asUintN(32, c));
          if (unsigned) {
            kSet = unsignedBigKernels.set(lo, lo, ch, cl, op, n, set);
            kAnd = unsignedBigKernels.and(lo, lo, ch, cl, op, n, anded);
            kSel = unsignedBigKernels.sel(lo, lo, ch, cl, op, idx, listed.length, sel);
            kSetV = unsignedBigKernels.setValid(lo, lo, ch, cl, op, n, setV, bits, off);
            kAndV = unsignedBigKernels.andValid(lo, lo, ch, cl, op, n, andedV, bits, off);
            kSelV = unsignedBigKernels.selValid(lo, lo, ch, cl, op, idxV, listed.length, selV, bits, off);
          } else {
            const hi = new Int32Array(x.buffer);
            kSet = signedBigKernels.set(lo, hi, ch, cl, op, n, set);
            kAnd = signedBigKernels.and(lo, hi, ch, cl, op, n, anded);
            kSel = signedBigKernels.sel(lo, hi, ch, cl, op, idx, listed.length, sel);
            kSetV = signedBigKernels.setValid(lo, hi, ch, cl, op, n, setV, bits, off);
            kAndV = signedBigKernels.andValid(lo, hi, ch, cl, op, n, andedV, bits, off);
            kSelV = signedBigKernels.selValid(lo, hi, ch, cl, op, idxV, listed.length, selV, bits, off);
          }
        } else {
          if (typeof c === 'bigint') continue;
          const k = numKernels(x)!;
          t.truthy(k, spec.name);
          kSet = k.set(x as never, c, op, n, set);
          kAnd = k.and(x as never, c, op, n, anded);
          kSel = k.sel(x as never, c, op, idx, listed.length, sel);
          kSetV = k.setValid(x as never, c, op, n, setV, bits, off);
          kAndV = k.andValid(x as never, c, op, n, andedV, bits, off);
          kSelV = k.selValid(x as never, c, op, idxV, listed.length, selV, bits, off);
        }
        t.deepEqual([...set], want, `set ${label}`);
        t.is(kSet, count(want), `set count ${label}`);
        t.deepEqual([...anded], wantAnd, `and ${label}`);
        t.is(kAnd, count(wantAnd), `and count ${label}`);
        t.deepEqual([...sel], wantAnd, `sel ${label}`);
        t.is(kSel, count(wantAnd), `sel count ${label}`);
        t.deepEqual([...idx.subarray(0, kSel)], rowsOf(Uint8Array.from(wantAnd)), `sel rows ${label}`);
        const wantV = want.map((w, i) => w & bit(i));
        const wantAndV = wantAnd.map((w, i) => w & bit(i));
        t.deepEqual([...setV], wantV, `setValid ${label}`);
        t.is(kSetV, count(wantV), `setValid count ${label}`);
        t.deepEqual([...andedV], wantAndV, `andValid ${label}`);
        t.is(kAndV, count(wantAndV), `andValid count ${label}`);
        t.deepEqual([...selV], wantAndV, `selValid ${label}`);
        t.is(kSelV, count(wantAndV), `selValid count ${label}`);
        t.deepEqual([...idxV.subarray(0, kSelV)], rowsOf(Uint8Array.from(wantAndV)), `selValid rows ${label}`);
      }
    }
  }
});

test('each typed-array class has its own kernels (monomorphic loads)', (t) => {
  const ks = SPECS.filter((s) => s.ctor !== BigInt64Array && s.ctor !== BigUint64Array).map((s) => numKernels(new s.ctor(1))!);
  t.is(new Set(ks.map((k) => k.set)).size, ks.length);
  t.is(new Set(ks.map((k) => k.and)).size, ks.length);
  t.is(new Set(ks.map((k) => k.sel)).size, ks.length);
  t.not(signedBigKernels.set, unsignedBigKernels.set);
  t.is(numKernels(new BigInt64Array(1)), undefined);
  t.is(numKernels([1, 2, 3]), undefined);
});

// ---------------------------------------------------------------------------------------------
// evaluateFilter on single comparisons: every class, NULLs, slices, NaN, constants both sides

function check(
  t: import('ava').ExecutionContext,
  batch: RecordBatch,
  e: Expr,
  params: unknown[],
  want: (row: number) => boolean,
  label: string,
): void {
  const got = evaluateFilter(e, batch, params);
  const expected = Uint8Array.from({ length: batch.numRows }, (_, i) => (want(i) ? 1 : 0));
  t.deepEqual(rowsOf(got), rowsOf(expected), label);
  t.is(got.length, batch.numRows, label);
  // The general path (evaluatePredicate → compareOperands) must agree, NULLs apart.
  const p = evaluatePredicate(e, batch, params);
  t.deepEqual(rowsOf(p.values), rowsOf(expected), `predicate ${label}`);
}

test('column op constant: every typed-array class, with and without NULLs, whole and sliced, constant on either side', (t) => {
  const n = 150;
  for (const spec of SPECS) {
    for (const nullEvery of [0, 5]) {
      const vals = values(spec, n, 3, nullEvery);
      const batch = batchOf({ x: prim(spec.type(), spec.ctor, vals) });
      const fast = columnConstantFilter(new Context(batch, [1], lt(), evalNode), lt());
      t.truthy(fast, `${spec.name} takes the fast path`);
      for (const [begin, end] of [
        [0, n],
        [3, 150],
        [13, 77],
        [64, 65],
        [9, 9],
      ]) {
        const b = begin === 0 && end === n ? batch : batch.slice(begin, end);
        for (const c of spec.constants)
          for (const op of OPS) {
            const label = `${spec.name}${nullEvery ? ' (NULLs)' : ''} [${begin}, ${end}) x ${op} ${String(c)}`;
            check(t, b, compare(op, col('x'), param(1)), [c], (i) => passes(vals[begin + i], op, c), label);
            // Constant first: `c op x` is `x flip(op) c`.
            check(t, b, compare(op, param(1), col('x')), [c], (i) => passes(vals[begin + i], flip(op), c), `${label} (flipped)`);
          }
      }
    }
  }
  function lt(): Expr {
    return compare('<', col('x'), param(1));
  }
});

function flip(op: CompareOp): CompareOp {
  return ({ '=': '=', '<>': '<>', '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as const)[op];
}

test('literals, NULL constants, timestamps with raw parameters', (t) => {
  const n = 97;
  const ints = values(SPECS[4], n, 9, 4);
  const ts = ints.map((v) => (v === null ? null : BigInt(v as number) * 1000n));
  const batch = batchOf({ a: prim(new Int32(), Int32Array, ints), ts: prim(new TimestampMillisecond(), BigInt64Array, ts) }).slice(5, 90);
  const a = (i: number) => ints[5 + i];
  for (const op of OPS) {
    check(t, batch, compare(op, col('a'), lit(2)), [], (i) => passes(a(i), op, 2), `a ${op} 2`);
    check(t, batch, compare(op, lit(2), col('a')), [], (i) => passes(a(i), flip(op), 2), `2 ${op} a`);
    check(t, batch, compare(op, col('a'), lit(null)), [], () => false, `a ${op} NULL`);
    check(t, batch, compare(op, col('a'), param(1)), [null], () => false, `a ${op} $1 = NULL`);
    check(t, batch, compare(op, col('ts'), param(1)), [2000n], (i) => passes(ts[5 + i], op, 2000n), `ts ${op} 2000 ms`);
    check(t, batch, compare(op, col('ts'), param(1)), [new Date(2000)], (i) => passes(ts[5 + i], op, 2000n), `ts ${op} Date(2000)`);
  }
});

test('the fast path keeps the general path errors, in the same order', (t) => {
  const batch = batchOf({ a: prim(new Int32(), Int32Array, [1, 2, 3]), s: vectorFromArray(['x', 'y', 'z'], new Utf8()).data[0] });
  const message = (e: Expr, params: unknown[] = []) => {
    try {
      evaluateFilter(e, batch, params);
    } catch (err) {
      t.true(err instanceof InvalidError, exprToString(e));
      return (err as Error).message;
    }
    return 'no error';
  };
  t.regex(message(compare('<', col('a'), lit('x'))), /type mismatch: cannot compare column a \(Int32\)/);
  t.regex(message(compare('<', col('nope'), lit(1))), /unknown column "nope"/);
  t.regex(message(compare('<', col('a'), param(1))), /uses \$1 but no parameters/);
  // Left to right: the missing parameter on the left is reported before the unknown column.
  t.regex(message(compare('<', param(1), col('nope'))), /uses \$1/);
  t.regex(message(compare('<', col('nope'), param(1))), /unknown column/);
  t.regex(message(and(compare('>', col('a'), lit(0)), compare('<', col('a'), lit('x')))), /type mismatch/);
});

// ---------------------------------------------------------------------------------------------
// The top-level AND: dense, sparse (row lists), general conditions mixed in

function andBatch(n: number, nullEvery: number) {
  const r = mulberry32(77);
  const k = Array.from({ length: n }, () => Math.floor(r() * 200)); // k = 7: ~0.5 %
  const cols: Record<string, Value[]> = {};
  const data: Record<string, Data> = { k: prim(new Int32(), Int32Array, k) };
  SPECS.forEach((spec, j) => {
    cols[spec.name] = values(spec, n, 100 + j, nullEvery);
    data[spec.name] = prim(spec.type(), spec.ctor, cols[spec.name]);
  });
  const s = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 'a' : 'b'));
  data.s = vectorFromArray(s, new Utf8()).data[0];
  return { batch: batchOf(data), k, cols, s };
}

test('AND of comparisons, dense and sparse: every class as a later condition, NULLs, slices', (t) => {
  const n = 4000;
  for (const nullEvery of [0, 6]) {
    const { batch, k, cols } = andBatch(n, nullEvery);
    for (const [begin, end] of [
      [0, n],
      [11, 3989],
    ]) {
      const b = begin === 0 && end === n ? batch : batch.slice(begin, end);
      for (const spec of SPECS)
        for (const c of spec.constants.slice(0, 4))
          for (const op of OPS) {
            const v = cols[spec.name];
            const later = compare(op, col(spec.name), param(1));
            // Sparse: k = 7 leaves ~0.5 % of the rows, so the next conditions test listed rows
            // only; a third condition runs on the compacted list.
            const third = compare('<>', col(spec.name), param(2));
            const c2 = spec.constants[5];
            check(
              t,
              b,
              and(compare('=', col('k'), lit(7)), later, third),
              [c, c2],
              (i) => k[begin + i] === 7 && passes(v[begin + i], op, c) && passes(v[begin + i], '<>', c2),
              `${spec.name} sparse [${begin}, ${end}) ${op} ${String(c)}${nullEvery ? ' NULLs' : ''}`,
            );
            // Dense: k < 100 leaves half; the later condition ANDs the whole mask.
            check(
              t,
              b,
              and(compare('<', col('k'), lit(100)), later),
              [c],
              (i) => k[begin + i] < 100 && passes(v[begin + i], op, c),
              `${spec.name} dense [${begin}, ${end}) ${op} ${String(c)}${nullEvery ? ' NULLs' : ''}`,
            );
            // The nullable column first, then k.
            check(
              t,
              b,
              and(later, compare('>=', col('k'), lit(190))),
              [c],
              (i) => k[begin + i] >= 190 && passes(v[begin + i], op, c),
              `${spec.name} first [${begin}, ${end}) ${op} ${String(c)}${nullEvery ? ' NULLs' : ''}`,
            );
          }
    }
  }
});

test('AND mixing fast and general conditions, sparse and dense; empty results stop early', (t) => {
  const n = 3000;
  const { batch, k, cols, s } = andBatch(n, 7);
  const i32 = cols.Int32;
  const f64 = cols.Float64;
  const cases: [string, Expr, unknown[], (i: number) => boolean][] = [
    // A general condition (string compare, OR) after a sparse fast one, and before one.
    ['k = 7 AND s = a AND Int32 > 0', and(compare('=', col('k'), lit(7)), compare('=', col('s'), lit('a')), compare('>', col('Int32'), lit(0))), [], (i) => k[i] === 7 && s[i] === 'a' && passes(i32[i], '>', 0)],
    ['s = a AND k = 7 AND Float64 > 0', and(compare('=', col('s'), lit('a')), compare('=', col('k'), lit(7)), compare('>', col('Float64'), lit(0))), [], (i) => s[i] === 'a' && k[i] === 7 && passes(f64[i], '>', 0)],
    [
      'k < 3 AND (Int32 > 0 OR Float64 < 0)',
      and(compare('<', col('k'), lit(3)), or(compare('>', col('Int32'), lit(0)), compare('<', col('Float64'), lit(0)))),
      [],
      (i) => k[i] < 3 && (passes(i32[i], '>', 0) || passes(f64[i], '<', 0)),
    ],
    // The general condition first (a copy of its values), then sparse fast ones.
    ['(k = 1 OR k = 2) AND Int32 >= 0', and(or(compare('=', col('k'), lit(1)), compare('=', col('k'), lit(2))), compare('>=', col('Int32'), lit(0))), [], (i) => (k[i] === 1 || k[i] === 2) && passes(i32[i], '>=', 0)],
    // Nothing left after the first: later ones (even ill-typed at run time) are not evaluated.
    ['k > 1000 AND Int32 / 0 > 1', and(compare('>', col('k'), lit(1000)), compare('>', arith('/', col('Int32'), lit(0)), lit(1))), [], () => false],
    ['k = 7 AND k <> 7 AND ...', and(compare('=', col('k'), lit(7)), compare('<>', col('k'), lit(7)), compare('>', arith('/', col('Int32'), lit(0)), lit(1))), [], () => false],
    // Constant answers of the 64-bit bound (past the range, NaN) inside an AND.
    ['k = 7 AND Int64 < 2^64', and(compare('=', col('k'), lit(7)), compare('<', col('Int64'), param(1))), [1n << 64n], (i) => k[i] === 7 && cols.Int64[i] !== null],
    ['k < 100 AND Int64 <> NaN', and(compare('<', col('k'), lit(100)), compare('<>', col('Int64'), param(1))), [NaN], (i) => k[i] < 100 && cols.Int64[i] !== null],
    ['k = 7 AND Int64 = NaN', and(compare('=', col('k'), lit(7)), compare('=', col('Int64'), param(1))), [NaN], () => false],
    ['Int64 > -2^64 AND k = 7', and(compare('>', col('Int64'), param(1)), compare('=', col('k'), lit(7))), [-(1n << 64n)], (i) => k[i] === 7 && cols.Int64[i] !== null],
    ['k = 7 AND Int32 = NULL', and(compare('=', col('k'), lit(7)), compare('=', col('Int32'), param(1))), [null], () => false],
  ];
  for (const [label, e, params, want] of cases) check(t, batch, e, params, want, label);
});

test('a value node after a sparse condition only raises for rows still TRUE', (t) => {
  const n = 2000;
  const k = Array.from({ length: n }, (_, i) => i % 250); // k = 7: 8 rows
  const d = k.map((v) => (v === 7 ? 2 : 0)); // 0 everywhere else
  const batch = batchOf({ k: prim(new Int32(), Int32Array, k), d: prim(new Int32(), Int32Array, d) });
  const e = and(compare('=', col('k'), lit(7)), compare('>', arith('/', lit(10), col('d')), lit(1)), compare('<', col('d'), lit(5)));
  t.deepEqual(rowsOf(evaluateFilter(e, batch)), rowsOf(Uint8Array.from(k, (v) => (v === 7 ? 1 : 0))));
  // Without the first condition the division does raise.
  t.throws(() => evaluateFilter(compare('>', arith('/', lit(10), col('d')), lit(1)), batch), { message: /division by zero/ });
});
