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
export const liveCorpusWork = { termsCounted: 0, rowsRead: 0, followers: 0 };

/** Appended rows past which counting the asked terms afresh is cheaper than reading every row. */
const MAX_APPEND_WALK = 4096;

/**
 * BM25 corpus statistics over the live rows of one full-text index's source, whose older
 * versions of keys are superseded: the live documents and their tokens (counted once, then kept),
 * and per term the live documents holding it (counted over the term's postings when first asked;
 * from then on following the rows). Each row cleared since the last query takes its length off
 * the totals and one off every counted term it holds; each live row appended adds them — read
 * from the index's forward index, once for all terms. A query after a put pays for the put's
 * rows, whatever terms it asks.
 *
 * Follows one `LiveRows` by identity, growing `rows` and a growing `cleared` log.
 */
export class LiveCorpusStats {
  private df = new Int32Array(64);
  /**
   * Bit per term id: its `df` is counted and followed. A bitset, not a byte per term: every row
   * read (cleared or appended since the last query) tests each of its terms here, and after a
   * put this array is cold; a tenth of a byte a term is a few dozen cache lines for a
   * generation's whole dictionary.
   */
  private known = new Uint32Array(2);
  private knownCount = 0;
  private docs = 0;
  private tokens = 0;
  /** Rows and cleared-log entries accounted for. */
  private counted = 0;
  private cleared = 0;

  constructor(
    private readonly index: InvertedIndex,
    readonly state: LiveRows,
  ) {
    for (let pos = 0; pos < state.rows; pos++) if (state.live[pos]) this.addDocument(pos);
    this.counted = state.rows;
    this.cleared = state.cleared.length;
    liveCorpusWork.followers++;
  }

  /** Rows accounted for (a state that shrank below this needs a new follower). */
  get rows(): number {
    return this.counted;
  }

  /** Live documents and their tokens, as of the state's current rows and log. */
  totals(): { docCount: number; totalTokens: number } {
    this.catchUp();
    return { docCount: this.docs, totalTokens: this.tokens };
  }

  /** The number of live documents holding `term`, as of the state's current rows and log. */
  docFreq(term: string): number {
    this.catchUp();
    const id = this.index.termIdOf(term);
    if (id < 0) return 0;
    if (id >= this.df.length) {
      const n = Math.max(id + 1, this.df.length * 2);
      const known = new Uint32Array((n + 31) >>> 5);
      known.set(this.known);
      this.known = known;
      const df = new Int32Array(n);
      df.set(this.df);
      this.df = df;
    }
    if (((this.known[id >>> 5]! >>> (id & 31)) & 1) === 0) {
      this.known[id >>> 5]! |= 1 << (id & 31);
      this.knownCount++;
      this.df[id] = this.index.countPostings(term, 0, this.counted, this.state.live);
      liveCorpusWork.termsCounted++;
    }
    return this.df[id]!;
  }

  private addDocument(pos: number): void {
    const len = this.index.documentLength(pos);
    if (len < 0) return;
    this.docs++;
    this.tokens += len;
  }

  private catchUp(): void {
    const s = this.state;
    if (this.counted === s.rows && this.cleared === s.cleared.length) return;
    // More appended rows than are worth reading for the terms: they are counted afresh when asked.
    if (this.knownCount > 0 && s.rows - this.counted > MAX_APPEND_WALK) {
      this.known.fill(0);
      this.knownCount = 0;
    }
    const terms = this.knownCount > 0;
    const fwd = terms ? this.index.forwardIndex() : undefined;
    const base = this.index.basePosition;
    const known = this.known;
    const df = this.df;
    // Rows accounted for before and cleared since (later rows are counted below, as they are now).
    for (let j = this.cleared; j < s.cleared.length; j++) {
      const pos = s.cleared[j]!;
      if (pos >= this.counted) continue;
      const len = this.index.documentLength(pos);
      if (len >= 0) {
        this.docs--;
        this.tokens -= len;
      }
      const r = pos - base;
      if (!fwd || r < 0 || r >= fwd.rows) continue;
      for (let k = fwd.offsets[r]!, e = fwd.offsets[r + 1]!; k < e; k++) {
        const id = fwd.chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]!;
        if (id < df.length && ((known[id >>> 5]! >>> (id & 31)) & 1) === 1) df[id]!--;
      }
    }
    for (let pos = this.counted; pos < s.rows; pos++) {
      if (!s.live[pos]) continue;
      this.addDocument(pos);
      const r = pos - base;
      if (!fwd || r < 0 || r >= fwd.rows) continue;
      for (let k = fwd.offsets[r]!, e = fwd.offsets[r + 1]!; k < e; k++) {
        const id = fwd.chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]!;
        if (id < df.length && ((known[id >>> 5]! >>> (id & 31)) & 1) === 1) df[id]!++;
      }
    }
    liveCorpusWork.rowsRead += s.cleared.length - this.cleared + s.rows - this.counted;
    this.counted = s.rows;
    this.cleared = s.cleared.length;
  }
}
