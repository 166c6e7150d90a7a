/**
 * Top-k's filter against its current k-th row on one numeric key, straight on the column's
 * typed array: which rows sort strictly before the threshold value, and (optionally) which tie
 * with it, under the ordering of `sort-keys.ts` (ASC/DESC, NULLS FIRST/LAST, NaN above every
 * number, -0 equal to 0).
 *
 * Why it exists: building key columns over [threshold, batch] for every input batch just to
 * compare one number per row was most of a `ORDER BY x LIMIT k` query; this reads each value
 * once and allocates only the (usually tiny) index lists.
 *
 * Applies to ints of every width, floats, dates, times, timestamps and durations, when the
 * threshold value is not NULL and not NaN (those thresholds are rare, and the caller's general
 * comparison handles them); returns undefined otherwise.
 */
import { type Data, Type } from 'apache-arrow';
import type { SortKeySpec } from './sort-keys.js';

export interface ThresholdSplit {
  /** Rows that sort strictly before the threshold, ascending. */
  readonly before: Uint32Array;
  /** Rows whose key equals the threshold's (only when asked for), ascending. */
  readonly ties?: Uint32Array;
}

function numericKind(d: Data): 'narrow' | 'wide' | undefined {
  switch (d.typeId) {
    case Type.Int:
    case Type.Float:
    case Type.Date:
    case Type.Time:
    case Type.Timestamp:
    case Type.Duration:
      break;
    default:
      return undefined;
  }
  const v = d.values as unknown;
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) return 'wide';
  if (d.typeId === Type.Float && v instanceof Uint16Array) return undefined; // Float16: not a SQL type
  return 'narrow';
}

/**
 * Splits the rows of `column` against row `at` of `threshold` (same type) on key `spec`; undefined
 * when the fast path does not apply.
 */
export function splitByThreshold(threshold: Data, at: number, column: Data, spec: SortKeySpec, wantTies: boolean): ThresholdSplit | undefined {
  const kind = numericKind(column);
  if (!kind || numericKind(threshold) !== kind || threshold.values.constructor !== column.values.constructor) return undefined;
  if (threshold.nullCount > 0 && threshold.nullBitmap && threshold.nullBitmap.length > 0) {
    const bit = threshold.offset + at;
    if ((threshold.nullBitmap[bit >> 3] & (1 << (bit & 7))) === 0) return undefined;
  }
  const n = column.length;
  const desc = spec.descending;
  const nullsBefore = spec.nullsFirst ?? desc;
  const bm = column.nullCount > 0 && column.nullBitmap && column.nullBitmap.length > 0 ? column.nullBitmap : undefined;
  const off = column.offset;
  const before = new Uint32Array(n);
  const ties = wantTies ? new Uint32Array(n) : undefined;
  let m = 0;
  let k = 0;
  if (kind === 'narrow') {
    const vals = column.values as unknown as Float64Array; // any number array: read as numbers
    const t = (threshold.values as unknown as Float64Array)[at];
    if (t !== t) return undefined;
    // NaN (floats only) sorts above every number: first when descending, never before a number ascending.
    const nanBefore = desc && column.typeId === Type.Float;
    if (!bm && !ties) {
      if (!desc) {
        for (let i = 0; i < n; i++) if (vals[i] < t) before[m++] = i;
      } else if (!nanBefore) {
        for (let i = 0; i < n; i++) if (vals[i] > t) before[m++] = i;
      } else {
        for (let i = 0; i < n; i++) {
          const x = vals[i];
          if (x > t || x !== x) before[m++] = i;
        }
      }
    } else {
      for (let i = 0; i < n; i++) {
        if (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0) {
          if (nullsBefore) before[m++] = i;
          continue;
        }
        const x = vals[i];
        if (desc ? x > t || (nanBefore && x !== x) : x < t) before[m++] = i;
        else if (ties && x === t) ties[k++] = i;
      }
    }
  } else {
    const tv = threshold.values as unknown as BigInt64Array;
    const tw = new Int32Array(tv.buffer, tv.byteOffset + 8 * at, 2);
    const v = column.values as unknown as BigInt64Array;
    const w = new Int32Array(v.buffer, v.byteOffset, 2 * n);
    const unsigned = v instanceof BigUint64Array;
    // Compare (high word, unsigned low word); the high word is unsigned for Uint64.
    const th = unsigned ? tw[1] >>> 0 : tw[1];
    const tl = tw[0] >>> 0;
    for (let i = 0; i < n; i++) {
      if (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0) {
        if (nullsBefore) before[m++] = i;
        continue;
      }
      const h = unsigned ? w[2 * i + 1] >>> 0 : w[2 * i + 1];
      if (h !== th) {
        if (desc ? h > th : h < th) before[m++] = i;
        continue;
      }
      const l = w[2 * i] >>> 0;
      if (l === tl) {
        if (ties) ties[k++] = i;
      } else if (desc ? l > tl : l < tl) before[m++] = i;
    }
  }
  return { before: before.subarray(0, m), ties: ties?.subarray(0, k) };
}
