/**
 * `take`: a new Data holding the rows of `data` at `indices`, in that order, for every Arrow
 * layout the engine stores (fixed-width, bit-packed booleans, variable-width strings/binary,
 * fixed-size lists such as vectors, lists, structs, dictionaries). Works on the typed arrays
 * directly: no per-row objects, one output allocation per buffer.
 */
import { type Data, type DataType, makeData, Type } from 'apache-arrow';

export function takeData(data: Data, indices: Uint32Array): Data {
  const n = indices.length;
  const nullBitmap = takeNulls(data, indices);
  const nullCount = nullBitmap ? n - popcount(nullBitmap, n) : 0;
  const type = data.type as DataType;
  switch (type.typeId) {
    case Type.Null:
      return mk({ type, length: n, nullCount: n });
    case Type.Bool: {
      const out = new Uint8Array((n + 7) >> 3);
      const src = data.values as Uint8Array;
      for (let i = 0; i < n; i++) {
        const bit = data.offset + indices[i];
        if (src[bit >> 3] & (1 << (bit & 7))) out[i >> 3] |= 1 << (i & 7);
      }
      return mk({ type, length: n, nullCount, nullBitmap, data: out });
    }
    case Type.Utf8:
    case Type.Binary: {
      const offsets = data.valueOffsets as Int32Array;
      const src = data.values as Uint8Array;
      const outOffsets = new Int32Array(n + 1);
      let total = 0;
      for (let i = 0; i < n; i++) {
        const r = indices[i];
        total += offsets[r + 1] - offsets[r];
        outOffsets[i + 1] = total;
      }
      const out = new Uint8Array(total);
      for (let i = 0; i < n; i++) {
        const r = indices[i];
        out.set(src.subarray(offsets[r], offsets[r + 1]), outOffsets[i]);
      }
      return mk({ type, length: n, nullCount, nullBitmap, valueOffsets: outOffsets, data: out });
    }
    case Type.FixedSizeList: {
      const size = (type as unknown as { listSize: number }).listSize;
      const child = data.children[0];
      const childIdx = new Uint32Array(n * size);
      for (let i = 0; i < n; i++) {
        const base = indices[i] * size; // children of a sliced list are sliced with it
        for (let j = 0; j < size; j++) childIdx[i * size + j] = base + j;
      }
      return mk({ type, length: n, nullCount, nullBitmap, child: takeData(child, childIdx) });
    }
    case Type.List: {
      const offsets = data.valueOffsets as Int32Array;
      const outOffsets = new Int32Array(n + 1);
      let total = 0;
      for (let i = 0; i < n; i++) {
        const r = indices[i];
        total += offsets[r + 1] - offsets[r];
        outOffsets[i + 1] = total;
      }
      const childIdx = new Uint32Array(total);
      for (let i = 0, k = 0; i < n; i++) {
        const r = indices[i];
        for (let j = offsets[r]; j < offsets[r + 1]; j++) childIdx[k++] = j;
      }
      return mk({ type, length: n, nullCount, nullBitmap, valueOffsets: outOffsets, child: takeData(data.children[0], childIdx) });
    }
    case Type.Struct: {
      // Children of a sliced struct are sliced with it, so row i is row i of each child.
      return mk({ type, length: n, nullCount, nullBitmap, children: data.children.map((c) => takeData(c, indices)) });
    }
    case Type.Dictionary:
    case Type.Int:
    case Type.Float:
    case Type.Date:
    case Type.Time:
    case Type.Timestamp:
    case Type.Interval:
    case Type.Duration:
    case Type.Decimal:
    case Type.FixedSizeBinary: {
      const src = data.values as unknown as { length: number; constructor: new (n: number) => ArrayLike<unknown> & { [i: number]: unknown } };
      const stride = data.stride;
      const out = new src.constructor(n * stride) as unknown as { [i: number]: unknown };
      const values = data.values as unknown as { [i: number]: unknown };
      if (stride === 1) for (let i = 0; i < n; i++) out[i] = values[indices[i]];
      else for (let i = 0; i < n; i++) for (let j = 0; j < stride; j++) out[i * stride + j] = values[indices[i] * stride + j];
      return mk({ type, length: n, nullCount, nullBitmap, data: out, dictionary: data.dictionary });
    }
    default:
      throw new Error(`take: unsupported Arrow type ${String(type)}`);
  }
}

function mk(props: Record<string, unknown>): Data {
  return makeData(props as never);
}

function takeNulls(data: Data, indices: Uint32Array): Uint8Array | undefined {
  if (data.nullCount === 0 || !data.nullBitmap || data.nullBitmap.length === 0) return undefined;
  const src = data.nullBitmap;
  const n = indices.length;
  const out = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) {
    const bit = data.offset + indices[i];
    if (src[bit >> 3] & (1 << (bit & 7))) out[i >> 3] |= 1 << (i & 7);
  }
  return out;
}

export function popcount(bitmap: Uint8Array, n: number): number {
  let c = 0;
  for (let i = 0; i < n; i++) if (bitmap[i >> 3] & (1 << (i & 7))) c++;
  return c;
}
