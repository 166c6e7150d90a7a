/**
 * Per-group aggregate state for HashAggregateExec: count, sum, avg, min, max, updated a batch at
 * a time from Arrow typed arrays and a group id per row.
 *
 * SQL semantics (PostgreSQL's): NULL inputs are ignored; sum/avg/min/max of no non-NULL input is
 * NULL and count is 0. Integer sums are exact: narrow integers add into a double that is spilled
 * into a BigInt before it can leave ±2^53, 64-bit integers add their low and high 32-bit words
 * separately (carried the same way), so no BigInt is made per row; a final sum outside the Int64
 * range is `InvalidError('bigint out of range')`, as PostgreSQL reports it. Float sums are plain
 * doubles. min/max order like ORDER BY: NaN above every number; strings by UTF-8 bytes.
 */
import { Bool, type Data, type DataType, Float64, Int64, makeData, Type, Utf8 } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { wordsToValues } from './hash-keys.js';
import { compareBytes, isStringData, stringSpans } from './utf8-spans.js';

export type AggregateFn = 'count' | 'count_star' | 'sum' | 'avg' | 'min' | 'max';

export interface GroupAccumulator {
  /** Makes room for groups 0..groups-1. */
  resize(groups: number): void;
  /**
   * Adds rows 0..n-1 of `column` (undefined for count(*)) to groups `gids[i]`; with `use`, only
   * rows where use[i] === 1.
   */
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array): void;
  /** The result column for groups 0..groups-1. */
  finish(groups: number): Data;
  readonly byteLength: number;
}

const TWO32 = 4294967296;
/** Sums stay below this in magnitude, so every double in them is an exact integer. */
const EXACT = 2 ** 53;
/** Normalizing spills a group's high word into BigInt from this magnitude. */
const HI_SPILL = 2 ** 51;
/** Rows added between bound checks: ≤ 2^20 rows of < 2^32 each add < 2^52. */
const CHUNK_ROWS = 1 << 20;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function isIntType(t: DataType): boolean {
  return t.typeId === Type.Int;
}
/** 64-bit integer-like (ints, dates, timestamps, times, durations); Float64 is not. */
function isWide(t: DataType): boolean {
  return t.typeId !== Type.Float && (t as unknown as { ArrayType: { BYTES_PER_ELEMENT: number } }).ArrayType?.BYTES_PER_ELEMENT === 8;
}

/** The result type of `fn` over an input of `type` (undefined for count(*)); throws InvalidError when unsupported. */
export function aggregateResultType(fn: AggregateFn, type: DataType | undefined): DataType {
  switch (fn) {
    case 'count':
    case 'count_star':
      return new Int64();
    case 'sum':
    case 'avg':
      if (type && (type.typeId === Type.Int || (type.typeId === Type.Float && !isHalf(type)))) return fn === 'sum' && type.typeId === Type.Int ? new Int64() : new Float64();
      break;
    case 'min':
    case 'max':
      if (!type) break;
      if (isStringData(type)) return new Utf8();
      switch (type.typeId) {
        case Type.Int:
        case Type.Bool:
        case Type.Date:
        case Type.Timestamp:
        case Type.Time:
        case Type.Duration:
          return type;
        case Type.Float:
          if (!isHalf(type)) return type;
      }
  }
  throw new InvalidError(`function ${fn}(${type ? String(type) : '*'}) does not exist`);
}

function isHalf(t: DataType): boolean {
  return (t as unknown as { ArrayType: { BYTES_PER_ELEMENT: number } }).ArrayType.BYTES_PER_ELEMENT === 2;
}

export function makeAccumulator(fn: AggregateFn, type: DataType | undefined): GroupAccumulator {
  aggregateResultType(fn, type);
  switch (fn) {
    case 'count':
      return new CountAcc(false);
    case 'count_star':
      return new CountAcc(true);
    case 'sum':
    case 'avg':
      return isIntType(type as DataType) ? new IntSumAcc(fn === 'avg') : new FloatSumAcc(fn === 'avg');
    case 'min':
    case 'max': {
      const t = type as DataType;
      if (isStringData(t)) return new StringMinMaxAcc(fn === 'max');
      if (t.typeId === Type.Bool) return new BoolMinMaxAcc(fn === 'max');
      if (isWide(t)) return new WideMinMaxAcc(fn === 'max', t);
      return new NumberMinMaxAcc(fn === 'max', t);
    }
  }
}

