/**
 * What every node evaluator shares: the operand representations (`Vec`, `Scalar`, `Pred`), the
 * evaluation `Context` (one expression over one batch: its columns, parameters and node types),
 * column loading, canonical predicates and SQL three-valued logic, and which nodes can raise per
 * row (`hasValueNodes`).
 *
 * Why it is its own module: boolean nodes (evaluate.ts, compare.ts) and value nodes (values.ts)
 * evaluate each other's children (`price * 2 > 10`, `CASE WHEN x > 0 THEN …`), so the recursion
 * runs through the Context (`ctx.eval`), which the entry points (evaluate.ts) make with their
 * `evalNode`. Everything here imports only lower modules, and values.ts never imports
 * evaluate.ts: the import graph has no cycle (DESIGN.md).
 *
 * Representations and invariants are evaluate.ts's (see its header): every boolean node yields
 * canonical values (0 wherever the row is NULL) plus validity (null = all known).
 */
import { type Data, type DataType, type RecordBatch, Type } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { BOOL_DOMAIN, type ColumnDomain, domainOf } from './coerce.js';
import { type Expr, exprToString } from './expr.js';
import type { NumArray } from './kernels.js';
import { nodeTypes } from './check.js';
import { ARROW } from './types.js';

// ---------------------------------------------------------------------------------------------
// Operands and the evaluation context

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

/**
 * Evaluates one node (evaluate.ts's `evalNode`). A Context carries it so that value nodes
 * (values.ts) can evaluate their children, boolean or not, without importing evaluate.ts.
 */
export type NodeEvaluator = (ctx: Context, e: Expr, sel: Uint8Array | null) => Operand;

/** One evaluation of one expression over one batch: its columns (loaded once), parameters and node types. */
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
    private readonly evaluator: NodeEvaluator,
  ) {
    this.n = batch.numRows;
  }

  /** Evaluates a node of `root` over the batch, restricted to `sel` (evaluate.ts's `evalNode`). */
  eval(e: Expr, sel: Uint8Array | null = null): Operand {
    return this.evaluator(this, e, sel);
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
export function gatherDict(v: DictVec, perEntry: Pred, n: number): Pred {
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
// Which nodes can raise per row (memoised per node: expressions are immutable)

const valueMemo = new WeakMap<Expr, boolean>();

/** Whether `e` contains a value node (arith, negate, call, case, cast): only those can raise per row. */
export function hasValueNodes(e: Expr): boolean {
  let r = valueMemo.get(e);
  if (r === undefined) {
    switch (e.kind) {
      case 'arith':
      case 'negate':
      case 'call':
      case 'case':
      case 'cast':
        r = true;
        break;
      case 'column':
      case 'literal':
      case 'param':
        r = false;
        break;
      case 'compare':
        r = hasValueNodes(e.left) || hasValueNodes(e.right);
        break;
      case 'and':
      case 'or':
        r = e.operands.some(hasValueNodes);
        break;
      case 'not':
      case 'is':
        r = hasValueNodes(e.operand);
        break;
      case 'in':
        r = hasValueNodes(e.operand) || e.list.some(hasValueNodes);
        break;
      case 'between':
        r = hasValueNodes(e.operand) || hasValueNodes(e.low) || hasValueNodes(e.high);
        break;
      case 'like':
        r = hasValueNodes(e.operand) || hasValueNodes(e.pattern);
        break;
    }
    valueMemo.set(e, r);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Canonical predicates

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
