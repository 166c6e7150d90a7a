/**
 * Sort keys as typed arrays, and the row comparator SortExec and TopKExec share.
 *
 * A key column is built once over the rows of several sources (batches), numbered one after
 * another, so the comparator reads two numbers per key instead of two Arrow cells: every
 * number-like type (ints, floats, dates, timestamps, booleans) becomes a Float64Array; 64-bit
 * integers that leave ±2^53 become two (high word, low word); strings become a 48-bit prefix
 * plus their byte spans, compared byte-wise (UTF-8 byte order is code-point order: PostgreSQL's
 * "C" collation) only when the prefixes tie.
 *
 * Ordering is PostgreSQL's: NULLs last ascending and first descending unless `nullsFirst` says
 * otherwise; NaN above every number; -0 equals 0. A descending key is stored negated, so the
 * comparator never branches on direction for numbers. Rows that tie on every key compare by
 * row number, which makes every sort stable and every top-k pick the earliest rows.
 */
import { type Data, Type } from 'apache-arrow';
import { compareBytes, isStringData, stringSpans } from './utf8-spans.js';

export interface SortKeySpec {
  /** Column index in the input schema. */
  readonly column: number;
  readonly descending: boolean;
  /** Where NULLs go; by default last ascending, first descending (PostgreSQL). */
  readonly nullsFirst?: boolean;
}

/** Row classes, in comparison order: only keys with NULLs or NaNs carry them. */
const NULL_FIRST = 0;
const NAN_FIRST = 1;
const VALUE = 2;
const NAN_LAST = 3;
const NULL_LAST = 4;

/** One key over rows 0..n-1 of the concatenated sources. */
export interface KeyColumn {
  /** Row class (NULL / NaN / value), present only when the key has NULLs or NaNs. */
  readonly cls?: Uint8Array;
  /** The value (negated when descending); 0 for rows whose class is not VALUE. */
  readonly v: Float64Array;
  /** Low 32 bits (negated when descending) when `v` holds the high 32 bits of wide 64-bit ints. */
  readonly v2?: Float64Array;
  /** Strings: `v` is a 6-byte prefix, ties are settled on bytes[starts[r]..ends[r]). */
  readonly bytes?: Uint8Array;
  readonly starts?: Int32Array;
  readonly ends?: Int32Array;
  /** 1 ascending, -1 descending (applied to byte comparisons only). */
  readonly dir: 1 | -1;
}

/** Whether a column of this type can be a sort key. */
export function isSortableType(type: { typeId: Type }): boolean {
  switch (type.typeId) {
    case Type.Int:
    case Type.Float:
    case Type.Bool:
    case Type.Date:
    case Type.Timestamp:
    case Type.Time:
    case Type.Duration:
    case Type.Utf8:
      return true;
    default:
      return isStringData(type);
  }
}

function hasNulls(d: Data): boolean {
  return d.nullCount > 0 && d.nullBitmap != null && d.nullBitmap.length > 0;
}

