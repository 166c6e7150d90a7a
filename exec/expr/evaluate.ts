/**
 * Vectorized evaluation of expressions over one Arrow `RecordBatch`: boolean conditions here
 * (`evaluateFilter`, `evaluatePredicate`), value expressions in values.ts (`evaluateValue`),
 * one recursive `evalNode` for both.
 *
 * Why it looks like this: a filter runs on every row the engine scans, so each node is a tight
 * loop over typed arrays (the column's `values`, its validity bitmap read at `data.offset`,
 * UTF-8 bytes through `valueOffsets`), never `Vector.get(i)`. Constants are converted once to
 * the column's storage representation (coerce.ts) so the loops compare raw values: 64-bit
 * integers and timestamps as two 32-bit halves, strings as bytes (UTF-8 byte order equals code
 * point order), dictionary-encoded strings by evaluating the dictionary once and gathering.
 *
 * Invariant (SQL three-valued logic): every boolean node yields `values` (1 = TRUE) plus
 * `validity` (1 = known; `null` = all known), with `values` 0 wherever the row is NULL. So
 * NOT NULL is NULL, NULL AND FALSE is FALSE, NULL OR TRUE is TRUE, and a comparison touching
 * NULL is NULL; `evaluateFilter` keeps only TRUE rows. Floats follow IEEE 754 as JS does
 * (NaN equals nothing, `<>` is true against NaN).
 *
 * Invariant (evaluation restricted to a selection): `evalNode(ctx, e, sel)` must not raise a
 * per-row error (division by zero, overflow, a bad cast) for a row outside `sel` (a byte mask,
 * null = every row); its output at such rows is unspecified. AND evaluates an operand only
 * where the operands before it left the row undecided (not FALSE), OR where they left it not
 * TRUE, CASE a branch only where it is taken, COALESCE an argument only where the ones before
 * it are NULL. Only value nodes (values.ts) can raise per row, so a plain filter (no value
 * nodes) never builds these masks and runs exactly as before.
 */
import { type Data, type DataType, type RecordBatch, Type } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import {
  BOOL_DOMAIN,
  classesComparable,
  classOfValue,
  type ColumnDomain,
  domainOf,
  isNumericClass,
  isTemporalClass,
  type StoredConstant,
  toStored,
} from './coerce.js';
import { type CompareOp, type Expr, exprToString, flipCompareOp, type LikeExpr } from './expr.js';
import {
  cmpBigScalar,
  cmpNumScalar,
  cmpStrScalar,
  compareBytes,
  inBigints,
  inStrings,
  type NumArray,
  OP_TABLE,
  utf8,
} from './kernels.js';
import { compileLike } from './like.js';
import { dateObjectNanos, parseDate, parseTimestampNanos } from './temporal.js';
import { nodeTypes } from './check.js';
import { ARROW } from './types.js';
import { evalValueNode, hasValueNodes } from './values.js';

/** A three-valued boolean column: `values[i]` is 1 only for TRUE; NULL rows have validity 0. */
export interface TriBoolVector {
  readonly length: number;
  readonly values: Uint8Array;
  /** 1 = TRUE/FALSE is known, 0 = NULL; `null` when no row is NULL. */
  readonly validity: Uint8Array | null;
}

/**
 * Evaluates a boolean expression on a batch: one byte per row, 1 where it is TRUE, 0 where it
 * is FALSE or NULL. `params[0]` binds `$1`.
 */
export function evaluateFilter(expr: Expr, batch: RecordBatch, params: readonly unknown[] = []): Uint8Array {
  const ctx = new Context(batch, params, expr);
  if (expr.kind === 'and') {
    // Top level: NULL and FALSE both drop the row, so AND can work on TRUE-masks and stop as
    // soon as no row is left; an operand that can raise per row sees only the rows still TRUE.
    let mask: Uint8Array | undefined;
    for (const operand of expr.operands) {
      const p = asPredicate(ctx, evalNode(ctx, operand, mask && hasValueNodes(operand) ? mask : null), operand);
      if (!mask) mask = p.values.slice();
      else {
        const v = p.values;
        for (let i = 0; i < mask.length; i++) mask[i] &= v[i];
      }
      if (!anySet(mask)) break;
    }
    return mask!;
  }
  const p = asPredicate(ctx, evalNode(ctx, expr), expr);
  return p.values.slice();
}

