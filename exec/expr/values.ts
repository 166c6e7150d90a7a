/**
 * Value expressions: arithmetic, unary minus, CAST, CASE and function calls, evaluated over a
 * batch into typed vectors (`evalValueNode`; evaluate.ts's `evaluateValue` returns them as Arrow
 * `Data` through `operandToData`). Children are evaluated through the Context (`ctx.eval`), so
 * this module never imports evaluate.ts (eval-context.ts says why).
 *
 * Why it looks like this: projections, ORDER BY keys and computed filter conditions run per
 * row, so every operator is a loop over typed arrays. Results have exactly the type the checker
 * infers for the node (`Context.typeOf`, check.ts/types.ts), so `evaluateValue`'s output type
 * always equals `inferType`'s. Representations are eval-context.ts's: NumVec (Int16Array, Int32Array,
 * Float32Array, Float64Array, Date32 days in Int32Array, booleans as canonical 0/1 bytes), BigVec
 * (BigInt64Array for bigint and Timestamp(µs)), StrVec (UTF-8 offsets + bytes); a NULL constant
 * is a Scalar with value null. Constants are broadcast to the batch length where an operator
 * needs a vector.
 *
 * Invariants:
 * - NULL in → NULL out for operators and functions, except COALESCE, CASE, concat() (skips
 *   NULLs), GREATEST/LEAST (ignore NULLs) and the IS tests.
 * - Per-row errors (PostgreSQL's): "division by zero" (integer and float `/`, `%`, mod), "<type>
 *   out of range" for integer overflow in + − × ÷ negate abs and casts, bad text in a cast
 *   ("invalid input syntax for type integer: \"abc\""), sqrt/ln of negatives… are raised only
 *   for rows that are valid (non-NULL inputs) and inside the evaluation selection `sel`
 *   (evaluate.ts's invariant): kernels compute every row branch-free and set a flag, and only
 *   when the flag is set does a second pass look for a live offending row. So `CASE WHEN x = 0
 *   THEN 0 ELSE 10 / x END` and `x <> 0 AND 10 / x > 1` never raise.
 * - 64-bit integer arithmetic runs on doubles while operands and results stay below 2^53 in
 *   magnitude (exact there) and falls back to BigInt per row otherwise; results are written as
 *   two 32-bit halves, so the common path allocates no BigInt.
 */
import { type Data, type DataType, type FixedSizeList, makeData, Type } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { dotAt, l2At, normAt } from '../kernels/distance.js';
import { domainOf } from './coerce.js';
import { type CallExpr, type CaseExpr, type Expr, exprToString } from './expr.js';
import { compareOperands } from './compare.js';
import {
  type BigVec,
  type Context,
  materializeDict,
  type NumVec,
  type Operand,
  type Pred,
  pred,
  predicateOrScalar,
  type Scalar,
  type StrVec,
  type Vec,
  type DictVec,
} from './eval-context.js';
import { AGGREGATE_FUNCTIONS } from './functions.js';
import { compareBytes, type NumArray } from './kernels.js';
import { daysFromCivil, parseDate, parseTimestampNanos } from './temporal.js';
import { ARROW, isFloatKind, isIntKind, kindName, literalType, type SqlKind, sqlKind, vectorType } from './types.js';

type PlainVec = Exclude<Vec, DictVec>;

const TWO32 = 4294967296;
const SAFE = 9007199254740992; // 2^53
const US_PER_DAY = 86_400_000_000;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

// ---------------------------------------------------------------------------------------------
// Small helpers

function invalid(message: string): InvalidError {
  return new InvalidError(message);
}

const NULL_SCALAR: Scalar = { tag: 'scalar', value: null, isParam: false, label: 'NULL' };

function isNullScalar(o: Operand): boolean {
  return o.tag === 'scalar' && o.value === null;
}

function kindOf(t: DataType): SqlKind {
  const k = sqlKind(t);
  if (k === undefined) throw invalid(`values of type ${String(t)} cannot be used in expressions`);
  return k;
}

function typeOf(ctx: Context, e: Expr): DataType {
  const t = ctx.typeOf(e);
  if (t === null) throw invalid(`could not determine the type of ${exprToString(e)}: bind its parameters`);
  return t;
}

/** Rows where errors count: valid and selected; null = every row. */
function liveMask(n: number, validity: Uint8Array | null, sel: Uint8Array | null): Uint8Array | null {
  if (!validity) return sel;
  if (!sel) return validity;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = validity[i] & sel[i];
  return out;
}

function andValid(a: Uint8Array | null, b: Uint8Array | null, n: number): Uint8Array | null {
  if (!a) return b;
  if (!b) return a;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = a[i] & b[i];
  return out;
}

function anyRow(mask: Uint8Array | null, n: number): boolean {
  if (!mask) return n > 0;
  for (let i = 0; i < n; i++) if (mask[i] !== 0) return true;
  return false;
}

function numVec(type: DataType, values: NumArray, validity: Uint8Array | null): NumVec {
  return { tag: 'num', label: String(type), type, domain: domainOf(type)!, validity, values };
}

function bigVec(type: DataType, values: BigInt64Array, validity: Uint8Array | null): BigVec {
  return { tag: 'big', label: String(type), type, domain: domainOf(type)!, validity, values };
}

function strVec(offsets: Int32Array, bytes: Uint8Array, validity: Uint8Array | null): StrVec {
  return { tag: 'str', label: 'text', type: ARROW.text, domain: domainOf(ARROW.text)!, validity, offsets, bytes };
}

function boolVec(values: Uint8Array, validity: Uint8Array | null): Pred {
  if (validity) for (let i = 0; i < values.length; i++) values[i] &= validity[i];
  return pred(values, validity);
}

function newArray(kind: SqlKind, n: number): NumArray {
  switch (kind) {
    case 'smallint':
      return new Int16Array(n);
    case 'int':
    case 'date':
      return new Int32Array(n);
    case 'real':
      return new Float32Array(n);
    case 'double':
      return new Float64Array(n);
    case 'boolean':
      return new Uint8Array(n);
    default:
      throw new Error(`no number array for ${kind}`);
  }
}

function makeVec(kind: SqlKind, values: NumArray | BigInt64Array, validity: Uint8Array | null): Vec {
  if (kind === 'boolean') return boolVec(values as Uint8Array, validity);
  if (kind === 'bigint' || kind === 'timestamp') return bigVec(ARROW[kind], values as BigInt64Array, validity);
  return numVec(ARROW[kind as 'int'], values as NumArray, validity);
}

/** 64-bit values as two 32-bit halves (little-endian): lo at 2i, hi at 2i + 1. */
function halves(a: BigInt64Array | BigUint64Array): { lo: Uint32Array; hi: Int32Array | Uint32Array } {
  const lo = new Uint32Array(a.buffer, a.byteOffset, a.length * 2);
  const hi = a instanceof BigUint64Array ? lo : new Int32Array(a.buffer, a.byteOffset, a.length * 2);
  return { lo, hi };
}

/** Writes an integer-valued double with |r| < 2^53 into slot i of an Int64 array's halves. */
function writeI64(lo: Uint32Array, hi: Int32Array, i: number, r: number): void {
  const h = Math.floor(r / TWO32);
  hi[2 * i + 1] = h;
  lo[2 * i] = r - h * TWO32;
}

function outOfRange(kind: SqlKind): InvalidError {
  return invalid(`${kindName(kind)} out of range`);
}

const DIVISION_BY_ZERO = () => invalid('division by zero');

// ---------------------------------------------------------------------------------------------
// Constants as vectors

/** The type a scalar has on its own (literal rules; parameters by their JS value). */
function scalarType(s: Scalar): DataType {
  const v = s.value;
  if (v instanceof Date) return ARROW.timestamp;
  return literalType(v, s.temporal, s.float);
}

/** A non-NULL scalar as an n-row vector of its own type. */
function broadcast(s: Scalar, n: number): Vec {
  const v = s.value;
  if (v instanceof Date) {
    const ms = v.getTime();
    if (!Number.isFinite(ms)) throw invalid(`${s.label} is an invalid Date`);
    return broadcastI64(ARROW.timestamp, BigInt(ms) * 1000n, n);
  }
  const t = scalarType(s);
  const kind = kindOf(t);
  switch (kind) {
    case 'int':
    case 'double':
      return numVec(t, (newArray(kind, n) as Int32Array).fill(Number(v)), null);
    case 'bigint':
      return broadcastI64(t, BigInt(v as number | bigint), n);
    case 'boolean':
      return boolVec(new Uint8Array(n).fill(v ? 1 : 0), null);
    case 'date': {
      const d = parseDate(String(v));
      if (d === undefined) throw invalid(`invalid input syntax for type date: "${String(v)}"`);
      return numVec(ARROW.date, new Int32Array(n).fill(d), null);
    }
    case 'timestamp': {
      const ns = parseTimestampNanos(String(v));
      if (ns === undefined) throw invalid(`invalid input syntax for type timestamp: "${String(v)}"`);
      return broadcastI64(ARROW.timestamp, floorDiv(ns, 1000n), n);
    }
    case 'text': {
      const bytes = encoder.encode(String(v));
      const out = new Uint8Array(bytes.length * n);
      const offsets = new Int32Array(n + 1);
      for (let i = 0; i < n; i++) {
        out.set(bytes, i * bytes.length);
        offsets[i + 1] = (i + 1) * bytes.length;
      }
      return strVec(offsets, out, null);
    }
    default:
      throw invalid(`${s.label} cannot be used here`);
  }
}

