/**
 * A set of 64-bit integer keys held as pairs of 32-bit words in typed arrays (open addressing,
 * linear probing), for deduplicating a single integer primary key without a BigInt or a Set
 * entry per row: a JS `Set` of bigints cost ~0.5–0.9 µs a row and a heap object per key (the
 * flush's dedup was ~0.15 s of server CPU per 100 MB of 128-dim Flight ingest).
 *
 * Keys narrower than 64 bits are sign-extended (unsigned 32-bit values keep a zero high word), so
 * distinct values of one column are distinct pairs.
 */
import { type Data, Type } from 'apache-arrow';

export class IntKeySet {
  /** Slots of four words: lo, hi, occupied, unused (16 bytes: one probe reads one cache line). */
  private slots: Int32Array;
  private mask: number;
  private count = 0;

  /** `expected`: keys to hold without growing (size it once: growing rehashes every key). */
  constructor(expected = 1024) {
    let capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    this.slots = takeSlots(capacity * 4);
    this.mask = capacity - 1;
  }

  /**
   * Gives the set's memory to the next set made with the same capacity; the set is empty (and
   * small) afterwards. A flush's set is 8 MB for 200 000 keys: made fresh for every flush, it
   * page-faulted ~2 000 times on the flush's first turn (~18 ms of one event-loop turn on the
   * VMs this project is measured on).
   */
  release(): void {
    if (this.slots.length <= MAX_SPARE_WORDS && (spare === undefined || spare.length < this.slots.length)) spare = this.slots;
    this.slots = new Int32Array(16 * 4);
    this.mask = 15;
    this.count = 0;
  }

  get size(): number {
    return this.count;
  }

  /** Adds the key (lo, hi); true when it was not in the set. */
  add(lo: number, hi: number): boolean {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const slots = this.slots;
    const mask = this.mask;
    for (let slot = hashWords(lo, hi) & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 4;
      if (slots[at + 2] === 0) {
        slots[at] = lo;
        slots[at + 1] = hi;
        slots[at + 2] = 1;
        this.count++;
        return true;
      }
      if (slots[at] === lo && slots[at + 1] === hi) return false;
    }
  }

  private grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    this.slots = new Int32Array(capacity * 4);
    this.mask = capacity - 1;
    this.count = 0;
    for (let at = 0; at < old.length; at += 4) if (old[at + 2]) this.add(old[at], old[at + 1]);
  }
}

/** One released slot array, for the next set of its capacity (`IntKeySet.release`). */
let spare: Int32Array | undefined;
/** Larger slot arrays (32 MiB: sets sized for over a million keys) are not kept. */
const MAX_SPARE_WORDS = 8 * 1024 * 1024;

function takeSlots(words: number): Int32Array {
  if (spare !== undefined && spare.length === words) {
    const s = spare;
    spare = undefined;
    return s.fill(0);
  }
  return new Int32Array(words);
}

function hashWords(lo: number, hi: number): number {
  let h = Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** `integerKeyWords` of a column of an integer or timestamp type; undefined for any other type. */
export function integerColumnWords(data: Data): ((row: number, out: Int32Array) => void) | undefined {
  const typeId = data.type.typeId;
  return typeId === Type.Int || typeId === Type.Timestamp ? integerKeyWords(data.values) : undefined;
}

/**
 * The key column's values as 32-bit words per row, when it is an integer column the set can
 * hold: `lo(row)`, `hi(row)` read straight from the typed array. Undefined for other types.
 */
export function integerKeyWords(values: unknown): ((row: number, out: Int32Array) => void) | undefined {
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) {
    const w = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
    return (row, out) => {
      out[0] = w[row * 2];
      out[1] = w[row * 2 + 1];
    };
  }
  if (values instanceof Int32Array || values instanceof Int16Array || values instanceof Int8Array) {
    return (row, out) => {
      const v = values[row];
      out[0] = v;
      out[1] = v < 0 ? -1 : 0;
    };
  }
  if (values instanceof Uint32Array || values instanceof Uint16Array || values instanceof Uint8Array) {
    return (row, out) => {
      out[0] = values[row] | 0;
      out[1] = 0;
    };
  }
  return undefined;
}