/** Evaluates a boolean expression keeping SQL NULLs apart from FALSE. */
export function evaluatePredicate(expr: Expr, batch: RecordBatch, params: readonly unknown[] = []): TriBoolVector {
  const ctx = new Context(batch, params, expr);
  const p = asPredicate(ctx, evalNode(ctx, expr), expr);
  return { length: ctx.n, values: p.values.slice(), validity: p.validity ? p.validity.slice() : null };
}

// ---------------------------------------------------------------------------------------------
// Operands

export interface VecBase {
  /** For messages: "column price (Float64)". */
  readonly label: string;
  /** The Arrow type of the values (a column's own type; computed values have canonical types). */
  readonly type: DataType;
  readonly domain: ColumnDomain;
  readonly validity: Uint8Array | null;
}
/** Numbers in a typed array (ints up to 32 bits, floats, Date32 days, booleans as 0/1). */
export interface NumVec extends VecBase {
  readonly tag: 'num';
  readonly values: NumArray;
}
/** 64-bit integers, Date64, Timestamp. */
export interface BigVec extends VecBase {
  readonly tag: 'big';
  readonly values: BigInt64Array | BigUint64Array;
}
/** UTF-8 strings: row i is bytes[offsets[i] .. offsets[i + 1]). */
export interface StrVec extends VecBase {
  readonly tag: 'str';
  readonly offsets: Int32Array;
  readonly bytes: Uint8Array;
}
/** Dictionary-encoded strings: row i is dict row indices[i]. */
export interface DictVec extends VecBase {
  readonly tag: 'dict';
  readonly indices: NumArray;
  readonly dict: StrVec;
}
export interface Scalar {
  readonly tag: 'scalar';
  readonly value: unknown;
  readonly temporal?: 'date' | 'timestamp';
  readonly isParam: boolean;
  readonly label: string;
  /** A double literal written with a decimal point (`2.0`). */
  readonly float?: boolean;
}
export type Vec = NumVec | BigVec | StrVec | DictVec;
export type Operand = Vec | Scalar;
/** A boolean vector in canonical form (values 0 where invalid). */
export type Pred = NumVec & { readonly values: Uint8Array };

export class Context {
  readonly n: number;
  private readonly columns = new Map<string, Vec>();
  private fieldIndex?: Map<string, number>;
  private types?: Map<Expr, DataType | null>;

  constructor(
    readonly batch: RecordBatch,
    readonly params: readonly unknown[],
    /** The expression being evaluated (its node types are computed on first use). */
    readonly root: Expr,
  ) {
    this.n = batch.numRows;
  }

  /** The type of a node of `root` (check.ts rules, parameters typed from their values). */
  typeOf(e: Expr): DataType | null {
    if (!this.types) this.types = nodeTypes(this.root, this.batch.schema, this.params);
    let t = this.types.get(e);
    if (t === undefined && !this.types.has(e)) {
      for (const [k, v] of nodeTypes(e, this.batch.schema, this.params)) this.types.set(k, v);
      t = this.types.get(e);
    }
    return t ?? null;
  }

  /** The Arrow data of a column (as stored in the batch). */
  columnData(name: string): Data {
    if (!this.fieldIndex) {
      this.fieldIndex = new Map();
      this.batch.schema.fields.forEach((f, i) => this.fieldIndex!.set(f.name, i));
    }
    const i = this.fieldIndex.get(name);
    if (i === undefined) {
      const available = this.batch.schema.fields.map((f) => f.name).join(', ');
      throw new InvalidError(`unknown column "${name}" in filter; available columns: ${available}`);
    }
    return this.batch.data.children[i] as Data;
  }