/** Validity of row i of `d`, or undefined when every row is valid. */
function validity(d: Data): ((i: number) => boolean) | undefined {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return undefined;
  const bm = d.nullBitmap;
  const off = d.offset;
  return (i) => (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) !== 0;
}

/** The validity bitmap of `d` (bit offset + i), or undefined when every row is valid. */
function nullBitmapOf(d: Data): Uint8Array | undefined {
  return d.nullCount > 0 && d.nullBitmap && d.nullBitmap.length > 0 ? d.nullBitmap : undefined;
}

function grown<T extends Float64Array | Uint8Array>(a: T, n: number): T {
  if (a.length >= n) return a;
  const next = new (a.constructor as new (n: number) => T)(Math.max(n, a.length * 2, 16));
  next.set(a as never);
  return next;
}

function bitmapFrom(has: Uint8Array, n: number): { nullBitmap?: Uint8Array; nullCount: number } {
  let nullCount = 0;
  const nullBitmap = new Uint8Array((n + 7) >> 3);
  for (let g = 0; g < n; g++) {
    if (has[g]) nullBitmap[g >> 3] |= 1 << (g & 7);
    else nullCount++;
  }
  return nullCount === 0 ? { nullCount } : { nullBitmap, nullCount };
}

/** A 64-bit integer (|v| < 2^53) as two words at g of `words`. */
function putSafeInt(words: Int32Array, g: number, v: number): void {
  const hi = Math.floor(v / TWO32);
  words[2 * g] = v - hi * TWO32;
  words[2 * g + 1] = hi;
}

class CountAcc implements GroupAccumulator {
  private counts = new Float64Array(16);
  /** Set while at most one group exists (resize(≤ 1)): every group id is then 0. */
  private singleGroup = true;
  constructor(private readonly star: boolean) {}
  get byteLength() {
    return this.counts.byteLength;
  }
  resize(groups: number) {
    this.counts = grown(this.counts, groups);
    this.singleGroup = groups <= 1;
  }
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array) {
    const c = this.counts;
    const bm = this.star || !column ? undefined : nullBitmapOf(column);
    if (!bm && !use) {
      // One group (no GROUP BY: every id is 0, the first and last tell): add the rows at once.
      if (n > 0 && gids[0] === 0 && gids[n - 1] === 0 && this.singleGroup) c[0] += n;
      else for (let i = 0; i < n; i++) c[gids[i]]++;
      return;
    }
    const off = column?.offset ?? 0;
    for (let i = 0; i < n; i++) {
      if ((use && !use[i]) || (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0)) continue;
      c[gids[i]]++;
    }
  }
  finish(groups: number): Data {
    const words = new Int32Array(groups * 2);
    for (let g = 0; g < groups; g++) putSafeInt(words, g, this.counts[g]);
    return makeData({ type: new Int64(), length: groups, nullCount: 0, data: new BigInt64Array(words.buffer) });
  }
}

/**
 * Exact integer sum (and avg): spilled + hi·2^32 + lo per group, lo and hi exact doubles.
 *
 * No check per row: the accumulator keeps bounds on every group's |lo| and |hi| and adds a chunk
 * of ≤ 2^20 rows without checks when the bounds say no sum can leave ±2^53 (each row adds less
 * than 2^32 to lo and, for 64-bit inputs, less than 2^32 in magnitude to hi). When a chunk could,
 * every group is first normalized: lo's multiples of 2^32 carry into hi, and a hi past 2^51 goes
 * into an exact BigInt (`spilled`) — so BigInts appear once per group per ~2^21 rows at worst,
 * and never for sums that stay within ±2^53.
 */