function broadcastI64(type: DataType, v: bigint, n: number): BigVec {
  return bigVec(type, new BigInt64Array(n).fill(v), null);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
}

/**
 * An operand as a vector of exactly `type` (canonical), converting as CAST does (implicit
 * widening uses the same code); errors only for rows in `sel`. NULL scalars stay NULL scalars.
 */
function asType(ctx: Context, o: Operand, type: DataType, sel: Uint8Array | null): Vec | null {
  if (o.tag === 'scalar') {
    if (o.value === null) return null;
    if (isVectorValue(o.value)) throw invalid(`${o.label} is a vector and cannot be used here`);
    return castVec(broadcast(o, ctx.n), type, sel, ctx.n);
  }
  return castVec(o, type, sel, ctx.n);
}

function isVectorValue(v: unknown): boolean {
  return v instanceof Float32Array || v instanceof Float64Array || Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Dispatch

export function evalValueNode(ctx: Context, e: Expr, sel: Uint8Array | null): Operand {
  switch (e.kind) {
    case 'arith':
      return evalArith(ctx, e.op, typeOf(ctx, e), ctx.eval(e.left, sel), ctx.eval(e.right, sel), sel);
    case 'negate':
      return evalNegate(ctx, typeOf(ctx, e), ctx.eval(e.operand, sel), sel);
    case 'cast': {
      const o = ctx.eval(e.operand, sel);
      if (isNullScalar(o)) return NULL_SCALAR;
      return asType(ctx, o, typeOf(ctx, e), sel)!;
    }
    case 'case':
      return evalCase(ctx, e, sel);
    case 'call':
      return evalCall(ctx, e, sel);
    default:
      throw new Error(`not a value node: ${e.kind}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

function evalArith(ctx: Context, op: string, type: DataType, l: Operand, r: Operand, sel: Uint8Array | null): Operand {
  const n = ctx.n;
  const kind = kindOf(type);
  if (kind === 'null' || isNullScalar(l) || isNullScalar(r)) return NULL_SCALAR;
  if (op === '||') {
    const a = asType(ctx, l, ARROW.text, sel) as StrVec;
    const b = asType(ctx, r, ARROW.text, sel) as StrVec;
    return concatStr([a, b], n, andValid(a.validity, b.validity, n));
  }
  const lk = l.tag === 'scalar' ? kindOf(scalarType(l)) : kindOf(l.type);
  const rk = r.tag === 'scalar' ? kindOf(scalarType(r)) : kindOf(r.type);
  if (lk === 'date' || rk === 'date') return dateArith(ctx, op, kind, l, r, lk, sel);
  if (kind === 'bigint') {
    const a = asType(ctx, l, ARROW.bigint, sel) as BigVec;
    const b = asType(ctx, r, ARROW.bigint, sel) as BigVec;
    return int64Arith(op, a, b, n, sel);
  }
  // smallint / int / real / double: operands read as numbers (ints widen exactly).
  const a = numbersOf(ctx, l, kind, sel, n);
  const b = numbersOf(ctx, r, kind, sel, n);
  const validity = andValid(a.validity, b.validity, n);
  const out = newArray(kind, n);
  numKernel(op, a.values, b.values, out, n, kind, validity, sel);
  return makeVec(kind, out, validity);
}

/** Values readable as JS numbers for a smallint/int/real/double result. */
function numbersOf(ctx: Context, o: Operand, kind: SqlKind, sel: Uint8Array | null, n: number): { values: NumArray; validity: Uint8Array | null } {
  if (o.tag === 'num' && o.domain.cls !== 'date' && o.domain.cls !== 'bool') return { values: o.values, validity: o.validity };
  const v = asType(ctx, o, ARROW[kind as 'int'], sel) as NumVec;
  void n;
  return { values: v.values, validity: v.validity };
}

function numKernel(
  op: string,
  a: NumArray,
  b: NumArray,
  out: NumArray,
  n: number,
  kind: SqlKind,
  validity: Uint8Array | null,
  sel: Uint8Array | null,
): void {
  const isInt = isIntKind(kind);
  const lo = kind === 'smallint' ? -32768 : kind === 'int' ? -2147483648 : -Infinity;
  const hi = kind === 'smallint' ? 32767 : kind === 'int' ? 2147483647 : Infinity;
  let bad = false;
  let zero = false;
  switch (op) {
    case '+':
      for (let i = 0; i < n; i++) {
        const r = a[i] + b[i];
        out[i] = r;
        if (r > hi || r < lo) bad = true;
      }
      break;
    case '-':
      for (let i = 0; i < n; i++) {
        const r = a[i] - b[i];
        out[i] = r;
        if (r > hi || r < lo) bad = true;
      }
      break;
    case '*':
      for (let i = 0; i < n; i++) {
        const r = a[i] * b[i];
        out[i] = r;
        if (r > hi || r < lo) bad = true;
      }
      break;
    case '/':
      if (isInt)
        for (let i = 0; i < n; i++) {
          const x = a[i];
          const y = b[i];
          if (y === 0) zero = true;
          // Exact truncating division: x % y is exact in doubles, and x − x % y divides exactly.
          const r = (x - (x % y)) / y;
          out[i] = r;
          if (r > hi || r < lo) bad = true;
        }
      else
        for (let i = 0; i < n; i++) {
          const y = b[i];
          if (y === 0) zero = true;
          out[i] = a[i] / y;
        }
      break;
    case '%':
      for (let i = 0; i < n; i++) {
        const y = b[i];
        if (y === 0) zero = true;
        out[i] = a[i] % y;
      }
      break;
  }
  if (!zero && !bad) return;
  const live = liveMask(n, validity, sel);
  if (zero) for (let i = 0; i < n; i++) if (b[i] === 0 && (!live || live[i])) throw DIVISION_BY_ZERO();
  if (bad)
    for (let i = 0; i < n; i++) {
      if (live && !live[i]) continue;
      const x = a[i];
      const y = b[i];
      const r = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '/' ? (x - (x % y)) / y : 0;
      if (r > hi || r < lo) throw outOfRange(kind);
    }
}

function int64Arith(op: string, a: BigVec, b: BigVec, n: number, sel: Uint8Array | null): BigVec {
  const validity = andValid(a.validity, b.validity, n);
  const out = new BigInt64Array(n);
  const ov = halves(out) as { lo: Uint32Array; hi: Int32Array };
  const av = halves(a.values);
  const bv = halves(b.values);
  const live = liveMask(n, validity, sel);
  const slow: number[] = [];
  for (let i = 0, j = 0; i < n; i++, j += 2) {
    const x = av.hi[j + 1] * TWO32 + av.lo[j];
    const y = bv.hi[j + 1] * TWO32 + bv.lo[j];
    let r: number;
    switch (op) {
      case '+':
        r = x + y;
        break;
      case '-':
        r = x - y;
        break;
      case '*':
        r = x * y;
        break;
      case '/':
        r = y === 0 ? NaN : (x - (x % y)) / y;
        break;
      default:
        r = y === 0 ? NaN : x % y;
    }
    if (r < SAFE && r > -SAFE && x < SAFE && x > -SAFE && y < SAFE && y > -SAFE) writeI64(ov.lo, ov.hi, i, r);
    else if (!live || live[i]) slow.push(i);
  }
  for (const i of slow) {
    const x = BigInt(a.values[i]);
    const y = BigInt(b.values[i]);
    if ((op === '/' || op === '%') && y === 0n) throw DIVISION_BY_ZERO();
    const r = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '/' ? x / y : x % y;
    if (r < INT64_MIN || r > INT64_MAX) throw outOfRange('bigint');
    out[i] = r;
  }
  return bigVec(ARROW.bigint, out, validity);
}

/** date ± integer → date; date − date → integer (PostgreSQL). */
function dateArith(ctx: Context, op: string, kind: SqlKind, l: Operand, r: Operand, lk: SqlKind, sel: Uint8Array | null): Vec {
  const n = ctx.n;
  const [d, other] = lk === 'date' ? [l, r] : [r, l];
  const dv = asType(ctx, d, ARROW.date, sel) as NumVec;
  const ov = asType(ctx, other, kind === 'int' ? ARROW.date : ARROW.int, sel) as NumVec;
  const validity = andValid(dv.validity, ov.validity, n);
  const out = new Int32Array(n);
  const x = dv.values;
  const y = ov.values;
  let bad = false;
  if (op === '-' && lk === 'date')
    for (let i = 0; i < n; i++) {
      const v = x[i] - y[i];
      out[i] = v;
      if (v > 2147483647 || v < -2147483648) bad = true;
    }
  else
    for (let i = 0; i < n; i++) {
      const v = x[i] + y[i];
      out[i] = v;
      if (v > 2147483647 || v < -2147483648) bad = true;
    }
  if (bad) throw invalid(kind === 'date' ? 'date out of range' : 'integer out of range');
  return numVec(kind === 'date' ? ARROW.date : ARROW.int, out, validity);
}

function evalNegate(ctx: Context, type: DataType, o: Operand, sel: Uint8Array | null): Operand {
  const n = ctx.n;
  const kind = kindOf(type);
  if (kind === 'null' || isNullScalar(o)) return NULL_SCALAR;
  const v = asType(ctx, o, type, sel)!;
  if (kind === 'bigint') {
    const src = (v as BigVec).values;
    const out = new BigInt64Array(n);
    const sv = halves(src);
    const ov = halves(out) as { lo: Uint32Array; hi: Int32Array };
    const live = liveMask(n, v.validity, sel);
    for (let i = 0, j = 0; i < n; i++, j += 2) {
      const x = sv.hi[j + 1] * TWO32 + sv.lo[j];
      if (x < SAFE && x > -SAFE) writeI64(ov.lo, ov.hi, i, -x);
      else if (!live || live[i]) {
        if (src[i] === INT64_MIN) throw outOfRange('bigint');
        out[i] = -src[i];
      }
    }
    return bigVec(ARROW.bigint, out, v.validity);
  }
  const src = (v as NumVec).values;
  const out = newArray(kind, n);
  for (let i = 0; i < n; i++) out[i] = -src[i];
  if (isIntKind(kind)) {
    const min = kind === 'smallint' ? -32768 : -2147483648;
    const live = liveMask(n, v.validity, sel);
    for (let i = 0; i < n; i++) if (src[i] === min && (!live || live[i])) throw outOfRange(kind);
  }
  return numVec(type, out, v.validity);
}

// ---------------------------------------------------------------------------------------------
// CAST

/** `v` converted to `to` (a canonical type), PostgreSQL's cast semantics; errors only on live rows. */
export function castVec(v: Vec, to: DataType, sel: Uint8Array | null, n: number): Vec {
  const from = kindOf(v.type);
  const target = kindOf(to);
  if (from === target && sameType(v.type, to) && v.tag !== 'dict') return v;
  if (v.tag === 'dict') return castVec(materializeDict(v, n), to, sel, n);
  const live = () => liveMask(n, v.validity, sel);
  switch (target) {
    case 'smallint':
    case 'int':
    case 'real':
    case 'double':
    case 'boolean':
      return castToNumber(v, from, target, live, n);
    case 'bigint':
      return castToBigint(v, from, live, n);
    case 'text':
      return castToText(v, from, n);
    case 'date':
      return castToDate(v, from, live, n);
    case 'timestamp':
      return castToTimestamp(v, from, live, n);
    default:
      throw invalid(`cannot cast ${kindName(from)} to ${kindName(target)}`);
  }
}

function sameType(a: DataType, b: DataType): boolean {
  if (a.typeId !== b.typeId) return false;
  return String(a) === String(b);
}

/** Round half away from zero (PostgreSQL's numeric rounding, DuckDB's for doubles): `round()`. */
function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * Round half to even (C's rint, what PostgreSQL and DuckDB do in float → integer casts):
 * -0.5 → 0, 0.5 → 0, 1.5 → 2, 2.5 → 2. `Math.round` rounds half up; a tie that landed on an odd
 * number goes one down instead. `r - x` is exact (|x| < 2^52 whenever it is fractional).
 */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

function castToNumber(v: PlainVec, from: SqlKind, target: SqlKind, live: () => Uint8Array | null, n: number): Vec {
  const out = newArray(target, n);
  const isInt = isIntKind(target);
  const lo = target === 'smallint' ? -32768 : target === 'int' ? -2147483648 : -Infinity;
  const hi = target === 'smallint' ? 32767 : target === 'int' ? 2147483647 : Infinity;
  if (v.tag === 'str') return parseTexts(v, target, live(), n);
  if (target === 'boolean') {
    if (!isIntKind(from) && from !== 'boolean') throw invalid(`cannot cast type ${kindName(from)} to boolean`);
    const src = v.tag === 'big' ? Float64Array.from(v.values, Number) : v.values;
    for (let i = 0; i < n; i++) out[i] = src[i] !== 0 ? 1 : 0;
    return boolVec(out as Uint8Array, v.validity);
  }
  if (v.tag === 'big') {
    if (from !== 'bigint') throw invalid(`cannot cast type ${kindName(from)} to ${kindName(target)}`);
    const h = halves(v.values);
    let bad = false;
    for (let i = 0, j = 0; i < n; i++, j += 2) {
      const x = h.hi[j + 1] * TWO32 + h.lo[j];
      out[i] = x;
      if (x > hi || x < lo) bad = true;
    }
    if (bad) checkRange(out, v, live(), n, lo, hi, target, (i) => h.hi[2 * i + 1] * TWO32 + h.lo[2 * i]);
    return makeVec(target, out, v.validity);
  }
  if (from === 'date' || from === 'timestamp') throw invalid(`cannot cast type ${kindName(from)} to ${kindName(target)}`);
  const src = v.values;
  if (isInt && isFloatKind(from)) {
    let bad = false;
    for (let i = 0; i < n; i++) {
      const x = src[i];
      let r = Math.round(x);
      if (r - x === 0.5 && r % 2 !== 0) r -= 1; // half to even (roundHalfEven, inlined)
      out[i] = r;
      if (!(r <= hi && r >= lo)) bad = true; // NaN too
    }
    if (bad) checkRange(out, v, live(), n, lo, hi, target, (i) => roundHalfEven(src[i]));
    return makeVec(target, out, v.validity);
  }
  let bad = false;
  for (let i = 0; i < n; i++) {
    const x = src[i];
    out[i] = x;
    if (x > hi || x < lo) bad = true;
  }
  if (bad) checkRange(out, v, live(), n, lo, hi, target, (i) => src[i]);
  return makeVec(target, out, v.validity);
}

function checkRange(
  _out: NumArray,
  _v: PlainVec,
  live: Uint8Array | null,
  n: number,
  lo: number,
  hi: number,
  kind: SqlKind,
  value: (i: number) => number,
): void {
  for (let i = 0; i < n; i++) {
    if (live && !live[i]) continue;
    const x = value(i);
    if (!(x <= hi && x >= lo)) throw outOfRange(kind);
  }
}

function castToBigint(v: PlainVec, from: SqlKind, live: () => Uint8Array | null, n: number): Vec {
  const out = new BigInt64Array(n);
  const oh = halves(out) as { lo: Uint32Array; hi: Int32Array };
  if (v.tag === 'str') return parseTexts(v, 'bigint', live(), n);
  if (v.tag === 'big') {
    if (from !== 'bigint') throw invalid(`cannot cast type ${kindName(from)} to bigint`);
    // UInt64 → bigint: values above 2^63 − 1 do not fit.
    const src = v.values as BigUint64Array;
    const l = live();
    for (let i = 0; i < n; i++) {
      const x = src[i];
      if (x > INT64_MAX && (!l || l[i])) throw outOfRange('bigint');
      out[i] = BigInt.asIntN(64, x);
    }
    return bigVec(ARROW.bigint, out, v.validity);
  }
  if (from === 'date' || from === 'timestamp') throw invalid(`cannot cast type ${kindName(from)} to bigint`);
  const src = v.values;
  const float = isFloatKind(from);
  const l = live();
  for (let i = 0; i < n; i++) {
    const r = float ? roundHalfEven(src[i]) : src[i];
    if (r < SAFE && r > -SAFE) writeI64(oh.lo, oh.hi, i, r);
    else if (!l || l[i]) {
      if (!(r >= -9223372036854775808 && r < 9223372036854775808)) throw outOfRange('bigint');
      out[i] = BigInt(r);
    }
  }
  return bigVec(ARROW.bigint, out, v.validity);
}

// Text → numbers / booleans (PostgreSQL input syntax, surrounding whitespace allowed)

const INT_RE = /^\s*[+-]?\d+\s*$/;
const FLOAT_RE = /^\s*[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)\s*$/;
const FLOAT_SPECIAL: Record<string, number> = {
  nan: NaN,
  infinity: Infinity,
  '+infinity': Infinity,
  '-infinity': -Infinity,
  inf: Infinity,
  '+inf': Infinity,
  '-inf': -Infinity,
};
const BOOL_TEXT: Record<string, number> = {
  t: 1,
  tr: 1,
  tru: 1,
  true: 1,
  y: 1,
  ye: 1,
  yes: 1,
  on: 1,
  '1': 1,
  f: 0,
  fa: 0,
  fal: 0,
  fals: 0,
  false: 0,
  n: 0,
  no: 0,
  of: 0,
  off: 0,
  '0': 0,
};

function badInput(kind: SqlKind, text: string): InvalidError {
  return invalid(`invalid input syntax for type ${kindName(kind)}: "${text}"`);
}

function parseTexts(v: StrVec, target: SqlKind, live: Uint8Array | null, n: number): Vec {
  const bigint = target === 'bigint';
  const out: NumArray | BigInt64Array = bigint ? new BigInt64Array(n) : newArray(target, n);
  const validity = v.validity;
  for (let i = 0; i < n; i++) {
    if (live && !live[i]) continue;
    if (validity && !validity[i]) continue;
    const s = decodeRow(v.bytes, v.offsets[i], v.offsets[i + 1]);
    if (target === 'boolean') {
      const b = BOOL_TEXT[s.trim().toLowerCase()];
      if (b === undefined) throw badInput(target, s);
      out[i] = b;
    } else if (isIntKind(target)) {
      if (!INT_RE.test(s)) throw badInput(target, s);
      const x = BigInt(s.trim());
      const [lo, hi] = target === 'smallint' ? [-32768n, 32767n] : target === 'int' ? [-2147483648n, 2147483647n] : [INT64_MIN, INT64_MAX];
      if (x < lo || x > hi) throw invalid(`value "${s}" is out of range for type ${kindName(target)}`);
      if (bigint) (out as BigInt64Array)[i] = x;
      else (out as NumArray)[i] = Number(x);
    } else {
      const t = s.trim();
      let x = FLOAT_SPECIAL[t.toLowerCase()];
      if (x === undefined) {
        if (!FLOAT_RE.test(t)) throw badInput(target, s);
        x = Number(t);
      }
      (out as NumArray)[i] = x;
    }
  }
  return makeVec(target, out, validity);
}

// Numbers, booleans, dates → text

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One UTF-8 row as a JS string (ASCII rows without TextDecoder). */
export function decodeRow(bytes: Uint8Array, s: number, e: number): string {
  if (e - s < 64) {
    let ascii = true;
    for (let k = s; k < e; k++) if (bytes[k] >= 0x80) { ascii = false; break; }
    if (ascii) return String.fromCharCode.apply(null, bytes.subarray(s, e) as unknown as number[]);
  }
  return decoder.decode(bytes.subarray(s, e));
}

/** Growable UTF-8 column. */
class StrBuilder {
  bytes: Uint8Array;
  pos = 0;
  readonly offsets: Int32Array;
  constructor(readonly n: number, capacity = n * 8) {
    this.bytes = new Uint8Array(Math.max(16, capacity));
    this.offsets = new Int32Array(n + 1);
  }
  private reserve(k: number): void {
    if (this.pos + k <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.pos + k));
    next.set(this.bytes.subarray(0, this.pos));
    this.bytes = next;
  }
  /** Appends bytes [s, e) of src to the current row. */
  bytesOf(src: Uint8Array, s: number, e: number): void {
    this.reserve(e - s);
    const b = this.bytes;
    let p = this.pos;
    for (let k = s; k < e; k++) b[p++] = src[k];
    this.pos = p;
  }
  string(str: string): void {
    const len = str.length;
    this.reserve(len * 3);
    const b = this.bytes;
    let p = this.pos;
    let k = 0;
    for (; k < len; k++) {
      const c = str.charCodeAt(k);
      if (c >= 0x80) break;
      b[p++] = c;
    }
    if (k < len) p += encoder.encodeInto(str.slice(k), b.subarray(p)).written;
    this.pos = p;
  }
  /** Ends row i. */
  end(i: number): void {
    this.offsets[i + 1] = this.pos;
  }
  finish(validity: Uint8Array | null): StrVec {
    return strVec(this.offsets, this.bytes.subarray(0, this.pos), validity);
  }
}

/** PostgreSQL's text form of a double: shortest round-trip digits, exponent form below 1e-4 or from 1e15. */
export function formatDouble(x: number, single = false): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Infinity) return 'Infinity';
  if (x === -Infinity) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  let s: string;
  if (single) {
    // Shortest decimal that reads back as the same float32.
    s = '';
    for (let p = 1; p <= 9; p++) {
      s = x.toPrecision(p);
      if (Math.fround(Number(s)) === x) break;
    }
    s = String(Number(s));
  } else s = String(x);
  const ax = Math.abs(x);
  if (ax >= 1e15 || ax < 1e-4) {
    let [m, e] = Number(s).toExponential().split('e');
    if (single) m = String(Number(m));
    const sign = e[0] === '-' ? '-' : '+';
    const digits = e.replace(/^[+-]/, '');
    return `${m}e${sign}${digits.padStart(2, '0')}`;
  }
  return s;
}

function pad(x: number, w: number): string {
  return String(x).padStart(w, '0');
}

export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days);
  return y > 0 ? `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}` : `${pad(1 - y, 4)}-${pad(m, 2)}-${pad(d, 2)} BC`;
}

export function formatTimestampMicros(us: bigint): string {
  const days = Number(floorDiv(us, BigInt(US_PER_DAY)));
  let rem = Number(us - BigInt(days) * BigInt(US_PER_DAY));
  const frac = rem % 1_000_000;
  rem = (rem - frac) / 1_000_000;
  const ss = rem % 60;
  const mi = ((rem - ss) / 60) % 60;
  const hh = Math.floor(rem / 3600);
  const date = formatDate(days);
  const bc = date.endsWith(' BC');
  const base = `${bc ? date.slice(0, -3) : date} ${pad(hh, 2)}:${pad(mi, 2)}:${pad(ss, 2)}`;
  const f = frac === 0 ? '' : '.' + pad(frac, 6).replace(/0+$/, '');
  return base + f + (bc ? ' BC' : '');
}

function castToText(v: PlainVec, from: SqlKind, n: number): StrVec {
  if (v.tag === 'str') return v;
  const b = new StrBuilder(n);
  const valid = v.validity;
  if (v.tag === 'big') {
    const src = v.values;
    const h = halves(src);
    for (let i = 0; i < n; i++) {
      if (!valid || valid[i]) {
        if (from === 'timestamp') b.string(formatTimestampMicros(timestampMicros(v, i)));
        else {
          const x = h.hi[2 * i + 1] * TWO32 + h.lo[2 * i];
          b.string(x < SAFE && x > -SAFE ? String(x) : String(src[i]));
        }
      }
      b.end(i);
    }
    return b.finish(valid);
  }
  const src = v.values;
  for (let i = 0; i < n; i++) {
    if (!valid || valid[i]) {
      const x = src[i];
      switch (from) {
        case 'boolean':
          b.string(x ? 'true' : 'false');
          break;
        case 'date':
          b.string(formatDate(x));
          break;
        case 'real':
          b.string(formatDouble(x, true));
          break;
        case 'double':
          b.string(formatDouble(x));
          break;
        default:
          b.string(String(x));
      }
    }
    b.end(i);
  }
  return b.finish(valid);
}

/** Microseconds since the epoch of row i of a Timestamp (any unit) or Date64 column. */
function timestampMicros(v: BigVec, i: number): bigint {
  const unit = v.domain.unitNanos ?? 1000n;
  const x = BigInt(v.values[i]);
  return unit === 1000n ? x : unit > 1000n ? x * (unit / 1000n) : floorDiv(x, 1000n / unit);
}

function castToDate(v: PlainVec, from: SqlKind, live: () => Uint8Array | null, n: number): Vec {
  const out = new Int32Array(n);
  const valid = v.validity;
  if (v.tag === 'str') {
    const l = live();
    for (let i = 0; i < n; i++) {
      if ((l && !l[i]) || (valid && !valid[i])) continue;
      const s = decodeRow(v.bytes, v.offsets[i], v.offsets[i + 1]);
      let d = parseDate(s);
      if (d === undefined) {
        const ns = parseTimestampNanos(s);
        if (ns === undefined) throw badInput('date', s);
        d = Number(floorDiv(ns, 86_400_000_000_000n));
      }
      out[i] = d;
    }
    return numVec(ARROW.date, out, valid);
  }
  if (from !== 'date' && from !== 'timestamp') throw invalid(`cannot cast type ${kindName(from)} to date`);
  if (v.tag === 'num') {
    out.set(v.values as Int32Array);
    return numVec(ARROW.date, out, valid);
  }
  const unit = v.domain.unitNanos!;
  const perDay = 86_400_000_000_000n / unit;
  for (let i = 0; i < n; i++) out[i] = Number(floorDiv(BigInt(v.values[i]), perDay));
  return numVec(ARROW.date, out, valid);
}

function castToTimestamp(v: PlainVec, from: SqlKind, live: () => Uint8Array | null, n: number): Vec {
  const out = new BigInt64Array(n);
  const oh = halves(out) as { lo: Uint32Array; hi: Int32Array };
  const valid = v.validity;
  if (v.tag === 'str') {
    const l = live();
    for (let i = 0; i < n; i++) {
      if ((l && !l[i]) || (valid && !valid[i])) continue;
      const s = decodeRow(v.bytes, v.offsets[i], v.offsets[i + 1]);
      const ns = parseTimestampNanos(s);
      if (ns === undefined) throw badInput('timestamp', s);
      out[i] = floorDiv(ns, 1000n);
    }
    return bigVec(ARROW.timestamp, out, valid);
  }
  if (from !== 'date' && from !== 'timestamp') throw invalid(`cannot cast type ${kindName(from)} to timestamp`);
  if (v.tag === 'num') {
    const d = v.values;
    for (let i = 0; i < n; i++) {
      const us = d[i] * US_PER_DAY;
      if (us < SAFE && us > -SAFE) writeI64(oh.lo, oh.hi, i, us);
      else out[i] = BigInt(d[i]) * BigInt(US_PER_DAY);
    }
    return bigVec(ARROW.timestamp, out, valid);
  }
  for (let i = 0; i < n; i++) out[i] = timestampMicros(v, i);
  return bigVec(ARROW.timestamp, out, valid);
}

// ---------------------------------------------------------------------------------------------
// CASE, COALESCE and the gather they share

function evalCase(ctx: Context, e: CaseExpr, sel: Uint8Array | null): Operand {
  const n = ctx.n;
  const type = typeOf(ctx, e);
  if (kindOf(type) === 'null') return NULL_SCALAR;
  const remaining = sel ? sel.slice() : new Uint8Array(n).fill(1);
  const choice = new Int32Array(n).fill(-1);
  const branches: (Vec | null)[] = [];
  const subject = e.operand ? ctx.eval(e.operand, sel) : null;
  for (const w of e.whens) {
    if (!anyRow(remaining, n)) break;
    const when = ctx.eval(w.when, remaining);
    const cond = subject ? compareOperands(ctx, subject, when, '=') : predicateOrScalar(ctx, when, w.when);
    const take = new Uint8Array(n);
    if (cond.tag === 'scalar') {
      if (cond.value === true) take.set(remaining);
    } else {
      const cv = cond.values;
      for (let i = 0; i < n; i++) take[i] = remaining[i] & cv[i];
    }
    if (!anyRow(take, n)) continue;
    const k = branches.length;
    branches.push(asType(ctx, ctx.eval(w.then, take), type, take));
    for (let i = 0; i < n; i++)
      if (take[i]) {
        choice[i] = k;
        remaining[i] = 0;
      }
  }
  if (e.otherwise && anyRow(remaining, n)) {
    const k = branches.length;
    branches.push(asType(ctx, ctx.eval(e.otherwise, remaining), type, remaining));
    for (let i = 0; i < n; i++) if (remaining[i]) choice[i] = k;
  }
  return gather(type, branches, choice, n);
}

function evalCoalesce(ctx: Context, e: CallExpr, type: DataType, sel: Uint8Array | null): Operand {
  const n = ctx.n;
  const need = sel ? sel.slice() : new Uint8Array(n).fill(1);
  const choice = new Int32Array(n).fill(-1);
  const branches: (Vec | null)[] = [];
  for (const arg of e.args) {
    if (!anyRow(need, n)) break;
    const v = asType(ctx, ctx.eval(arg, need), type, need);
    if (!v) continue;
    const k = branches.length;
    branches.push(v);
    const valid = v.validity;
    for (let i = 0; i < n; i++)
      if (need[i] && (!valid || valid[i])) {
        choice[i] = k;
        need[i] = 0;
      }
  }
  return gather(type, branches, choice, n);
}

/** Row i takes row i of branches[choice[i]] (−1: NULL). Branches have exactly `type`. */
function gather(type: DataType, branches: readonly (Vec | null)[], choice: Int32Array, n: number): Operand {
  const kind = kindOf(type);
  if (branches.length === 0 || kind === 'null') return NULL_SCALAR;
  const validity = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c = choice[i];
    if (c < 0) continue;
    const b = branches[c];
    validity[i] = b && (!b.validity || b.validity[i]) ? 1 : 0;
  }
  if (kind === 'text') {
    const out = new StrBuilder(n);
    for (let i = 0; i < n; i++) {
      if (validity[i]) {
        const b = branches[choice[i]] as StrVec;
        out.bytesOf(b.bytes, b.offsets[i], b.offsets[i + 1]);
      }
      out.end(i);
    }
    return out.finish(validity);
  }
  if (kind === 'bigint' || kind === 'timestamp') {
    const out = new BigInt64Array(n);
    const o32 = new Int32Array(out.buffer);
    const srcs = branches.map((b) => (b ? new Int32Array((b as BigVec).values.buffer, (b as BigVec).values.byteOffset, n * 2) : null));
    for (let i = 0; i < n; i++)
      if (validity[i]) {
        const s = srcs[choice[i]]!;
        o32[2 * i] = s[2 * i];
        o32[2 * i + 1] = s[2 * i + 1];
      }
    return bigVec(type, out, validity);
  }
  if (kind === 'vector') throw invalid('CASE / COALESCE over vectors is not supported');
  const out = newArray(kind, n);
  const srcs = branches.map((b) => (b ? (b as NumVec).values : null));
  for (let i = 0; i < n; i++) if (validity[i]) out[i] = srcs[choice[i]]![i];
  return makeVec(kind, out, validity);
}

// ---------------------------------------------------------------------------------------------
// Function calls

function evalCall(ctx: Context, e: CallExpr, sel: Uint8Array | null): Operand {
  const name = e.name;
  if (AGGREGATE_FUNCTIONS.has(name))
    throw invalid(`the aggregate ${exprToString(e)} cannot be evaluated per row; aggregates are computed by the query's GROUP BY step`);
  if (name === 'match')
    throw invalid(`${exprToString(e)} is a full-text search: it can only be used as a WHERE condition the planner answers from an FTS index`);
  const type = typeOf(ctx, e);
  const n = ctx.n;
  if (name === 'coalesce') return evalCoalesce(ctx, e, type, sel);
  if (name === 'l2_distance' || name === 'cosine_distance' || name === 'dot_distance') return evalDistance(ctx, e, sel);
  if (name === 'array') return { tag: 'scalar', value: constVector(ctx, e), isParam: false, label: exprToString(e) };
  const args = e.args.map((a) => ctx.eval(a, sel));
  switch (name) {
    case 'concat':
      return evalConcat(ctx, args, sel);
    case 'greatest':
    case 'least':
      return evalExtreme(ctx, args, type, name === 'greatest', sel);
    case 'nullif': {
      const a = args[0];
      if (isNullScalar(a)) return NULL_SCALAR;
      const eq = compareOperands(ctx, a, args[1], '=');
      const v = asType(ctx, a, type, sel)!;
      let validity: Uint8Array;
      if (eq.tag === 'scalar') {
        if (eq.value !== true) return v;
        return NULL_SCALAR;
      } else {
        validity = v.validity ? v.validity.slice() : new Uint8Array(n).fill(1);
        for (let i = 0; i < n; i++) validity[i] &= eq.values[i] ^ 1;
      }
      return withValidity(v, validity);
    }
  }
  if (args.some(isNullScalar) && name !== 'concat') return NULL_SCALAR;
  switch (name) {
    case 'abs':
      return evalAbs(ctx, args[0], type, sel);
    case 'sign': {
      const v = asType(ctx, args[0], type, sel)!;
      return mapNumbers(v, type, n, Math.sign);
    }
    case 'ceil':
    case 'ceiling':
    case 'floor':
    case 'trunc':
    case 'round': {
      const kind = kindOf(type);
      const v = asType(ctx, args[0], isIntKind(kind) ? type : ARROW.double, sel)!;
      if (isIntKind(kind)) return v;
      const f = name === 'round' ? roundHalfAway : name === 'floor' ? Math.floor : name === 'trunc' ? Math.trunc : Math.ceil;
      if (args.length === 1) return mapNumbers(v, type, n, f);
      const digits = asType(ctx, args[1], ARROW.int, sel) as NumVec;
      const out = new Float64Array(n);
      const src = (v as NumVec).values;
      const d = digits.values;
      for (let i = 0; i < n; i++) {
        const p = Math.pow(10, d[i]);
        const r = f(src[i] * p) / p;
        out[i] = Number.isFinite(r) ? r : src[i];
      }
      return numVec(ARROW.double, out, andValid(v.validity, digits.validity, n));
    }
    case 'sqrt':
    case 'exp':
    case 'ln': {
      const v = asType(ctx, args[0], ARROW.double, sel) as NumVec;
      const src = v.values;
      if (name !== 'exp') {
        const live = liveMask(n, v.validity, sel);
        for (let i = 0; i < n; i++) {
          if (live && !live[i]) continue;
          const x = src[i];
          if (name === 'sqrt' && x < 0) throw invalid('cannot take square root of a negative number');
          if (name === 'ln' && x === 0) throw invalid('cannot take logarithm of zero');
          if (name === 'ln' && x < 0) throw invalid('cannot take logarithm of a negative number');
        }
      }
      return mapNumbers(v, ARROW.double, n, name === 'sqrt' ? Math.sqrt : name === 'exp' ? Math.exp : Math.log);
    }
    case 'power':
    case 'pow': {
      const a = asType(ctx, args[0], ARROW.double, sel) as NumVec;
      const b = asType(ctx, args[1], ARROW.double, sel) as NumVec;
      const validity = andValid(a.validity, b.validity, n);
      const out = new Float64Array(n);
      const x = a.values;
      const y = b.values;
      for (let i = 0; i < n; i++) out[i] = Math.pow(x[i], y[i]);
      const live = liveMask(n, validity, sel);
      for (let i = 0; i < n; i++) {
        if (live && !live[i]) continue;
        if (x[i] === 0 && y[i] < 0) throw invalid('zero raised to a negative power is undefined');
        if (x[i] < 0 && !Number.isInteger(y[i]) && Number.isFinite(y[i])) throw invalid('a negative number raised to a non-integer power yields a complex result');
      }
      return numVec(ARROW.double, out, validity);
    }
    case 'mod':
      return evalArith(ctx, '%', type, args[0], args[1], sel);
    case 'lower':
    case 'upper':
      return evalCase2(ctx, args[0], name === 'upper', sel);
    case 'length':
    case 'char_length':
    case 'character_length': {
      const s = asType(ctx, args[0], ARROW.text, sel) as StrVec;
      const out = new Int32Array(n);
      const b = s.bytes;
      const o = s.offsets;
      for (let i = 0; i < n; i++) {
        let c = 0;
        for (let k = o[i]; k < o[i + 1]; k++) c += (b[k] & 0xc0) !== 0x80 ? 1 : 0;
        out[i] = c;
      }
      return numVec(ARROW.int, out, s.validity);
    }
    case 'substr':
    case 'substring':
      return evalSubstr(ctx, args, sel);
    case 'left':
    case 'right':
      return evalLeftRight(ctx, args, name === 'left', sel);
    case 'trim':
    case 'btrim':
    case 'ltrim':
    case 'rtrim':
      return evalTrim(ctx, args, name === 'ltrim' ? 'l' : name === 'rtrim' ? 'r' : 'b', sel);
    case 'replace':
      return mapStrings(ctx, args, sel, (s, [from, to]) => (from === '' ? s : s.split(from).join(to)));
    case 'starts_with':
    case 'strpos':
    case 'position':
      return evalStrpos(ctx, args, name === 'starts_with', sel);
    case 'date_part':
      return evalDatePart(ctx, args, sel);
    case 'date_trunc':
      return evalDateTrunc(ctx, args, sel);
    default:
      throw invalid(`unknown function ${name}()`);
  }
}

function withValidity(v: Vec, validity: Uint8Array | null): Vec {
  if (v.tag === 'num' && v.domain.cls === 'bool') return boolVec((v.values as Uint8Array).slice(), validity);
  return { ...v, validity } as Vec;
}

function mapNumbers(v: Vec, type: DataType, n: number, f: (x: number) => number): Vec {
  const kind = kindOf(type);
  const src = (v as NumVec).values;
  const out = newArray(kind, n);
  for (let i = 0; i < n; i++) out[i] = f(src[i]);
  return makeVec(kind, out, v.validity);
}

function evalAbs(ctx: Context, o: Operand, type: DataType, sel: Uint8Array | null): Vec {
  const n = ctx.n;
  const kind = kindOf(type);
  const v = asType(ctx, o, type, sel)!;
  if (kind === 'bigint') {
    const src = (v as BigVec).values;
    const out = new BigInt64Array(n);
    const sh = halves(src);
    const oh = halves(out) as { lo: Uint32Array; hi: Int32Array };
    const live = liveMask(n, v.validity, sel);
    for (let i = 0; i < n; i++) {
      const x = sh.hi[2 * i + 1] * TWO32 + sh.lo[2 * i];
      if (x < SAFE && x > -SAFE) writeI64(oh.lo, oh.hi, i, Math.abs(x));
      else if (!live || live[i]) {
        if (src[i] === INT64_MIN) throw outOfRange('bigint');
        out[i] = src[i] < 0n ? -src[i] : src[i];
      }
    }
    return bigVec(type, out, v.validity);
  }
  const r = mapNumbers(v, type, n, Math.abs);
  if (isIntKind(kind)) {
    const min = kind === 'smallint' ? -32768 : -2147483648;
    const src = (v as NumVec).values;
    const live = liveMask(n, v.validity, sel);
    for (let i = 0; i < n; i++) if (src[i] === min && (!live || live[i])) throw outOfRange(kind);
  }
  return r;
}

function evalExtreme(ctx: Context, args: Operand[], type: DataType, greatest: boolean, sel: Uint8Array | null): Operand {
  const n = ctx.n;
  const kind = kindOf(type);
  const vs = args.map((a) => asType(ctx, a, type, sel));
  const choice = new Int32Array(n).fill(-1);
  vs.forEach((v, k) => {
    if (!v) return;
    const valid = v.validity;
    for (let i = 0; i < n; i++) {
      if (valid && !valid[i]) continue;
      const c = choice[i];
      if (c < 0) {
        choice[i] = k;
        continue;
      }
      const cmp = compareRows(vs[c]!, v, i, kind);
      if (greatest ? cmp < 0 : cmp > 0) choice[i] = k;
    }
  });
  return gather(type, vs, choice, n);
}

function compareRows(a: Vec, b: Vec, i: number, kind: SqlKind): number {
  if (kind === 'text') {
    const x = a as StrVec;
    const y = b as StrVec;
    return compareBytes(x.bytes, x.offsets[i], x.offsets[i + 1], y.bytes, y.offsets[i], y.offsets[i + 1]);
  }
  const x = (a as NumVec | BigVec).values[i];
  const y = (b as NumVec | BigVec).values[i];
  // PostgreSQL orders NaN above every other number.
  if (x !== x) return y !== y ? 0 : 1;
  if (y !== y) return -1;
  return x < y ? -1 : x > y ? 1 : 0;
}

// Strings

function evalConcat(ctx: Context, args: Operand[], sel: Uint8Array | null): Vec {
  const n = ctx.n;
  const parts = args.filter((a) => !isNullScalar(a)).map((a) => asType(ctx, a, ARROW.text, sel) as StrVec);
  // concat() skips NULL arguments: a NULL row contributes nothing (never a NULL result).
  return concatStr(parts, n, null, true);
}

function concatStr(parts: StrVec[], n: number, validity: Uint8Array | null, skipNulls = false): StrVec {
  let total = 0;
  for (const p of parts) total += p.offsets[n] - p.offsets[0];
  const b = new StrBuilder(n, total);
  for (let i = 0; i < n; i++) {
    if (!validity || validity[i])
      for (const p of parts) {
        if (skipNulls && p.validity && !p.validity[i]) continue;
        b.bytesOf(p.bytes, p.offsets[i], p.offsets[i + 1]);
      }
    b.end(i);
  }
  return b.finish(validity);
}

/** lower / upper: byte-wise for ASCII rows, through JS strings otherwise. */
function evalCase2(ctx: Context, o: Operand, upper: boolean, sel: Uint8Array | null): StrVec {
  const n = ctx.n;
  const s = asType(ctx, o, ARROW.text, sel) as StrVec;
  const src = s.bytes;
  const off = s.offsets;
  const b = new StrBuilder(n, off[n] - off[0]);
  const [lo, hi, delta] = upper ? [0x61, 0x7a, -32] : [0x41, 0x5a, 32];
  for (let i = 0; i < n; i++) {
    const st = off[i];
    const en = off[i + 1];
    let ascii = true;
    for (let k = st; k < en; k++) if (src[k] >= 0x80) { ascii = false; break; }
    if (ascii) {
      b.bytesOf(src, st, en);
      const out = b.bytes;
      for (let k = b.pos - (en - st); k < b.pos; k++) {
        const c = out[k];
        if (c >= lo && c <= hi) out[k] = c + delta;
      }
    } else {
      const str = decoder.decode(src.subarray(st, en));
      b.string(upper ? str.toUpperCase() : str.toLowerCase());
    }
    b.end(i);
  }
  return b.finish(s.validity);
}

/** Applies f to each row's string with the other (text) arguments' row values. */
function mapStrings(ctx: Context, args: Operand[], sel: Uint8Array | null, f: (s: string, rest: string[]) => string): StrVec {
  const n = ctx.n;
  const vs = args.map((a) => asType(ctx, a, ARROW.text, sel) as StrVec);
  let validity: Uint8Array | null = null;
  for (const v of vs) validity = andValid(validity, v.validity, n);
  const live = liveMask(n, validity, sel);
  const b = new StrBuilder(n);
  for (let i = 0; i < n; i++) {
    if (!live || live[i]) {
      const strs = vs.map((v) => decodeRow(v.bytes, v.offsets[i], v.offsets[i + 1]));
      b.string(f(strs[0], strs.slice(1)));
    }
    b.end(i);
  }
  return b.finish(validity);
}

/** Byte offset of the `chars`-th character (0-based) at or after byte s, capped at e. */
function charOffset(bytes: Uint8Array, s: number, e: number, chars: number): number {
  let k = s;
  while (chars > 0 && k < e) {
    k++;
    while (k < e && (bytes[k] & 0xc0) === 0x80) k++;
    chars--;
  }
  return k;
}

function charCount(bytes: Uint8Array, s: number, e: number): number {
  let c = 0;
  for (let k = s; k < e; k++) c += (bytes[k] & 0xc0) !== 0x80 ? 1 : 0;
  return c;
}

/** substr(s, start [, len]): 1-based; PostgreSQL semantics for start < 1 (the window still counts from start). */
function evalSubstr(ctx: Context, args: Operand[], sel: Uint8Array | null): StrVec {
  const n = ctx.n;
  const s = asType(ctx, args[0], ARROW.text, sel) as StrVec;
  const start = asType(ctx, args[1], ARROW.int, sel) as NumVec;
  const len = args[2] ? (asType(ctx, args[2], ARROW.int, sel) as NumVec) : null;
  let validity = andValid(s.validity, start.validity, n);
  if (len) validity = andValid(validity, len.validity, n);
  const live = liveMask(n, validity, sel);
  const b = new StrBuilder(n, s.offsets[n] - s.offsets[0]);
  for (let i = 0; i < n; i++) {
    if (!live || live[i]) {
      const st = start.values[i];
      let from = st - 1; // 0-based, may be negative
      let to = Infinity;
      if (len) {
        const l = len.values[i];
        if (l < 0) throw invalid('negative substring length not allowed');
        to = from + l;
      }
      if (from < 0) from = 0;
      if (to > from) {
        const a = s.offsets[i];
        const e = s.offsets[i + 1];
        const bs = charOffset(s.bytes, a, e, from);
        const be = to === Infinity ? e : charOffset(s.bytes, bs, e, to - from);
        b.bytesOf(s.bytes, bs, be);
      }
    }
    b.end(i);
  }
  return b.finish(validity);
}

/** left(s, n) / right(s, n): n < 0 means all but the last / first |n| characters. */
function evalLeftRight(ctx: Context, args: Operand[], left: boolean, sel: Uint8Array | null): StrVec {
  const n = ctx.n;
  const s = asType(ctx, args[0], ARROW.text, sel) as StrVec;
  const k = asType(ctx, args[1], ARROW.int, sel) as NumVec;
  const validity = andValid(s.validity, k.validity, n);
  const b = new StrBuilder(n, s.offsets[n] - s.offsets[0]);
  for (let i = 0; i < n; i++) {
    if (!validity || validity[i]) {
      const a = s.offsets[i];
      const e = s.offsets[i + 1];
      const total = charCount(s.bytes, a, e);
      const c = k.values[i];
      const keep = c >= 0 ? Math.min(c, total) : Math.max(0, total + c);
      if (left) b.bytesOf(s.bytes, a, charOffset(s.bytes, a, e, keep));
      else b.bytesOf(s.bytes, charOffset(s.bytes, a, e, total - keep), e);
    }
    b.end(i);
  }
  return b.finish(validity);
}

function evalTrim(ctx: Context, args: Operand[], side: 'l' | 'r' | 'b', sel: Uint8Array | null): StrVec {
  const n = ctx.n;
  const s = asType(ctx, args[0], ARROW.text, sel) as StrVec;
  const chars = args[1] ? (asType(ctx, args[1], ARROW.text, sel) as StrVec) : null;
  const validity = chars ? andValid(s.validity, chars.validity, n) : s.validity;
  const b = new StrBuilder(n, s.offsets[n] - s.offsets[0]);
  for (let i = 0; i < n; i++) {
    if (!validity || validity[i]) {
      let a = s.offsets[i];
      let e = s.offsets[i + 1];
      const src = s.bytes;
      const set = chars ? decodeRow(chars.bytes, chars.offsets[i], chars.offsets[i + 1]) : ' ';
      let asciiSet = true;
      for (let k = 0; k < set.length; k++) if (set.charCodeAt(k) >= 0x80) asciiSet = false;
      if (asciiSet) {
        // Byte-wise: an ASCII byte never occurs inside a multi-byte character.
        if (side !== 'r') while (a < e && set.includes(String.fromCharCode(src[a]))) a++;
        if (side !== 'l') while (e > a && set.includes(String.fromCharCode(src[e - 1]))) e--;
        b.bytesOf(src, a, e);
      } else {
        const cs = [...decodeRow(src, a, e)];
        const setChars = new Set([...set]);
        let x = 0;
        let y = cs.length;
        if (side !== 'r') while (x < y && setChars.has(cs[x])) x++;
        if (side !== 'l') while (y > x && setChars.has(cs[y - 1])) y--;
        b.string(cs.slice(x, y).join(''));
      }
    }
    b.end(i);
  }
  return b.finish(validity);
}

/** strpos(s, sub) (1-based character position, 0 when absent) or starts_with(s, prefix). */
function evalStrpos(ctx: Context, args: Operand[], startsWith: boolean, sel: Uint8Array | null): Vec {
  const n = ctx.n;
  const s = asType(ctx, args[0], ARROW.text, sel) as StrVec;
  const p = asType(ctx, args[1], ARROW.text, sel) as StrVec;
  const validity = andValid(s.validity, p.validity, n);
  const out = startsWith ? new Uint8Array(n) : new Int32Array(n);
  const sb = s.bytes;
  const pb = p.bytes;
  for (let i = 0; i < n; i++) {
    const a = s.offsets[i];
    const e = s.offsets[i + 1];
    const pa = p.offsets[i];
    const pl = p.offsets[i + 1] - pa;
    if (startsWith) {
      let hit = pl <= e - a;
      for (let k = 0; hit && k < pl; k++) if (sb[a + k] !== pb[pa + k]) hit = false;
      out[i] = hit ? 1 : 0;
      continue;
    }
    let found = -1;
    for (let k = a; k + pl <= e; k++) {
      let j = 0;
      while (j < pl && sb[k + j] === pb[pa + j]) j++;
      if (j === pl) {
        found = k;
        break;
      }
    }
    out[i] = found < 0 ? 0 : charCount(sb, a, found) + 1;
  }
  return startsWith ? boolVec(out as Uint8Array, validity) : numVec(ARROW.int, out, validity);
}

// Dates and timestamps

/** Proleptic Gregorian [year, month, day] of days since 1970-01-01 (Hinnant's civil_from_days). */
export function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [m <= 2 ? y + 1 : y, m, d];
}

/** Days and microseconds-of-day of each row (dates: micros 0). */
function dayParts(v: PlainVec, n: number): { days: Float64Array; micros: Float64Array } {
  const days = new Float64Array(n);
  const micros = new Float64Array(n);
  if (v.tag === 'num') {
    days.set(v.values);
    return { days, micros };
  }
  const b = v as BigVec;
  const h = halves(b.values);
  const unitIsMicros = b.domain.unitNanos === 1000n;
  for (let i = 0; i < n; i++) {
    let us = unitIsMicros ? h.hi[2 * i + 1] * TWO32 + h.lo[2 * i] : NaN;
    if (!(us < SAFE && us > -SAFE)) {
      const big = timestampMicros(b, i);
      const d = floorDiv(big, BigInt(US_PER_DAY));
      days[i] = Number(d);
      micros[i] = Number(big - d * BigInt(US_PER_DAY));
      continue;
    }
    const d = Math.floor(us / US_PER_DAY);
    days[i] = d;
    micros[i] = us - d * US_PER_DAY;
    void us;
    us = 0;
  }
  return { days, micros };
}

function fieldOf(ctx: Context, o: Operand, what: string): string {
  if (o.tag !== 'scalar' || typeof o.value !== 'string') throw invalid(`${what} must be a string literal`);
  void ctx;
  return o.value.toLowerCase();
}

/** The date or timestamp argument (an untyped string literal reads as a timestamp). */
function temporalArg(ctx: Context, o: Operand, sel: Uint8Array | null): PlainVec {
  if (o.tag === 'scalar') {
    if (typeof o.value === 'string' && !o.temporal) return asType(ctx, o, ARROW.timestamp, sel) as PlainVec;
    return broadcast(o, ctx.n) as PlainVec;
  }
  return o as PlainVec;
}

/** ISO 8601 week number of a date (days since epoch). */
function isoWeek(days: number): number {
  const dow = (((days + 3) % 7) + 7) % 7; // 0 = Monday
  const thursday = days - dow + 3;
  const [y] = civilFromDays(thursday);
  const jan1 = daysFromCivil(y, 1, 1);
  return Math.floor((thursday - jan1) / 7) + 1;
}

function evalDatePart(ctx: Context, args: Operand[], sel: Uint8Array | null): Vec {
  const n = ctx.n;
  const field = fieldOf(ctx, args[0], 'date_part field');
  const v = temporalArg(ctx, args[1], sel);
  const { days, micros } = dayParts(v, n);
  const out = new Float64Array(n);
  const valid = v.validity;
  for (let i = 0; i < n; i++) {
    if (valid && !valid[i]) continue;
    const d = days[i];
    const us = micros[i];
    let r: number;
    switch (field) {
      case 'epoch':
        r = d * 86400 + us / 1e6;
        break;
      case 'hour':
        r = Math.floor(us / 3_600_000_000);
        break;
      case 'minute':
        r = Math.floor(us / 60_000_000) % 60;
        break;
      case 'second':
        r = (us % 60_000_000) / 1e6;
        break;
      case 'millisecond':
        r = (us % 60_000_000) / 1e3;
        break;
      case 'microsecond':
        r = us % 60_000_000;
        break;
      case 'dow':
        r = (((d + 4) % 7) + 7) % 7;
        break;
      case 'isodow':
        r = ((((d + 3) % 7) + 7) % 7) + 1;
        break;
      case 'week':
        r = isoWeek(d);
        break;
      default: {
        const [y, m, dd] = civilFromDays(d);
        switch (field) {
          case 'year':
            r = y;
            break;
          case 'month':
            r = m;
            break;
          case 'day':
            r = dd;
            break;
          case 'doy':
            r = d - daysFromCivil(y, 1, 1) + 1;
            break;
          case 'quarter':
            r = Math.floor((m - 1) / 3) + 1;
            break;
          case 'decade':
            r = Math.floor(y / 10);
            break;
          case 'century':
            r = y > 0 ? Math.floor((y - 1) / 100) + 1 : -Math.floor(-y / 100) - 1;
            break;
          default:
            throw invalid(`date_part(): unknown field '${field}'`);
        }
      }
    }
    out[i] = r;
  }
  return numVec(ARROW.double, out, valid);
}

function evalDateTrunc(ctx: Context, args: Operand[], sel: Uint8Array | null): Vec {
  const n = ctx.n;
  let unit = fieldOf(ctx, args[0], 'date_trunc unit');
  if (unit === 'microsecond' || unit === 'millisecond') unit += 's';
  const v = temporalArg(ctx, args[1], sel);
  const { days, micros } = dayParts(v, n);
  const out = new BigInt64Array(n);
  const oh = halves(out) as { lo: Uint32Array; hi: Int32Array };
  const valid = v.validity;
  const step: Record<string, number> = { microseconds: 1, milliseconds: 1000, second: 1e6, minute: 6e7, hour: 3.6e9, day: US_PER_DAY };
  for (let i = 0; i < n; i++) {
    if (valid && !valid[i]) continue;
    let d = days[i];
    let us = micros[i];
    const s = step[unit];
    if (s !== undefined) us = Math.floor(us / s) * s;
    else {
      us = 0;
      const [y, m] = civilFromDays(d);
      switch (unit) {
        case 'week':
          d -= (((d + 3) % 7) + 7) % 7;
          break;
        case 'month':
          d = daysFromCivil(y, m, 1);
          break;
        case 'quarter':
          d = daysFromCivil(y, Math.floor((m - 1) / 3) * 3 + 1, 1);
          break;
        case 'year':
          d = daysFromCivil(y, 1, 1);
          break;
        case 'decade':
          d = daysFromCivil(Math.floor(y / 10) * 10, 1, 1);
          break;
        case 'century':
          d = daysFromCivil(Math.floor((y - 1) / 100) * 100 + 1, 1, 1);
          break;
        default:
          throw invalid(`date_trunc(): unknown unit '${unit}'`);
      }
    }
    const total = d * US_PER_DAY + us;
    if (total < SAFE && total > -SAFE) writeI64(oh.lo, oh.hi, i, total);
    else out[i] = BigInt(d) * BigInt(US_PER_DAY) + BigInt(us);
  }
  return bigVec(ARROW.timestamp, out, valid);
}

// Vectors

/** A constant query vector from a parameter, ARRAY[…] or a '[1, 2, 3]' literal; null for NULL. */
function constVector(ctx: Context, e: Expr): Float32Array | null {
  if (e.kind === 'call' && e.name === 'array') {
    const items = e.args.map((a) => ctx.eval(a));
    const out = new Float32Array(items.length);
    items.forEach((it, k) => {
      if (it.tag !== 'scalar') throw invalid('ARRAY[…] items must be constants');
      if (it.value === null) throw invalid('ARRAY[…] used as a vector cannot contain NULL');
      out[k] = Number(it.value);
    });
    return out;
  }
  const o = ctx.eval(e);
  if (o.tag !== 'scalar') throw invalid(`${exprToString(e)} is not a constant vector`);
  const v = o.value;
  if (v === null) return null;
  if (v instanceof Float32Array) return v;
  if (v instanceof Float64Array || (Array.isArray(v) && v.every((x) => typeof x === 'number'))) return Float32Array.from(v as ArrayLike<number>);
  if (typeof v === 'string') {
    const m = /^\s*\[(.*)\]\s*$/s.exec(v);
    const parts = m ? (m[1].trim() === '' ? [] : m[1].split(',')) : null;
    const nums = parts?.map((p) => (FLOAT_RE.test(p) ? Number(p) : NaN));
    if (!nums || nums.length === 0 || nums.some((x) => Number.isNaN(x))) throw invalid(`invalid vector literal ${o.label}: expected '[1.0, 2.0, …]'`);
    return Float32Array.from(nums);
  }
  throw invalid(`${o.label} is not a vector (bind a Float32Array or number[])`);
}

interface VectorColumn {
  readonly values: Float32Array;
  readonly dim: number;
  readonly validity: Uint8Array | null;
  readonly label: string;
}

function vectorColumn(ctx: Context, e: Expr): VectorColumn | null {
  if (e.kind !== 'column') return null;
  const data = ctx.columnData(e.name);
  if (data.type.typeId !== Type.FixedSizeList) throw invalid(`column ${e.name} (${String(data.type)}) is not a vector column`);
  const dim = (data.type as FixedSizeList).listSize;
  const child = data.children[0] as Data;
  // Arrow JS slices a FixedSizeList's child with it (offset × dim) and a primitive's values
  // buffer with its offset, so row i starts at i × dim of the child's values.
  const values = (child.values as Float32Array).subarray(0, data.length * dim);
  return { values, dim, validity: validityOf(data), label: `column ${e.name}` };
}

function validityOf(data: Data): Uint8Array | null {
  if (data.nullCount === 0 || !data.nullBitmap || data.nullBitmap.length === 0) return null;
  const out = new Uint8Array(data.length);
  const bits = data.nullBitmap;
  for (let i = 0; i < data.length; i++) {
    const b = data.offset + i;
    out[i] = (bits[b >> 3] >> (b & 7)) & 1;
  }
  return out;
}

function evalDistance(ctx: Context, e: CallExpr, sel: Uint8Array | null): Operand {
  const n = ctx.n;
  void sel;
  const metric = e.name === 'l2_distance' ? 'l2' : e.name === 'cosine_distance' ? 'cosine' : 'dot';
  const [a, b] = e.args;
  const ca = vectorColumn(ctx, a);
  const cb = vectorColumn(ctx, b);
  const out = new Float32Array(n);
  if (ca && cb) {
    if (ca.dim !== cb.dim) throw invalid(`${e.name}(): vector dimensions differ: ${ca.label} has ${ca.dim}, ${cb.label} has ${cb.dim}`);
    const dim = ca.dim;
    for (let i = 0; i < n; i++) {
      const q = ca.values.subarray(i * dim, (i + 1) * dim);
      out[i] = distance(metric, q, normAt(q, 0, dim), cb.values, i * dim, dim);
    }
    return numVec(ARROW.real, out, andValid(ca.validity, cb.validity, n));
  }
  const col = ca ?? cb;
  const constExpr = ca ? b : a;
  const q = constVector(ctx, constExpr);
  if (!col) {
    // Both constant: one value.
    const other = constVector(ctx, ca ? a : b === constExpr ? a : b);
    if (!q || !other) return NULL_SCALAR;
    if (q.length !== other.length) throw invalid(`${e.name}(): vector dimensions differ: ${exprToString(a)} has ${other.length}, ${exprToString(b)} has ${q.length}`);
    out.fill(distance(metric, q, normAt(q, 0, q.length), other, 0, q.length));
    return numVec(ARROW.real, out, null);
  }
  if (!q) return NULL_SCALAR;
  if (q.length !== col.dim)
    throw invalid(`${e.name}(): vector dimensions differ: ${col.label} has ${col.dim}, ${exprToString(constExpr)} has ${q.length}`);
  const dim = col.dim;
  const qNorm = normAt(q, 0, dim);
  const data = col.values;
  if (metric === 'l2') for (let i = 0; i < n; i++) out[i] = l2At(q, data, i * dim, dim);
  else if (metric === 'dot') for (let i = 0; i < n; i++) out[i] = 1 - dotAt(q, data, i * dim, dim);
  else for (let i = 0; i < n; i++) out[i] = distance('cosine', q, qNorm, data, i * dim, dim);
  return numVec(ARROW.real, out, col.validity);
}

function distance(metric: 'l2' | 'cosine' | 'dot', q: Float32Array, qNorm: number, data: Float32Array, off: number, dim: number): number {
  if (metric === 'l2') return l2At(q, data, off, dim);
  if (metric === 'dot') return 1 - dotAt(q, data, off, dim);
  const nn = normAt(data, off, dim) * qNorm;
  return nn === 0 ? 1 : 1 - dotAt(q, data, off, dim) / nn;
}

// ---------------------------------------------------------------------------------------------
// Output as Arrow Data

function packBits(bytes: Uint8Array, n: number): Uint8Array {
  const out = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) if (bytes[i]) out[i >> 3] |= 1 << (i & 7);
  return out;
}

