/**
 * Exact primary-key deduplication: "newest version of a key wins, tombstones delete".
 *
 * Sources are offered newest first (active MemTable, frozen MemTables, then flushed generations
 * from the highest generation down); inside a source, rows are walked from the last position to
 * the first. The first time a key is met is its newest version; every later meeting is a
 * superseded version. A tombstone claims its key and is itself dropped from results. Exact, not
 * a Bloom-filter shortcut, which upstream found loses rows and lets stale ones through
 * (lance-memwal.md pitfall 16).
 */
import type { Data, RecordBatch } from 'apache-arrow';
import { batchKeyReader, type KeyValue } from '../schema/primary-key.js';
import { integerColumnWords, IntKeySet } from './int-key-set.js';

export class KeyDeduper {
  private readonly seen = new Set<KeyValue>();
  /** A single integer key: its values, read as words, go here instead (no BigInt per row). */
  private intSeen: IntKeySet | undefined;
  private readonly word = new Int32Array(2);

  constructor(
    private readonly keyIndexes: readonly number[],
    private readonly tombstoneIndex: number,
    /** Keys expected over every call (sizes the integer key set once); default: the first call's rows. */
    private readonly expectedKeys?: number,
  ) {}

  /** Gives the deduper's key memory back for reuse (see `IntKeySet.release`): it forgets every key it has seen. */
  release(): void {
    this.intSeen?.release();
    this.intSeen = undefined;
    this.seen.clear();
  }

  /**
   * For each batch of one source (in position order), the row indices that survive, ascending;
   * `undefined` means every row survives (no copy needed).
   */
  survivors(batches: readonly RecordBatch[], keepTombstones = false): (Uint32Array | undefined)[] {
    const out: (Uint32Array | undefined)[] = new Array(batches.length);
    for (let b = batches.length - 1; b >= 0; b--) {
      const batch = batches[b];
      const tomb = batch.data.children[this.tombstoneIndex];
      const tombBits = tomb.values as Uint8Array;
      const tombOffset = tomb.offset;
      const n = batch.numRows;
      const keep = new Uint32Array(n);
      let kept = 0;
      const words = this.integerWords(batch);
      if (words) {
        const set = (this.intSeen ??= new IntKeySet(this.expectedKeys ?? batches.reduce((rows, x) => rows + x.numRows, 0)));
        const word = this.word;
        for (let r = n - 1; r >= 0; r--) {
          words(r, word);
          if (!set.add(word[0], word[1])) continue;
          const bit = tombOffset + r;
          if (!keepTombstones && tombBits[bit >> 3] & (1 << (bit & 7))) continue;
          keep[kept++] = r;
        }
      } else {
        const key = batchKeyReader(batch, this.keyIndexes);
        for (let r = n - 1; r >= 0; r--) {
          const k = key(r);
          if (this.seen.has(k)) continue;
          this.seen.add(k);
          const bit = tombOffset + r;
          if (!keepTombstones && tombBits[bit >> 3] & (1 << (bit & 7))) continue;
          keep[kept++] = r;
        }
      }
      if (kept === n) out[b] = undefined;
      else out[b] = keep.subarray(0, kept).reverse();
    }
    return out;
  }

  /**
   * The word reader for a single integer (or timestamp) key column, else undefined. Every batch
   * a deduper sees has the table's stored schema, so one path serves them all.
   */
  private integerWords(batch: RecordBatch): ((row: number, out: Int32Array) => void) | undefined {
    if (this.keyIndexes.length !== 1) return undefined;
    const data = batch.data.children[this.keyIndexes[0]] as Data;
    const words = integerColumnWords(data);
    if (words ? this.seen.size > 0 : this.intSeen !== undefined) {
      throw new Error(`key dedup: the key column's representation changed between batches (${String(data.type)})`);
    }
    return words;
  }
}
