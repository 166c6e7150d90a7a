/**
 * Comparisons (`=`, `<>`, `<`, `<=`, `>`, `>=`) between evaluated operands: a column or computed
 * vector against a constant (converted once to the vector's storage, coerce.ts, so the loop
 * compares raw typed-array values), two vectors, or two constants (folded once). BETWEEN, IN,
 * CASE x WHEN and NULLIF are built on `compareOperands`.
 *
 * Type rules (check.ts enforces them statically, these loops again at run time): numbers with
 * numbers (ints with floats numerically), strings with strings (UTF-8 byte order = code point
 * order), booleans with booleans, and dates and timestamps with each other — a date meets a
 * timestamp as midnight (UTC) of that day, as PostgreSQL promotes date to timestamp. NULL on
 * either side is NULL; floats follow IEEE 754 (NaN equals nothing, `<>` is true against NaN).
 */
import { InvalidError } from '../../src/errors.js';
import {
  classesComparable,
  classOfValue,
  domainOf,
  isNumericClass,
  isTemporalClass,
  type StoredConstant,
  toStored,
} from './coerce.js';
import {
  andValidity,
  boolScalar,
  type BigVec,
  type Context,
  fillPred,
  finish,
  gatherDict,
  materializeDict,
  type NumVec,
  type Operand,
  type Pred,
  type Scalar,
  type Vec,
} from './eval-context.js';
import { type CompareOp, type Expr, flipCompareOp } from './expr.js';
import {
  andValidBits,
  type BigKernels,
  cmpBigScalar,
  cmpNumScalar,
  cmpScaledNumBig,
  cmpStrScalar,
  compareBytes,
  type NumArray,
  numKernels,
  OP_TABLE,
  prepareBigCompare,
  selValidBits,
  signedBigKernels,
  unsignedBigKernels,
  utf8,
} from './kernels.js';
import { dateObjectNanos, parseDate, parseTimestampNanos } from './temporal.js';

export function compareOperands(ctx: Context, l: Operand, r: Operand, op: CompareOp): Pred | Scalar {
  if (l.tag === 'scalar' && r.tag === 'scalar') return compareScalars(l, r, op);
  if (l.tag === 'scalar') return compareOperands(ctx, r, l, flipCompareOp(op));
  if (r.tag === 'scalar') return compareVecScalar(ctx, l, r, op);
  return compareVecVec(ctx, l, r, op);
}

export function storedFor(v: Pick<Vec, 'domain' | 'label'>, s: Scalar): StoredConstant {
  return toStored(s.value, v.domain, v.label, {
    temporal: s.temporal,
    allowRaw: s.isParam,
    what: s.isParam ? s.label : undefined,
  });
}

/** The constant of `v op s` in v's storage; a bare number never meets a date or timestamp. */
function constantFor(v: Pick<Vec, 'domain' | 'label'>, s: Scalar): StoredConstant {
  if (!s.isParam && isTemporalClass(v.domain.cls) && (typeof s.value === 'number' || typeof s.value === 'bigint'))
    throw new InvalidError(`type mismatch: cannot compare ${v.label} with the number ${String(s.value)}`);
  return storedFor(v, s);
}

function compareVecScalar(ctx: Context, v: Vec, s: Scalar, op: CompareOp): Pred {
  const n = ctx.n;
  const c = constantFor(v, s);
  if (c.t === 'null') return fillPred(n, null);
  switch (v.tag) {
    case 'num':
      return finish(cmpNumScalar(v.values, (c as { v: number }).v, op, n), v.validity);
    case 'big':
      return finish(cmpBigScalar(v.values, v.domain.unsigned === true, c, op, n), v.validity);
    case 'str':
      return finish(cmpStrScalar(v.offsets, v.bytes, utf8(String((c as { v: string }).v)), op, n), v.validity);
    case 'dict': {
      const m = v.dict.offsets.length - 1;
      const constant = utf8(String((c as { v: string }).v));
      const perEntry = finish(cmpStrScalar(v.dict.offsets, v.dict.bytes, constant, op, m), v.dict.validity);
      return gatherDict(v, perEntry, n);
    }
  }
}

