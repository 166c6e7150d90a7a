import type { InvertedIndex } from './inverted-index.js';
import { CHUNK_MASK, CHUNK_SHIFT } from './row-terms.js';

/** Which rows of a source are live: `live[pos]` for pos < rows; `cleared` logs live → dead flips. */
export interface LiveRows {
  readonly rows: number;
  readonly live: Uint8Array;
  /** Positions that went from live to dead, in the order they did, each at most once. */
  readonly cleared: readonly number[];
}

/** Counters for tests and benchmarks: terms counted over their postings, rows read from forward indexes. */
export const liveDocFreqWork = { termsCounted: 0, rowsRead: 0, followers: 0 };

/** Appended rows past which counting the asked terms afresh is cheaper than reading every row. */
const MAX_APPEND_WALK = 4096;

/**
 * Live document frequencies of one full-text index's terms, for BM25 statistics over a source
 * whose older versions of keys are superseded. A term is counted over the live rows once, when
 * first asked; from then on every term's count follows the rows: a row cleared since takes one
 * off each term it holds, a live row appended adds one — each read from the index's forward
 * index, once for all terms. A query after a put pays for the put's rows, whatever terms it asks.
 *
 * Follows one `LiveRows` by identity, growing `rows` and a growing `cleared` log.
 */
export class LiveDocFreqs {
  private df = new Int32Array(64);
  private known = new Uint8Array(64);
  private knownCount = 0;
  private rows = 0;
  private cleared = 0;

  constructor(
    private readonly index: InvertedIndex,
    readonly state: LiveRows,
  ) {
    this.rows = state.rows;
    this.cleared = state.cleared.length;
    liveDocFreqWork.followers++;
  }

  /** The number of live documents holding `term`, as of the state's current rows and log. */
  get(term: string): number {
    this.catchUp();
    const id = this.index.termIdOf(term);
    if (id < 0) return 0;
    if (id >= this.known.length) {
      const n = Math.max(id + 1, this.known.length * 2);
      const known = new Uint8Array(n);
      known.set(this.known);
      this.known = known;
      const df = new Int32Array(n);
      df.set(this.df);
      this.df = df;
    }
    if (this.known[id] === 0) {
      this.known[id] = 1;
      this.knownCount++;
      this.df[id] = this.index.countPostings(term, 0, this.rows, this.state.live);
      liveDocFreqWork.termsCounted++;
    }
    return this.df[id]!;
  }

  private catchUp(): void {
    const s = this.state;
    if (this.knownCount === 0 || s.rows - this.rows > MAX_APPEND_WALK) {
      // Nothing to follow, or more appended rows than are worth reading: count asked terms afresh.
      this.forget();
      return;
    }
    if (this.rows === s.rows && this.cleared === s.cleared.length) return;
    const fwd = this.index.forwardIndex();
    const base = this.index.basePosition;
    const { offsets, chunks } = fwd;
    const known = this.known;
    const df = this.df;
    // Rows counted before and cleared since (later rows are counted below, as they are now).
    for (let j = this.cleared; j < s.cleared.length; j++) {
      const r = s.cleared[j]! - base;
      if (r < 0 || r + base >= this.rows || r >= fwd.rows) continue;
      for (let k = offsets[r]!, e = offsets[r + 1]!; k < e; k++) {
        const id = chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]!;
        if (id < known.length && known[id] === 1) df[id]!--;
      }
    }
    for (let pos = this.rows; pos < s.rows; pos++) {
      const r = pos - base;
      if (!s.live[pos] || r < 0 || r >= fwd.rows) continue;
      for (let k = offsets[r]!, e = offsets[r + 1]!; k < e; k++) {
        const id = chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]!;
        if (id < known.length && known[id] === 1) df[id]!++;
      }
    }
    liveDocFreqWork.rowsRead += s.cleared.length - this.cleared + s.rows - this.rows;
    this.rows = s.rows;
    this.cleared = s.cleared.length;
  }

  private forget(): void {
    if (this.knownCount > 0) this.known.fill(0);
    this.knownCount = 0;
    this.rows = this.state.rows;
    this.cleared = this.state.cleared.length;
  }
}
