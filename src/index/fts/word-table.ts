/**
 * Open-addressing hash table from a word, given as a span of a string, to an integer (the
 * index's surface-word → term-id cache). Looking a span up needs no substring, so known words
 * cost no allocation; slots keep (hash, value, offset, length) together and the words' UTF-16
 * code units live in one pooled Uint16Array, so a lookup usually touches two cache lines.
 */
const EMPTY = 0x7fffffff;

export function hashSpan(s: string, start: number, end: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = start; i < end; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

/** `hashSpan` of the lower-cased form of the ASCII word `bytes[start, start + len)` (letters and digits). */
export function hashAsciiWord(bytes: Uint8Array, start: number, len: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = start; i < start + len; i++) h = Math.imul(h ^ (bytes[i]! | 0x20), 0x01000193);
  return h;
}

export class WordTable {
  /** Stride 4: hash, value, pool offset, length. */
  private slots: Int32Array;
  private mask: number;
  private pool: Uint16Array = new Uint16Array(1 << 16);
  private poolUsed = 0;
  private count = 0;

  constructor(capacityPow2 = 1 << 12) {
    this.slots = WordTable.emptySlots(capacityPow2);
    this.mask = capacityPow2 - 1;
  }

  private static emptySlots(cap: number): Int32Array {
    const a = new Int32Array(cap * 4);
    for (let i = 1; i < a.length; i += 4) a[i] = EMPTY;
    return a;
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.slots = WordTable.emptySlots(1 << 12);
    this.mask = (1 << 12) - 1;
    this.poolUsed = 0;
    this.count = 0;
  }

  /** Value stored for `s[start, end)` (hash `h` = hashSpan(s, start, end)), or undefined. */
  get(s: string, start: number, end: number, h: number): number | undefined {
    const slots = this.slots;
    const pool = this.pool;
    const len = end - start;
    let i = h & this.mask;
    while (true) {
      const at = i * 4;
      const v = slots[at + 1]!;
      if (v === EMPTY) return undefined;
      if (slots[at] === h && slots[at + 3] === len) {
        const off = slots[at + 2]!;
        let k = 0;
        while (k < len && pool[off + k] === s.charCodeAt(start + k)) k++;
        if (k === len) return v;
      }
      i = (i + 1) & this.mask;
    }
  }

  /**
   * Value stored for the lower-cased form of the ASCII word `bytes[start, start + len)`, made of
   * ASCII letters and digits only (as `scanAsciiWords` finds them); `h` is its `hashAsciiWord`. Looks up the same entries as `get` on the lower-cased string: a stored code
   * unit is compared with `byte | 0x20`, which lower-cases A–Z and leaves a–z and 0–9 unchanged.
   */
  getAscii(bytes: Uint8Array, start: number, len: number, h: number): number | undefined {
    const slots = this.slots;
    const pool = this.pool;
    const mask = this.mask;
    let i = h & mask;
    while (true) {
      const at = i * 4;
      const v = slots[at + 1]!;
      if (v === EMPTY) return undefined;
      if (slots[at] === h && slots[at + 3] === len) {
        const off = slots[at + 2]! - start;
        let k = start;
        const end = start + len;
        while (k < end && pool[off + k] === (bytes[k]! | 0x20)) k++;
        if (k === end) return v;
      }
      i = (i + 1) & mask;
    }
  }

  /** Stores a value for a span not yet present. `value` must not be 0x7fffffff. */
  set(s: string, start: number, end: number, h: number, value: number): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.rehash();
    const len = end - start;
    if (this.poolUsed + len > this.pool.length) {
      const next = new Uint16Array(Math.max(this.pool.length * 2, this.poolUsed + len));
      next.set(this.pool.subarray(0, this.poolUsed));
      this.pool = next;
    }
    const off = this.poolUsed;
    for (let k = 0; k < len; k++) this.pool[off + k] = s.charCodeAt(start + k);
    this.poolUsed += len;
    this.insert(h, value, off, len);
    this.count++;
  }

  private insert(h: number, value: number, off: number, len: number): void {
    let i = h & this.mask;
    while (this.slots[i * 4 + 1] !== EMPTY) i = (i + 1) & this.mask;
    const at = i * 4;
    this.slots[at] = h;
    this.slots[at + 1] = value;
    this.slots[at + 2] = off;
    this.slots[at + 3] = len;
  }

  private rehash(): void {
    const old = this.slots;
    const cap = (this.mask + 1) * 2;
    this.slots = WordTable.emptySlots(cap);
    this.mask = cap - 1;
    for (let at = 0; at < old.length; at += 4) {
      if (old[at + 1] !== EMPTY) this.insert(old[at]!, old[at + 1]!, old[at + 2]!, old[at + 3]!);
    }
  }
}

/**
 * Open-addressing hash table from a short word, packed into three int32 (up to 12 bytes, as
 * `scanAsciiWords` packs them; never all zero), to an integer ≥ −1. A slot is four int32 (the
 * packed word and the value + 2, 0 marking an empty slot), four slots a cache line, so a lookup
 * usually reads one cache line and compares three integers: no string, no separate pool.
 */
export class PackedWordTable {
  private slots: Int32Array;
  private mask: number;
  private count = 0;

  constructor(capacityPow2 = 1 << 12) {
    this.slots = new Int32Array(capacityPow2 * 4);
    this.mask = capacityPow2 - 1;
  }

  get size(): number {
    return this.count;
  }

  clear(): void {
    this.slots = new Int32Array(4 << 12);
    this.mask = (1 << 12) - 1;
    this.count = 0;
  }

  /** Value stored for the packed word (w0, w1, w2), or undefined. */
  get(w0: number, w1: number, w2: number): number | undefined {
    const slots = this.slots;
    const mask = this.mask;
    let i = packedHash(w0, w1, w2) & mask;
    while (true) {
      const at = i << 2;
      const v = slots[at + 3]!;
      if (v === 0) return undefined;
      if (slots[at] === w0 && slots[at + 1] === w1 && slots[at + 2] === w2) return v - 2;
      i = (i + 1) & mask;
    }
  }

  /** Stores `value` (−1 … 2^31 − 3) for a packed word not yet present. */
  set(w0: number, w1: number, w2: number, value: number): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.rehash();
    this.insert(w0, w1, w2, value + 2);
    this.count++;
  }

  private insert(w0: number, w1: number, w2: number, stored: number): void {
    const slots = this.slots;
    let i = packedHash(w0, w1, w2) & this.mask;
    while (slots[(i << 2) + 3] !== 0) i = (i + 1) & this.mask;
    const at = i << 2;
    slots[at] = w0;
    slots[at + 1] = w1;
    slots[at + 2] = w2;
    slots[at + 3] = stored;
  }

  private rehash(): void {
    const old = this.slots;
    const cap = (this.mask + 1) * 2;
    this.slots = new Int32Array(cap * 4);
    this.mask = cap - 1;
    for (let at = 0; at < old.length; at += 4) {
      if (old[at + 3] !== 0) this.insert(old[at]!, old[at + 1]!, old[at + 2]!, old[at + 3]!);
    }
  }
}

/** Hash of a packed word (multiply-xorshift mixing: the packed bytes are low in entropy). */
function packedHash(w0: number, w1: number, w2: number): number {
  let h = Math.imul(w0, 0x9e3779b1) ^ Math.imul(w1, 0x85ebca6b) ^ Math.imul(w2, 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 13;
  return h;
}