/** Builds one key over `columns` (the key column of each source, in row-number order). */
export function buildKeyColumn(columns: readonly Data[], spec: SortKeySpec): KeyColumn {
  let n = 0;
  for (const d of columns) n += d.length;
  const desc = spec.descending;
  const nullsFirst = spec.nullsFirst ?? desc;
  const nullCls = nullsFirst ? NULL_FIRST : NULL_LAST;
  const nanCls = desc ? NAN_FIRST : NAN_LAST;
  const type = columns.length > 0 ? columns[0].type : undefined;
  const v = new Float64Array(n);
  let cls: Uint8Array | undefined;
  const ensureCls = () => (cls ??= new Uint8Array(n).fill(VALUE));

  if (type && isStringData(type)) return buildStringKey(columns, n, desc, nullCls);

  let v2: Float64Array | undefined;
  // 64-bit integers: exact as one double when every high word is within ±2^21.
  const wide = columns.some((d) => d.values instanceof BigInt64Array || d.values instanceof BigUint64Array);
  let split = false;
  if (wide) {
    for (const d of columns) {
      const vals = d.values as BigInt64Array | BigUint64Array;
      const words = new Int32Array(vals.buffer, vals.byteOffset, d.length * 2);
      const unsigned = vals instanceof BigUint64Array;
      for (let i = 0; i < d.length; i++) {
        const hi = words[2 * i + 1];
        if (unsigned ? hi < 0 || hi >= 1 << 21 : hi >= 1 << 21 || hi < -(1 << 21)) {
          split = true;
          break;
        }
      }
      if (split) break;
    }
    if (split) v2 = new Float64Array(n);
  }

  let base = 0;
  for (const d of columns) {
    const len = d.length;
    if (!isSortableType(d.type)) throw new Error(`cannot sort by a column of type ${String(d.type)}`);
    const vals = d.values as unknown;
    if (d.typeId === Type.Bool) {
      const bits = vals as Uint8Array;
      for (let i = 0; i < len; i++) {
        const bit = d.offset + i;
        v[base + i] = (bits[bit >> 3] >> (bit & 7)) & 1;
      }
    } else if (vals instanceof BigInt64Array || vals instanceof BigUint64Array) {
      const words = new Int32Array(vals.buffer, vals.byteOffset, len * 2);
      const unsigned = vals instanceof BigUint64Array;
      for (let i = 0; i < len; i++) {
        const lo = words[2 * i] >>> 0;
        const hi = unsigned ? words[2 * i + 1] >>> 0 : words[2 * i + 1];
        if (v2) {
          v[base + i] = hi;
          v2[base + i] = lo;
        } else v[base + i] = hi * 4294967296 + lo;
      }
    } else {
      const nums = vals as ArrayLike<number>;
      const isFloat = d.typeId === Type.Float;
      for (let i = 0; i < len; i++) {
        const x = nums[i];
        if (isFloat && x !== x) {
          ensureCls()[base + i] = nanCls;
          v[base + i] = 0;
        } else v[base + i] = x;
      }
    }
    if (hasNulls(d)) {
      const c = ensureCls();
      const bitmap = d.nullBitmap as Uint8Array;
      for (let i = 0; i < len; i++) {
        const bit = d.offset + i;
        if ((bitmap[bit >> 3] & (1 << (bit & 7))) === 0) {
          c[base + i] = nullCls;
          v[base + i] = 0;
          if (v2) v2[base + i] = 0;
        }
      }
    }
    base += len;
  }
  if (desc) {
    for (let i = 0; i < n; i++) v[i] = -v[i];
    if (v2) for (let i = 0; i < n; i++) v2[i] = -v2[i];
  }
  return { cls, v, v2, dir: desc ? -1 : 1 };
}

function buildStringKey(columns: readonly Data[], n: number, desc: boolean, nullCls: number): KeyColumn {
  // One byte buffer for all sources: the used range of each Utf8 column, each dictionary once.
  const parts: { bytes: Uint8Array; shift: number }[] = [];
  const placed = new Map<Uint8Array, number>();
  let total = 0;
  const spans = columns.map((d) => stringSpans(d));
  for (const s of spans) {
    if (placed.has(s.bytes)) continue;
    placed.set(s.bytes, total);
    parts.push({ bytes: s.bytes, shift: total });
    total += s.bytes.length;
  }
  // Utf8 columns usually own their buffer; copying whole buffers keeps offsets valid unshifted.
  const bytes = parts.length === 1 ? parts[0].bytes : new Uint8Array(total);
  if (parts.length > 1) for (const p of parts) bytes.set(p.bytes, p.shift);
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  const v = new Float64Array(n);
  let cls: Uint8Array | undefined;
  let base = 0;
  columns.forEach((d, c) => {
    const { offsets, indices } = spans[c];
    const shift = placed.get(spans[c].bytes) as number;
    for (let i = 0; i < d.length; i++) {
      const j = indices ? indices[i] : i;
      const s = offsets[j] + shift;
      const e = offsets[j + 1] + shift;
      starts[base + i] = s;
      ends[base + i] = e;
      let p = 0;
      for (let k = 0; k < 6; k++) p = p * 256 + (s + k < e ? bytes[s + k] : 0);
      v[base + i] = desc ? -p : p;
    }
    if (hasNulls(d)) {
      cls ??= new Uint8Array(n).fill(VALUE);
      const bitmap = d.nullBitmap as Uint8Array;
      for (let i = 0; i < d.length; i++) {
        const bit = d.offset + i;
        if ((bitmap[bit >> 3] & (1 << (bit & 7))) === 0) {
          cls[base + i] = nullCls;
          v[base + i] = 0;
          starts[base + i] = ends[base + i] = 0;
        }
      }
    }
    base += d.length;
  });
  return { cls, v, bytes, starts, ends, dir: desc ? -1 : 1 };
}

/** Compares rows a and b on one key: negative when a sorts first. Ignores row numbers. */
export function compareOnKey(k: KeyColumn, a: number, b: number): number {
  const cls = k.cls;
  if (cls !== undefined) {
    const ca = cls[a];
    const cb = cls[b];
    if (ca !== cb) return ca - cb;
    if (ca !== VALUE) return 0;
  }
  const va = k.v[a];
  const vb = k.v[b];
  if (va !== vb) return va < vb ? -1 : 1;
  const v2 = k.v2;
  if (v2 !== undefined) {
    const wa = v2[a];
    const wb = v2[b];
    if (wa !== wb) return wa < wb ? -1 : 1;
  }
  const bytes = k.bytes;
  if (bytes !== undefined) {
    const s = k.starts as Int32Array;
    const e = k.ends as Int32Array;
    const r = compareBytes(bytes, s[a], e[a], bytes, s[b], e[b]);
    return r === 0 ? 0 : r < 0 ? -k.dir : k.dir;
  }
  return 0;
}

