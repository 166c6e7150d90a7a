import type { InvertedIndex } from './inverted-index.js';
import { CHUNK_MASK, CHUNK_SHIFT, type RowTerms } from './row-terms.js';

/** Which rows of a source are live: `live[pos]` for pos < rows; `cleared` logs live → dead flips. */
export interface LiveRows {
  readonly rows: number;
  readonly live: Uint8Array;
  /** Positions that went from live to dead, in the order they did, each at most once. */
  readonly cleared: readonly number[];
}

/** Counters for tests and benchmarks: terms counted over their postings, rows read from forward indexes. */
export const liveCorpusWork = { termsCounted: 0, rowsRead: 0, followers: 0 };

/**
 * Reading a changed row's forward-index entry costs about as much as this many postings: a term
 * whose postings are fewer than its backlog of changed rows times this is counted afresh.
 */
const POSTINGS_PER_ROW = 2;

/**
 * BM25 corpus statistics over the live rows of one full-text index's source, whose older
 * versions of keys are superseded: the live documents and their tokens (kept up to date for every
 * row cleared or appended), and per term the live documents holding it — counted over the term's
 * postings when first asked, and from then on followed lazily: each term remembers how far into
 * the rows and the cleared log its count goes, and when asked again reads only the rows that
 * changed since, testing each for that one term in the row's forward-index entry.
 *
 * Why lazy and per term: a put clears rows of many older sources, and the next query asks one to
 * three terms. Taking every cleared row's ~20 terms off every counted term's frequency (the
 * earlier design) touched a frequency array spread over the whole dictionary, cold after the
 * put; a query now reads each changed row's entry once (a cache line or two) and compares a few
 * ids. Terms not asked again cost nothing; a term with fewer postings than its backlog of changed
 * rows is worth (rare terms, asked seldom) is counted afresh instead.
 *
 * Follows one `LiveRows` by identity, growing `rows` and a growing `cleared` log.
 */
export class LiveCorpusStats {
  private df = new Int32Array(64);
  /** Per term id: 1 + the cleared-log entries its `df` accounts for; 0 while it was never counted. */
  private clearedAt = new Int32Array(64);
  /** Per term id: the rows its `df` accounts for. */
  private rowsAt = new Int32Array(64);
  private docs = 0;
  private tokens = 0;
  /** Rows and cleared-log entries the document totals account for. */
  private counted = 0;
  private cleared = 0;

  constructor(
    private readonly index: InvertedIndex,
    readonly state: LiveRows,
  ) {
    for (let pos = 0; pos < state.rows; pos++) if (state.live[pos]) this.addDocument(pos, 1);
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
    this.catchUpTotals();
    return { docCount: this.docs, totalTokens: this.tokens };
  }

  /** The number of live documents holding `term`, as of the state's current rows and log. */
  docFreq(term: string): number {
    const id = this.index.termIdOf(term);
    if (id < 0) return 0;
    if (id >= this.df.length) this.grow(id + 1);
    const s = this.state;
    const at = this.clearedAt[id]!;
    const backlog = at === 0 ? 0 : s.cleared.length - (at - 1) + (s.rows - this.rowsAt[id]!);
    if (at === 0 || this.index.postingCount(id) < backlog * POSTINGS_PER_ROW) {
      this.df[id] = this.index.countPostings(term, 0, s.rows, s.live);
      liveCorpusWork.termsCounted++;
    } else if (backlog > 0) {
      this.df[id] = this.follow(id, this.df[id]!, at - 1, this.rowsAt[id]!);
    }
    this.clearedAt[id] = s.cleared.length + 1;
    this.rowsAt[id] = s.rows;
    return this.df[id]!;
  }

  /** `df` of term `id` carried from (cleared-log entry `fromCleared`, row `fromRows`) to now. */
  private follow(id: number, df: number, fromCleared: number, fromRows: number): number {
    const s = this.state;
    const fwd = this.index.forwardIndex();
    const base = this.index.basePosition;
    // Cleared since, among the rows the count covered: each was live then (a row clears once).
    for (let j = fromCleared; j < s.cleared.length; j++) {
      const pos = s.cleared[j]!;
      if (pos < fromRows && holds(fwd, pos - base, id)) df--;
    }
    // Appended since and live now (one appended and cleared since is in neither count).
    for (let pos = fromRows; pos < s.rows; pos++) if (s.live[pos] && holds(fwd, pos - base, id)) df++;
    liveCorpusWork.rowsRead += s.cleared.length - fromCleared + s.rows - fromRows;
    return df;
  }

  private grow(n: number): void {
    const size = Math.max(n, this.df.length * 2);
    const widen = (a: Int32Array) => {
      const b = new Int32Array(size);
      b.set(a);
      return b;
    };
    this.df = widen(this.df);
    this.clearedAt = widen(this.clearedAt);
    this.rowsAt = widen(this.rowsAt);
  }

  private addDocument(pos: number, sign: 1 | -1): void {
    const len = this.index.documentLength(pos);
    if (len < 0) return;
    this.docs += sign;
    this.tokens += sign * len;
  }

  private catchUpTotals(): void {
    const s = this.state;
    if (this.counted === s.rows && this.cleared === s.cleared.length) return;
    // Rows accounted for before and cleared since (later rows are counted below, as they are now).
    for (let j = this.cleared; j < s.cleared.length; j++) {
      const pos = s.cleared[j]!;
      if (pos < this.counted) this.addDocument(pos, -1);
    }
    for (let pos = this.counted; pos < s.rows; pos++) if (s.live[pos]) this.addDocument(pos, 1);
    this.counted = s.rows;
    this.cleared = s.cleared.length;
  }
}

/** Whether local row `r` of the forward index holds term `id` (a row it does not cover holds none). */
function holds(fwd: RowTerms, r: number, id: number): boolean {
  if (r < 0 || r >= fwd.rows) return false;
  for (let k = fwd.offsets[r]!, e = fwd.offsets[r + 1]!; k < e; k++) if (fwd.chunks[k >>> CHUNK_SHIFT]![k & CHUNK_MASK]! === id) return true;
  return false;
}
