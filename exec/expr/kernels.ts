/**
 * Comparison kernels: tight loops over Arrow typed arrays producing one byte per row (1 = the
 * comparison holds). They know nothing about NULLs or expressions — compare.ts masks NULL rows
 * afterwards — so each is a single monomorphic pass that V8 compiles well.
 *
 * 64-bit integers (Int64, UInt64, Date64, Timestamp) are compared as two 32-bit halves read
 * through Int32Array/Uint32Array views of the same buffer (little-endian), which avoids a
 * BigInt allocation per row; constants are first normalized into an exact integer bound
 * (`integerBound`). Strings compare as UTF-8 bytes, which orders them by code point.
 */
import type { StoredConstant } from './coerce.js';
import type { CompareOp } from './expr.js';

export type NumArray = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/** Result per ordering sign (less, equal, greater) of each operator. */
export const OP_TABLE: Record<CompareOp, readonly [number, number, number]> = {
  '=': [0, 1, 0],
  '<>': [1, 0, 1],
  '<': [1, 0, 0],
  '<=': [1, 1, 0],
  '>': [0, 0, 1],
  '>=': [0, 1, 1],
};

export function cmpNumScalar(a: NumArray, c: number, op: CompareOp, n: number): Uint8Array {
  const out = new Uint8Array(n);
  switch (op) {
    case '=':
      for (let i = 0; i < n; i++) out[i] = a[i] === c ? 1 : 0;
      break;
    case '<>':
      for (let i = 0; i < n; i++) out[i] = a[i] !== c ? 1 : 0;
      break;
    case '<':
      for (let i = 0; i < n; i++) out[i] = a[i] < c ? 1 : 0;
      break;
    case '<=':
      for (let i = 0; i < n; i++) out[i] = a[i] <= c ? 1 : 0;
      break;
    case '>':
      for (let i = 0; i < n; i++) out[i] = a[i] > c ? 1 : 0;
      break;
    case '>=':
      for (let i = 0; i < n; i++) out[i] = a[i] >= c ? 1 : 0;
      break;
  }
  return out;
}

/** Splits an in-range 64-bit constant into the 32-bit halves the kernels compare. */
function halves(c: bigint, unsigned: boolean): [hi: number, lo: number] {
  const lo = Number(BigInt.asUintN(32, c));
  const hi = unsigned ? Number(BigInt.asUintN(32, c >> 32n)) : Number(BigInt.asIntN(32, c >> 32n));
  return [hi, lo];
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/**
 * Normalizes `x op c` for integer x into an exact integer bound, or a constant answer: a
 * constant strictly between two integers makes `=` false, `<>` true, `< c` / `<= c` into
 * `<= floor(c)` and `> c` / `>= c` into `> floor(c)`; constants past the type's range decide
 * every row.
 */
export function integerBound(
  c: StoredConstant,
  op: CompareOp,
  unsigned: boolean,
): { constant: boolean } | { op: CompareOp; value: bigint } {
  if (c.t === 'nan') return { constant: op === '<>' };
  if (c.t !== 'big') throw new Error('integerBound needs a bigint constant');
  let o = op;
  if (!c.exact) {
    if (op === '=') return { constant: false };
    if (op === '<>') return { constant: true };
    o = op === '<' || op === '<=' ? '<=' : '>';
  }
  const min = unsigned ? 0n : INT64_MIN;
  const max = unsigned ? UINT64_MAX : INT64_MAX;
  if (c.floor > max) return { constant: OP_TABLE[o][0] === 1 }; // every x < c
  if (c.floor < min) return { constant: OP_TABLE[o][2] === 1 }; // every x > c
  return { op: o, value: c.floor };
}

export function cmpBigScalar(
  a: BigInt64Array | BigUint64Array,
  unsigned: boolean,
  c: StoredConstant,
  op: CompareOp,
  n: number,
): Uint8Array {
  const out = new Uint8Array(n);
  const bound = integerBound(c, op, unsigned);
  if ('constant' in bound) {
    if (bound.constant) out.fill(1);
    return out;
  }
  const [chi, clo] = halves(bound.value, unsigned);
  // Little-endian: element i is lo = u32[2i], hi = (i|u)32[2i + 1].
  const u32 = new Uint32Array(a.buffer, a.byteOffset, n * 2);
  const h32 = unsigned ? u32 : new Int32Array(a.buffer, a.byteOffset, n * 2);
  if (bound.op === '=') {
    for (let i = 0, j = 0; i < n; i++, j += 2) out[i] = h32[j + 1] === chi && u32[j] === clo ? 1 : 0;
    return out;
  }
  if (bound.op === '<>') {
    for (let i = 0, j = 0; i < n; i++, j += 2) out[i] = h32[j + 1] !== chi || u32[j] !== clo ? 1 : 0;
    return out;
  }
  const [tl, te, tg] = OP_TABLE[bound.op];
  for (let i = 0, j = 0; i < n; i++, j += 2) {
    const h = h32[j + 1];
    if (h < chi) out[i] = tl;
    else if (h > chi) out[i] = tg;
    else {
      const l = u32[j];
      out[i] = l < clo ? tl : l > clo ? tg : te;
    }
  }
  return out;
}

const encoder = new TextEncoder();
export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}