function compareVecVec(ctx: Context, a: Vec, b: Vec, op: CompareOp): Pred {
  const n = ctx.n;
  if (!classesComparable(a.domain.cls, b.domain.cls))
    throw new InvalidError(`type mismatch: cannot compare ${a.label} with ${b.label}`);
  const validity = andValidity(a.validity, b.validity);
  const out = new Uint8Array(n);
  const t = OP_TABLE[op];
  if (a.tag === 'dict') a = materializeDict(a, n);
  if (b.tag === 'dict') b = materializeDict(b, n);
  if (a.tag === 'str' && b.tag === 'str') {
    const ao = a.offsets;
    const bo = b.offsets;
    for (let i = 0; i < n; i++) out[i] = t[compareBytes(a.bytes, ao[i], ao[i + 1], b.bytes, bo[i], bo[i + 1]) + 1];
    return finish(out, validity);
  }
  if (a.tag === 'num' && b.tag === 'num' && a.domain.unitNanos === b.domain.unitNanos) {
    const x = a.values;
    const y = b.values;
    switch (op) {
      case '=':
        for (let i = 0; i < n; i++) out[i] = x[i] === y[i] ? 1 : 0;
        break;
      case '<>':
        for (let i = 0; i < n; i++) out[i] = x[i] !== y[i] ? 1 : 0;
        break;
      case '<':
        for (let i = 0; i < n; i++) out[i] = x[i] < y[i] ? 1 : 0;
        break;
      case '<=':
        for (let i = 0; i < n; i++) out[i] = x[i] <= y[i] ? 1 : 0;
        break;
      case '>':
        for (let i = 0; i < n; i++) out[i] = x[i] > y[i] ? 1 : 0;
        break;
      case '>=':
        for (let i = 0; i < n; i++) out[i] = x[i] >= y[i] ? 1 : 0;
        break;
    }
    return finish(out, validity);
  }
  if (a.tag === 'big' && b.tag === 'big' && a.domain.unitNanos === b.domain.unitNanos) {
    const x = a.values;
    const y = b.values;
    for (let i = 0; i < n; i++) {
      const p = x[i];
      const q = y[i];
      out[i] = p < q ? t[0] : p > q ? t[2] : t[1];
    }
    return finish(out, validity);
  }
  const temporal = isTemporalClass(a.domain.cls);
  // Date32 against a timestamp or Date64 (`updated > created`): the days scaled to the other
  // side's unit, in doubles while exact.
  if (temporal && a.tag !== b.tag && (a.tag === 'num' || b.tag === 'num')) {
    const [d, ts, o] = a.tag === 'num' ? [a, b as BigVec, op] : [b as NumVec, a as BigVec, flipCompareOp(op)];
    const ud = d.domain.unitNanos!;
    const ut = ts.domain.unitNanos!;
    if (ud % ut === 0n) return finish(cmpScaledNumBig(d.values, Number(ud / ut), ts.values as BigInt64Array, o, n), validity);
  }
  // Other mixed storage (64-bit with 32-bit, different timestamp units): rare, so one general
  // per-row path. Temporal values meet as nanoseconds; a float side makes the comparison a
  // Number one; otherwise exact bigints.
  const floating = isNumericClass(a.domain.cls) && (a.domain.cls === 'float' || b.domain.cls === 'float');
  const read = (v: NumVec | BigVec): ((i: number) => number | bigint) => {
    const vals = v.values;
    if (floating) return (i) => Number(vals[i]);
    const unit = temporal ? v.domain.unitNanos! : 1n;
    return v.tag === 'big' ? (i) => (vals[i] as bigint) * unit : (i) => BigInt(vals[i] as number) * unit;
  };
  const ra = read(a as NumVec | BigVec);
  const rb = read(b as NumVec | BigVec);
  for (let i = 0; i < n; i++) {
    const x = ra(i);
    const y = rb(i);
    out[i] = x < y ? t[0] : x > y ? t[2] : x === y ? t[1] : op === '<>' ? 1 : 0;
  }
  return finish(out, validity);
}