class IntSumAcc implements GroupAccumulator {
  private lo = new Float64Array(16);
  private hi = new Float64Array(16);
  private counts = new Float64Array(16);
  private spilled = new Map<number, bigint>();
  /** Upper bounds of |lo[g]| and |hi[g]| over every group. */
  private loBound = 0;
  private hiBound = 0;
  /** Times every group was normalized (tests check the carry path runs). */
  normalizations = 0;
  constructor(private readonly avg: boolean) {}
  get byteLength() {
    return this.lo.byteLength * 3 + this.spilled.size * 32;
  }
  resize(groups: number) {
    this.lo = grown(this.lo, groups);
    this.hi = grown(this.hi, groups);
    this.counts = grown(this.counts, groups);
  }
  private spill(g: number, amount: bigint) {
    this.spilled.set(g, (this.spilled.get(g) ?? 0n) + amount);
  }
  /** Carries lo into hi (lo in [0, 2^32) after) and spills |hi| ≥ 2^51 into BigInt, for every group. */
  private normalize() {
    const { lo, hi } = this;
    let hiBound = 0;
    for (let g = 0; g < lo.length; g++) {
      const l = lo[g];
      const carry = Math.floor(l / TWO32);
      lo[g] = l - carry * TWO32;
      let h = hi[g] + carry;
      if (h >= HI_SPILL || h <= -HI_SPILL) {
        this.spill(g, BigInt(h) << 32n);
        h = 0;
      }
      hi[g] = h;
      const a = Math.abs(h);
      if (a > hiBound) hiBound = a;
    }
    this.loBound = TWO32;
    this.hiBound = hiBound;
    this.normalizations++;
  }
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array) {
    const d = column as Data;
    const vals = d.values as unknown as ArrayLike<number> & ArrayBufferView;
    const wide = vals instanceof BigInt64Array || vals instanceof BigUint64Array;
    const words = wide ? new Int32Array(vals.buffer, vals.byteOffset, n * 2) : undefined;
    const unsigned = vals instanceof BigUint64Array;
    /** Largest |value| a row adds to lo, and to hi. */
    const loStep = wide || vals instanceof Uint32Array ? TWO32 : 2 ** 31;
    const hiStep = wide ? TWO32 : 0;
    const bm = d.nullCount > 0 && d.nullBitmap && d.nullBitmap.length > 0 ? d.nullBitmap : undefined;
    for (let at = 0; at < n; at += CHUNK_ROWS) {
      const end = Math.min(n, at + CHUNK_ROWS);
      const m = end - at;
      if (this.loBound + m * loStep >= EXACT || this.hiBound + m * hiStep >= EXACT) this.normalize();
      this.loBound += m * loStep;
      this.hiBound += m * hiStep;
      const { lo, hi, counts } = this;
      if (words) {
        if (!bm && !use) {
          for (let i = at; i < end; i++) {
            const g = gids[i];
            counts[g]++;
            lo[g] += words[2 * i] >>> 0;
            hi[g] += unsigned ? words[2 * i + 1] >>> 0 : words[2 * i + 1];
          }
        } else {
          const off = d.offset;
          for (let i = at; i < end; i++) {
            if ((use && !use[i]) || (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0)) continue;
            const g = gids[i];
            counts[g]++;
            lo[g] += words[2 * i] >>> 0;
            hi[g] += unsigned ? words[2 * i + 1] >>> 0 : words[2 * i + 1];
          }
        }
      } else if (!bm && !use) {
        for (let i = at; i < end; i++) {
          const g = gids[i];
          counts[g]++;
          lo[g] += vals[i];
        }
      } else {
        const off = d.offset;
        for (let i = at; i < end; i++) {
          if ((use && !use[i]) || (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0)) continue;
          const g = gids[i];
          counts[g]++;
          lo[g] += vals[i];
        }
      }
    }
  }
  finish(groups: number): Data {
    const has = new Uint8Array(groups);
    if (this.avg) {
      const out = new Float64Array(groups);
      for (let g = 0; g < groups; g++) {
        if (this.counts[g] === 0) continue;
        has[g] = 1;
        const sp = this.spilled.get(g);
        const sum = this.hi[g] * TWO32 + this.lo[g];
        out[g] = (sp === undefined && Math.abs(sum) < 2 ** 53 ? sum : Number(this.exact(g))) / this.counts[g];
      }
      return makeData({ type: new Float64(), length: groups, ...bitmapFrom(has, groups), data: out });
    }
    const words = new Int32Array(groups * 2);
    const out = new BigInt64Array(words.buffer);
    for (let g = 0; g < groups; g++) {
      if (this.counts[g] === 0) continue;
      has[g] = 1;
      const sum = this.hi[g] * TWO32 + this.lo[g];
      if (!this.spilled.has(g) && Math.abs(sum) < 2 ** 53) putSafeInt(words, g, sum);
      else {
        const v = this.exact(g);
        if (v < INT64_MIN || v > INT64_MAX) throw new InvalidError('bigint out of range');
        out[g] = v;
      }
    }
    return makeData({ type: new Int64(), length: groups, ...bitmapFrom(has, groups), data: out });
  }
  private exact(g: number): bigint {
    return (this.spilled.get(g) ?? 0n) + (BigInt(this.hi[g]) << 32n) + BigInt(this.lo[g]);
  }
}

