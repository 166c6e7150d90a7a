/**
 * `gather`: rows picked from several Data of the same type, in the order given — row i of the
 * output is row `rows[i]` of `sources[from[i]]`. Search results use it to assemble the top-k rows
 * from MemTables and generations into one batch ordered by rank. Same layouts as `take`.
 */
import { type Data, type DataType, makeData, Type } from 'apache-arrow';

/** A typed array of fixed-width values (subarray and set, as every TypedArray has). */
interface TypedValues {
  subarray(begin: number, end: number): TypedValues;
  set(src: TypedValues, offset: number): void;
}

export function gatherData(sources: readonly Data[], from: Uint32Array, rows: Uint32Array): Data {
  const n = rows.length;
  const type = sources[0].type as DataType;
  let nullCount = 0;
  let nullBitmap: Uint8Array | undefined;
  if (sources.some((s) => s.nullCount > 0)) {
    nullBitmap = new Uint8Array((n + 7) >> 3);
    for (let i = 0; i < n; i++) {
      const s = sources[from[i]];
      const bit = s.offset + rows[i];
      const valid = s.nullCount === 0 || !s.nullBitmap || s.nullBitmap.length === 0 || (s.nullBitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
      if (valid) nullBitmap[i >> 3] |= 1 << (i & 7);
      else nullCount++;
    }
  }
  const mk = (props: Record<string, unknown>) => makeData({ type, length: n, nullCount, nullBitmap, ...props } as never);
  switch (type.typeId) {
    case Type.Bool: {
      const out = new Uint8Array((n + 7) >> 3);
      for (let i = 0; i < n; i++) {
        const s = sources[from[i]];
        const bit = s.offset + rows[i];
        if ((s.values as Uint8Array)[bit >> 3] & (1 << (bit & 7))) out[i >> 3] |= 1 << (i & 7);
      }
      return mk({ data: out });
    }
    case Type.Utf8:
    case Type.Binary: {
      const offsets = new Int32Array(n + 1);
      for (let i = 0; i < n; i++) {
        const o = sources[from[i]].valueOffsets as Int32Array;
        offsets[i + 1] = offsets[i] + o[rows[i] + 1] - o[rows[i]];
      }
      const out = new Uint8Array(offsets[n]);
      for (let i = 0; i < n; i++) {
        const s = sources[from[i]];
        const o = s.valueOffsets as Int32Array;
        out.set((s.values as Uint8Array).subarray(o[rows[i]], o[rows[i] + 1]), offsets[i]);
      }
      return mk({ valueOffsets: offsets, data: out });
    }
    case Type.FixedSizeList: {
      const size = (type as unknown as { listSize: number }).listSize;
      // Vectors (a fixed-width child without nulls): one copy of `size` values per row, instead
      // of an index per value through the generic path below.
      const childType = sources[0].children[0].type as DataType;
      if ((childType.typeId === Type.Float || childType.typeId === Type.Int) && sources.every((s) => s.children[0].nullCount === 0 && s.children[0].stride === 1)) {
        const first = sources[0].children[0].values as unknown as { constructor: new (n: number) => TypedValues };
        const values = new first.constructor(n * size);
        for (let i = 0; i < n; i++) {
          const v = sources[from[i]].children[0].values as unknown as TypedValues;
          values.set(v.subarray(rows[i] * size, rows[i] * size + size), i * size);
        }
        return mk({ child: makeData({ type: childType, length: n * size, nullCount: 0, data: values } as never) });
      }
      const childRows = new Uint32Array(n * size);
      const childFrom = new Uint32Array(n * size);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < size; j++) {
          childRows[i * size + j] = rows[i] * size + j;
          childFrom[i * size + j] = from[i];
        }
      }
      return mk({ child: gatherData(sources.map((s) => s.children[0]), childFrom, childRows) });
    }
    case Type.Struct:
      return mk({ children: sources[0].children.map((_, c) => gatherData(sources.map((s) => s.children[c]), from, rows)) });
    case Type.Int:
    case Type.Float:
    case Type.Date:
    case Type.Time:
    case Type.Timestamp:
    case Type.Interval:
    case Type.Duration:
    case Type.Decimal:
    case Type.FixedSizeBinary: {
      const stride = sources[0].stride;
      const first = sources[0].values as unknown as { constructor: new (n: number) => { [i: number]: unknown } };
      const out = new first.constructor(n * stride);
      for (let i = 0; i < n; i++) {
        const v = sources[from[i]].values as unknown as { [i: number]: unknown };
        for (let j = 0; j < stride; j++) out[i * stride + j] = v[rows[i] * stride + j];
      }
      return mk({ data: out });
    }
    default:
      throw new Error(`gather: unsupported Arrow type ${String(type)}`);
  }
}