/** Compares rows on every key, then by row number (stability). Negative when a sorts first. */
export function rowComparator(keys: readonly KeyColumn[]): (a: number, b: number) => number {
  if (keys.length === 1) {
    const k = keys[0];
    const v = k.v;
    // One plain number key: the difference decides (Inf - Inf is NaN, which falls through to the tie).
    if (k.cls === undefined && k.v2 === undefined && k.bytes === undefined) return (a, b) => v[a] - v[b] || a - b;
    return (a, b) => compareOnKey(k, a, b) || a - b;
  }
  const m = keys.length;
  return (a, b) => {
    for (let i = 0; i < m; i++) {
      const r = compareOnKey(keys[i], a, b);
      if (r !== 0) return r;
    }
    return a - b;
  };
}

/** Below this many rows a comparison sort beats the radix passes' fixed cost. */
const RADIX_MIN_ROWS = 2048;
/** Digit width: 11 bits (2048 counters) stays in L1/L2; three passes per 32-bit word. */
const RADIX_BITS = 11;

/**
 * Row numbers 0..n-1 in sorted order (stable). Keys without strings are radix-sorted (LSD,
 * 11-bit digits over each double's order-preserving bit pattern, least significant key first;
 * digits where every row agrees are skipped), which is several times faster than a comparator
 * sort in V8; string keys use the comparator.
 */
export function sortedRowIndices(keys: readonly KeyColumn[], n: number): Uint32Array {
  const idx = new Uint32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  if (keys.length === 0 || n < 2) return idx;
  if (n >= RADIX_MIN_ROWS && keys.every((k) => k.bytes === undefined)) return radixSortRows(keys, idx);
  return idx.sort(rowComparator(keys));
}

function radixSortRows(keys: readonly KeyColumn[], start: Uint32Array): Uint32Array {
  const n = start.length;
  // Row numbers move together with the key words they are sorted by, so every pass reads
  // sequentially (reading digits through the row numbers is several times slower: cache misses).
  // The arrays are plain locals swapped here, not captured by a closure: V8 keeps captured,
  // reassigned variables in a heap context, which made every pass about twice as slow.
  let idx: Uint32Array = start;
  let idxTmp: Uint32Array = new Uint32Array(n);
  let lo: Uint32Array = new Uint32Array(n);
  let hi: Uint32Array = new Uint32Array(n);
  let loTmp: Uint32Array = new Uint32Array(n);
  let hiTmp: Uint32Array = new Uint32Array(n);
  const count = new Uint32Array(1 << RADIX_BITS);
  const mask = (1 << RADIX_BITS) - 1;
  let t: Uint32Array;
  for (let ki = keys.length - 1; ki >= 0; ki--) {
    const k = keys[ki];
    for (const arr of k.v2 ? [k.v2, k.v] : [k.v]) {
      orderedBits(arr, idx, lo, hi, n);
      // Low word first, carrying the high word along; then the high word alone.
      for (let shift = 0; shift < 32; shift += RADIX_BITS) {
        if (!radixPass(lo, loTmp, idx, idxTmp, hi, hiTmp, count, shift, mask, n)) continue;
        t = idx;
        idx = idxTmp;
        idxTmp = t;
        t = lo;
        lo = loTmp;
        loTmp = t;
        t = hi;
        hi = hiTmp;
        hiTmp = t;
      }
      for (let shift = 0; shift < 32; shift += RADIX_BITS) {
        if (!radixPass(hi, hiTmp, idx, idxTmp, undefined, undefined, count, shift, mask, n)) continue;
        t = idx;
        idx = idxTmp;
        idxTmp = t;
        t = hi;
        hi = hiTmp;
        hiTmp = t;
      }
    }
    if (k.cls) {
      const cls = k.cls;
      for (let i = 0; i < n; i++) lo[i] = cls[idx[i]];
      if (radixPass(lo, loTmp, idx, idxTmp, undefined, undefined, count, 0, 0xff, n)) {
        t = idx;
        idx = idxTmp;
        idxTmp = t;
      }
    }
  }
  return idx;
}

/**
 * Order-preserving bits of each double of `arr` (-0 as 0) in the row order `idx`: all bits of
 * negatives flipped, the sign bit of the rest set; high word into `hi`, low word into `lo`.
 */