class FloatSumAcc implements GroupAccumulator {
  private sums = new Float64Array(16);
  private counts = new Float64Array(16);
  constructor(private readonly avg: boolean) {}
  get byteLength() {
    return this.sums.byteLength * 2;
  }
  resize(groups: number) {
    this.sums = grown(this.sums, groups);
    this.counts = grown(this.counts, groups);
  }
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array) {
    const d = column as Data;
    const bm = nullBitmapOf(d);
    const vals = d.values as unknown as ArrayLike<number>;
    const sums = this.sums;
    const counts = this.counts;
    if (!bm && !use) {
      for (let i = 0; i < n; i++) {
        const g = gids[i];
        sums[g] += vals[i];
        counts[g]++;
      }
      return;
    }
    const off = d.offset;
    for (let i = 0; i < n; i++) {
      if ((use && !use[i]) || (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0)) continue;
      const g = gids[i];
      sums[g] += vals[i];
      counts[g]++;
    }
  }
  finish(groups: number): Data {
    const out = new Float64Array(groups);
    const has = new Uint8Array(groups);
    for (let g = 0; g < groups; g++) {
      if (this.counts[g] === 0) continue;
      has[g] = 1;
      out[g] = this.avg ? this.sums[g] / this.counts[g] : this.sums[g];
    }
    return makeData({ type: new Float64(), length: groups, ...bitmapFrom(has, groups), data: out });
  }
}

/** min/max of ≤ 32-bit numbers and floats (NaN above every number). */
class NumberMinMaxAcc implements GroupAccumulator {
  private best = new Float64Array(16);
  private has = new Uint8Array(16);
  constructor(
    private readonly max: boolean,
    private readonly type: DataType,
  ) {}
  get byteLength() {
    return this.best.byteLength + this.has.byteLength;
  }
  resize(groups: number) {
    this.best = grown(this.best, groups);
    this.has = grown(this.has, groups);
  }
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array) {
    const d = column as Data;
    const bm = nullBitmapOf(d);
    const off = d.offset;
    const vals = d.values as unknown as ArrayLike<number>;
    const best = this.best;
    const has = this.has;
    const max = this.max;
    for (let i = 0; i < n; i++) {
      if ((use && !use[i]) || (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0)) continue;
      const g = gids[i];
      const x = vals[i];
      if (!has[g]) {
        has[g] = 1;
        best[g] = x;
        continue;
      }
      const b = best[g];
      // greater(a, b): a sorts after b (NaN above every number).
      if (max ? (x !== x ? b === b : x > b) : b !== b ? x === x : x < b) best[g] = x;
    }
  }
  finish(groups: number): Data {
    const Ctor = (this.type as unknown as { ArrayType: new (n: number) => { [i: number]: number } }).ArrayType;
    const out = new Ctor(groups);
    for (let g = 0; g < groups; g++) if (this.has[g]) out[g] = this.best[g];
    return makeData({ type: this.type, length: groups, ...bitmapFrom(this.has, groups), data: out } as never);
  }
}