  column(name: string): Vec {
    let v = this.columns.get(name);
    if (!v) {
      const data = this.columnData(name);
      v = loadColumn(data, `column ${name} (${String(data.type)})`);
      this.columns.set(name, v);
    }
    return v;
  }

  param(index: number): unknown {
    if (index > this.params.length || this.params[index - 1] === undefined)
      throw new InvalidError(
        `the filter uses $${index} but ${this.params.length === 0 ? 'no parameters were' : `only ${this.params.length} parameter(s) were`} given`,
      );
    return this.params[index - 1];
  }
}

/** Unpacks an Arrow validity bitmap (bit `offset + i`) into one byte per row; null if no nulls. */
export function validityBytes(data: Data): Uint8Array | null {
  const bitmap = data.nullBitmap;
  if (data.nullCount === 0 || !bitmap || bitmap.length === 0) return null;
  return unpackBits(bitmap, data.offset, data.length);
}

export function unpackBits(bits: Uint8Array, offset: number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let i = 0;
  // Head until the bit position is byte-aligned, then whole bytes.
  for (; i < n && ((offset + i) & 7) !== 0; i++) {
    const b = offset + i;
    out[i] = (bits[b >> 3] >> (b & 7)) & 1;
  }
  for (let byte = (offset + i) >> 3; i + 8 <= n; byte++, i += 8) {
    const x = bits[byte];
    out[i] = x & 1;
    out[i + 1] = (x >> 1) & 1;
    out[i + 2] = (x >> 2) & 1;
    out[i + 3] = (x >> 3) & 1;
    out[i + 4] = (x >> 4) & 1;
    out[i + 5] = (x >> 5) & 1;
    out[i + 6] = (x >> 6) & 1;
    out[i + 7] = (x >> 7) & 1;
  }
  for (; i < n; i++) {
    const b = offset + i;
    out[i] = (bits[b >> 3] >> (b & 7)) & 1;
  }
  return out;
}

export function loadColumn(data: Data, label: string): Vec {
  const domain = domainOf(data.type);
  if (!domain)
    throw new InvalidError(`${label} cannot be used in a filter (supported: integers, floats, strings, booleans, dates, timestamps)`);
  const n = data.length;
  const validity = validityBytes(data);
  switch (data.type.typeId) {
    case Type.Bool: {
      const values = unpackBits(data.values as Uint8Array, data.offset, n);
      if (validity) for (let i = 0; i < n; i++) values[i] &= validity[i];
      return { tag: 'num', label, type: data.type, domain, validity, values };
    }
    case Type.Utf8:
      return { tag: 'str', label, type: data.type, domain, validity, offsets: data.valueOffsets as Int32Array, bytes: data.values as Uint8Array };
    case Type.Dictionary: {
      const dictionary = data.dictionary!;
      const dict = concatStrings(dictionary.data as Data[], `${label} dictionary`);
      let indices = data.values as NumArray | BigInt64Array | BigUint64Array;
      if (indices instanceof BigInt64Array || indices instanceof BigUint64Array)
        indices = Float64Array.from(indices.subarray(0, n), Number);
      return { tag: 'dict', label, type: data.type, domain, validity, indices, dict };
    }
  }
  if (domain.storage === 'bigint')
    return { tag: 'big', label, type: data.type, domain, validity, values: (data.values as BigInt64Array).subarray(0, n) };
  return { tag: 'num', label, type: data.type, domain, validity, values: (data.values as NumArray).subarray(0, n) };
}

