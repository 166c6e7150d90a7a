/**
 * The scalar index: sorted (key, row position) pairs of one column, answering equality, range
 * (each bound inclusive or exclusive) and IN-list lookups with row positions in ascending order.
 *
 * Why it is shaped like a tiny LSM tree: a MemTable appends batches continuously and must stay
 * searchable after every append. Each `add` sorts its chunk into a *run* (typed arrays of keys
 * and positions); whenever the run before the newest is at most twice its size the two are
 * merged: adjacent runs keep sizes[i] > 2 · sizes[i + 1], so there are at most log2(n) + 1 runs,
 * each row is merged O(log n) times, and a lookup binary-searches every run. Because rows arrive
 * in increasing position order and only adjacent runs merge, every run covers a contiguous
 * position range and runs are in position order; ties inside a run are ordered by position.
 *
 * Invariants:
 * - Bound semantics are exact on both sides: `lower {v, inclusive}` starts at the first key
 *   `>= v` (inclusive) or `> v` (exclusive); `upper {v, inclusive}` ends after the last key
 *   `<= v` (inclusive) or `< v` (exclusive). (Lance's first scalar index got `<=` vs `<` wrong.)
 * - NULLs are not indexed; NaN is not indexed either, since NaN matches no comparison (IEEE 754,
 *   the same rule the filter evaluator applies), so index and filter answers agree.
 * - Keys compare like the filter evaluator compares values: numbers numerically (a constant
 *   between two integers is never equal and bounds the integers correctly), strings by UTF-8
 *   bytes, which is Unicode code point order (not JS UTF-16 order), booleans FALSE < TRUE, dates
 *   and timestamps by their stored value. Query values go through the evaluator's coercion
 *   (exec/expr/coerce.ts): dates/timestamps accept ISO strings, `Date`s and raw stored numbers.
 * - `maxPosition` is an exclusive visibility cutoff: rows at or beyond it are never returned.
 *
 * Sidecar (`toArrow`/`fromArrow`): one Arrow table sorted by (value, position) with columns
 * `value` (the column's own type, non-null) and `position` (Uint32), schema metadata
 * `quiver.index = scalar`, `quiver.index.version = 1`.
 */
import {
  Bool,
  type Data,
  type DataType,
  Field,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Type,
  Uint32,
} from 'apache-arrow';
import { DataError, InvalidError } from '../../errors.js';
import { runSteps } from '../../util/steps.js';
import { type ColumnDomain, domainOf, type StoredConstant, toStored } from '../../../exec/expr/coerce.js';
import { compareBytes } from '../../../exec/expr/kernels.js';

export interface ScalarBound {
  readonly value: unknown;
  readonly inclusive: boolean;
}

export type ScalarPredicate =
  | { readonly op: 'eq'; readonly value: unknown }
  | { readonly op: 'range'; readonly lower?: ScalarBound; readonly upper?: ScalarBound }
  | { readonly op: 'in'; readonly values: readonly unknown[] };

export const SCALAR_INDEX_METADATA = { 'quiver.index': 'scalar', 'quiver.index.version': '1' } as const;

// ---------------------------------------------------------------------------------------------
// Runs and key codecs

interface Run<K> {
  readonly length: number;
  readonly keys: K;
  readonly pos: Uint32Array;
}

/** Number keys (ints up to 32 bits, floats, Date32 days, booleans 0/1) in a Float64Array. */
type NumKeys = Float64Array;
/** 64-bit keys (Int64, UInt64, Date64, Timestamp). */
type BigKeys = BigInt64Array | BigUint64Array;
/** UTF-8 keys: key i is bytes[offsets[i] .. offsets[i + 1]). */
interface StrKeys {
  readonly bytes: Uint8Array;
  readonly offsets: Uint32Array;
}

/** A query key plus whether the bound includes it. */
interface Bound<Q> {
  readonly key: Q;
  readonly inclusive: boolean;
}

interface Codec<K, Q> {
  /** Valid (non-null, non-NaN) rows of `data` as a sorted run; undefined when there are none. */
  build(data: Data, firstPosition: number): Run<K> | undefined;
  /** Merges an older run with a newer one (all of whose positions are larger). */
  merge(a: Run<K>, b: Run<K>): Run<K>;
  /** First index whose key is >= q (strict: > q). */
  search(run: Run<K>, q: Q, strict: boolean): number;
  /** The lookup bound for a query value, or undefined when nothing can match it. */
  bound(value: unknown, side: 'eq' | 'lower' | 'upper', inclusive: boolean): Bound<Q> | undefined;
  toData(run: Run<K>): Data;
  /** A run from sidecar chunks (already sorted; verified by the caller). */
  fromData(chunks: readonly Data[], pos: Uint32Array): Run<K>;
  /** Compares key i of `a` with key j of `b`. */
  compare(a: Run<K>, i: number, b: Run<K>, j: number): number;
  /** The entries `rows` (ascending indexes into `run`) with positions `pos`, as a new run. */
  take(run: Run<K>, rows: Uint32Array, pos: Uint32Array): Run<K>;
}

