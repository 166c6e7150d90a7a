/**
 * `gatherColumn`: `gatherData` (rows picked from several Data in a given order) for every column
 * type an operator passes through, dictionary-encoded strings included. Row i of the output is
 * row `rows[i]` of `sources[from[i]]`.
 *
 * A dictionary column keeps its type: when every source shares one dictionary the indices are
 * gathered and the dictionary reused; when the sources bring different dictionaries (batches
 * from different writers or files) their strings are merged into one deduplicated dictionary
 * and the indices remapped, so the output is still one valid Dictionary Data.
 */
import { type Data, type Dictionary, makeData, makeVector, Type, type Utf8 } from 'apache-arrow';
import { gatherData } from './gather.js';
import { flatDictionary } from './utf8-spans.js';

export function gatherColumn(sources: readonly Data[], from: Uint32Array, rows: Uint32Array): Data {
  const type = sources[0].type;
  if (type.typeId === Type.Dictionary) return gatherDictionary(sources, from, rows);
  return gatherData(sources, from, rows);
}

function gatherDictionary(sources: readonly Data[], from: Uint32Array, rows: Uint32Array): Data {
  const n = rows.length;
  const type = sources[0].type as Dictionary;
  const dictionaries = [...new Set(sources.map((s) => s.dictionary))];
  // Per source, the remap of its dictionary indices into the output dictionary (undefined = same).
  let remaps: (Int32Array | undefined)[] = sources.map(() => undefined);
  let dictionary = sources[0].dictionary;
  if (dictionaries.length > 1) {
    const merged = mergeDictionaries(dictionaries.map((d) => d as NonNullable<typeof d>));
    dictionary = merged.dictionary;
    remaps = sources.map((s) => merged.remaps.get(s.dictionary as NonNullable<typeof s.dictionary>));
    const max = indexMax(type);
    if (dictionary.length - 1 > max) {
      throw new Error(`merged dictionary of ${dictionary.length} strings does not fit ${String(type.indices)} indices`);
    }
  }
  let nullBitmap: Uint8Array | undefined;
  let nullCount = 0;
  if (sources.some((s) => s.nullCount > 0 && s.nullBitmap && s.nullBitmap.length > 0)) {
    nullBitmap = new Uint8Array((n + 7) >> 3);
    for (let i = 0; i < n; i++) {
      const s = sources[from[i]];
      const bit = s.offset + rows[i];
      const valid = s.nullCount === 0 || !s.nullBitmap || s.nullBitmap.length === 0 || (s.nullBitmap[bit >> 3] & (1 << (bit & 7))) !== 0;
      if (valid) nullBitmap[i >> 3] |= 1 << (i & 7);
      else nullCount++;
    }
  }
  const first = sources[0].values as unknown as { constructor: new (n: number) => { [i: number]: number | bigint } };
  const out = new first.constructor(n);
  const big = sources[0].values instanceof BigInt64Array || sources[0].values instanceof BigUint64Array;
  for (let i = 0; i < n; i++) {
    const f = from[i];
    const vals = sources[f].values as unknown as { [i: number]: number | bigint };
    const remap = remaps[f];
    let idx = vals[rows[i]];
    if (remap) {
      const j = remap[Number(idx)];
      idx = big ? BigInt(j) : j;
    }
    out[i] = idx;
  }
  return makeData({ type, length: n, nullCount, nullBitmap, data: out as never, dictionary } as never);
}

function indexMax(type: Dictionary): number {
  const bits = type.indices.bitWidth;
  return type.indices.isSigned ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
}

type DictVector = NonNullable<Data['dictionary']>;

/** One dictionary holding every distinct string of `dictionaries`, and each one's index remap. */
function mergeDictionaries(dictionaries: readonly DictVector[]): { dictionary: DictVector; remaps: Map<DictVector, Int32Array> } {
  const ids = new Map<string, number>();
  const decoder = new TextDecoder();
  const remaps = new Map<DictVector, Int32Array>();
  const chunks: Uint8Array[] = [];
  const offsets: number[] = [0];
  let total = 0;
  for (const d of dictionaries) {
    const flat = flatDictionary(d);
    const remap = new Int32Array(d.length);
    for (let i = 0; i < d.length; i++) {
      const b = flat.bytes.subarray(flat.offsets[i], flat.offsets[i + 1]);
      const s = decoder.decode(b);
      let id = ids.get(s);
      if (id === undefined) {
        id = ids.size;
        ids.set(s, id);
        chunks.push(b);
        total += b.length;
        offsets.push(total);
      }
      remap[i] = id;
    }
    remaps.set(d, remap);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  const valueType = (dictionaries[0].type as unknown as Utf8);
  const data = makeData({ type: valueType, length: ids.size, nullCount: 0, valueOffsets: Int32Array.from(offsets), data: bytes });
  return { dictionary: makeVector(data) as unknown as DictVector, remaps };
}