function orderedBits(arr: Float64Array, idx: Uint32Array, lo: Uint32Array, hi: Uint32Array, n: number): void {
  const w = new Uint32Array(arr.buffer, arr.byteOffset, 2 * arr.length);
  for (let i = 0; i < n; i++) {
    const r = idx[i];
    let h = w[2 * r + 1];
    let l = w[2 * r];
    if (h >= 0x80000000) {
      if (h === 0x80000000 && l === 0) h = 0x80000000; // -0 sorts as 0
      else {
        h = ~h;
        l = ~l;
      }
    } else h |= 0x80000000;
    hi[i] = h;
    lo[i] = l;
  }
}

/**
 * One stable counting pass on digit (digits >>> shift) & mask: rows go from (idx, digits, other)
 * to (idxTmp, digitsTmp, otherTmp). Returns false, moving nothing, when every row has the same digit.
 */
function radixPass(
  digits: Uint32Array,
  digitsTmp: Uint32Array,
  idx: Uint32Array,
  idxTmp: Uint32Array,
  other: Uint32Array | undefined,
  otherTmp: Uint32Array | undefined,
  count: Uint32Array,
  shift: number,
  mask: number,
  n: number,
): boolean {
  count.fill(0, 0, mask + 1);
  for (let i = 0; i < n; i++) count[(digits[i] >>> shift) & mask]++;
  if (count[(digits[0] >>> shift) & mask] === n) return false;
  let sum = 0;
  for (let d = 0; d <= mask; d++) {
    const c = count[d];
    count[d] = sum;
    sum += c;
  }
  if (other && otherTmp) {
    for (let i = 0; i < n; i++) {
      const x = digits[i];
      const p = count[(x >>> shift) & mask]++;
      idxTmp[p] = idx[i];
      digitsTmp[p] = x;
      otherTmp[p] = other[i];
    }
  } else {
    for (let i = 0; i < n; i++) {
      const x = digits[i];
      const p = count[(x >>> shift) & mask]++;
      idxTmp[p] = idx[i];
      digitsTmp[p] = x;
    }
  }
  return true;
}

/** Bytes held by a key column's arrays (for memory budgets). */
export function keyColumnBytes(k: KeyColumn): number {
  return k.v.byteLength + (k.cls?.byteLength ?? 0) + (k.v2?.byteLength ?? 0) + (k.starts?.byteLength ?? 0) + (k.ends?.byteLength ?? 0);
}

/**
 * The first `want` entries of `sortedRowIndices(keys, n)` (same rows, same order), without
 * sorting all n rows when the first key is a plain number key (no NULL, NaN, wide or string
 * parts) and n is well above `want`: the `want`-th smallest first-key value is found by
 * selection, only rows at or below it (a superset of the answer, every tie included) are
 * sorted. Top-k's compactions use it; the first one otherwise sorts a whole input batch.
 */
export function topRowIndices(keys: readonly KeyColumn[], n: number, want: number): Uint32Array {
  const k0 = keys[0];
  if (want <= 0) return new Uint32Array(0);
  if (keys.length === 0 || n < 4 * want || n < 256 || k0.cls || k0.v2 || k0.bytes) return sortedRowIndices(keys, n).subarray(0, Math.min(n, want));
  const v = k0.v;
  const t = kthSmallest(v.slice(0, n), want - 1);
  let m = 0;
  for (let r = 0; r < n; r++) if (v[r] <= t) m++;
  const cand = new Uint32Array(m);
  m = 0;
  for (let r = 0; r < n; r++) if (v[r] <= t) cand[m++] = r;
  const sub = keys.map((k) => subsetKey(k, cand));
  const order = sortedRowIndices(sub, m).subarray(0, want);
  for (let i = 0; i < order.length; i++) order[i] = cand[order[i]];
  return order;
}

/** The key restricted to rows `rows` (renumbered 0..rows.length-1). */
function subsetKey(k: KeyColumn, rows: Uint32Array): KeyColumn {
  const pick = <T extends Float64Array | Uint8Array | Int32Array>(a: T | undefined): T | undefined => {
    if (!a) return undefined;
    const out = new (a.constructor as new (n: number) => T)(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = a[rows[i]];
    return out;
  };
  return { cls: pick(k.cls), v: pick(k.v) as Float64Array, v2: pick(k.v2), bytes: k.bytes, starts: pick(k.starts), ends: pick(k.ends), dir: k.dir };
}

/** The value of rank `k` (0-based) of `a` (no NaN), reordering `a` (quickselect, Hoare partition). */
export function kthSmallest(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    // Median of three as the pivot.
    const mid = (lo + hi) >>> 1;
    const x = a[lo];
    const y = a[mid];
    const z = a[hi];
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const tmp = a[i];
        a[i] = a[j];
        a[j] = tmp;
        i++;
        j--;
      }
    }
    // [lo, j] ≤ pivot ≤ [i, hi]; between them, values equal to the pivot.
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}