function validBytes(data: Data): Uint8Array | null {
  const bm = data.nullBitmap;
  if (data.nullCount === 0 || !bm || bm.length === 0) return null;
  const out = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const b = data.offset + i;
    out[i] = (bm[b >> 3] >> (b & 7)) & 1;
  }
  return out;
}

/** Orders `order` (row indexes) by key then index; skips the sort when already in order. */
function sortOrder(order: Uint32Array, cmp: (a: number, b: number) => number): Uint32Array {
  let sorted = true;
  for (let i = 1; i < order.length; i++)
    if (cmp(order[i - 1], order[i]) > 0) {
      sorted = false;
      break;
    }
  if (sorted) return order;
  return order.sort((a, b) => cmp(a, b) || a - b);
}

const PACK_LIMIT = 2 ** 53;

/**
 * Sorts `m` integer offsets (0 <= offsets[k] < span) with their indexes k as one native
 * Float64Array sort of offset·m + k — exact while span·m <= 2^53, and ties stay in k order.
 * Returns the sorted packed values (offset = floor(p / m), k = p % m), or undefined when the
 * packing would not be exact.
 */
function packedSort(offsets: ArrayLike<number>, m: number, span: number): Float64Array | undefined {
  if (span * m > PACK_LIMIT) return undefined;
  const packed = new Float64Array(m);
  for (let k = 0; k < m; k++) packed[k] = offsets[k] * m + k;
  return packed.sort();
}

function checkPositions(firstPosition: number, n: number): void {
  if (!Number.isInteger(firstPosition) || firstPosition < 0 || firstPosition + n > 0x1_0000_0000)
    throw new InvalidError(`scalar index positions must be integers in [0, 2^32); got ${firstPosition} + ${n} rows`);
}

function bigQueryBound(c: StoredConstant, side: 'eq' | 'lower' | 'upper', inclusive: boolean): Bound<bigint> | undefined {
  if (c.t !== 'big') return undefined; // NULL or NaN: matches nothing
  if (c.exact) return { key: c.floor, inclusive };
  // The value lies strictly between floor and floor + 1.
  if (side === 'eq') return undefined;
  return side === 'lower' ? { key: c.floor, inclusive: false } : { key: c.floor, inclusive: true };
}

class NumCodec implements Codec<NumKeys, number> {
  constructor(
    private readonly type: DataType,
    private readonly domain: ColumnDomain,
  ) {}

  private readValues(data: Data): ArrayLike<number> {
    if (data.typeId === Type.Bool) {
      const bits = data.values as Uint8Array;
      const out = new Uint8Array(data.length);
      for (let i = 0; i < data.length; i++) {
        const b = data.offset + i;
        out[i] = (bits[b >> 3] >> (b & 7)) & 1;
      }
      return out;
    }
    return data.values as unknown as ArrayLike<number>;
  }

