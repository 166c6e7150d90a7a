/**
 * Key → row position for the liveness maps (liveness.ts): the newest position of each key in
 * one source.
 *
 * Integer keys — what nearly every table uses, and what `mapKeyReader` turns 64-bit keys into
 * when they fit a double exactly — live in an open-addressing table in one Float64Array, key and
 * position side by side in a 16-byte slot, linear probing: one cache line a lookup where a JS
 * `Map` takes two or three, and one object the garbage collector never scans, where a Map's
 * backing store is a tagged array it marks on every major collection (holding a heap number for
 * every key beyond 2^31). After a put each new key is looked up in every older source; in
 * `bench/dev-liveness.ts` (ten 100 000-key generations) a 20-row put's liveness work went from
 * 108–126 to 86–90 µs p50. Other keys (strings, composite keys, 64-bit values beyond 2^53 held
 * as bigints) go to a `Map` beside it.
 *
 * -0 is stored as 0 (keys come from integer columns, where -0 does not occur). Positions are
 * non-negative integers below 2^53.
 */
import type { KeyValue } from '../schema/primary-key.js';

/** Marks an empty slot's position (positions are ≥ 0). */
const EMPTY = -1;

const scratch = new Float64Array(1);
const scratchWords = new Int32Array(scratch.buffer);

function hashNumber(key: number): number {
  scratch[0] = key === 0 ? 0 : key; // -0 and 0 hash alike
  let h = Math.imul(scratchWords[0] ^ Math.imul(scratchWords[1], 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export class KeyPositions {
  /** Slot i: key at 2i, position at 2i + 1 (EMPTY when the slot is free). */
  private slots: Float64Array;
  private mask: number;
  private numbers = 0;
  /**
   * The smallest and largest number key held: a lookup outside them answers without a probe, as
   * an LSM tree checks each file's key range first. A MemTable's new keys are looked up in every
   * older source, and sources written in key order (auto-increment ids, time-ordered keys) cover
   * disjoint ranges, so most lookups stop here instead of missing in a cold multi-megabyte table.
   */
  private minKey = Infinity;
  private maxKey = -Infinity;
  /** Keys that are not numbers. */
  private readonly others = new Map<KeyValue, number>();

  /** `expected`: keys to hold without growing. */
  constructor(expected = 64) {
    let capacity = 16;
    while (capacity < expected * 2) capacity *= 2;
    this.slots = emptySlots(capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.numbers + this.others.size;
  }

  get(key: KeyValue): number | undefined {
    if (typeof key !== 'number') return this.others.get(key);
    if (!(key >= this.minKey && key <= this.maxKey)) return undefined;
    const slots = this.slots;
    const mask = this.mask;
    for (let slot = hashNumber(key) & mask; ; slot = (slot + 1) & mask) {
      const pos = slots[2 * slot + 1];
      if (pos === EMPTY) return undefined;
      if (slots[2 * slot] === key) return pos;
    }
  }

  set(key: KeyValue, position: number): void {
    if (typeof key !== 'number') {
      this.others.set(key, position);
      return;
    }
    if ((this.numbers + 1) * 2 > this.mask + 1) this.grow();
    if (key < this.minKey) this.minKey = key;
    if (key > this.maxKey) this.maxKey = key;
    this.put(key === 0 ? 0 : key, position);
  }

  /** Calls `fn` with every key (in no particular order). */
  forEachKey(fn: (key: KeyValue) => void): void {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i += 2) if (slots[i + 1] !== EMPTY) fn(slots[i]);
    for (const k of this.others.keys()) fn(k);
  }

  private put(key: number, position: number): void {
    const slots = this.slots;
    const mask = this.mask;
    for (let slot = hashNumber(key) & mask; ; slot = (slot + 1) & mask) {
      const at = 2 * slot;
      if (slots[at + 1] === EMPTY) {
        slots[at] = key;
        slots[at + 1] = position;
        this.numbers++;
        return;
      }
      if (slots[at] === key) {
        slots[at + 1] = position;
        return;
      }
    }
  }

  private grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    this.slots = emptySlots(capacity);
    this.mask = capacity - 1;
    this.numbers = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== EMPTY) this.put(old[i], old[i + 1]);
  }
}

function emptySlots(capacity: number): Float64Array {
  const slots = new Float64Array(capacity * 2);
  for (let i = 1; i < slots.length; i += 2) slots[i] = EMPTY;
  return slots;
}
