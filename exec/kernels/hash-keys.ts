/**
 * Group-key hashing: a hash table from multi-column keys to dense group ids (0, 1, 2, … in
 * first-seen order), fed a batch at a time from Arrow typed arrays.
 *
 * Each key column is normalized to 32-bit words per row — one word for ≤ 32-bit types and
 * booleans, two for 64-bit types (the raw bits: no BigInt per row) — or, for Utf8 and
 * Dictionary<Utf8>, to byte spans hashed with FNV-1a. Floats are canonicalized first so that the
 * SQL equalities hold: -0 groups with 0 and every NaN with every NaN (PostgreSQL). A NULL is a
 * flag plus zero words, so all NULLs of a column form one group (SQL's GROUP BY), distinct from
 * every value. Hashes are computed column by column over the batch, then each row probes an
 * open-addressing table (linear probing, stored hash compared before the keys).
 *
 * Group keys are stored in growable typed arrays, and `keyColumns()` turns them back into Arrow
 * columns of the original types (Dictionary<Utf8> keys get a dictionary of the group strings).
 *
 * Fast path: a table over one integer-like key (ints of any width, dates, times, timestamps,
 * durations; not floats or booleans) reads the raw values, with no normalized copy and no hash
 * array per batch. While the observed key range stays small (at most max(65 536, 4 × rows seen)
 * values and at most 2^20, every value within ±2^52) the group of a row is a direct index,
 * `direct[value − base]`; a batch that would widen the range past that switches the table, for
 * good, to the hash table on the raw words (same hashes, same stored keys as the general path,
 * so the switch only rebuilds the slots). NULL keys are one group, found without probing.
 */
import { type Data, type DataType, type Dictionary, makeData, makeVector, Type, Utf8 } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { isStringData, stringSpans } from './utf8-spans.js';

type Encoding = 'w1' | 'w2' | 'str';

function encodingOf(type: DataType): Encoding {
  if (isStringData(type)) return 'str';
  switch (type.typeId) {
    case Type.Bool:
      return 'w1';
    case Type.Int:
    case Type.Float:
    case Type.Date:
    case Type.Time:
    case Type.Timestamp:
    case Type.Duration: {
      const bytes = (type as unknown as { ArrayType: { BYTES_PER_ELEMENT: number } }).ArrayType.BYTES_PER_ELEMENT;
      if (type.typeId === Type.Float && bytes === 2) break; // Float16: not a SQL type here
      return bytes === 8 ? 'w2' : 'w1';
    }
  }
  throw new InvalidError(`cannot group by a column of type ${String(type)}`);
}

/** Whether a column of this type can be a group key (and a DISTINCT argument). */
export function isGroupableType(type: DataType): boolean {
  try {
    encodingOf(type);
    return true;
  } catch {
    return false;
  }
}

const CANON_NAN_F32 = 0x7fc00000;
const CANON_NAN_F64_HI = 0x7ff80000;
const NULL_HASH = 0x9e3779b9 | 0;