  build(data: Data, first: number): Run<NumKeys> | undefined {
    const n = data.length;
    const values = this.readValues(data);
    const valid = validBytes(data);
    let m = 0;
    const rows = new Uint32Array(n);
    for (let i = 0; i < n; i++) if ((!valid || valid[i]) && values[i] === values[i]) rows[m++] = i;
    if (m === 0) return undefined;
    const keys = new Float64Array(m);
    const pos = new Uint32Array(m);
    if (this.domain.cls !== 'float') {
      // Integer keys (ints up to 32 bits, Date32 days, booleans): one native sort when exact.
      let min = Infinity;
      let max = -Infinity;
      let sorted = true;
      for (let k = 0; k < m; k++) {
        const v = values[rows[k]];
        if (v < max) sorted = false;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      if (sorted) {
        for (let k = 0; k < m; k++) {
          keys[k] = values[rows[k]];
          pos[k] = first + rows[k];
        }
        return { length: m, keys, pos };
      }
      const offsets = new Float64Array(m);
      for (let k = 0; k < m; k++) offsets[k] = values[rows[k]] - min;
      const packed = packedSort(offsets, m, max - min + 1);
      if (packed) {
        for (let i = 0; i < m; i++) {
          const p = packed[i];
          const k = p % m;
          keys[i] = min + (p - k) / m;
          pos[i] = first + rows[k];
        }
        return { length: m, keys, pos };
      }
    }
    const order = sortOrder(rows.subarray(0, m), (a, b) => values[a] - values[b]);
    for (let i = 0; i < m; i++) {
      keys[i] = values[order[i]];
      pos[i] = first + order[i];
    }
    return { length: m, keys, pos };
  }

  merge(a: Run<NumKeys>, b: Run<NumKeys>): Run<NumKeys> {
    const n = a.length + b.length;
    const keys = new Float64Array(n);
    const pos = new Uint32Array(n);
    const ak = a.keys;
    const bk = b.keys;
    let i = 0;
    let j = 0;
    for (let k = 0; k < n; k++) {
      if (j >= b.length || (i < a.length && ak[i] <= bk[j])) {
        keys[k] = ak[i];
        pos[k] = a.pos[i++];
      } else {
        keys[k] = bk[j];
        pos[k] = b.pos[j++];
      }
    }
    return { length: n, keys, pos };
  }

  search(run: Run<NumKeys>, q: number, strict: boolean): number {
    const k = run.keys;
    let lo = 0;
    let hi = run.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (strict ? k[mid] <= q : k[mid] < q) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  bound(value: unknown, _side: 'eq' | 'lower' | 'upper', inclusive: boolean): Bound<number> | undefined {
    const c = toStored(value, this.domain, `scalar index on ${String(this.type)}`, { allowRaw: true });
    if (c.t !== 'num' || Number.isNaN(c.v)) return undefined;
    return { key: c.v, inclusive };
  }

  toData(run: Run<NumKeys>): Data {
    const type = this.type;
    if (type.typeId === Type.Bool) {
      const bits = new Uint8Array((run.length + 7) >> 3);
      for (let i = 0; i < run.length; i++) if (run.keys[i]) bits[i >> 3] |= 1 << (i & 7);
      return makeData({ type: type as Bool, length: run.length, nullCount: 0, data: bits });
    }
    const ArrayType = (type as unknown as { ArrayType: new (src: ArrayLike<number>) => ArrayLike<number> }).ArrayType;
    return makeData({ type: type as never, length: run.length, nullCount: 0, data: new ArrayType(run.keys) as never });
  }

  fromData(chunks: readonly Data[], pos: Uint32Array): Run<NumKeys> {
    const keys = new Float64Array(pos.length);
    let at = 0;
    for (const d of chunks) {
      const v = this.readValues(d);
      for (let i = 0; i < d.length; i++) keys[at++] = v[i];
    }
    return { length: pos.length, keys, pos };
  }

  compare(a: Run<NumKeys>, i: number, b: Run<NumKeys>, j: number): number {
    const x = a.keys[i];
    const y = b.keys[j];
    return x < y ? -1 : x > y ? 1 : 0;
  }

  take(run: Run<NumKeys>, rows: Uint32Array, pos: Uint32Array): Run<NumKeys> {
    const keys = new Float64Array(rows.length);
    const src = run.keys;
    for (let i = 0; i < rows.length; i++) keys[i] = src[rows[i]];
    return { length: rows.length, keys, pos };
  }
}

class BigCodec implements Codec<BigKeys, bigint> {
  constructor(
    private readonly type: DataType,
    private readonly domain: ColumnDomain,
  ) {}

  private alloc(n: number): BigKeys {
    return this.domain.unsigned ? new BigUint64Array(n) : new BigInt64Array(n);
  }

  build(data: Data, first: number): Run<BigKeys> | undefined {
    const n = data.length;
    const values = data.values as BigKeys;
    const valid = validBytes(data);
    let m = 0;
    const rows = new Uint32Array(n);
    for (let i = 0; i < n; i++) if (!valid || valid[i]) rows[m++] = i;
    if (m === 0) return undefined;
    const keys = this.alloc(m);
    const pos = new Uint32Array(m);
    let min = values[rows[0]];
    let max = min;
    let sorted = true;
    for (let k = 1; k < m; k++) {
      const v = values[rows[k]];
      if (v < max) sorted = false;
      else max = v;
      if (v < min) min = v;
    }
    if (sorted) {
      for (let k = 0; k < m; k++) {
        keys[k] = values[rows[k]];
        pos[k] = first + rows[k];
      }
      return { length: m, keys, pos };
    }
    // Keys within a small span (ids, timestamps of one batch): pack and sort natively.
    const span = max - min + 1n;
    if (span * BigInt(m) <= BigInt(PACK_LIMIT)) {
      const offsets = new Float64Array(m);
      for (let k = 0; k < m; k++) offsets[k] = Number(values[rows[k]] - min);
      const packed = packedSort(offsets, m, Number(span))!;
      for (let i = 0; i < m; i++) {
        const p = packed[i];
        const k = p % m;
        keys[i] = min + BigInt((p - k) / m);
        pos[i] = first + rows[k];
      }
      return { length: m, keys, pos };
    }
    const order = sortOrder(rows.subarray(0, m), (a, b) => (values[a] < values[b] ? -1 : values[a] > values[b] ? 1 : 0));
    for (let i = 0; i < m; i++) {
      keys[i] = values[order[i]];
      pos[i] = first + order[i];
    }
    return { length: m, keys, pos };
  }

  merge(a: Run<BigKeys>, b: Run<BigKeys>): Run<BigKeys> {
    // Compare and copy 64-bit keys as little-endian 32-bit word pairs: no BigInt per element.
    const n = a.length + b.length;
    const keys = this.alloc(n);
    const pos = new Uint32Array(n);
    const out = new Uint32Array(keys.buffer, keys.byteOffset, n * 2);
    const au = new Uint32Array(a.keys.buffer, a.keys.byteOffset, a.length * 2);
    const bu = new Uint32Array(b.keys.buffer, b.keys.byteOffset, b.length * 2);
    const ah = this.domain.unsigned ? au : new Int32Array(a.keys.buffer, a.keys.byteOffset, a.length * 2);
    const bh = this.domain.unsigned ? bu : new Int32Array(b.keys.buffer, b.keys.byteOffset, b.length * 2);
    const ap = a.pos;
    const bp = b.pos;
    let i = 0;
    let j = 0;
    for (let k = 0; k < n; k++) {
      let takeA: boolean;
      if (j >= b.length) takeA = true;
      else if (i >= a.length) takeA = false;
      else {
        const x = ah[2 * i + 1];
        const y = bh[2 * j + 1];
        takeA = x < y || (x === y && au[2 * i] <= bu[2 * j]);
      }
      if (takeA) {
        out[2 * k] = au[2 * i];
        out[2 * k + 1] = au[2 * i + 1];
        pos[k] = ap[i++];
      } else {
        out[2 * k] = bu[2 * j];
        out[2 * k + 1] = bu[2 * j + 1];
        pos[k] = bp[j++];
      }
    }
    return { length: n, keys, pos };
  }

  search(run: Run<BigKeys>, q: bigint, strict: boolean): number {
    const k = run.keys;
    let lo = 0;
    let hi = run.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (strict ? k[mid] <= q : k[mid] < q) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  bound(value: unknown, side: 'eq' | 'lower' | 'upper', inclusive: boolean): Bound<bigint> | undefined {
    const c = toStored(value, this.domain, `scalar index on ${String(this.type)}`, { allowRaw: true });
    return bigQueryBound(c, side, inclusive);
  }

  toData(run: Run<BigKeys>): Data {
    return makeData({ type: this.type as never, length: run.length, nullCount: 0, data: run.keys.slice() as never });
  }

  fromData(chunks: readonly Data[], pos: Uint32Array): Run<BigKeys> {
    const keys = this.alloc(pos.length);
    let at = 0;
    for (const d of chunks) {
      keys.set((d.values as BigKeys).subarray(0, d.length) as never, at);
      at += d.length;
    }
    return { length: pos.length, keys, pos };
  }

  compare(a: Run<BigKeys>, i: number, b: Run<BigKeys>, j: number): number {
    const x = a.keys[i];
    const y = b.keys[j];
    return x < y ? -1 : x > y ? 1 : 0;
  }

  take(run: Run<BigKeys>, rows: Uint32Array, pos: Uint32Array): Run<BigKeys> {
    // Copied as 32-bit word pairs: no BigInt per element.
    const keys = this.alloc(rows.length);
    const out = new Uint32Array(keys.buffer, keys.byteOffset, rows.length * 2);
    const src = new Uint32Array(run.keys.buffer, run.keys.byteOffset, run.length * 2);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      out[2 * i] = src[2 * r];
      out[2 * i + 1] = src[2 * r + 1];
    }
    return { length: rows.length, keys, pos };
  }
}

const encoder = new TextEncoder();

/** Copies src[s, e) to dst at `at`; returns the end. Short keys by hand (subarray costs more). */
function copyBytes(src: Uint8Array, s: number, e: number, dst: Uint8Array, at: number): number {
  const len = e - s;
  if (len < 24) for (let q = 0; q < len; q++) dst[at + q] = src[s + q];
  else dst.set(src.subarray(s, e), at);
  return at + len;
}

class StrCodec implements Codec<StrKeys, Uint8Array> {
  constructor(
    private readonly type: DataType,
    private readonly domain: ColumnDomain,
  ) {}

  build(data: Data, first: number): Run<StrKeys> | undefined {
    const n = data.length;
    const offs = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const valid = validBytes(data);
    let m = 0;
    const rows = new Uint32Array(n);
    for (let i = 0; i < n; i++) if (!valid || valid[i]) rows[m++] = i;
    if (m === 0) return undefined;
    const order = sortOrder(rows.subarray(0, m), (a, b) =>
      compareBytes(bytes, offs[a], offs[a + 1], bytes, offs[b], offs[b + 1]),
    );
    let total = 0;
    for (let i = 0; i < m; i++) total += offs[order[i] + 1] - offs[order[i]];
    const out = new Uint8Array(total);
    const offsets = new Uint32Array(m + 1);
    const pos = new Uint32Array(m);
    let at = 0;
    for (let i = 0; i < m; i++) {
      const r = order[i];
      at = copyBytes(bytes, offs[r], offs[r + 1], out, at);
      offsets[i + 1] = at;
      pos[i] = first + r;
    }
    return { length: m, keys: { bytes: out, offsets }, pos };
  }

  merge(a: Run<StrKeys>, b: Run<StrKeys>): Run<StrKeys> {
    const n = a.length + b.length;
    const A = a.keys;
    const B = b.keys;
    const bytes = new Uint8Array(A.bytes.length + B.bytes.length);
    const offsets = new Uint32Array(n + 1);
    const pos = new Uint32Array(n);
    let i = 0;
    let j = 0;
    let at = 0;
    for (let k = 0; k < n; k++) {
      const takeA =
        j >= b.length ||
        (i < a.length &&
          compareBytes(A.bytes, A.offsets[i], A.offsets[i + 1], B.bytes, B.offsets[j], B.offsets[j + 1]) <= 0);
      const src = takeA ? A : B;
      const r = takeA ? i++ : j++;
      at = copyBytes(src.bytes, src.offsets[r], src.offsets[r + 1], bytes, at);
      offsets[k + 1] = at;
      pos[k] = takeA ? a.pos[r] : b.pos[r];
    }
    return { length: n, keys: { bytes, offsets }, pos };
  }

  search(run: Run<StrKeys>, q: Uint8Array, strict: boolean): number {
    const { bytes, offsets } = run.keys;
    let lo = 0;
    let hi = run.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareBytes(bytes, offsets[mid], offsets[mid + 1], q, 0, q.length);
      if (strict ? c <= 0 : c < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  bound(value: unknown, _side: 'eq' | 'lower' | 'upper', inclusive: boolean): Bound<Uint8Array> | undefined {
    const c = toStored(value, this.domain, `scalar index on ${String(this.type)}`, { allowRaw: true });
    if (c.t !== 'str') return undefined;
    return { key: encoder.encode(c.v), inclusive };
  }

  toData(run: Run<StrKeys>): Data {
    const { bytes, offsets } = run.keys;
    if (bytes.length > 0x7fffffff) throw new InvalidError('scalar index: string keys exceed 2 GiB');
    return makeData({
      type: this.type as never,
      length: run.length,
      nullCount: 0,
      valueOffsets: new Int32Array(offsets),
      data: bytes,
    });
  }

  fromData(chunks: readonly Data[], pos: Uint32Array): Run<StrKeys> {
    let total = 0;
    for (const d of chunks) {
      const o = d.valueOffsets as Int32Array;
      total += o[d.length] - o[0];
    }
    const bytes = new Uint8Array(total);
    const offsets = new Uint32Array(pos.length + 1);
    let row = 0;
    let at = 0;
    for (const d of chunks) {
      const o = d.valueOffsets as Int32Array;
      const src = d.values as Uint8Array;
      bytes.set(src.subarray(o[0], o[d.length]), at);
      for (let i = 0; i < d.length; i++) offsets[row + i + 1] = at + o[i + 1] - o[0];
      at += o[d.length] - o[0];
      row += d.length;
    }
    return { length: pos.length, keys: { bytes, offsets }, pos };
  }

  compare(a: Run<StrKeys>, i: number, b: Run<StrKeys>, j: number): number {
    return compareBytes(a.keys.bytes, a.keys.offsets[i], a.keys.offsets[i + 1], b.keys.bytes, b.keys.offsets[j], b.keys.offsets[j + 1]);
  }

  take(run: Run<StrKeys>, rows: Uint32Array, pos: Uint32Array): Run<StrKeys> {
    const { bytes: src, offsets: so } = run.keys;
    let total = 0;
    for (let i = 0; i < rows.length; i++) total += so[rows[i] + 1] - so[rows[i]];
    const bytes = new Uint8Array(total);
    const offsets = new Uint32Array(rows.length + 1);
    let at = 0;
    for (let i = 0; i < rows.length; i++) {
      at = copyBytes(src, so[rows[i]], so[rows[i] + 1], bytes, at);
      offsets[i + 1] = at;
    }
    return { length: rows.length, keys: { bytes, offsets }, pos };
  }
}

type AnyCodec = Codec<unknown, unknown>;

function codecFor(type: DataType): AnyCodec {
  const domain = domainOf(type);
  if (!domain || type.typeId === Type.Dictionary)
    throw new InvalidError(
      `a scalar index cannot be built on ${String(type)} (supported: integers, floats, strings, booleans, dates, timestamps)`,
    );
  const codec =
    domain.storage === 'number'
      ? new NumCodec(type, domain)
      : domain.storage === 'bigint'
        ? new BigCodec(type, domain)
        : new StrCodec(type, domain);
  return codec as unknown as AnyCodec;
}

// ---------------------------------------------------------------------------------------------

export class ScalarIndex {
  private readonly codec: AnyCodec;
  private runs: Run<unknown>[] = [];
  /** Positions below this have been added; the next add must start at or after it. */
  private nextPosition = 0;
  private entries = 0;

  constructor(readonly type: DataType) {
    this.codec = codecFor(type);
  }

  /** Indexed (non-null, non-NaN) rows. */
  get size(): number {
    return this.entries;
  }

  /** Sorted runs currently held (at most log2(size) + 1). */
  get runCount(): number {
    return this.runs.length;
  }

  /**
   * Indexes the rows of `data` at positions firstPosition, firstPosition + 1, …. Calls must come
   * in increasing position order (gaps allowed). NULLs and NaNs are skipped.
   */
  add(firstPosition: number, data: Data): void {
    checkPositions(firstPosition, data.length);
    if (firstPosition < this.nextPosition)
      throw new InvalidError(
        `scalar index: rows must be added in increasing position order (got ${firstPosition}, expected >= ${this.nextPosition})`,
      );
    if (!sameKeyType(data.type, this.type))
      throw new InvalidError(`scalar index on ${String(this.type)} cannot add ${String(data.type)} data`);
    this.nextPosition = firstPosition + data.length;
    const run = this.codec.build(data, firstPosition);
    if (!run) return;
    this.entries += run.length;
    this.runs.push(run);
    // Keep sizes[i] > 2 · sizes[i + 1]: geometric sizes, so O(log n) runs and merges per row.
    while (this.runs.length >= 2 && this.runs[this.runs.length - 2].length <= 2 * this.runs[this.runs.length - 1].length) {
      const b = this.runs.pop()!;
      const a = this.runs.pop()!;
      this.runs.push(this.codec.merge(a, b));
    }
  }

  /**
   * Positions of rows matching `pred`, ascending, each once. `maxPosition` (exclusive) hides rows
   * at or beyond it (a snapshot's visibility watermark).
   */
  lookup(pred: ScalarPredicate, maxPosition = Infinity): Uint32Array {
    const intervals = this.intervals(pred);
    if (intervals.length === 0 || this.runs.length === 0 || maxPosition <= 0) return new Uint32Array(0);
    const parts: Uint32Array[] = [];
    let total = 0;
    for (const run of this.runs) {
      if (run.pos.length === 0) continue;
      for (const [lo, hi] of intervals) {
        const start = lo ? this.codec.search(run, lo.key, !lo.inclusive) : 0;
        const end = hi ? this.codec.search(run, hi.key, hi.inclusive) : run.length;
        if (start >= end) continue;
        let slice = run.pos.subarray(start, end);
        if (maxPosition !== Infinity) slice = visible(slice, maxPosition);
        if (slice.length === 0) continue;
        parts.push(slice);
        total += slice.length;
      }
    }
    const out = new Uint32Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    // One equality interval comes out sorted already: ties are in position order within a run
    // and runs are in position order.
    if (pred.op === 'eq') return out;
    out.sort();
    return pred.op === 'in' ? unique(out) : out;
  }

  private intervals(pred: ScalarPredicate): [Bound<unknown> | undefined, Bound<unknown> | undefined][] {
    const codec = this.codec;
    switch (pred.op) {
      case 'eq': {
        const b = codec.bound(pred.value, 'eq', true);
        return b ? [[b, b]] : [];
      }
      case 'in': {
        if (!Array.isArray(pred.values)) throw new InvalidError('scalar index: an IN lookup needs an array of values');
        const out: [Bound<unknown>, Bound<unknown>][] = [];
        for (const v of pred.values) {
          const b = codec.bound(v, 'eq', true);
          if (b) out.push([b, b]);
        }
        return out;
      }
      case 'range': {
        const isNullish = (b?: ScalarBound) => b !== undefined && (b.value === null || b.value === undefined);
        if (isNullish(pred.lower) || isNullish(pred.upper)) return [];
        const lo = pred.lower ? codec.bound(pred.lower.value, 'lower', pred.lower.inclusive !== false) : undefined;
        const hi = pred.upper ? codec.bound(pred.upper.value, 'upper', pred.upper.inclusive !== false) : undefined;
        if ((pred.lower && !lo) || (pred.upper && !hi)) return [];
        return [[lo, hi]];
      }
      default:
        throw new InvalidError(`scalar index: unknown lookup op ${(pred as { op: unknown }).op}`);
    }
  }

  /**
   * A new index over a subset of the rows under new positions, without re-sorting:
   * `newPosition[old]` is the new position of the row at position `old`, or −1 to drop it (rows
   * at or past `newPosition.length` are dropped too). The map must keep the order of positions
   * (a flush's dedup does), so every run stays sorted by (key, position) and runs stay in
   * position order; the result answers every lookup, and writes the same sidecar, as an index
   * built from the kept rows at their new positions. Its next `add` must start past the largest
   * new position.
   */
  remapped(newPosition: Int32Array): ScalarIndex {
    return runSteps(this.remappedSteps(newPosition));
  }

  /**
   * `remapped` in steps: the generator pauses after each run is taken and after each merge, so
   * a flush gives the event loop turns between them (done at once, 200 000 rows held a flush's
   * loop 30–60 ms). This index is only read; the new one is not seen until it is returned.
   */
  *remappedSteps(newPosition: Int32Array): Generator<void, ScalarIndex, void> {
    const out = new ScalarIndex(this.type);
    const limit = newPosition.length;
    let last = -1;
    for (let i = 0; i < limit; i++) {
      const j = newPosition[i];
      if (j < 0) continue;
      if (j <= last) throw new InvalidError(`ScalarIndex.remapped: the position map must keep row order (position ${i} maps to ${j} after ${last})`);
      last = j;
    }
    for (const run of this.runs) {
      const rows = new Uint32Array(run.length);
      const pos = new Uint32Array(run.length);
      let m = 0;
      for (let i = 0; i < run.length; i++) {
        const old = run.pos[i];
        const j = old < limit ? newPosition[old] : -1;
        if (j < 0) continue;
        rows[m] = i;
        pos[m++] = j;
      }
      if (m === 0) continue;
      out.runs.push(this.codec.take(run, rows.subarray(0, m), pos.slice(0, m)));
      out.entries += m;
      yield;
      // The same geometric run sizes as `add` keeps.
      while (out.runs.length >= 2 && out.runs[out.runs.length - 2].length <= 2 * out.runs[out.runs.length - 1].length) {
        const b = out.runs.pop()!;
        const a = out.runs.pop()!;
        out.runs.push(this.codec.merge(a, b));
        yield;
      }
    }
    out.nextPosition = last + 1;
    return out;
  }

  /**
   * Merges all runs into one (kept, so later lookups search a single run), pausing after each
   * merge; a reader between steps sees the runs before or after a merge, never half of one.
   */
  private *compactSteps(): Generator<void, Run<unknown> | undefined, void> {
    while (this.runs.length > 1) {
      const b = this.runs.pop()!;
      const a = this.runs.pop()!;
      this.runs.push(this.codec.merge(a, b));
      if (this.runs.length > 1) yield;
    }
    return this.runs[0];
  }

  /** The sidecar: every (value, position) pair sorted by value then position. */
  toArrow(): Table {
    return runSteps(this.toArrowSteps());
  }

  /** `toArrow` in steps (its runs merged one merge a step, see `compactSteps`). */
  *toArrowSteps(): Generator<void, Table, void> {
    const schema = sidecarSchema(this.type);
    const run = yield* this.compactSteps();
    const length = run?.length ?? 0;
    const value = run ? this.codec.toData(run) : emptyData(this.type);
    const position = makeData({ type: new Uint32(), length, nullCount: 0, data: run ? run.pos.slice() : new Uint32Array(0) });
    const batch = new RecordBatch(
      schema,
      makeData({ type: new Struct(schema.fields), length, nullCount: 0, children: [value, position] }),
    );
    return new Table(schema, [batch]);
  }

  /** Rebuilds an index from `toArrow()` output (possibly after an IPC round trip). */
  static fromArrow(type: DataType, table: Table): ScalarIndex {
    const index = new ScalarIndex(type);
    const valueField = table.schema.fields.find((f) => f.name === 'value');
    const posField = table.schema.fields.find((f) => f.name === 'position');
    if (!valueField || !posField) throw new DataError('scalar index sidecar: expected columns "value" and "position"');
    if (!sameKeyType(valueField.type, type))
      throw new DataError(`scalar index sidecar holds ${String(valueField.type)} keys, expected ${String(type)}`);
    if (posField.type.typeId !== Type.Int || (posField.type as Uint32).bitWidth !== 32 || (posField.type as Uint32).isSigned)
      throw new DataError('scalar index sidecar: "position" must be Uint32');
    const valueChunks: Data[] = [];
    const pos = new Uint32Array(table.numRows);
    let at = 0;
    for (const batch of table.batches) {
      const v = batch.getChild('value')!.data[0] as Data;
      const p = batch.getChild('position')!.data[0] as Data;
      if (v.nullCount > 0 || p.nullCount > 0) throw new DataError('scalar index sidecar: nulls are not allowed');
      if (batch.numRows === 0) continue;
      valueChunks.push(v);
      pos.set((p.values as Uint32Array).subarray(0, batch.numRows), at);
      at += batch.numRows;
    }
    if (at === 0) return index;
    const run = index.codec.fromData(valueChunks, pos);
    for (let i = 1; i < run.length; i++) {
      const c = index.codec.compare(run, i - 1, run, i);
      if (c > 0 || (c === 0 && pos[i - 1] >= pos[i]))
        throw new DataError(`scalar index sidecar is not sorted by (value, position) at row ${i}`);
    }
    index.runs = [run];
    index.entries = run.length;
    let max = 0;
    for (let i = 0; i < pos.length; i++) if (pos[i] > max) max = pos[i];
    index.nextPosition = max + 1;
    return index;
  }
}

/** Same physical key type: type id, width, signedness, precision, unit (time zones may differ). */
function sameKeyType(a: DataType, b: DataType): boolean {
  if (a.typeId !== b.typeId) return false;
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  return ['bitWidth', 'isSigned', 'precision', 'unit'].every((k) => x[k] === y[k]);
}

function sidecarSchema(type: DataType): Schema {
  return new Schema(
    [new Field('value', type, false), new Field('position', new Uint32(), false)],
    new Map(Object.entries(SCALAR_INDEX_METADATA)),
  );
}

function emptyData(type: DataType): Data {
  switch (type.typeId) {
    case Type.Utf8:
      return makeData({ type: type as never, length: 0, nullCount: 0, valueOffsets: new Int32Array(1), data: new Uint8Array(0) });
    case Type.Bool:
      return makeData({ type: type as Bool, length: 0, nullCount: 0, data: new Uint8Array(0) });
    default: {
      const ArrayType = (type as unknown as { ArrayType: new (n: number) => ArrayLike<number> }).ArrayType;
      return makeData({ type: type as never, length: 0, nullCount: 0, data: new ArrayType(0) as never });
    }
  }
}

/** The prefix-free filter `p < maxPosition` (positions within a key range are unordered). */
function visible(slice: Uint32Array, maxPosition: number): Uint32Array {
  let n = 0;
  for (let i = 0; i < slice.length; i++) if (slice[i] < maxPosition) n++;
  if (n === slice.length) return slice;
  const out = new Uint32Array(n);
  let k = 0;
  for (let i = 0; i < slice.length; i++) if (slice[i] < maxPosition) out[k++] = slice[i];
  return out;
}

function unique(sorted: Uint32Array): Uint32Array {
  if (sorted.length < 2) return sorted;
  let k = 1;
  for (let i = 1; i < sorted.length; i++) if (sorted[i] !== sorted[k - 1]) sorted[k++] = sorted[i];
  return k === sorted.length ? sorted : sorted.slice(0, k);
}