/** One StrVec over one or more Utf8 chunks (a dictionary may be chunked). */
function concatStrings(chunks: Data[], label: string): StrVec {
  if (chunks.length === 1) return loadColumn(chunks[0], label) as StrVec;
  const parts = chunks.map((c) => loadColumn(c, label) as StrVec);
  const n = parts.reduce((s, p) => s + p.offsets.length - 1, 0);
  const total = parts.reduce((s, p) => s + (p.offsets[p.offsets.length - 1] - p.offsets[0]), 0);
  const offsets = new Int32Array(n + 1);
  const bytes = new Uint8Array(total);
  const validity = parts.some((p) => p.validity) ? new Uint8Array(n).fill(1) : null;
  let row = 0;
  let pos = 0;
  for (const p of parts) {
    const m = p.offsets.length - 1;
    const base = p.offsets[0];
    bytes.set(p.bytes.subarray(base, p.offsets[m]), pos);
    for (let i = 0; i < m; i++) offsets[row + i + 1] = pos + p.offsets[i + 1] - base;
    if (validity && p.validity) validity.set(p.validity, row);
    pos += p.offsets[m] - base;
    row += m;
  }
  return { tag: 'str', label, type: parts[0].type, domain: parts[0].domain, validity, offsets, bytes };
}

/** A dictionary column decoded into plain strings (column-to-column comparisons only). */
export function materializeDict(v: DictVec, n: number): StrVec {
  const { indices, dict } = v;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const k = indices[i];
    if (k < dict.offsets.length - 1) total += dict.offsets[k + 1] - dict.offsets[k];
  }
  const offsets = new Int32Array(n + 1);
  const bytes = new Uint8Array(total);
  let pos = 0;
  const validity = v.validity || dict.validity ? new Uint8Array(n) : null;
  for (let i = 0; i < n; i++) {
    const valid = !v.validity || v.validity[i] === 1;
    const k = indices[i];
    if (valid) {
      const s = dict.offsets[k];
      const e = dict.offsets[k + 1];
      bytes.set(dict.bytes.subarray(s, e), pos);
      pos += e - s;
      if (validity) validity[i] = dict.validity ? dict.validity[k] : 1;
    }
    offsets[i + 1] = pos;
  }
  return { tag: 'str', label: v.label, type: ARROW.text, domain: v.domain, validity, offsets, bytes };
}

/** Gathers a per-dictionary-entry predicate through the indices of a dictionary column. */
function gatherDict(v: DictVec, perEntry: Pred, n: number): Pred {
  const values = new Uint8Array(n);
  const ev = perEntry.values;
  const idx = v.indices;
  for (let i = 0; i < n; i++) values[i] = ev[idx[i]];
  let validity: Uint8Array | null = null;
  if (perEntry.validity || v.validity) {
    validity = new Uint8Array(n);
    const dv = perEntry.validity;
    const rv = v.validity;
    for (let i = 0; i < n; i++) validity[i] = (rv ? rv[i] : 1) & (dv ? dv[idx[i]] : 1);
    for (let i = 0; i < n; i++) values[i] &= validity[i];
  }
  return pred(values, validity);
}

// ---------------------------------------------------------------------------------------------
// Node evaluation