/** Byte-wise comparison of UTF-8 strings (= code point order): -1, 0 or 1. */
export function compareBytes(a: Uint8Array, as: number, ae: number, b: Uint8Array, bs: number, be: number): number {
  const la = ae - as;
  const lb = be - bs;
  const m = la < lb ? la : lb;
  for (let k = 0; k < m; k++) {
    const x = a[as + k];
    const y = b[bs + k];
    if (x !== y) return x < y ? -1 : 1;
  }
  return la === lb ? 0 : la < lb ? -1 : 1;
}

/** `row op c` for UTF-8 rows o[i]..o[i + 1] of `b`. */
export function cmpStrScalar(o: Int32Array, b: Uint8Array, c: Uint8Array, op: CompareOp, n: number): Uint8Array {
  const out = new Uint8Array(n);
  const len = c.length;
  if (op === '=' || op === '<>') {
    const hit = op === '=' ? 1 : 0;
    const first = c[0];
    for (let i = 0; i < n; i++) {
      const s = o[i];
      let eq = o[i + 1] - s === len;
      if (eq && len > 0 && b[s] !== first) eq = false;
      for (let k = 1; eq && k < len; k++) if (b[s + k] !== c[k]) eq = false;
      out[i] = eq ? hit : hit ^ 1;
    }
    return out;
  }
  const t = OP_TABLE[op];
  for (let i = 0; i < n; i++) out[i] = t[compareBytes(b, o[i], o[i + 1], c, 0, len) + 1];
  return out;
}

/** Whether each UTF-8 row equals one of `wanted` (bucketed by byte length). */
export function inStrings(o: Int32Array, b: Uint8Array, wanted: readonly Uint8Array[], n: number): Uint8Array {
  const byLength: Uint8Array[][] = [];
  for (const bytes of wanted) (byLength[bytes.length] ??= []).push(bytes);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const s = o[i];
    const cands = byLength[o[i + 1] - s];
    if (!cands) continue;
    for (let k = 0; k < cands.length; k++) {
      const c = cands[k];
      let j = 0;
      while (j < c.length && b[s + j] === c[j]) j++;
      if (j === c.length) {
        out[i] = 1;
        break;
      }
    }
  }
  return out;
}

/** Whether each 64-bit value is one of `wanted`. */
export function inBigints(values: BigInt64Array | BigUint64Array, unsigned: boolean, wanted: readonly bigint[], n: number): Uint8Array {
  const out = new Uint8Array(n);
  const safe = wanted.every((w) => w >= BigInt(Number.MIN_SAFE_INTEGER) && w <= BigInt(Number.MAX_SAFE_INTEGER));
  if (safe) {
    // hi·2^32 + lo is exact below 2^53; beyond that it cannot round onto a safe integer.
    const set = new Set(wanted.map(Number));
    const u32 = new Uint32Array(values.buffer, values.byteOffset, n * 2);
    const h32 = unsigned ? u32 : new Int32Array(values.buffer, values.byteOffset, n * 2);
    for (let i = 0, j = 0; i < n; i++, j += 2) out[i] = set.has(h32[j + 1] * 4294967296 + u32[j]) ? 1 : 0;
    return out;
  }
  const set = new Set<bigint>(wanted);
  for (let i = 0; i < n; i++) out[i] = set.has(values[i]) ? 1 : 0;
  return out;
}

/**
 * `a[i] · scale` against the 64-bit `b[i]`, one byte per row (1 = `op` holds): a Date32 day
 * against a timestamp (or Date64) in the latter's unit, `scale` being its units per day, so the
 * date meets the timestamp as midnight of that day. Doubles while both sides are below 2^53 in
 * magnitude (exact there: years 1685–2255 for microseconds), else BigInt for that row.
 */
export function cmpScaledNumBig(a: NumArray, scale: number, b: BigInt64Array, op: CompareOp, n: number): Uint8Array {
  const out = new Uint8Array(n);
  const [lt, eq, gt] = OP_TABLE[op];
  const lo = new Uint32Array(b.buffer, b.byteOffset, n * 2);
  const hi = new Int32Array(b.buffer, b.byteOffset, n * 2);
  for (let i = 0, j = 0; i < n; i++, j += 2) {
    const x = a[i] * scale;
    const h = hi[j + 1];
    if (h < 2097152 && h >= -2097152 && x < 9007199254740992 && x > -9007199254740992) {
      const y = h * 4294967296 + lo[j];
      out[i] = x < y ? lt : x > y ? gt : eq;
    } else {
      const bx = BigInt(a[i]) * BigInt(scale);
      const by = b[i];
      out[i] = bx < by ? lt : bx > by ? gt : eq;
    }
  }
  return out;
}