/** Both sides constant: folded once (mixed number/bigint compare exactly in JS). */
function compareScalars(l: Scalar, r: Scalar, op: CompareOp): Scalar {
  if (l.value === null || r.value === null) return boolScalar(null);
  let x: unknown = l.value;
  let y: unknown = r.value;
  const cl = classOfValue(x, l.temporal);
  const cr = classOfValue(y, r.temporal);
  const temporalish = (c: unknown) => c === 'date' || c === 'timestamp';
  if (temporalish(cl) || temporalish(cr)) {
    x = scalarNanos(l);
    y = scalarNanos(r);
  } else if (cl === undefined || cr === undefined || !classesComparable(cl as never, cr as never)) {
    throw new InvalidError(`type mismatch: cannot compare ${l.label} with ${r.label}`);
  }
  if (typeof x === 'string' && typeof y === 'string') {
    const bx = utf8(x);
    const by = utf8(y);
    return boolScalar(OP_TABLE[op][compareBytes(bx, 0, bx.length, by, 0, by.length) + 1] === 1);
  }
  if (typeof x === 'boolean') x = x ? 1 : 0;
  if (typeof y === 'boolean') y = y ? 1 : 0;
  const a = x as number | bigint;
  const b = y as number | bigint;
  const res = a < b ? OP_TABLE[op][0] : a > b ? OP_TABLE[op][2] : a == b ? OP_TABLE[op][1] : op === '<>' ? 1 : 0;
  return boolScalar(res === 1);
}

function scalarNanos(s: Scalar): bigint {
  const v = s.value;
  let nanos: bigint | undefined;
  if (v instanceof Date) nanos = dateObjectNanos(v);
  else if (typeof v === 'string') {
    if (s.temporal === 'date') {
      const d = parseDate(v);
      nanos = d === undefined ? undefined : BigInt(d) * 86_400_000_000_000n;
    } else nanos = parseTimestampNanos(v);
  }
  if (nanos === undefined) throw new InvalidError(`${s.label} is not a valid date or timestamp`);
  return nanos;
}

// ---------------------------------------------------------------------------------------------
// Filter fast path: a plain column against a constant, straight into the filter's mask

/**
 * `column op constant` over one batch, for a filter: runs on evaluateFilter's output mask (1 =
 * the row is still TRUE) instead of producing a Pred, and returns how many rows are left. NULL
 * rows (the column's, or a NULL constant's) are not TRUE, so they end up 0 like FALSE ones.
 * `set` starts the mask, `and` narrows it, `sel` narrows only the rows listed in idx (the mask's
 * 1s, which it compacts as the kernels do).
 */
export class MaskCompare {
  constructor(
    private readonly n: number,
    /** Every row's answer before NULLs: TRUE, FALSE (or NULL), or undefined = per row (`run`). */
    private readonly constant: boolean | undefined,
    /** The kernels bound to the column and constant; `bits` null = the column has no NULLs. */
    private readonly run: {
      set(out: Uint8Array, bits: Uint8Array | null, off: number): number;
      and(out: Uint8Array, bits: Uint8Array | null, off: number): number;
      sel(idx: Uint32Array, m: number, out: Uint8Array, bits: Uint8Array | null, off: number): number;
    } | null,
    /** The column's validity bitmap (null: no NULLs) and the batch's bit offset into it. */
    private readonly bits: Uint8Array | null,
    private readonly offset: number,
  ) {}

  set(out: Uint8Array): number {
    if (this.constant === false) {
      out.fill(0); // out may be a reused buffer
      return 0;
    }
    if (this.constant === undefined) return this.run!.set(out, this.bits, this.offset);
    out.fill(1);
    return this.bits ? andValidBits(out, this.bits, this.offset, this.n) : this.n;
  }

  and(out: Uint8Array): number {
    if (this.constant === false) {
      out.fill(0);
      return 0;
    }
    if (this.constant === undefined) return this.run!.and(out, this.bits, this.offset);
    if (this.bits) return andValidBits(out, this.bits, this.offset, this.n);
    let k = 0;
    for (let i = 0; i < this.n; i++) k += out[i];
    return k;
  }

  sel(idx: Uint32Array, m: number, out: Uint8Array): number {
    if (this.constant === false) {
      for (let j = 0; j < m; j++) out[idx[j]] = 0;
      return 0;
    }
    if (this.constant === undefined) return this.run!.sel(idx, m, out, this.bits, this.offset);
    return this.bits ? selValidBits(idx, m, out, this.bits, this.offset) : m;
  }
}