export function evalNode(ctx: Context, e: Expr, sel: Uint8Array | null = null): Operand {
  switch (e.kind) {
    case 'column':
      return ctx.column(e.name);
    case 'literal':
      return { tag: 'scalar', value: e.value, temporal: e.temporal, isParam: false, label: exprToString(e), float: e.float === true };
    case 'param':
      return { tag: 'scalar', value: ctx.param(e.index), isParam: true, label: `parameter $${e.index}` };
    case 'compare':
      return compareOperands(ctx, evalNode(ctx, e.left, sel), evalNode(ctx, e.right, sel), e.op);
    case 'and':
    case 'or': {
      let acc: Pred | Scalar | undefined;
      for (const operand of e.operands) {
        // An operand that can raise per row sees only the rows the ones before left undecided.
        let s = sel;
        if (acc !== undefined && hasValueNodes(operand)) {
          s = undecided(ctx, acc, e.kind === 'and', sel);
          if (s !== null && !anySet(s)) continue;
        }
        const p = predicateOrScalar(ctx, evalNode(ctx, operand, s), operand);
        acc = acc === undefined ? p : e.kind === 'and' ? kleeneAnd(ctx, acc, p) : kleeneOr(ctx, acc, p);
        // Stop once every row is decided: all FALSE for AND, all TRUE for OR.
        if (acc.tag === 'num' && !acc.validity && (e.kind === 'and' ? !anySet(acc.values) : allSet(acc.values))) break;
        if (acc.tag === 'scalar' && acc.value === (e.kind === 'or')) break;
      }
      return acc!;
    }
    case 'not': {
      const p = predicateOrScalar(ctx, evalNode(ctx, e.operand, sel), e.operand);
      if (p.tag === 'scalar') return boolScalar(p.value === null ? null : !p.value);
      return kleeneNot(p);
    }
    case 'in':
      return evalIn(ctx, e.operand, e.list, e.negated, sel);
    case 'between': {
      const x = evalNode(ctx, e.operand, sel);
      const lo = compareOperands(ctx, x, evalNode(ctx, e.low, sel), '>=');
      const hi = compareOperands(ctx, x, evalNode(ctx, e.high, sel), '<=');
      const r = kleeneAnd(ctx, lo, hi);
      if (!e.negated) return r;
      return r.tag === 'scalar' ? boolScalar(r.value === null ? null : !r.value) : kleeneNot(r);
    }
    case 'is':
      return evalIs(ctx, e.operand, e.test, e.negated, sel);
    case 'like':
      return evalLike(ctx, e, sel);
    case 'arith':
    case 'negate':
    case 'call':
    case 'case':
    case 'cast':
      return evalValueNode(ctx, e, sel);
  }
}

/**
 * The rows of `sel` an AND (`and` true) or OR has not decided yet: not known FALSE (AND), not
 * TRUE (OR). Null when every row of `sel` is undecided and `sel` is null.
 */
export function undecided(ctx: Context, acc: Pred | Scalar, isAnd: boolean, sel: Uint8Array | null): Uint8Array | null {
  const n = ctx.n;
  if (acc.tag === 'scalar') {
    const decided = isAnd ? acc.value === false : acc.value === true;
    return decided ? new Uint8Array(n) : sel;
  }
  const out = new Uint8Array(n);
  const v = acc.values;
  const valid = acc.validity;
  if (isAnd) {
    // Decided FALSE: known and 0.
    if (valid) for (let i = 0; i < n; i++) out[i] = v[i] | (valid[i] ^ 1);
    else for (let i = 0; i < n; i++) out[i] = v[i];
  } else for (let i = 0; i < n; i++) out[i] = v[i] ^ 1;
  if (sel) for (let i = 0; i < n; i++) out[i] &= sel[i];
  return out;
}

export function boolScalar(value: boolean | null): Scalar {
  return { tag: 'scalar', value, isParam: false, label: value === null ? 'NULL' : String(value).toUpperCase() };
}

export function pred(values: Uint8Array, validity: Uint8Array | null): Pred {
  return { tag: 'num', label: 'a condition', type: ARROW.boolean, domain: BOOL_DOMAIN, values, validity };
}

/** A boolean operand as a canonical predicate vector or a boolean/NULL scalar. */
export function predicateOrScalar(ctx: Context, o: Operand, e: Expr): Pred | Scalar {
  if (o.tag === 'scalar') {
    if (o.value === null || typeof o.value === 'boolean') return o;
    throw new InvalidError(`type mismatch: ${o.label} is used as a condition but is not a boolean (${exprToString(e)})`);
  }
  if (o.domain.cls !== 'bool' || o.tag !== 'num')
    throw new InvalidError(`type mismatch: ${o.label} is used as a condition but is not boolean`);
  return o as Pred;
}

export function asPredicate(ctx: Context, o: Operand, e: Expr): Pred {
  const p = predicateOrScalar(ctx, o, e);
  return p.tag === 'scalar' ? fillPred(ctx.n, p.value as boolean | null) : p;
}

