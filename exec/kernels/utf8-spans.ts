/**
 * Byte spans of string rows, for kernels that compare or hash strings without decoding them:
 * a plain Utf8 column is its own byte buffer and offsets; a Dictionary<Utf8> column is its
 * indices into a flattened dictionary (one byte buffer + offsets, computed once per dictionary
 * vector and remembered).
 *
 * Arrow's Utf8 is UTF-8, and UTF-8 byte order is code-point order, so comparing spans with
 * `compareBytes` is PostgreSQL's "C" collation.
 */
import { type Data, type Dictionary, Type, type Vector } from 'apache-arrow';

/** A flattened string column: row i is bytes[offsets[i] .. offsets[i + 1]). */
export interface FlatStrings {
  readonly bytes: Uint8Array;
  readonly offsets: Int32Array;
}

const flatCache = new WeakMap<Vector, FlatStrings>();

/** The dictionary of a Dictionary<Utf8> column as one buffer + offsets (dictionaries may be chunked). */
export function flatDictionary(dictionary: Vector): FlatStrings {
  let flat = flatCache.get(dictionary);
  if (flat) return flat;
  const chunks = dictionary.data;
  if (chunks.length === 1 && chunks[0].typeId === Type.Utf8) {
    flat = { bytes: chunks[0].values as Uint8Array, offsets: chunks[0].valueOffsets as Int32Array };
  } else {
    let rows = 0;
    let total = 0;
    for (const c of chunks) {
      if (c.typeId !== Type.Utf8) throw new Error(`dictionary values of type ${String(c.type)} are not strings`);
      const o = c.valueOffsets as Int32Array;
      rows += c.length;
      total += o[c.length] - o[0];
    }
    const bytes = new Uint8Array(total);
    const offsets = new Int32Array(rows + 1);
    let r = 0;
    let at = 0;
    for (const c of chunks) {
      const o = c.valueOffsets as Int32Array;
      bytes.set((c.values as Uint8Array).subarray(o[0], o[c.length]), at);
      for (let i = 0; i < c.length; i++) offsets[++r] = at + o[i + 1] - o[0];
      at += o[c.length] - o[0];
    }
    flat = { bytes, offsets };
  }
  flatCache.set(dictionary, flat);
  return flat;
}

/** True for the string layouts the kernels read: Utf8 and Dictionary<Utf8>. */
export function isStringData(type: { typeId: Type }): boolean {
  if (type.typeId === Type.Utf8) return true;
  return type.typeId === Type.Dictionary && (type as unknown as Dictionary).dictionary.typeId === Type.Utf8;
}

/**
 * Where the bytes of each row of a Utf8 or Dictionary<Utf8> column (`data` may be sliced) are:
 * row i is bytes[offsets[i] .. offsets[i + 1]) without `indices`, and
 * bytes[offsets[indices[i]] .. offsets[indices[i] + 1]) with them. A null row's span is whatever
 * the buffer holds there (callers check validity first).
 */
export function stringSpans(data: Data): { bytes: Uint8Array; offsets: Int32Array; indices?: ArrayLike<number> } {
  if (data.typeId === Type.Utf8) return { bytes: data.values as Uint8Array, offsets: data.valueOffsets as Int32Array };
  if (data.typeId === Type.Dictionary && data.dictionary) {
    const flat = flatDictionary(data.dictionary);
    const v = data.values as unknown as ArrayLike<number> | BigInt64Array | BigUint64Array;
    const indices = v instanceof BigInt64Array || v instanceof BigUint64Array ? Int32Array.from(v, Number) : v;
    return { bytes: flat.bytes, offsets: flat.offsets, indices };
  }
  throw new Error(`not a string column: ${String(data.type)}`);
}

/** Byte-wise comparison of a[as..ae) and b[bs..be): negative, 0 or positive; a prefix sorts first. */
export function compareBytes(a: Uint8Array, as: number, ae: number, b: Uint8Array, bs: number, be: number): number {
  const la = ae - as;
  const lb = be - bs;
  const n = la < lb ? la : lb;
  for (let i = 0; i < n; i++) {
    const d = a[as + i] - b[bs + i];
    if (d !== 0) return d;
  }
  return la - lb;
}