/**
 * The fast form of a filter condition, when it is `column op constant` (either order; the
 * constant a literal or parameter) on an integer (up to 64 bits), float, date or timestamp
 * column; undefined otherwise (the caller evaluates it the general way). Same checks and errors
 * as `compareOperands`: operands are evaluated left to right and the constant converted by
 * `constantFor`.
 */
export function columnConstantFilter(ctx: Context, e: Expr): MaskCompare | undefined {
  if (e.kind !== 'compare') return undefined;
  let op = e.op;
  let colExpr = e.left;
  let constExpr = e.right;
  if (colExpr.kind !== 'column') {
    [colExpr, constExpr] = [constExpr, colExpr];
    op = flipCompareOp(op);
  }
  if (colExpr.kind !== 'column' || (constExpr.kind !== 'literal' && constExpr.kind !== 'param')) return undefined;
  // Left to right, as compareOperands' caller evaluates them (the errors come in that order).
  const first = constExpr === e.left ? (ctx.eval(constExpr) as Scalar) : undefined;
  const data = ctx.columnData(colExpr.name);
  const domain = domainOf(data.type);
  if (!domain || domain.cls === 'bool' || domain.cls === 'string') return undefined;
  const values = data.values as unknown;
  const num = domain.storage === 'number' ? numKernels(values) : undefined;
  const big = domain.storage === 'bigint' && (values instanceof BigInt64Array || values instanceof BigUint64Array);
  if (!num && !big) return undefined;
  const s = first ?? (ctx.eval(constExpr) as Scalar);
  const c = constantFor({ domain, label: `column ${colExpr.name} (${String(data.type)})` }, s);
  const n = ctx.n;
  const bitmap = data.nullBitmap;
  const bits = data.nullCount === 0 || !bitmap || bitmap.length === 0 ? null : bitmap;
  if (c.t === 'null') return new MaskCompare(n, false, null, bits, data.offset);
  if (num) {
    const x = values as NumArray;
    const v = (c as { v: number }).v;
    return new MaskCompare(n, undefined, {
      set: (out, b, off) => (b ? num.setValid(x, v, op, n, out, b, off) : num.set(x, v, op, n, out)),
      and: (out, b, off) => (b ? num.andValid(x, v, op, n, out, b, off) : num.and(x, v, op, n, out)),
      sel: (idx, m, out, b, off) => (b ? num.selValid(x, v, op, idx, m, out, b, off) : num.sel(x, v, op, idx, m, out)),
    }, bits, data.offset);
  }
  const a = values as BigInt64Array | BigUint64Array;
  const unsigned = domain.unsigned === true;
  const p = prepareBigCompare(c, op, unsigned);
  if ('constant' in p) return new MaskCompare(n, p.constant, null, bits, data.offset);
  const lo = new Uint32Array(a.buffer, a.byteOffset, n * 2);
  const { ch, cl, op: bop } = p;
  if (unsigned) return new MaskCompare(n, undefined, bigRun(unsignedBigKernels, lo, lo, ch, cl, bop, n), bits, data.offset);
  const hi = new Int32Array(a.buffer, a.byteOffset, n * 2);
  return new MaskCompare(n, undefined, bigRun(signedBigKernels, lo, hi, ch, cl, bop, n), bits, data.offset);
}

function bigRun<H>(k: BigKernels<H>, lo: Uint32Array, hi: H, ch: number, cl: number, op: CompareOp, n: number) {
  return {
    set: (out: Uint8Array, b: Uint8Array | null, off: number) =>
      b ? k.setValid(lo, hi, ch, cl, op, n, out, b, off) : k.set(lo, hi, ch, cl, op, n, out),
    and: (out: Uint8Array, b: Uint8Array | null, off: number) =>
      b ? k.andValid(lo, hi, ch, cl, op, n, out, b, off) : k.and(lo, hi, ch, cl, op, n, out),
    sel: (idx: Uint32Array, m: number, out: Uint8Array, b: Uint8Array | null, off: number) =>
      b ? k.selValid(lo, hi, ch, cl, op, idx, m, out, b, off) : k.sel(lo, hi, ch, cl, op, idx, m, out),
  };
}