function mix(h: number, w: number): number {
  let k = Math.imul(w, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, 0x1b873593);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finalMix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function validAt(d: Data): ((i: number) => boolean) | undefined {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return undefined;
  const bm = d.nullBitmap;
  const off = d.offset;
  return (i) => (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) !== 0;
}

/** One batch's key column, normalized. */
interface BatchKey {
  words?: Int32Array; // w1: n words, w2: 2n words
  nulls?: Uint8Array; // 1 = NULL
  bytes?: Uint8Array;
  offsets?: Int32Array;
  indices?: ArrayLike<number>;
}

/** Key column state: the stored group keys. */
interface StoredKey {
  readonly type: DataType;
  readonly enc: Encoding;
  words: Int32Array;
  nulls: Uint8Array;
  bytes: Uint8Array;
  offsets: Int32Array; // str: group g is bytes[offsets[g] .. offsets[g + 1])
  bytesUsed: number;
}

/** Direct-index tables cover at most this many key values (4 MiB of Int32). */
const DIRECT_MAX_SPAN = 1 << 20;
/** A direct-index table may always cover this many values, however few rows were seen. */
const DIRECT_MIN_SPAN = 1 << 16;
/** Direct indexing needs every key exact as a double; this bound keeps value − base exact too. */
const DIRECT_MAX_ABS = 2 ** 52;
const TWO32 = 4294967296;

/** Whether a single key of this type takes the integer fast path: 1 = ≤ 32-bit values, 2 = 64-bit. */
function intKeyKind(type: DataType): 0 | 1 | 2 {
  switch (type.typeId) {
    case Type.Int:
    case Type.Date:
    case Type.Time:
    case Type.Timestamp:
    case Type.Duration:
      return encodingOf(type) === 'w2' ? 2 : 1;
    default:
      return 0;
  }
}

export class GroupKeyTable {
  private readonly keys: StoredKey[];
  private size_ = 0;
  private capacity = 0;
  private hashes = new Int32Array(0);
  private slots = new Int32Array(0);
  private mask = 0;
  private scratch = new Int32Array(0);
  /** Single integer key: 1 = ≤ 32-bit, 2 = 64-bit; 0 = the general path. */
  private readonly intKind: 0 | 1 | 2;
  /** Direct-index mode: group id + 1 of value `directBase + j` at j (0 = no group yet). */
  private direct: Int32Array | undefined;
  private directBase = 0;
  /** The smallest and largest key seen in direct mode (`direct` may cover more: room to grow). */
  private seenLo = Infinity;
  private seenHi = -Infinity;
  /** Set once the key range outgrew direct indexing: the raw-word hash table from then on. */
  private hashing = false;
  private rowsSeen = 0;
  /** The group of NULL keys (integer fast path), or -1. */
  private nullGroup = -1;

  constructor(readonly types: readonly DataType[]) {
    this.keys = types.map((type) => ({ type, enc: encodingOf(type), words: new Int32Array(0), nulls: new Uint8Array(0), bytes: new Uint8Array(0), offsets: new Int32Array(1), bytesUsed: 0 }));
    this.intKind = types.length === 1 ? intKeyKind(types[0]) : 0;
    this.grow(64);
    this.rehash(256);
  }

  /** Which path the table takes now: 'direct', 'hash' (raw integer words) or 'general' (tests, EXPLAIN-free introspection). */
  get mode(): 'direct' | 'hash' | 'general' {
    if (this.intKind === 0) return 'general';
    return this.hashing ? 'hash' : 'direct';
  }

  /** Number of groups so far. */
  get size(): number {
    return this.size_;
  }

  /** Bytes held by the table and the stored keys. */
  get byteLength(): number {
    let n = this.hashes.byteLength + this.slots.byteLength + this.scratch.byteLength + (this.direct?.byteLength ?? 0);
    for (const k of this.keys) n += k.words.byteLength + k.nulls.byteLength + k.bytes.byteLength + k.offsets.byteLength;
    return n;
  }

  /**
   * Writes the group id of each row of `columns` (one Data per key column, same length) into
   * `out`, adding new groups in row order. Returns the number of groups after the batch.
   */
  findOrInsert(columns: readonly Data[], out: Int32Array): number {
    if (this.intKind !== 0) return this.findOrInsertInt(columns[0], out);
    const n = columns.length > 0 ? columns[0].length : 0;
    const batch = columns.map((d, c) => this.normalize(d, this.keys[c]));
    if (this.scratch.length < n) this.scratch = new Int32Array(Math.max(n, this.scratch.length * 2));
    const h = this.scratch.subarray(0, n);
    h.fill(0);
    for (let c = 0; c < batch.length; c++) this.hashColumn(batch[c], this.keys[c].enc, h, n);
    const keys = this.keys;
    const m = keys.length;
    for (let i = 0; i < n; i++) {
      const hi = finalMix(h[i]);
      let slot = hi & this.mask;
      let g: number;
      for (;;) {
        g = this.slots[slot];
        if (g < 0) break;
        if (this.hashes[g] === hi) {
          let eq = true;
          for (let c = 0; c < m && eq; c++) eq = equalKey(keys[c], g, batch[c], i);
          if (eq) break;
        }
        slot = (slot + 1) & this.mask;
      }
      if (g < 0) {
        g = this.insert(batch, i, hi);
        this.slots[slot] = g;
        if (this.size_ * 2 > this.slots.length) this.rehash(this.slots.length * 2);
      }
      out[i] = g;
    }
    return this.size_;
  }

  /** The integer fast path of `findOrInsert`: direct index while the key range is small, else raw-word hashing. */
  private findOrInsertInt(d: Data, out: Int32Array): number {
    const n = d.length;
    this.rowsSeen += n;
    const wide = this.intKind === 2;
    const bm = d.nullCount > 0 && d.nullBitmap && d.nullBitmap.length > 0 ? d.nullBitmap : undefined;
    const off = d.offset;
    const vals = d.values as unknown as ArrayLike<number> & ArrayBufferView;
    const words = wide ? new Int32Array(vals.buffer, vals.byteOffset, n * 2) : undefined;
    const unsigned = wide && vals instanceof BigUint64Array;
    if (!this.hashing) {
      // The batch's value range (valid rows only).
      let lo = Infinity;
      let hi = -Infinity;
      if (words) {
        for (let i = 0; i < n; i++) {
          if (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0) continue;
          const x = (unsigned ? words[2 * i + 1] >>> 0 : words[2 * i + 1]) * TWO32 + (words[2 * i] >>> 0);
          if (x < lo) lo = x;
          if (x > hi) hi = x;
        }
      } else if (!bm) {
        for (let i = 0; i < n; i++) {
          const x = vals[i];
          if (x < lo) lo = x;
          if (x > hi) hi = x;
        }
      } else {
        for (let i = 0; i < n; i++) {
          if ((bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0) continue;
          const x = vals[i];
          if (x < lo) lo = x;
          if (x > hi) hi = x;
        }
      }
      if (lo > hi || this.fitDirect(lo, hi)) {
        this.directInt(vals, words, unsigned, bm, off, n, out);
        return this.size_;
      }
      this.hashing = true;
      this.direct = undefined;
      let slotCount = 256;
      while (slotCount < this.size_ * 4) slotCount *= 2;
      this.rehash(slotCount);
    }
    this.hashInt(vals, words, bm, off, n, out);
    return this.size_;
  }

  /** Makes `direct` cover [lo, hi] (with what it covers), or returns false when that range is too wide. */
  private fitDirect(lo: number, hi: number): boolean {
    if (lo < -DIRECT_MAX_ABS || hi > DIRECT_MAX_ABS) return false;
    const limit = Math.min(DIRECT_MAX_SPAN, Math.max(DIRECT_MIN_SPAN, 4 * this.rowsSeen));
    if (Math.max(hi, this.seenHi) - Math.min(lo, this.seenLo) + 1 > limit) return false;
    this.seenLo = Math.min(lo, this.seenLo);
    this.seenHi = Math.max(hi, this.seenHi);
    const cur = this.direct;
    const base = this.directBase;
    const needLo = cur ? Math.min(base, lo) : lo;
    const needHi = cur ? Math.max(base + cur.length - 1, hi) : hi;
    const needed = needHi - needLo + 1;
    if (cur && needLo === base && needHi < base + cur.length) return true;
    // Grow with room to spare in the direction it grew (ascending keys, batch after batch).
    const span = Math.min(Math.max(needed, 2 * (cur?.length ?? 0)), Math.max(needed, DIRECT_MAX_SPAN));
    const newBase = cur && needLo === base ? base : cur && needHi === base + cur.length - 1 ? needHi - span + 1 : needLo;
    const next = new Int32Array(span);
    if (cur) next.set(cur, base - newBase);
    this.direct = next;
    this.directBase = newBase;
    return true;
  }

  private directInt(vals: ArrayLike<number>, words: Int32Array | undefined, unsigned: boolean, bm: Uint8Array | undefined, off: number, n: number, out: Int32Array): void {
    const dir = this.direct as Int32Array;
    const base = this.directBase;
    if (!words && !bm) {
      for (let i = 0; i < n; i++) {
        const x = vals[i];
        const j = x - base;
        let g = dir[j] - 1;
        if (g < 0) {
          g = this.newGroup(finalMix(mix(0, x | 0)));
          this.keys[0].words[g] = x;
          dir[j] = g + 1;
        }
        out[i] = g;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      if (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0) {
        out[i] = this.nullGroup >= 0 ? this.nullGroup : this.newNullGroup();
        continue;
      }
      let j: number;
      if (words) j = (unsigned ? words[2 * i + 1] >>> 0 : words[2 * i + 1]) * TWO32 + (words[2 * i] >>> 0) - base;
      else j = vals[i] - base;
      let g = dir[j] - 1;
      if (g < 0) {
        if (words) {
          const w0 = words[2 * i];
          const w1 = words[2 * i + 1];
          g = this.newGroup(finalMix(mix(mix(0, w0), w1)));
          this.keys[0].words[2 * g] = w0;
          this.keys[0].words[2 * g + 1] = w1;
        } else {
          const x = vals[i];
          g = this.newGroup(finalMix(mix(0, x | 0)));
          this.keys[0].words[g] = x;
        }
        dir[j] = g + 1;
      }
      out[i] = g;
    }
  }

  private hashInt(vals: ArrayLike<number>, words: Int32Array | undefined, bm: Uint8Array | undefined, off: number, n: number, out: Int32Array): void {
    for (let i = 0; i < n; i++) {
      if (bm && (bm[(off + i) >> 3] & (1 << ((off + i) & 7))) === 0) {
        out[i] = this.nullGroup >= 0 ? this.nullGroup : this.newNullGroup();
        continue;
      }
      const w0 = words ? words[2 * i] : vals[i] | 0;
      const w1 = words ? words[2 * i + 1] : 0;
      const h = words ? finalMix(mix(mix(0, w0), w1)) : finalMix(mix(0, w0));
      const slots = this.slots;
      const hashes = this.hashes;
      const stored = this.keys[0].words;
      const mask = this.mask;
      let slot = h & mask;
      let g: number;
      for (;;) {
        g = slots[slot];
        if (g < 0) break;
        if (hashes[g] === h && g !== this.nullGroup && (words ? stored[2 * g] === w0 && stored[2 * g + 1] === w1 : stored[g] === w0)) break;
        slot = (slot + 1) & mask;
      }
      if (g < 0) {
        g = this.newGroup(h);
        if (words) {
          this.keys[0].words[2 * g] = w0;
          this.keys[0].words[2 * g + 1] = w1;
        } else this.keys[0].words[g] = w0;
        this.slots[slot] = g;
        if (this.size_ * 2 > this.slots.length) this.rehash(this.slots.length * 2);
      }
      out[i] = g;
    }
  }

  /** A new group with hash `hash` and a non-NULL key (the caller writes its words); no slot. */
  private newGroup(hash: number): number {
    const g = this.size_;
    if (g === this.capacity) this.grow(this.capacity * 2);
    this.hashes[g] = hash;
    this.keys[0].nulls[g] = 0;
    this.size_ = g + 1;
    return g;
  }

  /** The NULL group of the integer fast path (words 0, the general path's NULL hash), slotted when hashing. */
  private newNullGroup(): number {
    const h = finalMix(mix(0, NULL_HASH));
    const g = this.newGroup(h);
    const k = this.keys[0];
    k.nulls[g] = 1;
    if (this.intKind === 2) k.words[2 * g] = k.words[2 * g + 1] = 0;
    else k.words[g] = 0;
    this.nullGroup = g;
    if (this.hashing) {
      let slot = h & this.mask;
      while (this.slots[slot] >= 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = g;
      if (this.size_ * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    }
    return g;
  }

  /** The stored keys as Arrow columns of their original types, groups 0..size-1. */
  keyColumns(): Data[] {
    return this.keys.map((k) => buildKeyOutput(k, this.size_));
  }

  private normalize(d: Data, key: StoredKey): BatchKey {
    const n = d.length;
    const valid = validAt(d);
    let nulls: Uint8Array | undefined;
    if (valid) {
      nulls = new Uint8Array(n);
      for (let i = 0; i < n; i++) if (!valid(i)) nulls[i] = 1;
    }
    if (key.enc === 'str') {
      const s = stringSpans(d);
      return { nulls, bytes: s.bytes, offsets: s.offsets, indices: s.indices };
    }
    const vals = d.values as unknown as ArrayLike<number> & ArrayBufferView;
    let words: Int32Array;
    if (d.typeId === Type.Bool) {
      words = new Int32Array(n);
      const bits = d.values as Uint8Array;
      for (let i = 0; i < n; i++) {
        const bit = d.offset + i;
        words[i] = (bits[bit >> 3] >> (bit & 7)) & 1;
      }
    } else if (key.enc === 'w2') {
      words = new Int32Array(vals.buffer.slice(vals.byteOffset, vals.byteOffset + n * 8));
      if (d.typeId === Type.Float) {
        const f = vals as unknown as Float64Array;
        for (let i = 0; i < n; i++) {
          const x = f[i];
          if (x !== x) {
            words[2 * i] = 0;
            words[2 * i + 1] = CANON_NAN_F64_HI;
          } else if (x === 0) words[2 * i] = words[2 * i + 1] = 0;
        }
      }
    } else if ((vals as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT === 4) {
      words = new Int32Array(vals.buffer.slice(vals.byteOffset, vals.byteOffset + n * 4));
      if (d.typeId === Type.Float) {
        const f = vals as unknown as Float32Array;
        for (let i = 0; i < n; i++) {
          const x = f[i];
          if (x !== x) words[i] = CANON_NAN_F32;
          else if (x === 0) words[i] = 0;
        }
      }
    } else {
      words = new Int32Array(n);
      for (let i = 0; i < n; i++) words[i] = vals[i];
    }
    if (nulls) {
      const w = key.enc === 'w2' ? 2 : 1;
      for (let i = 0; i < n; i++) if (nulls[i]) for (let j = 0; j < w; j++) words[w * i + j] = 0;
    }
    return { words, nulls };
  }

  private hashColumn(b: BatchKey, enc: Encoding, h: Int32Array, n: number): void {
    const nulls = b.nulls;
    if (enc === 'str') {
      const bytes = b.bytes as Uint8Array;
      const offsets = b.offsets as Int32Array;
      const idx = b.indices;
      for (let i = 0; i < n; i++) {
        if (nulls && nulls[i]) {
          h[i] = mix(h[i], NULL_HASH);
          continue;
        }
        const j = idx ? idx[i] : i;
        let f = 0x811c9dc5 | 0;
        for (let p = offsets[j], e = offsets[j + 1]; p < e; p++) f = Math.imul(f ^ bytes[p], 16777619);
        h[i] = mix(mix(h[i], f), offsets[j + 1] - offsets[j]);
      }
      return;
    }
    const words = b.words as Int32Array;
    if (enc === 'w1') for (let i = 0; i < n; i++) h[i] = mix(h[i], nulls && nulls[i] ? NULL_HASH : words[i]);
    else for (let i = 0; i < n; i++) h[i] = nulls && nulls[i] ? mix(h[i], NULL_HASH) : mix(mix(h[i], words[2 * i]), words[2 * i + 1]);
  }

  private insert(batch: readonly BatchKey[], i: number, hash: number): number {
    const g = this.size_;
    if (g === this.capacity) this.grow(this.capacity * 2);
    this.hashes[g] = hash;
    for (let c = 0; c < batch.length; c++) {
      const k = this.keys[c];
      const b = batch[c];
      const isNull = b.nulls !== undefined && b.nulls[i] === 1;
      k.nulls[g] = isNull ? 1 : 0;
      if (k.enc === 'str') {
        let len = 0;
        let start = 0;
        if (!isNull) {
          const j = b.indices ? b.indices[i] : i;
          start = (b.offsets as Int32Array)[j];
          len = (b.offsets as Int32Array)[j + 1] - start;
        }
        if (k.bytesUsed + len > k.bytes.length) {
          const next = new Uint8Array(Math.max(k.bytes.length * 2, k.bytesUsed + len, 1024));
          next.set(k.bytes.subarray(0, k.bytesUsed));
          k.bytes = next;
        }
        if (len > 0) k.bytes.set((b.bytes as Uint8Array).subarray(start, start + len), k.bytesUsed);
        k.bytesUsed += len;
        k.offsets[g + 1] = k.bytesUsed;
      } else if (k.enc === 'w1') {
        k.words[g] = (b.words as Int32Array)[i];
      } else {
        k.words[2 * g] = (b.words as Int32Array)[2 * i];
        k.words[2 * g + 1] = (b.words as Int32Array)[2 * i + 1];
      }
    }
    this.size_ = g + 1;
    return g;
  }

  private grow(capacity: number): void {
    const copy = <T extends Int32Array | Uint8Array>(a: T, len: number): T => {
      const next = new (a.constructor as new (n: number) => T)(len);
      next.set(a.subarray(0, Math.min(a.length, len)) as never);
      return next;
    };
    this.hashes = copy(this.hashes, capacity);
    for (const k of this.keys) {
      k.nulls = copy(k.nulls, capacity);
      if (k.enc === 'str') k.offsets = copy(k.offsets, capacity + 1);
      else k.words = copy(k.words, capacity * (k.enc === 'w2' ? 2 : 1));
    }
    this.capacity = capacity;
  }

  private rehash(slotCount: number): void {
    this.slots = new Int32Array(slotCount).fill(-1);
    this.mask = slotCount - 1;
    for (let g = 0; g < this.size_; g++) {
      let slot = this.hashes[g] & this.mask;
      while (this.slots[slot] >= 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = g;
    }
  }
}

function equalKey(k: StoredKey, g: number, b: BatchKey, i: number): boolean {
  const rowNull = b.nulls !== undefined && b.nulls[i] === 1;
  if ((k.nulls[g] === 1) !== rowNull) return false;
  if (rowNull) return true;
  if (k.enc === 'w1') return k.words[g] === (b.words as Int32Array)[i];
  if (k.enc === 'w2') return k.words[2 * g] === (b.words as Int32Array)[2 * i] && k.words[2 * g + 1] === (b.words as Int32Array)[2 * i + 1];
  const j = b.indices ? b.indices[i] : i;
  const offsets = b.offsets as Int32Array;
  const s = offsets[j];
  const len = offsets[j + 1] - s;
  const gs = k.offsets[g];
  if (k.offsets[g + 1] - gs !== len) return false;
  const bytes = b.bytes as Uint8Array;
  for (let p = 0; p < len; p++) if (k.bytes[gs + p] !== bytes[s + p]) return false;
  return true;
}

function nullBitmapOf(nulls: Uint8Array, n: number): { nullBitmap?: Uint8Array; nullCount: number } {
  let nullCount = 0;
  for (let g = 0; g < n; g++) nullCount += nulls[g];
  if (nullCount === 0) return { nullCount };
  const nullBitmap = new Uint8Array((n + 7) >> 3);
  for (let g = 0; g < n; g++) if (!nulls[g]) nullBitmap[g >> 3] |= 1 << (g & 7);
  return { nullBitmap, nullCount };
}

function buildKeyOutput(k: StoredKey, n: number): Data {
  const { nullBitmap, nullCount } = nullBitmapOf(k.nulls, n);
  const type = k.type;
  if (k.enc === 'str') {
    const valueOffsets = k.offsets.slice(0, n + 1);
    const data = k.bytes.slice(0, k.bytesUsed);
    if (type.typeId === Type.Utf8) return makeData({ type: type as Utf8, length: n, nullCount, nullBitmap, valueOffsets, data });
    // Dictionary<Utf8>: the groups' strings are the dictionary; group g has index g.
    const dt = type as unknown as Dictionary;
    const bits = dt.indices.bitWidth;
    if (n - 1 > (dt.indices.isSigned ? 2 ** (bits - 1) - 1 : 2 ** bits - 1)) {
      throw new InvalidError(`${n} groups do not fit the ${String(dt.indices)} indices of a dictionary column`);
    }
    const dictionary = makeVector(makeData({ type: new Utf8(), length: n, nullCount: 0, valueOffsets, data }));
    const Idx = (dt.indices as unknown as { ArrayType: new (n: number) => { [i: number]: number | bigint } }).ArrayType;
    const indices = new Idx(n);
    const big = (bits as number) === 64;
    for (let g = 0; g < n; g++) indices[g] = big ? BigInt(g) : g;
    return makeData({ type: dt, length: n, nullCount, nullBitmap, data: indices as never, dictionary } as never);
  }
  if (type.typeId === Type.Bool) {
    const bits = new Uint8Array((n + 7) >> 3);
    for (let g = 0; g < n; g++) if (k.words[g]) bits[g >> 3] |= 1 << (g & 7);
    return makeData({ type, length: n, nullCount, nullBitmap, data: bits } as never);
  }
  return makeData({ type, length: n, nullCount, nullBitmap, data: wordsToValues(type, k.words, n) } as never);
}

/** The values array of `type` (n values) from normalized words (1 or 2 per value). */
export function wordsToValues(type: DataType, words: Int32Array, n: number): ArrayBufferView {
  const Ctor = (type as unknown as { ArrayType: (new (n: number) => { [i: number]: number }) & { BYTES_PER_ELEMENT: number } }).ArrayType;
  const width = Ctor.BYTES_PER_ELEMENT;
  if (width >= 4) {
    const copy = words.slice(0, (n * width) / 4);
    return new (Ctor as unknown as new (b: ArrayBuffer, o: number, n: number) => ArrayBufferView)(copy.buffer, 0, n);
  }
  const out = new Ctor(n);
  for (let g = 0; g < n; g++) out[g] = words[g];
  return out as unknown as ArrayBufferView;
}