/**
 * An evaluated operand as Arrow `Data` of exactly `type` (length n); rows outside `selection`
 * become NULL.
 */
export function operandToData(ctx: Context, o: Operand, type: DataType, selection: Uint8Array | null): Data {
  const n = ctx.n;
  const kind = kindOf(type);
  if (kind === 'null') return makeData({ type: ARROW.null, length: n, nullCount: n });
  if (kind === 'vector') {
    if (o.tag !== 'scalar') throw invalid('only constant vectors can be produced here');
    const q = o.value === null ? null : o.value instanceof Float32Array ? o.value : Float32Array.from(o.value as number[]);
    const dim = (type as FixedSizeList).listSize;
    const values = new Float32Array(n * dim);
    if (q) for (let i = 0; i < n; i++) values.set(q, i * dim);
    const child = makeData({ type: (type as FixedSizeList).children[0].type, length: n * dim, data: values });
    return makeData({
      type: vectorType(dim),
      length: n,
      nullCount: q ? 0 : n,
      nullBitmap: q ? undefined : new Uint8Array((n + 7) >> 3),
      child,
    } as never);
  }
  let v: Vec | null;
  if (o.tag === 'scalar') v = o.value === null ? null : asType(ctx, o, type, null);
  else v = castVec(o, type, null, n);
  let validity: Uint8Array | null;
  if (!v) validity = new Uint8Array(n);
  else validity = v.validity;
  if (selection) validity = andValid(validity, selection, n);
  let nullCount = 0;
  if (validity) for (let i = 0; i < n; i++) nullCount += validity[i] ^ 1;
  const nullBitmap = nullCount > 0 ? packBits(validity!, n) : undefined;
  if (kind === 'text') {
    const s = (v as StrVec | null) ?? strVec(new Int32Array(n + 1), new Uint8Array(0), null);
    return makeData({ type: ARROW.text, length: n, nullCount, nullBitmap, valueOffsets: s.offsets, data: s.bytes });
  }
  if (kind === 'boolean') {
    const values = v ? (v as NumVec).values as Uint8Array : new Uint8Array(n);
    return makeData({ type: ARROW.boolean, length: n, nullCount, nullBitmap, data: packBits(values, n) });
  }
  const data = v ? (v as NumVec | BigVec).values : kind === 'bigint' || kind === 'timestamp' ? new BigInt64Array(n) : newArray(kind, n);
  return makeData({ type: type as never, length: n, nullCount, nullBitmap, data: data as never });
}
