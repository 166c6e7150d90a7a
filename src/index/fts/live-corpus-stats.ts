import type { InvertedIndex } from './inverted-index.js';
import { CHUNK_MASK, CHUNK_SHIFT } from './row-terms.js';

/** Which rows of a source are live: `live[pos]` for pos < rows; `cleared` logs live → dead flips. */
export interface LiveRows {
  readonly rows: number;
  readonly live: Uint8Array;
  /** Positions that went from live to dead, in the order they did, each at most once. */
  readonly cleared: readonly number[];
}

/** Counters for tests and benchmarks: followers made, rows whose forward-index entry was read. */
export const liveCorpusWork = { rowsRead: 0, followers: 0 };

/**
 * BM25 corpus statistics over the live rows of one full-text index's source, whose older
 * versions of keys are superseded, kept by subtraction: the index already counts every row it
 * holds (a term's postings are its documents), so this keeps only what the dead rows hold — per
 * term the dead documents holding it, and the dead documents' count and tokens — and a term's
 * live document frequency is its postings below the rows accounted for minus its dead count.
 *
 * Only dead rows are read (each one's forward-index entry, once): a row cleared since the last
 * query, or an appended row that was dead from the start (a key written twice in one put). A
 * query after a put pays for the rows the put superseded; the put's own rows cost a look at
 * their live bytes; a term asked for the first time costs nothing more than one asked before.
 *
 * Follows one `LiveRows` by identity, growing `rows` and a growing `cleared` log.
 */
export class LiveCorpusStats {
  /** Per term id: dead documents among the rows accounted for that hold the term. */
  private deadDf: Int32Array;
  private docs = 0;
  private tokens = 0;
  /** Rows and cleared-log entries accounted for. */
  private counted = 0;
  private cleared = 0;

  constructor(
    readonly index: InvertedIndex,
    readonly state: LiveRows,
  ) {
    this.deadDf = new Int32Array(Math.max(64, index.termCount));
    this.append(0, state.rows);
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
    const dead = id < this.deadDf.length ? this.deadDf[id]! : 0;
    return this.index.postingsBefore(id, this.counted) - dead;
  }

  /** Accounts rows [from, to) as they are now: live ones add to the totals, dead ones to the dead counts. */
  private append(from: number, to: number): void {
    const live = this.state.live;
    const index = this.index;
    for (let pos = from; pos < to; pos++) {
      if (live[pos]) {
        const len = index.documentLength(pos);
        if (len < 0) continue;
        this.docs++;
        this.tokens += len;
      } else this.addDead(pos);
    }
  }

  /** One more dead row among those accounted for: each term its document holds gets one more dead document. */
  private addDead(pos: number): void {
    const fwd = this.index.forwardIndex();
    const r = pos - this.index.basePosition;
    if (r < 0 || r >= fwd.rows) return;
    const e = fwd.offsets[r + 1]!;
    let k = fwd.offsets[r]!;
    if (k === e) return;
    liveCorpusWork.rowsRead++;
    if (this.deadDf.length < this.index.termCount) {
      const grown = new Int32Array(Math.max(this.index.termCount, this.deadDf.length * 2));
      grown.set(this.deadDf);
      this.deadDf = grown;
    }
    const deadDf = this.deadDf;
    for (; k < e; k++) deadDf[fwd.chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]!]!++;
  }

  private catchUp(): void {
    const s = this.state;
    if (this.counted === s.rows && this.cleared === s.cleared.length) return;
    // Rows accounted for before and cleared since (later rows are accounted below, as they are now).
    for (let j = this.cleared; j < s.cleared.length; j++) {
      const pos = s.cleared[j]!;
      if (pos >= this.counted) continue;
      const len = this.index.documentLength(pos);
      if (len < 0) continue;
      this.docs--;
      this.tokens -= len;
      this.addDead(pos);
    }
    this.append(this.counted, s.rows);
    this.counted = s.rows;
    this.cleared = s.cleared.length;
  }
}