export function fillPred(n: number, value: boolean | null): Pred {
  const values = new Uint8Array(n);
  if (value === true) values.fill(1);
  return pred(values, value === null ? new Uint8Array(n) : null);
}

export function anySet(a: Uint8Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== 0) return true;
  return false;
}

export function allSet(a: Uint8Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] === 0) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Three-valued logic (values canonical: 0 where NULL)

export function kleeneNot(p: Pred): Pred {
  const n = p.values.length;
  const out = new Uint8Array(n);
  const v = p.values;
  const valid = p.validity;
  if (valid) for (let i = 0; i < n; i++) out[i] = v[i] ^ valid[i];
  else for (let i = 0; i < n; i++) out[i] = v[i] ^ 1;
  return pred(out, valid);
}

export function kleeneAnd(ctx: Context, a: Operand, b: Operand): Pred | Scalar {
  const pa = a as Pred | Scalar;
  const pb = b as Pred | Scalar;
  if (pa.tag === 'scalar' && pb.tag === 'scalar') {
    if (pa.value === false || pb.value === false) return boolScalar(false);
    if (pa.value === null || pb.value === null) return boolScalar(null);
    return boolScalar(true);
  }
  if (pa.tag === 'scalar') return kleeneAnd(ctx, pb, pa);
  if (pb.tag === 'scalar') {
    if (pb.value === true) return pa;
    if (pb.value === false) return fillPred(ctx.n, false);
    // x AND NULL: FALSE where x is FALSE, else NULL.
    const valid = new Uint8Array(ctx.n);
    for (let i = 0; i < ctx.n; i++) valid[i] = (pa.validity ? pa.validity[i] : 1) & (pa.values[i] ^ 1);
    return pred(new Uint8Array(ctx.n), valid);
  }
  const n = ctx.n;
  const av = pa.values;
  const bv = pb.values;
  const values = new Uint8Array(n);
  for (let i = 0; i < n; i++) values[i] = av[i] & bv[i];
  if (!pa.validity && !pb.validity) return pred(values, null);
  // Known when both are known, or either is a known FALSE.
  const va = pa.validity;
  const vb = pb.validity;
  const valid = new Uint8Array(n);
  if (va && vb) for (let i = 0; i < n; i++) valid[i] = (va[i] & vb[i]) | (va[i] & (av[i] ^ 1)) | (vb[i] & (bv[i] ^ 1));
  else {
    const [known, partial, pv] = va ? [bv, va, av] : [av, vb!, bv];
    for (let i = 0; i < n; i++) valid[i] = partial[i] | (known[i] ^ 1) | (partial[i] & (pv[i] ^ 1));
  }
  return pred(values, valid);
}

export function kleeneOr(ctx: Context, a: Operand, b: Operand): Pred | Scalar {
  const pa = a as Pred | Scalar;
  const pb = b as Pred | Scalar;
  if (pa.tag === 'scalar' && pb.tag === 'scalar') {
    if (pa.value === true || pb.value === true) return boolScalar(true);
    if (pa.value === null || pb.value === null) return boolScalar(null);
    return boolScalar(false);
  }
  if (pa.tag === 'scalar') return kleeneOr(ctx, pb, pa);
  if (pb.tag === 'scalar') {
    if (pb.value === false) return pa;
    if (pb.value === true) return fillPred(ctx.n, true);
    // x OR NULL: TRUE where x is TRUE, else NULL.
    return pred(pa.values.slice(), pa.values.slice());
  }
  const n = ctx.n;
  const av = pa.values;
  const bv = pb.values;
  const values = new Uint8Array(n);
  for (let i = 0; i < n; i++) values[i] = av[i] | bv[i];
  if (!pa.validity && !pb.validity) return pred(values, null);
  // Known when both are known, or either is TRUE (canonical values imply known).
  const va = pa.validity ?? ones(n);
  const vb = pb.validity ?? ones(n);
  const valid = new Uint8Array(n);
  for (let i = 0; i < n; i++) valid[i] = (va[i] & vb[i]) | values[i];
  return pred(values, valid);
}

