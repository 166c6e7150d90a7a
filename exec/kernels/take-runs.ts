/**
 * `take` for ascending indices that come in long runs (a flush's dedup drops a few superseded
 * rows here and there): each run is copied as a block per buffer instead of row by row. Same
 * output as `takeData` for the same indices; layouts without a block path fall back to it.
 */
import { type Bool, type Data, type DataType, type FixedSizeList, makeData, type Struct, Type, type Utf8 } from 'apache-arrow';
import { popcount, takeData } from './take.js';

/** Runs shorter than this on average are not worth a block copy each. */
const MIN_AVERAGE_RUN = 8;

/** Maximal runs of consecutive indices as [start, end) pairs, or undefined when they are short. */
export function runsOf(indices: Uint32Array): Uint32Array | undefined {
  const n = indices.length;
  let count = 0;
  for (let i = 0; i < n; i++) if (i === 0 || indices[i] !== indices[i - 1] + 1) count++;
  if (n === 0 || count * MIN_AVERAGE_RUN > n) return undefined;
  const runs = new Uint32Array(2 * count);
  let k = -1;
  for (let i = 0; i < n; i++) {
    if (i === 0 || indices[i] !== indices[i - 1] + 1) {
      k++;
      runs[2 * k] = indices[i];
    }
    runs[2 * k + 1] = indices[i] + 1;
  }
  return runs;
}

/** Bits [offset + start, offset + end) of each run of `src`, packed one after another (n bits). */
function takeBits(src: Uint8Array, offset: number, runs: Uint32Array, n: number): Uint8Array {
  const out = new Uint8Array((n + 7) >> 3);
  let at = 0;
  for (let k = 0; k < runs.length; k += 2) {
    for (let r = runs[k]; r < runs[k + 1]; r++, at++) {
      const bit = offset + r;
      if (src[bit >> 3] & (1 << (bit & 7))) out[at >> 3] |= 1 << (at & 7);
    }
  }
  return out;
}

/** `takeData` for indices given as runs (n rows in all), for the layouts a table stores. */
export function takeRuns(data: Data, runs: Uint32Array, n: number): Data {
  const type = data.type as DataType;
  const nullBitmap = data.nullCount > 0 && data.nullBitmap && data.nullBitmap.length > 0 ? takeBits(data.nullBitmap, data.offset, runs, n) : undefined;
  const nullCount = nullBitmap ? n - popcount(nullBitmap, n) : 0;
  switch (type.typeId) {
    case Type.Bool:
      return makeData({ type: type as Bool, length: n, nullCount, nullBitmap, data: takeBits(data.values as Uint8Array, data.offset, runs, n) });
    case Type.Utf8:
    case Type.Binary: {
      const offsets = data.valueOffsets as Int32Array;
      const src = data.values as Uint8Array;
      let total = 0;
      for (let k = 0; k < runs.length; k += 2) total += offsets[runs[k + 1]] - offsets[runs[k]];
      const out = new Uint8Array(total);
      const outOffsets = new Int32Array(n + 1);
      let at = 0;
      let bytes = 0;
      for (let k = 0; k < runs.length; k += 2) {
        const a = runs[k];
        const b = runs[k + 1];
        const shift = bytes - offsets[a];
        for (let r = a; r < b; r++) outOffsets[at + r - a + 1] = offsets[r + 1] + shift;
        out.set(src.subarray(offsets[a], offsets[b]), bytes);
        bytes += offsets[b] - offsets[a];
        at += b - a;
      }
      return makeData({ type: type as Utf8, length: n, nullCount, nullBitmap, valueOffsets: outOffsets, data: out });
    }
    case Type.FixedSizeList: {
      const size = (type as FixedSizeList).listSize;
      const childRuns = runs.map((r) => r * size);
      return makeData({ type: type as FixedSizeList, length: n, nullCount, nullBitmap, child: takeRuns(data.children[0], childRuns, n * size) });
    }
    case Type.Struct:
      return makeData({ type: type as Struct, length: n, nullCount, nullBitmap, children: data.children.map((c) => takeRuns(c, runs, n)) });
    case Type.Int:
    case Type.Float:
    case Type.Date:
    case Type.Time:
    case Type.Timestamp:
    case Type.Interval:
    case Type.Duration:
    case Type.Decimal:
    case Type.FixedSizeBinary: {
      const stride = data.stride;
      const src = data.values as Uint8Array; // any typed array: only subarray / set are used
      const out = new (src.constructor as new (n: number) => Uint8Array)(n * stride);
      let at = 0;
      for (let k = 0; k < runs.length; k += 2) {
        out.set(src.subarray(runs[k] * stride, runs[k + 1] * stride), at);
        at += (runs[k + 1] - runs[k]) * stride;
      }
      return makeData({ type: type as never, length: n, nullCount, nullBitmap, data: out as never });
    }
    default: {
      const indices = new Uint32Array(n);
      let at = 0;
      for (let k = 0; k < runs.length; k += 2) for (let r = runs[k]; r < runs[k + 1]; r++) indices[at++] = r;
      return takeData(data, indices);
    }
  }
}