/** min/max of 64-bit integers, dates, timestamps: high word then unsigned low word. */
class WideMinMaxAcc implements GroupAccumulator {
  private hi = new Float64Array(16);
  private lo = new Float64Array(16);
  private has = new Uint8Array(16);
  constructor(
    private readonly max: boolean,
    private readonly type: DataType,
  ) {}
  get byteLength() {
    return this.hi.byteLength * 2 + this.has.byteLength;
  }
  resize(groups: number) {
    this.hi = grown(this.hi, groups);
    this.lo = grown(this.lo, groups);
    this.has = grown(this.has, groups);
  }
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array) {
    const d = column as Data;
    const valid = validity(d);
    const vals = d.values as unknown as BigInt64Array | BigUint64Array;
    const words = new Int32Array(vals.buffer, vals.byteOffset, n * 2);
    const unsigned = vals instanceof BigUint64Array;
    const { hi, lo, has, max } = this;
    for (let i = 0; i < n; i++) {
      if ((use && !use[i]) || (valid && !valid(i))) continue;
      const g = gids[i];
      const h = unsigned ? words[2 * i + 1] >>> 0 : words[2 * i + 1];
      const l = words[2 * i] >>> 0;
      if (!has[g] || (max ? h > hi[g] || (h === hi[g] && l > lo[g]) : h < hi[g] || (h === hi[g] && l < lo[g]))) {
        has[g] = 1;
        hi[g] = h;
        lo[g] = l;
      }
    }
  }
  finish(groups: number): Data {
    const words = new Int32Array(groups * 2);
    for (let g = 0; g < groups; g++) {
      if (!this.has[g]) continue;
      words[2 * g] = this.lo[g];
      words[2 * g + 1] = this.hi[g];
    }
    return makeData({ type: this.type, length: groups, ...bitmapFrom(this.has, groups), data: wordsToValues(this.type, words, groups) } as never);
  }
}

class BoolMinMaxAcc implements GroupAccumulator {
  private best = new Uint8Array(16);
  private has = new Uint8Array(16);
  constructor(private readonly max: boolean) {}
  get byteLength() {
    return this.best.byteLength * 2;
  }
  resize(groups: number) {
    this.best = grown(this.best, groups);
    this.has = grown(this.has, groups);
  }
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array) {
    const d = column as Data;
    const valid = validity(d);
    const bits = d.values as Uint8Array;
    for (let i = 0; i < n; i++) {
      if ((use && !use[i]) || (valid && !valid(i))) continue;
      const g = gids[i];
      const bit = d.offset + i;
      const x = (bits[bit >> 3] >> (bit & 7)) & 1;
      if (!this.has[g]) {
        this.has[g] = 1;
        this.best[g] = x;
      } else this.best[g] = this.max ? this.best[g] | x : this.best[g] & x;
    }
  }
  finish(groups: number): Data {
    const bits = new Uint8Array((groups + 7) >> 3);
    for (let g = 0; g < groups; g++) if (this.best[g]) bits[g >> 3] |= 1 << (g & 7);
    return makeData({ type: new Bool(), length: groups, ...bitmapFrom(this.has, groups), data: bits });
  }
}

/** min/max of strings: the best row's bytes are copied only when it changes. */
class StringMinMaxAcc implements GroupAccumulator {
  private best: (Uint8Array | undefined)[] = [];
  private bytes = 0;
  constructor(private readonly max: boolean) {}
  get byteLength() {
    return this.bytes + this.best.length * 16;
  }
  resize(groups: number) {
    while (this.best.length < groups) this.best.push(undefined);
  }
  update(gids: Int32Array, n: number, column: Data | undefined, use?: Uint8Array) {
    const d = column as Data;
    const valid = validity(d);
    const { bytes, offsets, indices } = stringSpans(d);
    for (let i = 0; i < n; i++) {
      if ((use && !use[i]) || (valid && !valid(i))) continue;
      const g = gids[i];
      const j = indices ? indices[i] : i;
      const s = offsets[j];
      const e = offsets[j + 1];
      const cur = this.best[g];
      if (cur !== undefined) {
        const c = compareBytes(bytes, s, e, cur, 0, cur.length);
        if (this.max ? c <= 0 : c >= 0) continue;
        this.bytes -= cur.length;
      }
      this.best[g] = bytes.slice(s, e);
      this.bytes += e - s;
    }
  }
  finish(groups: number): Data {
    const offsets = new Int32Array(groups + 1);
    const has = new Uint8Array(groups);
    for (let g = 0; g < groups; g++) {
      const b = this.best[g];
      if (b) has[g] = 1;
      offsets[g + 1] = offsets[g] + (b?.length ?? 0);
    }
    const data = new Uint8Array(offsets[groups]);
    for (let g = 0; g < groups; g++) if (this.best[g]) data.set(this.best[g] as Uint8Array, offsets[g]);
    return makeData({ type: new Utf8(), length: groups, ...bitmapFrom(has, groups), valueOffsets: offsets, data });
  }
}