function ones(n: number): Uint8Array {
  return new Uint8Array(n).fill(1);
}

export function andValidity(a: Uint8Array | null, b: Uint8Array | null): Uint8Array | null {
  if (!a) return b;
  if (!b) return a;
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] & b[i];
  return out;
}

/** Finishes a comparison kernel's output: NULL rows get value 0. */
export function finish(values: Uint8Array, validity: Uint8Array | null): Pred {
  if (validity) for (let i = 0; i < values.length; i++) values[i] &= validity[i];
  return pred(values, validity);
}

// ---------------------------------------------------------------------------------------------
// Comparisons

export function compareOperands(ctx: Context, l: Operand, r: Operand, op: CompareOp): Pred | Scalar {
  if (l.tag === 'scalar' && r.tag === 'scalar') return compareScalars(l, r, op);
  if (l.tag === 'scalar') return compareOperands(ctx, r, l, flipCompareOp(op));
  if (r.tag === 'scalar') return compareVecScalar(ctx, l, r, op);
  return compareVecVec(ctx, l, r, op);
}

function storedFor(v: Vec, s: Scalar): StoredConstant {
  return toStored(s.value, v.domain, v.label, {
    temporal: s.temporal,
    allowRaw: s.isParam,
    what: s.isParam ? s.label : undefined,
  });
}

function compareVecScalar(ctx: Context, v: Vec, s: Scalar, op: CompareOp): Pred {
  const n = ctx.n;
  if (!s.isParam && isTemporalClass(v.domain.cls) && (typeof s.value === 'number' || typeof s.value === 'bigint'))
    throw new InvalidError(`type mismatch: cannot compare ${v.label} with the number ${String(s.value)}`);
  const c = storedFor(v, s);
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
  // Mixed storage (64-bit with 32-bit, Date32 with Date64, different timestamp units): rare,
  // so one general per-row path. Temporal values meet as nanoseconds; a float side makes the
  // comparison a Number one; otherwise exact bigints.
  const temporal = isTemporalClass(a.domain.cls);
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
// IN, IS, LIKE

function evalIn(ctx: Context, operandExpr: Expr, list: readonly Expr[], negated: boolean, sel: Uint8Array | null): Pred | Scalar {
  const x = evalNode(ctx, operandExpr, sel);
  const items = list.map((e) => evalNode(ctx, e, sel));
  let result: Pred | Scalar;
  if (x.tag === 'scalar' || items.some((i) => i.tag !== 'scalar')) {
    // General form: x = i1 OR x = i2 OR ...
    result = items
      .map((i) => compareOperands(ctx, x, i, '='))
      .reduce((acc, p) => kleeneOr(ctx, acc, p));
  } else {
    result = inConstants(ctx, x, items as Scalar[]);
  }
  if (!negated) return result;
  return result.tag === 'scalar' ? boolScalar(result.value === null ? null : !result.value) : kleeneNot(result);
}

/** `column IN (constants)`: one pass with a hash set (numbers) or length buckets (strings). */
function inConstants(ctx: Context, v: Vec, items: Scalar[]): Pred {
  const n = ctx.n;
  for (const s of items)
    if (!s.isParam && isTemporalClass(v.domain.cls) && (typeof s.value === 'number' || typeof s.value === 'bigint'))
      throw new InvalidError(`type mismatch: cannot compare ${v.label} with the number ${String(s.value)}`);
  const consts = items.map((s) => storedFor(v, s));
  const hasNull = consts.some((c) => c.t === 'null');
  const strings = consts.flatMap((c) => (c.t === 'str' ? [utf8(c.v)] : []));
  let out: Uint8Array;
  let validity = v.validity;
  if (v.tag === 'dict') {
    const m = v.dict.offsets.length - 1;
    const perEntry = finish(inStrings(v.dict.offsets, v.dict.bytes, strings, m), v.dict.validity);
    const gathered = gatherDict(v, perEntry, n);
    out = gathered.values;
    validity = gathered.validity;
  } else if (v.tag === 'str') {
    out = inStrings(v.offsets, v.bytes, strings, n);
  } else if (v.tag === 'num') {
    const set = new Set<number>();
    for (const c of consts) if (c.t === 'num' && !Number.isNaN(c.v)) set.add(c.v);
    out = new Uint8Array(n);
    const a = v.values;
    for (let i = 0; i < n; i++) out[i] = set.has(a[i]) ? 1 : 0;
  } else {
    const wanted = consts.flatMap((c) => (c.t === 'big' && c.exact ? [c.floor] : []));
    out = inBigints(v.values, v.domain.unsigned === true, wanted, n);
  }
  const p = finish(out, validity);
  if (!hasNull) return p;
  // x IN (..., NULL) is TRUE on a match and NULL otherwise.
  return pred(p.values, p.values.slice());
}

function evalIs(ctx: Context, operandExpr: Expr, test: 'null' | 'true' | 'false', negated: boolean, sel: Uint8Array | null): Pred | Scalar {
  const o = evalNode(ctx, operandExpr, sel);
  const n = ctx.n;
  if (test === 'null') {
    if (o.tag === 'scalar') return boolScalar((o.value === null) !== negated);
    const out = new Uint8Array(n);
    const valid = o.validity;
    if (valid) for (let i = 0; i < n; i++) out[i] = valid[i] ^ (negated ? 0 : 1);
    else if (negated) out.fill(1);
    return pred(out, null);
  }
  const p = predicateOrScalar(ctx, o, operandExpr);
  const want = test === 'true';
  if (p.tag === 'scalar') return boolScalar((p.value === want) !== negated);
  const out = new Uint8Array(n);
  const v = p.values;
  const valid = p.validity;
  for (let i = 0; i < n; i++) {
    const known = valid ? valid[i] : 1;
    const hit = known & (want ? v[i] : v[i] ^ 1);
    out[i] = negated ? hit ^ 1 : hit;
  }
  return pred(out, null);
}

function evalLike(ctx: Context, e: LikeExpr, sel: Uint8Array | null): Pred | Scalar {
  const x = evalNode(ctx, e.operand, sel);
  const pat = evalNode(ctx, e.pattern, sel);
  const op = e.caseInsensitive ? 'ILIKE' : 'LIKE';
  if (pat.tag !== 'scalar') throw new InvalidError(`${op} patterns must be a string literal or a parameter`);
  if (pat.value !== null && typeof pat.value !== 'string')
    throw new InvalidError(`type mismatch: ${op} pattern ${pat.label} is not a string`);
  if (x.tag === 'scalar') {
    if (x.value === null || pat.value === null) return boolScalar(null);
    if (typeof x.value !== 'string') throw new InvalidError(`type mismatch: ${op} needs a string, not ${x.label}`);
    const m = compileLike(pat.value, e.escape, e.caseInsensitive);
    const bytes = utf8(x.value);
    return boolScalar(m(bytes, 0, bytes.length) !== e.negated);
  }
  if (x.domain.cls !== 'string') throw new InvalidError(`type mismatch: ${op} needs a string, but ${x.label} is not one`);
  if (pat.value === null) return fillPred(ctx.n, null);
  const m = compileLike(pat.value, e.escape, e.caseInsensitive);
  const run = (v: StrVec, n: number) => {
    const out = new Uint8Array(n);
    const o = v.offsets;
    const flip = e.negated ? 1 : 0;
    for (let i = 0; i < n; i++) out[i] = (m(v.bytes, o[i], o[i + 1]) ? 1 : 0) ^ flip;
    return finish(out, v.validity);
  };
  if (x.tag === 'dict') return gatherDict(x, run(x.dict, x.dict.offsets.length - 1), ctx.n);
  return run(x as StrVec, ctx.n);
}
