/**
 * In-memory inverted index with BM25 scoring (the MemTable's `FtsMemIndex`, lance-memwal §5.4).
 * Self-contained: depends only on apache-arrow and the tokenizer/query modules beside it.
 *
 * ## Data layout (no per-posting objects)
 * - Term dictionary: `Map<string, termId>`, term strings by id, and term ids bucketed by length
 *   in code points together with a 32-bit character signature (for bounded fuzzy expansion).
 * - Per term two growable `Uint32Array`s:
 *     `post[id]`:   interleaved pairs (global row position, end offset of this document's token
 *                   positions in `tokPos[id]`); tf = end − previous end;
 *     `tokPos[id]`: token positions, grouped by document in posting order.
 *   They are views into shared 1 MiB chunks with per-size free lists (see `SlabAllocator`, which
 *   also recycles chunks across indexes), grow ×4 while small and ×2 from 4 096 entries; a
 *   sealed index (`sealSteps`) has them packed to their exact lengths in new chunks. An index
 *   made by `remapped` or `fromArrow` holds them as runs of two buffers instead (`runs`); either
 *   way a term's views are made when a reader first asks for them. Posting counts,
 *   token-position counts, and the largest tf / smallest document length per term (score upper
 *   bounds) live in growable `Uint32Array`s indexed by term id. Postings are appended in
 *   increasing row position, so they are sorted.
 * - Documents: rows `base … base + span − 1`. `docLen` (tokens per row, 0 for null rows and gaps)
 *   plus prefix sums `prefDocs` (documents) and `prefTokens` (tokens, Float64 so totals beyond
 *   2^32 stay exact) make `stats(…, maxPosition)` O(terms × log postings).
 * - Insertion: `add` tokenizes rows into a token buffer (a hash table maps each lower-cased word
 *   straight to its term id, so known words cost no string allocation, stemming or Map lookup;
 *   ASCII rows of an Arrow Utf8 column are tokenized from their bytes, without a string per row,
 *   and words of up to 12 bytes are looked up packed into three integers; `addTokenized` takes
 *   rows another thread tokenized), then, at the end of the call or every 2^16 tokens, groups the
 *   buffer by term (a counting sort, terms in id order) into an immutable segment
 *   (posting-segments.ts). A term's postings are its per-term arrays followed by its runs in the
 *   segments: a read moves the runs of the terms it reads into their arrays (`ensureTerm`), and
 *   sealing moves every term's in one pass over the segments (`mergeSegmentsSteps`), so a write
 *   touches no per-term array at all.
 *
 * ## BM25 (exact; see `bm25Idf`/`bm25TermScore`)
 * k1 = 1.2, b = 0.75, N = docCount, df, tf, dl as documented in `FtsStats`;
 * idf = ln((N − df + 0.5)/(df + 0.5) + 1), avgdl = totalTokens / N,
 * score(term) = idf × tf × (k1 + 1) / (tf + k1 × (1 − b + b × dl / avgdl)).
 * - N counts non-null texts below the cutoff, including empty texts and texts that yield no token
 *   (they are documents of length 0, matching nothing); null texts and position gaps are not
 *   documents.
 * - dl counts the tokens emitted by the tokenizer (stop words and over-long words excluded).
 * - A phrase clause scores Σ over its query tokens (duplicates included) of the term formula with
 *   tf = the number of phrase occurrences in the document (each term keeping its own idf).
 * - A fuzzy clause scores Σ over the expansions present in the document, each scored as its own
 *   term with its own df.
 * - A document's score is Σ over the positive clauses it matches of boost × clause score.
 *
 * ## Phrase matching
 * Query tokens t0…tn−1 at word offsets o0 = 0 < o1 < … (stop-word gaps kept). An occurrence
 * starting at document position p0 (holding t0) exists when there are positions p1 < p2 < … with
 * pi holding ti, pi − pi−1 ≥ oi − oi−1, and (pn−1 − p0) − (on−1 − o0) ≤ slop. Terms must appear in
 * query order (no transpositions). The phrase frequency is the number of such start positions
 * p0 (overlapping occurrences count: "a a" occurs twice in "a a a"). Checked greedily: taking the
 * earliest admissible position for each next token minimises the span.
 *
 * ## Global statistics and fuzzy expansion
 * Scores depend on statistics of every source a query spans. The caller gathers the terms with
 * `queryTerms(query)` from every source, gets `stats(terms, cutoff)` from every source, merges
 * them (`mergeFtsStats`, or `addFtsStats` in place), and passes the merged stats to each source's `search`
 * (`collectFtsStats` does all of that). A fuzzy clause expands to the `maxExpansions` best
 * candidates, ordered by (edit distance, term in UTF-16 order), among terms with a visible
 * df > 0. Each source proposes its own best candidates in `queryTerms`; `search` picks the final
 * expansions from the keys of the merged `stats.docFreq` with df > 0 by the same order. Because
 * the order does not depend on per-source data, the result equals the expansion over the union
 * of all dictionaries, so split indexes score exactly like one index.
 *
 * ## Search
 * Term-at-a-time: `mustNot` clauses mark excluded rows; `must` clauses run cheapest first, the
 * first one creates candidates, each next one keeps only the candidates that matched all previous
 * ones; `should` clauses add score to candidates (or create them when there is no `must`).
 * Scores accumulate in a reusable Float64Array over the local position range with an epoch-stamped
 * touched list (Float64 rather than Float32 so sums stay exact to ~1e-15; results are returned as
 * Float32). When the candidates are few compared with a posting list, they are looked up in it by
 * galloping search instead of scanning it. Optional-only queries use exact MaxScore-style
 * pruning (`runShouldOnly`). The top k come from a bounded heap (score descending, ties by
 * position ascending); `allowed` is evaluated only for candidates that would enter the heap, so
 * it is a true prefilter: k results are returned whenever k allowed documents match.
 *
 * ## Sidecar (`toArrow` / `fromArrow`)
 * One Arrow table holding two parallel arrays of different lengths, the shorter padded with nulls:
 *   term            Utf8              row i < term_count: the i-th term in UTF-16 order (sorted, so
 *                                     a reader can binary-search it); null in padding rows
 *   doc_positions   List<UInt32>      the term's global row positions, ascending
 *   frequencies     List<UInt32>      tf per posting (same length as doc_positions)
 *   token_positions List<UInt32>      all token positions of the term, posting after posting
 *                                     (posting j owns the next frequencies[j] entries)
 *   doc_length      UInt32            row i < doc_span: length in tokens of row position
 *                                     base_position + i; null = not a document (null text or gap)
 * Schema metadata `quiver.fts.version` (1), `.tokenizer` (JSON of the resolved options, checked by
 * `fromArrow`), `.base_position`, `.doc_span`, `.term_count`, `.doc_count`, `.total_tokens`.
 * List offsets are Int32 (≤ 2^31 − 1 token positions per sidecar).
 */
import {
  Data,
  Field,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Uint32,
  Utf8,
  Vector,
} from 'apache-arrow';
import {
  codePointLength,
  type FtsClause,
  type FtsQuery,
  parseFtsQuery,
  validateFtsQuery,
} from './query.js';
import {
  analyzeWord,
  asciiWordString,
  isAsciiBytes,
  resolveTokenizerOptions,
  sameTokenizerOptions,
  scanAsciiWords,
  scanWordSpans,
  WordSpans,
  type ResolvedTokenizerOptions,
  type TokenizerOptions,
} from './tokenizer.js';
import { hashAsciiWord, hashSpan, WordTable } from './word-table.js';
import { SharedLexicon } from './shared-lexicon.js';
import { FuzzyMatcher, charMask, mayBeWithin } from './fuzzy.js';
import { RowTerms } from './row-terms.js';
import { SLAB_CHUNK_ENTRIES, SlabAllocator } from './slab-allocator.js';
import { firstPostingFrom, mergeSegments, SegmentArena, segmentTermIndex, segmentTokens, type PostingSegment } from './posting-segments.js';
import type { LexiconMirror, TokenCursor, TokenizedRows } from './row-tokens.js';
import { int32WithRoom } from '../../util/int32-room.js';
import { runSteps, StepPace } from '../../util/steps.js';
import { sortStringsSteps } from '../../util/sort-strings.js';
import { MAP_ENTRY, OBJECT, SIZED_PARTS, SLOT, STRING, type SizedParts } from '../../util/memory-estimate.js';

export { boundedLevenshtein } from './fuzzy.js';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Collection statistics for BM25. */
export interface FtsStats {
  /** Documents (non-null texts) below the cutoff. */
  docCount: number;
  /** Sum of their lengths in tokens. */
  totalTokens: number;
  /** Documents below the cutoff containing each term (requested terms absent from a source map to 0). */
  docFreq: Map<string, number>;
}

export interface FtsSearchOptions {
  /** Number of results wanted. */
  k: number;
  /**
   * Global statistics (summed over every source by the caller, see `collectFtsStats`).
   * Defaults to this index's own statistics for the query at `maxPosition`.
   */
  stats?: FtsStats;
  /** Prefilter on row position, applied before the top-k cut. */
  allowed?: (pos: number) => boolean;
  /**
   * The same prefilter as a mask indexed by row position (1 = allowed; give one or the other).
   * Cheap enough to test on every posting, so rows it rejects are never scored or touched —
   * with a selective filter most of a long list.
   */
  allowedMask?: Uint8Array;
  /** Visibility cutoff: only rows with position < maxPosition are searched. */
  maxPosition?: number;
  /**
   * Rows scoring below this cannot be wanted (a caller merging several sources passes the k-th
   * best score found so far): MaxScore pruning starts from it. Rows below it may still be
   * returned; rows at or above it that belong in the top k always are.
   */
  minScore?: number;
}

export interface FtsSearchResult {
  /** Row positions, best first (score descending, ties by position ascending). */
  positions: Uint32Array;
  scores: Float32Array;
}

export type FtsTexts = Data<Utf8> | Vector<Utf8> | readonly (string | null | undefined)[];

/** Clause plans, cheapest first. */
function byCost(a: Plan, b: Plan): number {
  return a.cost - b.cost;
}

/** Whether result (s1, p1) ranks below (s2, p2): a lower score, or a tie at a later position. */
function worse(s1: number, p1: number, s2: number, p2: number): boolean {
  return s1 < s2 || (s1 === s2 && p1 > p2);
}

/** `topK`'s heap, read by `bestFirst` (a module-level comparator: no closure per search). */
let heapScores = new Float64Array(0);
let heapPositions = new Uint32Array(0);
/** Heap slots in result order: best score first, ties by position. */
function bestFirst(a: number, b: number): number {
  return heapScores[b]! - heapScores[a]! || heapPositions[a]! - heapPositions[b]!;
}

export function bm25Idf(docCount: number, df: number): number {
  return Math.log((docCount - df + 0.5) / (df + 0.5) + 1);
}

/** One term's BM25 contribution (without idf when `idf` = 1). */
export function bm25TermScore(idf: number, tf: number, dl: number, avgdl: number): number {
  return (idf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * dl) / avgdl));
}

export function emptyFtsStats(): FtsStats {
  return { docCount: 0, totalTokens: 0, docFreq: new Map() };
}

/** Sums two statistics (a new object; inputs are not modified). */
export function mergeFtsStats(a: FtsStats, b: FtsStats): FtsStats {
  const merged: FtsStats = { docCount: a.docCount, totalTokens: a.totalTokens, docFreq: new Map(a.docFreq) };
  addFtsStats(merged, b);
  return merged;
}

/** Adds `b` into `into` in place (what `mergeFtsStats` returns, without copying `into`). */
export function addFtsStats(into: FtsStats, b: FtsStats): void {
  into.docCount += b.docCount;
  into.totalTokens += b.totalTokens;
  for (const [t, df] of b.docFreq) into.docFreq.set(t, (into.docFreq.get(t) ?? 0) + df);
}

/**
 * Global statistics for `query` over several sources (each with its own visibility cutoff):
 * the union of every source's `queryTerms`, then the sum of every source's `stats`.
 */
export function collectFtsStats(
  sources: readonly { index: InvertedIndex; maxPosition?: number }[],
  query: FtsQuery,
): FtsStats {
  const terms = new Set<string>();
  for (const s of sources) for (const t of s.index.queryTerms(query, s.maxPosition)) terms.add(t);
  const list = [...terms];
  const stats = emptyFtsStats();
  for (const t of list) stats.docFreq.set(t, 0);
  for (const s of sources) addFtsStats(stats, s.index.stats(list, s.maxPosition));
  return stats;
}

interface Candidate {
  term: string;
  dist: number;
}

const byDistThenTerm = (x: Candidate, y: Candidate): number =>
  x.dist - y.dist || (x.term < y.term ? -1 : x.term > y.term ? 1 : 0);

// ---------------------------------------------------------------------------------------------

const enum Mode {
  Exclude,
  /** Creates candidates (first must clause, or any should clause without must). */
  Touch,
  /** Later must clause: keeps candidates that matched all previous must clauses. */
  MustNext,
  /** Should clause when must clauses exist: adds score to full must matches only. */
  ShouldWithMust,
  /** Adds score to touched rows only (pruned optional clauses). */
  Update,
}

interface ResolvedTerm {
  id: number;
  /** Number of postings below the cutoff. */
  end: number;
  idf: number;
}

interface Plan {
  clause: FtsClause;
  terms: ResolvedTerm[];
  cost: number;
}

/** Block-max bounds of one term's posting list (`InvertedIndex.termBlocks`). */
interface TermBlocks {
  /** avgdl the values were computed with. */
  avgdl: number;
  /** Per full block: max tf / (tf + c0 + c1·dl) over its postings. */
  vals: Float64Array;
  /** Full blocks computed. */
  count: number;
}

/** How `sealSteps` sealed indexes in this process: packed into slab chunks, or into two buffers (tests read these). */
export const ftsSealCounts = { packed: 0, runs: 0 };
/**
 * What the posting segments did in this process (tests read these): segments made from the
 * insertion buffer, merges of small ones, term runs moved into a term's arrays for a read, and
 * seals, remaps or sidecars that moved every term's.
 */
export const ftsSegmentCounts = { built: 0, mergedSmall: 0, runsMoved: 0, mergedAll: 0 };
/**
 * Counters for tests and benchmarks: postings the block-max path (`runFirstTermPruned`) scored and
 * skipped; postings `runTerm` scanned touching rows or updating touched ones, touched rows it
 * looked up by galloping instead; and `search` calls.
 */
export const ftsSearchWork = { prunedScored: 0, prunedSkipped: 0, touchScanned: 0, updateScanned: 0, galloped: 0, searches: 0 };

/** Postings per block of the block-max bounds. */
const BLOCK_POSTINGS = 64;
/** Lists shorter than this are scored whole (no block bounds). */
const PRUNE_MIN_POSTINGS = 4 * BLOCK_POSTINGS;
/** Terms whose block bounds an index keeps before it starts over (bounds the cache). */
const MAX_BLOCK_MAX_TERMS = 65_536;

const META_PREFIX = 'quiver.fts.';
/** Segments of fewer token positions are merged, SMALL_SEGMENTS_MERGED at a time (a series of small writes read in between). */
const SMALL_SEGMENT_TOKENS = 4096;
const SMALL_SEGMENTS_MERGED = 8;
const NO_ENTRIES = new Uint32Array(0);
const SURFACE_CACHE_LIMIT = 1 << 20;
/**
 * Buffered tokens that trigger a flush into a segment. A MemTable leaves its large writes'
 * tokens buffered (see `add`'s `defer`), so this is also the most a read may have to move first.
 */
const FLUSH_TOKENS = 1 << 16;
const FORMAT_VERSION = '1';
/** Terms `idOf` remembers (a query's terms, looked up for its statistics and again for its search). */
const RECENT_TERMS = 4;
/** Entries per term in `InvertedIndex.loc`. */
const LOC_STRIDE = 8;
/** Terms sorted between two pauses of `remapSteps` / `toArrowSteps` (~2–4 ms of string compares). */
const SORT_SLICE_TERMS = 4096;

/** A typed-array view's own heap object (see `runs`). */
const VIEW_BYTES = 120;

/**
 * Postings (two entries each) and token positions from which `sealSteps` packs an index into
 * slab chunks rather than two fresh buffers (4 chunks: at most a quarter of a chunk left over).
 */
const SEAL_IN_CHUNKS_ENTRIES = 4 * SLAB_CHUNK_ENTRIES;
/** Postings and token positions `remapSteps`, `toArrowSteps` and `fromArrowSteps` handle between two pauses (a few ms; fresh arrays page-fault as they fill). */
const REMAP_SLICE_WORK = 1 << 17;

/** Every term's postings and token positions as runs of two buffers (see `InvertedIndex.runs`). */
interface TermRuns {
  post: Uint32Array;
  tok: Uint32Array;
  postAt: Uint32Array;
  tokAt: Uint32Array;
}

/** Run buffers for `terms` terms holding `postings` postings and `tokens` token positions. */
function emptyRuns(terms: number, postings: number, tokens: number): TermRuns {
  return { post: new Uint32Array(Math.max(2, 2 * postings)), tok: new Uint32Array(Math.max(1, tokens)), postAt: new Uint32Array(terms), tokAt: new Uint32Array(terms) };
}

/** Copies entries [from, from + n) of `src` to `dst` from `at`. */
function copyRun(src: Uint32Array, from: number, dst: Uint32Array, at: number, n: number): void {
  if (n < 64) for (let i = 0; i < n; i++) dst[at + i] = src[from + i]!;
  else dst.set(src.subarray(from, from + n), at);
}

/**
 * Adds to `postCount` / `posCount` (per term) the postings and token positions of segment `seg`
 * at row positions from `matTo[id]` on (what its terms' arrays do not hold yet). A plain
 * function, not a loop inside the merge's generator, which V8 compiles to slower code.
 */
function countSegmentRuns(seg: PostingSegment, matTo: Uint32Array, postCount: Uint32Array, posCount: Uint32Array): void {
  const sp = seg.post;
  const terms = seg.terms;
  const postEnd = seg.postEnd;
  const tokEnd = seg.tokEnd;
  let ps = 0;
  for (let u = 0; u < seg.nTerms; u++) {
    const id = terms[u]!;
    const pe = postEnd[u]!;
    const q = firstPostingFrom(sp, ps, pe, matTo[id]!);
    postCount[id]! += (pe - q) >>> 1;
    posCount[id]! += tokEnd[u]! - (q === 0 ? 0 : sp[q - 1]!);
    ps = pe;
  }
}

/** Where `mergeSegmentsSteps` writes each term's arrays, and how far it has written them. */
interface MergeCursors {
  /** The arrays written into, by the indexes `where` names. */
  readonly dst: Uint32Array[];
  /** Per term, 4 entries: postings' array index and offset, then token positions'. */
  readonly where: Int32Array;
  /** Per term: next posting entry and token position to write. */
  readonly curPost: Uint32Array;
  readonly curTok: Uint32Array;
  /** Per term: score bounds, folded over what is copied. */
  readonly maxTf: Uint32Array;
  readonly minDl: Uint32Array;
  /** Per term: rows below this are in its arrays already (copied before the segments). */
  readonly matTo: Uint32Array;
}

/**
 * Appends each term's run in segment `seg` (its postings at rows from `matTo[id]` on) to the
 * term's new arrays at its cursors; returns the entries copied. A plain function for the reason
 * `countSegmentRuns` is.
 */
function copySegmentRuns(seg: PostingSegment, c: MergeCursors, docLen: Uint32Array, base: number): number {
  const { dst, where, curPost, curTok, maxTf, minDl, matTo } = c;
  const sp = seg.post;
  const st = seg.tok;
  let copied = 0;
  let ps = 0;
  for (let u = 0; u < seg.nTerms; u++) {
    const id = seg.terms[u]!;
    const pe = seg.postEnd[u]!;
    const q0 = firstPostingFrom(sp, ps, pe, matTo[id]!);
    ps = pe;
    if (q0 === pe) continue;
    const ts = q0 === 0 ? 0 : sp[q0 - 1]!;
    const te = seg.tokEnd[u]!;
    const W = 4 * id;
    const post = dst[where[W]!]!;
    const tok = dst[where[W + 2]!]!;
    const tAt = curTok[id]!;
    runBounds[0] = maxTf[id]!;
    runBounds[1] = minDl[id]!;
    // Token ends are offsets in the term's own token positions.
    copySegmentPostings(sp, q0, pe, ts, post, curPost[id]!, tAt - where[W + 3]! - ts, docLen, base);
    copyRun(st, ts, tok, tAt, te - ts);
    curPost[id]! += pe - q0;
    curTok[id] = tAt + te - ts;
    maxTf[id] = runBounds[0]!;
    minDl[id] = runBounds[1]!;
    copied += pe - q0 + te - ts;
  }
  return copied;
}

/** Largest tf and smallest document length of the postings `copySegmentPostings` copied, folded into what the caller put here. */
const runBounds = new Uint32Array(2);

/**
 * Copies a segment's postings `src[from, to)` (pairs: row position, token end; the first
 * document's tokens start at `tokStart`) to `dst` from `at`, token ends moved by `shift`, and
 * folds their largest tf and smallest document length (`docLen` by row − `base`) into `runBounds`.
 */
function copySegmentPostings(src: Uint32Array, from: number, to: number, tokStart: number, dst: Uint32Array, at: number, shift: number, docLen: Uint32Array, base: number): void {
  let maxTf = runBounds[0]!;
  let minDl = runBounds[1]!;
  let k = at;
  let prev = tokStart;
  for (let q = from; q < to; q += 2) {
    const d = src[q]!;
    const e = src[q + 1]!;
    dst[k] = d;
    dst[k + 1] = e + shift;
    k += 2;
    if (e - prev > maxTf) maxTf = e - prev;
    prev = e;
    const dl = docLen[d - base]!;
    if (dl < minDl) minDl = dl;
  }
  runBounds[0] = maxTf;
  runBounds[1] = minDl;
}

/** BM25's term-frequency factor for frequency `tf` in a row of `dl` tokens (the bound of a term whose rows have at most `tf` and at least `dl`). */
function bm25TfBound(tf: number, dl: number, avgdl: number): number {
  return (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * dl) / avgdl));
}

/** Capacity of a per-term array grown from `len` entries to hold `need`: ×4 below 4096 entries, ×2 above. */
function grownCapacity(len: number, need: number): number {
  let cap = Math.max(16, len * (len < 4096 ? 4 : 2));
  while (cap < need) cap *= 2;
  return cap;
}

function grow(a: Uint32Array, need: number): Uint32Array {
  if (need <= a.length) return a;
  let cap = Math.max(16, a.length * 2);
  while (cap < need) cap *= 2;
  const b = new Uint32Array(cap);
  b.set(a);
  return b;
}

function growF64(a: Float64Array, need: number): Float64Array {
  if (need <= a.length) return a;
  let cap = Math.max(4, a.length * 2);
  while (cap < need) cap *= 2;
  const b = new Float64Array(cap);
  b.set(a);
  return b;
}

const decoder = new TextDecoder();

/**
 * The per-row arrays a search scores into, indexed by local row, shared by every index of the
 * thread (searches are synchronous and never nest, so one is in use at a time). A query over a
 * MemTable and ten generations runs eleven searches: with arrays of their own, each source's
 * scratch was cold in cache when its turn came (and every source held ~30 bytes a document for
 * it); shared, they are the same memory, sized by the largest source. Epochs are shared too, so a
 * stamp left by another index's search is never mistaken for this search's.
 */
interface SearchScratch {
  busy: boolean;
  scores: Float64Array;
  stamp: Uint32Array;
  exclStamp: Uint32Array;
  allowStamp: Uint32Array;
  clauseStamp: Uint32Array;
  mustCnt: Uint16Array;
  touched: Uint32Array;
  selectBuf: Float64Array;
  epoch: number;
  clauseEpoch: number;
}

const NO_SCORES = new Float64Array(0);
const NO_COUNTS = new Uint16Array(0);

const scratch: SearchScratch = {
  busy: false,
  scores: NO_SCORES,
  stamp: NO_ENTRIES,
  exclStamp: NO_ENTRIES,
  allowStamp: NO_ENTRIES,
  clauseStamp: NO_ENTRIES,
  mustCnt: NO_COUNTS,
  touched: NO_ENTRIES,
  selectBuf: NO_SCORES,
  epoch: 0,
  clauseEpoch: 0,
};

export class InvertedIndex {
  readonly options: ResolvedTokenizerOptions;

  // --- documents ---
  private base = -1;
  private span = 0;
  private docCount = 0;
  private totalTokens = 0;
  private docLen: Uint32Array = new Uint32Array(16);
  /** prefDocs[i] = documents among local rows [0, i). Length ≥ span + 1. */
  private prefDocs: Uint32Array = new Uint32Array(17);
  private prefTokens: Float64Array = new Float64Array(17);

  // --- terms ---
  /**
   * Term → id, for the ids below `termIdsSynced` (filled when a read needs it, `idOf`): an index
   * whose terms all came through the lexicon (`lexComplete`) is read through it instead, so a
   * MemTable's terms need no string-keyed insert each.
   */
  private readonly termIds = new Map<string, number>();
  private termIdsSynced = 0;
  private readonly termStr: string[] = [];
  /** The last terms `idOf` found, with their ids (a lookup in a large dictionary misses the cache). */
  private readonly recentTerms: (string | undefined)[] = new Array<string | undefined>(RECENT_TERMS).fill(undefined);
  private readonly recentIds = new Int32Array(RECENT_TERMS);
  private recentAt = 0;
  /** This thread's word analysis for the index's options (shared-lexicon.ts). */
  private readonly lexicon: SharedLexicon;
  /** Lexicon id → 1 + this index's term id (0: not a term here, when `lexComplete`). For lexicon epoch `lexEpoch`. */
  private localOf: Int32Array = new Int32Array(1024);
  private lexEpoch: number;
  /**
   * Every term of this index is in `localOf` (all came through the lexicon, in its current
   * epoch): a lexicon id missing there is a term new here. False once terms came another way
   * (a sidecar, a remap) or the lexicon started over; reads then go through `termIds`.
   */
  private lexComplete = true;
  /**
   * `addTokenized`: lexicon id of the mirrored (another thread's) lexicon → 1 + this index's
   * term id (0: not looked up yet), for mirror generation `remoteGen`. Term ids here never
   * change, so it survives this thread's lexicon starting over.
   */
  private remoteOf: Int32Array = new Int32Array(0);
  private remoteMirror: LexiconMirror | null = null;
  private remoteGen = -1;
  /** Characters of all terms (for `SIZED_PARTS`: the dictionary sized without walking it). */
  private termChars = 0;
  /** Per term, views of its postings and token positions, made when first read (`postOf`, `tokOf`); undefined until then. */
  private readonly post: (Uint32Array | undefined)[] = [];
  private readonly tokPos: (Uint32Array | undefined)[] = [];
  /**
   * Set by `remapped` and `fromArrow`: the postings and token positions of the terms below
   * `postAt.length` are runs of two buffers (`post` from entry `postAt[id]`, `tok` from `tokAt[id]`; lengths from the
   * counts), and a term's views (`post[id]`, `tokPos[id]`) are made when first read. A view is a
   * ~120-byte heap object: a generation of 50 000 terms held 100 000 of them, most never read,
   * each made on the flush's critical path and each marked by every major GC.
   */
  private runs: TermRuns | null = null;
  private postCount: Uint32Array = new Uint32Array(16);
  private posCount: Uint32Array = new Uint32Array(16);
  /** Per term: largest tf and smallest document length over its postings (score upper bounds). */
  private maxTf: Uint32Array = new Uint32Array(16);
  private minDl: Uint32Array = new Uint32Array(16);
  /** Term ids by length in code points, with their `charMask`s alongside (fuzzy scans). */
  private readonly byLenIds: Uint32Array[] = [];
  private readonly byLenMasks: Uint32Array[] = [];
  private readonly byLenCount: number[] = [];
  /** Terms below this id are in the by-length buckets (filled when a fuzzy scan needs them, not per term added). */
  private byLenSynced = 0;
  private slab = new SlabAllocator();
  /**
   * Distinct term ids per document: recorded as each segment is made (from its postings), moved by
   * `remapped`, built from the postings by `fromArrow` (so a cache counts it from the start).
   */
  private fwd = new RowTerms();
  /**
   * Set by `remapped`: term ids are in UTF-16 order and every term's postings and token positions
   * are consecutive views into these buffers, in id order (`toArrow` uses it). Dropped by `add`.
   */
  private packed: { post: Uint32Array; tok: Uint32Array; postings: number; tokens: number } | null = null;

  // --- insertion buffer: tokens of recently added rows, flushed to the postings grouped by term
  // (a counting sort), so each term's arrays are touched once per flush instead of once per row.
  private bTerm: Uint32Array = new Uint32Array(1024);
  private bPos: Uint32Array = new Uint32Array(1024);
  private bDoc: Uint32Array = new Uint32Array(1024);
  private sDoc: Uint32Array = new Uint32Array(1024);
  private nTok = 0;
  private curDoc = 0;
  /** Per term id: tokens in the buffer, then the term's write cursor during a flush. */
  private bCount: Uint32Array = new Uint32Array(16);
  /** Bit per term id: has tokens in the buffer. */
  private bBits: Uint32Array = new Uint32Array(1);
  /** Term ids with buffered tokens, in increasing order (flush scratch). */
  private bTerms: Uint32Array = new Uint32Array(16);
  /**
   * Per term id, LOC_STRIDE entries: chunk, offset and capacity of `post[id]`, then of
   * `tokPos[id]`, in `slab` (chunk 0: not in `slab`, e.g. an array of `fromArrow`/`remapped`;
   * the first append moves it there). Only the insertion path reads it.
   */
  private loc: Int32Array = new Int32Array(16 * LOC_STRIDE);

  // --- segments (posting-segments.ts): each flush of the insertion buffer, grouped by term and
  // kept as it is. A term's postings are its per-term arrays (`post`/`tokPos`: slab or runs),
  // which hold those below row position `matTo[id]`, then its runs in the segments from there
  // on. A read moves the postings of the terms it reads into their arrays first (`ensureTerm`),
  // sealing moves every term's (`mergeSegmentsSteps`).
  private segs: PostingSegment[] = [];
  private segArena = new SegmentArena();
  /** Per term: its postings below this row position are in its per-term arrays. */
  private matTo: Uint32Array = new Uint32Array(16);
  /**
   * Per term that `add`/`addTokenized` created: 1 + the row position of its first posting (a
   * fuzzy candidate's visibility, without moving its postings). 0 for other terms (their first
   * posting is in their arrays).
   */
  private firstRow: Uint32Array = new Uint32Array(16);
  /** Lower-cased word → term id (−1: stop word). A cache of `analyzeWord`, cleared when large. */
  private readonly surface = new WordTable();
  /** Words of the row being indexed (`indexAscii`). */
  private readonly spans = new WordSpans();

  // --- search scratch (indexed by local row): the shared `SearchScratch`'s, during a search ---
  private scores: Float64Array = NO_SCORES;
  private stamp: Uint32Array = NO_ENTRIES;
  private exclStamp: Uint32Array = NO_ENTRIES;
  /** Search epoch at which a touched row passed the prefilter (pruning with `allowed`). */
  private allowStamp: Uint32Array = NO_ENTRIES;
  private clauseStamp: Uint32Array = NO_ENTRIES;
  private mustCnt: Uint16Array = NO_COUNTS;
  private touched: Uint32Array = NO_ENTRIES;
  private nTouched = 0;
  private epoch = 0;
  private clauseEpoch = 0;
  private mode: Mode = Mode.Touch;
  private mustIndex = 0;
  private nMust = 0;
  /** The search's `allowedMask`: rows it rejects are never touched (Touch mode). */
  private mask: Uint8Array | undefined;
  /** Per term id: block-max score bounds of its posting list (`termBlocks`), for long lists only. */
  private blockMax = new Map<number, TermBlocks>();

  constructor(opts: TokenizerOptions = {}) {
    this.options = resolveTokenizerOptions(opts);
    this.lexicon = SharedLexicon.of(this.options);
    this.lexEpoch = this.lexicon.epoch;
  }

  /** Id of `term` here, or undefined (see `termIds`, `lexComplete`). */
  private idOf(term: string): number | undefined {
    // A query asks for the same terms several times (its statistics, then its search); a term's
    // id never changes, so the last few found are remembered by the term string itself.
    const recent = this.recentTerms;
    for (let i = 0; i < RECENT_TERMS; i++) if (recent[i] === term) return this.recentIds[i];
    let id: number | undefined;
    if (this.lexComplete && this.lexEpoch === this.lexicon.epoch) {
      const g = this.lexicon.peek(term);
      if (g === undefined) return undefined;
      const l = g < this.localOf.length ? this.localOf[g]! : 0;
      id = l !== 0 ? l - 1 : undefined;
    } else {
      this.syncTermIds();
      id = this.termIds.get(term);
    }
    if (id !== undefined) {
      const at = this.recentAt;
      recent[at] = term;
      this.recentIds[at] = id;
      this.recentAt = (at + 1) % RECENT_TERMS;
    }
    return id;
  }

  /** Puts the terms `termIds` lacks into it. */
  private syncTermIds(): void {
    const n = this.termStr.length;
    for (let i = this.termIdsSynced; i < n; i++) this.termIds.set(this.termStr[i]!, i);
    this.termIdsSynced = n;
  }

  /** Forgets the lexicon ids when the lexicon started over since they were taken. */
  private checkLexEpoch(): void {
    if (this.lexEpoch === this.lexicon.epoch) return;
    this.lexEpoch = this.lexicon.epoch;
    this.localOf.fill(0);
    this.lexComplete = false;
  }

  /** Term id here of lexicon id `g` (current epoch), added to this index when new. */
  private localId(g: number): number {
    const l = g < this.localOf.length ? this.localOf[g]! : 0;
    if (l !== 0) return l - 1;
    const term = this.lexicon.term(g);
    const known = this.lexComplete ? undefined : this.idOf(term);
    let id = known;
    if (id === undefined) {
      // Its postings go to segments: arrays are made when a read or a seal moves them there.
      id = this.termId(term, false, true);
      this.firstRow[id] = this.curDoc + 1;
    }
    this.localOf = int32WithRoom(this.localOf, g);
    this.localOf[g] = id + 1;
    return id;
  }

  /** Term `id`'s postings: pairs (row position, token end offset), `postCount[id]` of them (the array may be longer). */
  private postOf(id: number): Uint32Array {
    const p = this.post[id];
    if (p !== undefined) return p;
    return (this.post[id] = this.viewOf(id * LOC_STRIDE, id, true));
  }

  /** Term `id`'s token positions, `posCount[id]` of them (the array may be longer). */
  private tokOf(id: number): Uint32Array {
    const t = this.tokPos[id];
    if (t !== undefined) return t;
    return (this.tokPos[id] = this.viewOf(id * LOC_STRIDE + 3, id, false));
  }

  /**
   * `postOf` / `tokOf` without keeping the view: for a read that does not come back (a flush's
   * remap of an index about to be dropped, a growth that moves the array), so no view per term
   * is left behind.
   */
  private postingsOnce(id: number): Uint32Array {
    return this.post[id] ?? this.viewOf(id * LOC_STRIDE, id, true);
  }
  private tokensOnce(id: number): Uint32Array {
    return this.tokPos[id] ?? this.viewOf(id * LOC_STRIDE + 3, id, false);
  }

  /** Where the array `backing` returned starts. */
  private backingAt = 0;

  /**
   * The array holding term `id`'s postings (or token positions) from `backingAt` on — its view
   * if one was made, its slab chunk, or its run — without making a view (a bulk reader of every
   * term, such as `toArrowSteps`, made ~100 000 of them for a 50 000-term index).
   */
  private backing(L: number, id: number, postings: boolean): Uint32Array {
    const view = postings ? this.post[id] : this.tokPos[id];
    this.backingAt = 0;
    if (view !== undefined) return view;
    const c = L < this.loc.length ? this.loc[L]! : 0;
    if (c !== 0) {
      this.backingAt = this.loc[L + 1]!;
      return this.slab.chunks[c]!;
    }
    const r = this.runs;
    if (r === null || id >= r.postAt.length) return NO_ENTRIES;
    this.backingAt = postings ? r.postAt[id]! : r.tokAt[id]!;
    return postings ? r.post : r.tok;
  }



  /** A view of term `id`'s array: at its slab location `loc[L..L+2]`, else its run, else empty. */
  private viewOf(L: number, id: number, postings: boolean): Uint32Array {
    const c = L < this.loc.length ? this.loc[L]! : 0;
    if (c !== 0) {
      const off = this.loc[L + 1]!;
      return this.slab.chunks[c]!.subarray(off, off + this.loc[L + 2]!);
    }
    const r = this.runs;
    if (r === null || id >= r.postAt.length) return NO_ENTRIES;
    const at = postings ? r.postAt[id]! : r.tokAt[id]!;
    return (postings ? r.post : r.tok).subarray(at, at + (postings ? 2 * this.postCount[id]! : this.posCount[id]!));
  }

  /**
   * The dictionary and the per-term view arrays, sized in bulk for `estimateBytes` (a cache's
   * budget): each term's string once (the map's key and `termStr` are the same string), its map
   * entry and array slots, and each view's object; the buffers the views hold are walked. Walking
   * them instead touched every one of ~50 000 strings twice, 10–40 ms on a flush's event loop.
   */
  [SIZED_PARTS](): SizedParts {
    const n = this.termStr.length;
    let bytes = OBJECT + this.termIds.size * MAP_ENTRY + 2 * (OBJECT + n * SLOT) + n * STRING + 2 * this.termChars + this.localOf.byteLength + VIEW_BYTES;
    const walk: Uint32Array[] = [];
    for (const views of [this.post, this.tokPos]) {
      bytes += OBJECT + views.length * SLOT;
      let last: ArrayBufferLike | undefined;
      for (const v of views) {
        if (v === undefined) continue;
        bytes += VIEW_BYTES;
        if (v.buffer !== last) {
          last = v.buffer;
          walk.push(v);
        }
      }
    }
    return { bytes, parts: [this.termIds, this.termStr, this.post, this.tokPos, this.localOf], walk };
  }

  /** Number of distinct terms. */
  get termCount(): number {
    return this.termStr.length;
  }

  /** Number of documents (non-null texts) indexed. */
  get documentCount(): number {
    return this.docCount;
  }

  /** One past the last row position added (or -1 when empty). */
  get endPosition(): number {
    return this.base < 0 ? -1 : this.base + this.span;
  }

  /** Parses a query string with this index's tokenizer options. */
  parseQuery(text: string): FtsQuery {
    return parseFtsQuery(text, this.options);
  }

  // -------------------------------------------------------------------------------------------
  // Insertion

  /**
   * Indexes `texts` as rows `firstPosition, firstPosition + 1, …`. Positions are global and must
   * not go backwards (gaps are allowed and hold no document). A null text is not a document; an
   * empty text is a document of length 0. Neither matches anything.
   *
   * With `defer`, the rows' tokens may stay in the insertion buffer (up to 2^16 tokens) instead
   * of moving into a segment at the end of the call: a caller adding one large write in several
   * slices makes one segment of it. Every read moves buffered tokens first, so a deferred add is
   * never invisible to a read; it only decides who pays for the move.
   */
  add(firstPosition: number, texts: FtsTexts, defer = false): void {
    this.packed = null;
    if (!Number.isSafeInteger(firstPosition) || firstPosition < 0) {
      throw new RangeError(`firstPosition must be a non-negative integer, got ${firstPosition}`);
    }
    if (this.base >= 0 && firstPosition < this.base + this.span) {
      throw new RangeError(`rows must be appended in increasing position order: got ${firstPosition}, next expected ≥ ${this.base + this.span}`);
    }
    // An index made by `fromArrow` or `remapped` has terms the insertion arrays do not cover yet.
    this.reserveTerms(this.termStr.length);
    if (Array.isArray(texts)) {
      const arr = texts as readonly (string | null | undefined)[];
      this.reserveRows(firstPosition, arr.length);
      for (let i = 0; i < arr.length; i++) {
        const text = arr[i] ?? null;
        this.addRow(firstPosition + i, text === null ? -1 : this.indexDocument(firstPosition + i, text));
      }
      if (!defer) this.flush();
      return;
    }
    const chunks: readonly Data<Utf8>[] = texts instanceof Vector ? (texts as Vector<Utf8>).data : [texts as Data<Utf8>];
    let pos = firstPosition;
    let total = 0;
    for (const d of chunks) total += d.length;
    this.reserveRows(firstPosition, total);
    for (const d of chunks) {
      const offsets = d.valueOffsets;
      const values = d.values;
      const hasNulls = d.nullCount > 0;
      // ASCII rows are tokenized from their bytes; one check for a whole ASCII chunk.
      const ascii = d.length > 0 && isAsciiBytes(values, offsets[0]!, offsets[d.length]!);
      for (let i = 0; i < d.length; i++, pos++) {
        if (hasNulls && !d.getValid(i)) {
          this.addRow(pos, -1);
          continue;
        }
        const from = offsets[i]!;
        const to = offsets[i + 1]!;
        const dl = ascii || isAsciiBytes(values, from, to)
          ? this.indexAscii(pos, values, from, to)
          : this.indexDocument(pos, decoder.decode(values.subarray(from, to)));
        this.addRow(pos, dl);
      }
    }
    if (!defer) this.flush();
  }

  /**
   * `add` for rows tokenized on another thread (`tokenizeRows` in row-tokens.ts) as ids of the
   * lexicon `mirror` copies (fed with `rows` already): the same rows, terms and term ids as
   * `add` of their texts. The chunk's row i is at position `firstPosition + i`. With `cursor`,
   * only rows [cursor.row, end) are added and the cursor moves past them (a caller adding a
   * chunk a piece at a time, between other work; `cursor.token` is the first token of
   * `cursor.row`). `defer` as in `add`.
   */
  addTokenized(firstPosition: number, rows: TokenizedRows, mirror: LexiconMirror, defer = false, cursor?: TokenCursor, end = rows.docLen.length): void {
    this.packed = null;
    const from = cursor?.row ?? 0;
    if (!Number.isSafeInteger(firstPosition) || firstPosition < 0) {
      throw new RangeError(`firstPosition must be a non-negative integer, got ${firstPosition}`);
    }
    if (this.base >= 0 && firstPosition + from < this.base + this.span) {
      throw new RangeError(`rows must be appended in increasing position order: got ${firstPosition + from}, next expected ≥ ${this.base + this.span}`);
    }
    if (!mirror.serves(rows)) throw new Error('internal: tokenized rows read through a mirror that was not fed with them');
    if (this.remoteMirror !== mirror || this.remoteGen !== mirror.generation) {
      this.remoteMirror = mirror;
      this.remoteGen = mirror.generation;
      this.remoteOf.fill(0);
    }
    this.reserveTerms(this.termStr.length);
    const { docLen, tokTerm, tokPos } = rows;
    const to = Math.min(end, docLen.length);
    this.reserveRows(firstPosition + from, Math.max(0, to - from));
    let k = cursor?.token ?? 0;
    for (let i = from; i < to; i++) {
      const pos = firstPosition + i;
      const dl = docLen[i]!;
      if (dl < 0) {
        this.addRow(pos, -1);
        continue;
      }
      let n = this.nTok;
      if (n + dl > this.bTerm.length) this.growBuffer(n + dl);
      this.curDoc = pos;
      const bTerm = this.bTerm;
      const bPos = this.bPos;
      const bDoc = this.bDoc;
      for (const stop = k + dl; k < stop; k++) {
        const g = tokTerm[k]!;
        const remote = this.remoteOf;
        const l = g < remote.length ? remote[g]! : 0;
        const id = l !== 0 ? l - 1 : this.remoteLocal(g, mirror);
        bTerm[n] = id;
        bPos[n] = tokPos[k]!;
        bDoc[n] = pos;
        n++;
        if (this.bCount[id]++ === 0) this.bBits[id >>> 5] = this.bBits[id >>> 5]! | (1 << (id & 31));
      }
      this.nTok = n;
      this.addRow(pos, dl);
    }
    if (cursor) {
      cursor.row = Math.max(from, to);
      cursor.token = k;
    }
    if (!defer) this.flush();
  }

  /** Term id here of mirrored lexicon id `g` (added when new, through this thread's lexicon as `add` would). */
  private remoteLocal(g: number, mirror: LexiconMirror): number {
    const gl = mirror.localId(g, this.lexicon);
    this.checkLexEpoch();
    const id = this.localId(gl);
    this.remoteOf = int32WithRoom(this.remoteOf, g);
    this.remoteOf[g] = id + 1;
    return id;
  }

  private reserveRows(firstPosition: number, n: number): void {
    if (this.base < 0) this.base = firstPosition;
    if (firstPosition + n > 0xffffffff) throw new RangeError('row positions must fit in 32 bits');
    const need = firstPosition + n - this.base;
    this.docLen = grow(this.docLen, need);
    this.prefDocs = grow(this.prefDocs, need + 1);
    this.prefTokens = growF64(this.prefTokens, need + 1);
  }

  /** Sizes the per-term insertion arrays for `n` terms. */
  private reserveTerms(n: number): void {
    if (n > this.bCount.length) this.bCount = grow(this.bCount, n);
    if (n > this.matTo.length) {
      this.matTo = grow(this.matTo, n);
      this.firstRow = grow(this.firstRow, n);
    }
    const words = (n + 31) >>> 5;
    if (words > this.bBits.length) this.bBits = grow(this.bBits, words);
    if (n * LOC_STRIDE > this.loc.length) {
      const next = new Int32Array(Math.max(this.loc.length * 2, n * LOC_STRIDE));
      next.set(this.loc);
      this.loc = next;
    }
  }

  /**
   * Records row `pos` (≥ base + span; its tokens already buffered) as a document of `dl` tokens,
   * or as a null text when `dl` is −1; fills any gap before it with non-documents.
   */
  private addRow(pos: number, dl: number): void {
    const local = pos - this.base;
    while (this.span < local) {
      this.docLen[this.span] = 0;
      this.prefDocs[this.span + 1] = this.prefDocs[this.span]!;
      this.prefTokens[this.span + 1] = this.prefTokens[this.span]!;
      this.span++;
    }
    let isDoc = 1;
    if (dl < 0) {
      isDoc = 0;
      dl = 0;
    }
    this.docCount += isDoc;
    this.totalTokens += dl;
    this.docLen[local] = dl;
    this.prefDocs[local + 1] = this.prefDocs[local]! + isDoc;
    this.prefTokens[local + 1] = this.prefTokens[local]! + dl;
    this.span = local + 1;
    if (this.nTok >= FLUSH_TOKENS) this.flush();
  }

  /**
   * Id of `term`, added when new (`known` false: it is new). A new term has no arrays: they are
   * made when postings first move into them (a read's `ensureTerm`, a seal, a sidecar's load).
   */
  private termId(term: string, known?: boolean, viaLexicon = false): number {
    let id = known === false ? undefined : this.idOf(term);
    if (id === undefined) {
      id = this.termStr.length;
      if (!viaLexicon) {
        // A term that did not come through the lexicon: terms are found by string from now on.
        this.lexComplete = false;
        this.syncTermIds();
        this.termIds.set(term, id);
        if (this.termIds.size !== id + 1) throw new Error(`duplicate term ${JSON.stringify(term)}`);
        this.termIdsSynced = id + 1;
      }
      this.termStr.push(term);
      this.termChars += term.length;
      if (id >= this.postCount.length) {
        this.postCount = grow(this.postCount, id + 1);
        this.posCount = grow(this.posCount, id + 1);
        this.maxTf = grow(this.maxTf, id + 1);
        this.minDl = grow(this.minDl, id + 1);
      }
      this.reserveTerms(id + 1);
      this.matTo[id] = 0;
      this.firstRow[id] = 0;
      this.post.push(NO_ENTRIES);
      this.tokPos.push(NO_ENTRIES);
      this.loc.fill(0, id * LOC_STRIDE, (id + 1) * LOC_STRIDE);
      this.maxTf[id] = 0;
      this.minDl[id] = 0xffffffff;
    }
    return id;
  }

  /** Puts the terms added since the last call into the by-length buckets (ids ascending in each). */
  private syncByLen(): void {
    const n = this.termStr.length;
    for (let id = this.byLenSynced; id < n; id++) {
      const term = this.termStr[id]!;
      const len = codePointLength(term);
      while (this.byLenIds.length <= len) {
        this.byLenIds.push(new Uint32Array(16));
        this.byLenMasks.push(new Uint32Array(16));
        this.byLenCount.push(0);
      }
      const at = this.byLenCount[len]!;
      if (at === this.byLenIds[len]!.length) {
        this.byLenIds[len] = grow(this.byLenIds[len]!, at + 1);
        this.byLenMasks[len] = grow(this.byLenMasks[len]!, at + 1);
      }
      this.byLenIds[len]![at] = id;
      this.byLenMasks[len]![at] = charMask(term);
      this.byLenCount[len] = at + 1;
    }
    this.byLenSynced = n;
  }

  /**
   * Term id (−1: stop word) of the lower-cased word `s[start, end)` (its `hashSpan` is `h`), a
   * word not in `surface` yet; remembers it there.
   */
  private surfaceId(s: string, start: number, end: number, h: number): number {
    const t = analyzeWord(s.slice(start, end), this.options);
    let id = -1;
    if (t !== null) {
      const g = this.lexicon.idOf(t);
      this.checkLexEpoch();
      id = this.localId(g);
    }
    if (this.surface.size >= SURFACE_CACHE_LIMIT) this.surface.clear();
    this.surface.set(s, start, end, h, id);
    return id;
  }

  private readonly emitWord = (s: string, start: number, end: number, p: number): void => {
    const h = hashSpan(s, start, end);
    let id = this.surface.get(s, start, end, h);
    if (id === undefined) id = this.surfaceId(s, start, end, h);
    if (id < 0) return;
    const n = this.nTok;
    if (n === this.bTerm.length) this.growBuffer(n + 1);
    this.bTerm[n] = id;
    this.bPos[n] = p;
    this.bDoc[n] = this.curDoc;
    this.nTok = n + 1;
    if (this.bCount[id]++ === 0) this.bBits[id >>> 5] = this.bBits[id >>> 5]! | (1 << (id & 31));
  };

  private growBuffer(need: number): void {
    this.bTerm = grow(this.bTerm, need);
    this.bPos = grow(this.bPos, need);
    this.bDoc = grow(this.bDoc, need);
  }

  /** Tokenizes one row into the buffer; returns its length in tokens. */
  private indexDocument(pos: number, text: string): number {
    const before = this.nTok;
    this.curDoc = pos;
    scanWordSpans(text, this.options.maxTokenLength, this.emitWord);
    return this.nTok - before;
  }

  /**
   * `indexDocument` for a row given as ASCII bytes `bytes[from, to)`: `scanAsciiWords` finds
   * the same words as `scanWordSpans` on the decoded text, and they are looked up by their bytes
   * (the lexicon's packed words for words of up to 12 bytes, `surface` for longer ones), so a known word costs
   * no string.
   */
  private indexAscii(pos: number, bytes: Uint8Array, from: number, to: number): number {
    // Another index may have made the lexicon start over since this one last indexed.
    this.checkLexEpoch();
    this.curDoc = pos;
    const spans = this.spans;
    spans.count = 0;
    scanAsciiWords(bytes, from, to, this.options.maxTokenLength, spans);
    const m = spans.count;
    const data = spans.data;
    const before = this.nTok;
    let n = before;
    if (n + m > this.bTerm.length) this.growBuffer(n + m);
    const bTerm = this.bTerm;
    const bPos = this.bPos;
    const bDoc = this.bDoc;
    const words = this.lexicon.words;
    for (let k = 0; k < 4 * m; k += 4) {
      const w0 = data[k]!;
      let id: number | undefined;
      if (w0 !== 0) {
        const w1 = data[k + 1]!;
        const w2 = data[k + 2]!;
        let g = words.get(w0, w1, w2);
        if (g === undefined) {
          g = this.lexicon.addWord(w0, w1, w2);
          this.checkLexEpoch();
        }
        if (g < 0) continue;
        const localOf = this.localOf;
        const l = g < localOf.length ? localOf[g]! : 0;
        id = l !== 0 ? l - 1 : this.localId(g);
      } else {
        const start = data[k + 1]!;
        const len = data[k + 2]!;
        const h = hashAsciiWord(bytes, start, len);
        id = this.surface.getAscii(bytes, start, len, h);
        if (id === undefined) id = this.surfaceId(asciiWordString(bytes, start, len), 0, len, h);
      }
      if (id < 0) continue;
      bTerm[n] = id;
      bPos[n] = data[k + 3]!;
      bDoc[n] = pos;
      n++;
      if (this.bCount[id]++ === 0) this.bBits[id >>> 5] = this.bBits[id >>> 5]! | (1 << (id & 31));
    }
    this.nTok = n;
    return n - before;
  }

  /**
   * Moves the buffered tokens into a new segment (posting-segments.ts), grouped by term in id
   * order (a counting sort: sequential writes, a term's counter touched once per token), and
   * their rows' distinct terms into the forward index. Every method that reads postings, per-term
   * counts or the forward index calls it first (see `add`'s `defer`); one that reads a term's
   * postings then moves them out of the segments (`ensureTerm`).
   */
  private flush(): void {
    const n = this.nTok;
    if (n === 0) return;
    const count = this.bCount;
    const bits = this.bBits;
    if (this.bTerms.length < count.length) this.bTerms = new Uint32Array(count.length);
    const terms = this.bTerms;
    // Term ids with tokens, in increasing order; exclusive prefix sums: count[id] becomes the
    // term's write cursor.
    let nt = 0;
    let off = 0;
    for (let w = 0; w < bits.length; w++) {
      let x = bits[w]!;
      if (x === 0) continue;
      bits[w] = 0;
      do {
        const low = x & -x;
        const id = (w << 5) | (31 - Math.clz32(low));
        x ^= low;
        terms[nt++] = id;
        const c = count[id]!;
        count[id] = off;
        off += c;
      } while (x !== 0);
    }
    if (this.sDoc.length < n) this.sDoc = new Uint32Array(this.bTerm.length);
    const sDoc = this.sDoc;
    const bTerm = this.bTerm;
    const bPos = this.bPos;
    const bDoc = this.bDoc;
    // Token positions go straight into the segment; their rows into scratch (for its postings).
    const arena = this.segArena;
    const tok = arena.alloc(n);
    for (let i = 0; i < n; i++) {
      const j = count[bTerm[i]!]!++;
      tok[j] = bPos[i]!;
      sDoc[j] = bDoc[i]!;
    }
    // count[id] is now the end of the term's run; runs are laid out in `terms` order.
    const segTerms = arena.alloc(nt);
    const tokEnd = arena.alloc(nt);
    const postEnd = arena.alloc(nt);
    let postings = 0;
    let start = 0;
    for (let u = 0; u < nt; u++) {
      const id = terms[u]!;
      const end = count[id]!;
      count[id] = 0;
      segTerms[u] = id;
      tokEnd[u] = end;
      let docs = 1;
      for (let i = start + 1; i < end; i++) if (sDoc[i] !== sDoc[i - 1]) docs++;
      postings += docs;
      start = end;
    }
    const post = arena.alloc(2 * postings);
    let k = 0;
    let i = 0;
    for (let u = 0; u < nt; u++) {
      const end = tokEnd[u]!;
      while (i < end) {
        const d = sDoc[i]!;
        do i++;
        while (i < end && sDoc[i] === d);
        post[k] = d;
        post[k + 1] = i;
        k += 2;
      }
      postEnd[u] = k;
    }
    this.fwd.appendSegment(segTerms, nt, postEnd, post, this.base, this.span);
    const segs = this.segs;
    const from = segs.length > 0 ? segs[segs.length - 1]!.to : this.base;
    segs.push({ from, to: this.base + this.span, nTerms: nt, terms: segTerms, postEnd, tokEnd, post, tok });
    ftsSegmentCounts.built++;
    this.nTok = 0;
    // A run of small writes, each read before the next (a segment each), is merged as it grows,
    // so a read never looks a term up in thousands of segments.
    let small = 0;
    while (small < segs.length && segmentTokens(segs[segs.length - 1 - small]!) < SMALL_SEGMENT_TOKENS) small++;
    if (small >= SMALL_SEGMENTS_MERGED) {
      segs.push(mergeSegments(segs.splice(segs.length - small, small), arena));
      ftsSegmentCounts.mergedSmall++;
    }
  }

  /**
   * Moves term `id`'s postings out of the segments into its per-term arrays (those at row
   * positions from `matTo[id]` on), so every read of its arrays and counts sees all of them.
   */
  private ensureTerm(id: number): void {
    const segs = this.segs;
    const ns = segs.length;
    if (ns === 0) return;
    const from = id < this.matTo.length ? this.matTo[id]! : 0;
    const to = segs[ns - 1]!.to;
    if (from >= to) return;
    // The first segment holding rows from `from` on.
    let lo = 0;
    let hi = ns;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (segs[mid]!.to <= from) lo = mid + 1;
      else hi = mid;
    }
    for (let s = lo; s < ns; s++) {
      const seg = segs[s]!;
      const u = segmentTermIndex(seg, id);
      if (u >= 0) {
        this.appendRun(id, seg, u, from);
        ftsSegmentCounts.runsMoved++;
      }
    }
    this.reserveTerms(id + 1);
    this.matTo[id] = to;
  }

  /** The id of `term` with its postings all in its arrays (`ensureTerm`), or undefined. */
  private readTerm(term: string): number | undefined {
    const id = this.idOf(term);
    if (id !== undefined) this.ensureTerm(id);
    return id;
  }

  /**
   * Appends term `id`'s postings in segment `seg` (its u-th term) at row positions ≥ `min` to
   * the term's arrays, with its counts and score bounds.
   */
  private appendRun(id: number, seg: PostingSegment, u: number, min: number): void {
    const sp = seg.post;
    const pe = seg.postEnd[u]!;
    const ps = firstPostingFrom(sp, u === 0 ? 0 : seg.postEnd[u - 1]!, pe, min);
    if (ps === pe) return;
    // The run's first token: the previous posting's end (the previous term's last, at a run's start).
    const ts = ps === 0 ? 0 : sp[ps - 1]!;
    const te = seg.tokEnd[u]!;
    const docs = (pe - ps) >>> 1;
    const c = this.postCount[id]!;
    const pc = this.posCount[id]!;
    const L = id * LOC_STRIDE;
    const loc = this.loc;
    if (loc[L] === 0 || 2 * (c + docs) > loc[L + 2]!) this.growPost(id, 2 * c, 2 * (c + docs));
    if (loc[L + 3] === 0 || pc + (te - ts) > loc[L + 5]!) this.growTok(id, pc, pc + (te - ts));
    // Written through the chunks at the arrays' offsets (see `SlabAllocator`).
    const chunks = this.slab.chunks;
    const post = chunks[loc[L]!]!;
    const tok = chunks[loc[L + 3]!]!;
    runBounds[0] = this.maxTf[id]!;
    runBounds[1] = this.minDl[id]!;
    copySegmentPostings(sp, ps, pe, ts, post, loc[L + 1]! + 2 * c, pc - ts, this.docLen, this.base);
    copyRun(seg.tok, ts, tok, loc[L + 4]! + pc, te - ts);
    this.postCount[id] = c + docs;
    this.posCount[id] = pc + (te - ts);
    this.maxTf[id] = runBounds[0]!;
    this.minDl[id] = runBounds[1]!;
  }

  /** Moves `post[id]` (its first `used` entries kept) to a slab array of at least `need` entries. */
  private growPost(id: number, used: number, need: number): void {
    this.growArray(id * LOC_STRIDE, used, need, this.loc[id * LOC_STRIDE] === 0 ? this.postingsOnce(id) : undefined);
    this.post[id] = undefined;
  }

  /** Moves `tokPos[id]` (its first `used` entries kept) to a slab array of at least `need` entries. */
  private growTok(id: number, used: number, need: number): void {
    this.growArray(id * LOC_STRIDE + 3, used, need, this.loc[id * LOC_STRIDE + 3] === 0 ? this.tokensOnce(id) : undefined);
    this.tokPos[id] = undefined;
  }

  /**
   * Moves the array whose location is `loc[L..L+2]` (chunk, offset, capacity; chunk 0: not in
   * the slab, its entries are `outside`) to a slab array of at least `need` entries, keeping its
   * first `used` entries; the old one goes back to the slab.
   */
  private growArray(L: number, used: number, need: number, outside: Uint32Array | undefined): void {
    const loc = this.loc;
    const slab = this.slab;
    const c = loc[L]!;
    const off = loc[L + 1]!;
    const cap = c === 0 ? outside!.length : loc[L + 2]!;
    const next = grownCapacity(cap, need);
    slab.alloc(next);
    const dst = slab.chunks[slab.chunk]!;
    if (c === 0) copyRun(outside!, 0, dst, slab.offset, used);
    else {
      copyRun(slab.chunks[c]!, off, dst, slab.offset, used);
      slab.release(cap, c, off);
    }
    loc[L] = slab.chunk;
    loc[L + 1] = slab.offset;
    loc[L + 2] = next;
  }

  // -------------------------------------------------------------------------------------------
  // Statistics

  private localCut(maxPosition: number | undefined): number {
    if (this.base < 0) return 0;
    if (maxPosition === undefined) return this.span;
    return Math.max(0, Math.min(this.span, maxPosition - this.base));
  }

  /** Number of postings of term `id` with position < maxPosition. */
  private postingsBelow(id: number, maxPosition: number | undefined): number {
    const c = this.postCount[id]!;
    // A cutoff past every row the index holds (a generation's, every query) keeps every
    // posting: no look at the list (a cache miss, and a view made, per term and source).
    if (maxPosition === undefined || c === 0 || maxPosition >= this.base + this.span) return c;
    const p = this.postOf(id);
    if (p[2 * (c - 1)]! < maxPosition) return c;
    let lo = 0;
    let hi = c;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (p[2 * mid]! < maxPosition) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Local statistics of `terms` over rows with position < maxPosition. */
  stats(terms: Iterable<string>, maxPosition?: number): FtsStats {
    this.flush();
    checkMaxPosition(maxPosition);
    const cut = this.localCut(maxPosition);
    const docFreq = new Map<string, number>();
    for (const t of terms) {
      if (docFreq.has(t)) continue;
      const id = this.readTerm(t);
      docFreq.set(t, id === undefined ? 0 : this.postingsBelow(id, maxPosition));
    }
    return { docCount: this.prefDocs[cut]!, totalTokens: this.prefTokens[cut]!, docFreq };
  }

  /**
   * Documents holding term `id` (an id of `termIdOf`) among rows with position < maxPosition: its
   * posting count, or a binary search of its postings when the index holds rows from there on.
   */
  postingsBefore(id: number, maxPosition: number): number {
    this.flush();
    if (!(id >= 0 && id < this.termStr.length)) return 0;
    this.ensureTerm(id);
    return this.postingsBelow(id, maxPosition);
  }

  /** The forward index (see `RowTerms`): each document's distinct term ids, rows from `basePosition`. */
  forwardIndex(): RowTerms {
    this.flush();
    return this.fwd;
  }

  /** First row position the index covers (its forward index's row 0); 0 for an empty index. */
  get basePosition(): number {
    return Math.max(0, this.base);
  }

  /** The id of `term` in this index (what `forwardIndex` holds), or −1 when no document has it. */
  termIdOf(term: string): number {
    this.flush();
    const id = this.readTerm(term);
    return id === undefined || this.postCount[id] === 0 ? -1 : id;
  }

  /** Tokens of the document at row `pos`, or -1 when that row is not a document (null text, a gap, outside the index). */
  documentLength(pos: number): number {
    const i = pos - this.base;
    if (this.base < 0 || i < 0 || i >= this.span) return -1;
    return this.prefDocs[i + 1]! !== this.prefDocs[i]! ? this.docLen[i]! : -1;
  }

  /**
   * Like `stats`, but without the documents `excluded` rejects: a table uses it to leave
   * superseded and deleted versions of a key out of the corpus statistics, so a row's score does
   * not depend on how many stale versions of other rows are still stored. O(rows + postings of
   * `terms`).
   */
  statsExcluding(
    terms: Iterable<string>,
    maxPosition: number | undefined,
    excluded: (pos: number) => boolean,
    /** The documents and tokens left once `excluded` ones are removed, when the caller keeps them (skips the O(rows) pass). */
    totals?: { docCount: number; totalTokens: number },
  ): FtsStats {
    const out = this.stats(terms, maxPosition);
    const cut = this.localCut(maxPosition);
    let docCount = out.docCount;
    let totalTokens = out.totalTokens;
    if (totals) {
      docCount = totals.docCount;
      totalTokens = totals.totalTokens;
    } else {
      for (let i = 0; i < cut; i++) {
        if (this.prefDocs[i + 1]! !== this.prefDocs[i]! && excluded(this.base + i)) {
          docCount--;
          totalTokens -= this.docLen[i]!;
        }
      }
    }
    for (const [t, df] of out.docFreq) {
      const id = this.idOf(t);
      if (id === undefined || df === 0) continue;
      const p = this.postOf(id);
      let dead = 0;
      for (let j = 0; j < df; j++) if (excluded(p[2 * j]!)) dead++;
      out.docFreq.set(t, df - dead);
    }
    return { docCount, totalTokens, docFreq: out.docFreq };
  }

  /** Whether the document at `pos` holds `term` (a binary search of the term's postings). */
  hasPosting(term: string, pos: number): boolean {
    this.flush();
    const id = this.readTerm(term);
    if (id === undefined) return false;
    const j = this.postingsBelow(id, pos);
    return j < this.postCount[id]! && this.postOf(id)[2 * j] === pos;
  }

  /**
   * Terms whose statistics `search` needs: every term and phrase token of the query, plus this
   * index's best fuzzy candidates (at most maxExpansions per fuzzy clause, by edit distance then
   * term, among terms with a visible posting).
   */
  queryTerms(query: FtsQuery, maxPosition?: number): string[] {
    this.flush();
    const out = new Set<string>();
    for (const c of [...query.must, ...query.should, ...query.mustNot]) {
      if (c.kind === 'term') out.add(c.term);
      else if (c.kind === 'phrase') for (const t of c.terms) out.add(t);
      else for (const cand of this.localFuzzyCandidates(c.term, c.fuzziness, c.maxExpansions, maxPosition)) out.add(cand);
    }
    return [...out];
  }

  private localFuzzyCandidates(term: string, fuzziness: number, maxExpansions: number, maxPosition?: number): string[] {
    const len = codePointLength(term);
    const mask = charMask(term);
    const matcher = new FuzzyMatcher(term, fuzziness);
    const cands: Candidate[] = [];
    this.syncByLen();
    for (let l = Math.max(0, len - fuzziness); l <= len + fuzziness && l < this.byLenIds.length; l++) {
      const ids = this.byLenIds[l]!;
      const masks = this.byLenMasks[l]!;
      const n = this.byLenCount[l]!;
      for (let i = 0; i < n; i++) {
        if (!mayBeWithin(mask, masks[i]!, fuzziness)) continue;
        const id = ids[i]!;
        // Its first posting: in its arrays, or (a term added since the last seal, postings
        // still in segments) where it was first seen; none, not a candidate.
        const first = this.postCount[id] !== 0 ? this.postOf(id)[0]! : (id < this.firstRow.length ? this.firstRow[id]! : 0) - 1;
        if (first < 0 || (maxPosition !== undefined && first >= maxPosition)) continue;
        const t = this.termStr[id]!;
        const d = matcher.distance(t);
        if (d <= fuzziness) cands.push({ term: t, dist: d });
      }
    }
    return selectExpansions(cands, maxExpansions);
  }

  // -------------------------------------------------------------------------------------------
  // Search

  /** BM25 top-k. See the module comment for semantics. */
  search(query: FtsQuery, opts: FtsSearchOptions): FtsSearchResult {
    if (scratch.busy) throw new Error('InvertedIndex.search is not reentrant (was it called from an `allowed` callback?)');
    scratch.busy = true;
    try {
      this.flush();
      ftsSearchWork.searches++;
      return this.searchImpl(query, opts);
    } finally {
      scratch.busy = false;
      scratch.clauseEpoch = this.clauseEpoch;
      this.mask = undefined;
      // Not kept: the next search takes the shared arrays again (they may have grown).
      this.scores = NO_SCORES;
      this.stamp = this.exclStamp = this.allowStamp = this.clauseStamp = this.touched = NO_ENTRIES;
      this.mustCnt = NO_COUNTS;
    }
  }

  private searchImpl(query: FtsQuery, opts: FtsSearchOptions): FtsSearchResult {
    validateFtsQuery(query);
    checkMaxPosition(opts.maxPosition);
    const k = Math.floor(opts.k);
    const empty: FtsSearchResult = { positions: new Uint32Array(0), scores: new Float32Array(0) };
    const positive = query.must.length + query.should.length;
    if (!(k > 0) || positive === 0 || this.base < 0) return empty;
    if (query.must.length > 0xfffe) throw new RangeError('too many must clauses');
    const { maxPosition } = opts;
    if (opts.allowed && opts.allowedMask) throw new Error('InvertedIndex.search: give allowed or allowedMask, not both');
    const mask = opts.allowedMask;
    const allowed = opts.allowed ?? (mask ? (pos: number) => mask[pos] === 1 : undefined);
    this.mask = mask;
    const stats = opts.stats ?? this.stats(this.queryTerms(query, maxPosition), maxPosition);
    const N = stats.docCount;
    const avgdl = N > 0 ? stats.totalTokens / N : 0;
    if (this.localCut(maxPosition) === 0) return empty;

    // Loops rather than map / some / filter callbacks: this runs for every source of every
    // text query, and under tsx each closure made costs a name-keeping wrapper call too.
    const must: Plan[] = [];
    for (const c of query.must) {
      const p = this.planClause(c, stats, maxPosition, true);
      if (p.cost === 0) return empty;
      must.push(p);
    }
    const live: Plan[] = [];
    for (const c of query.should) {
      const p = this.planClause(c, stats, maxPosition, true);
      if (p.cost > 0) live.push(p);
    }
    const mustNot: Plan[] = [];
    for (const c of query.mustNot) mustNot.push(this.planClause(c, stats, maxPosition, false));
    must.sort(byCost);

    this.prepareScratch();
    this.nMust = must.length;
    for (const p of mustNot) {
      if (p.cost > 0) this.runClause(p, Mode.Exclude, avgdl);
    }
    if (must.length > 0) {
      must.forEach((p, i) => {
        this.mustIndex = i;
        if (i > 0) this.compactTouched((d) => this.mustCnt[d] === i);
        this.runClause(p, i === 0 ? Mode.Touch : Mode.MustNext, avgdl);
      });
      this.compactTouched((d) => this.mustCnt[d] === must.length);
      for (const p of live) this.runClause(p, Mode.ShouldWithMust, avgdl);
    } else {
      this.runShouldOnly(live, k, avgdl, allowed, opts.minScore ?? -Infinity);
    }
    return this.topK(k, allowed);
  }

  /**
   * Optional clauses only, rarest first. MaxScore-style pruning (exact): before a clause, if the
   * sum of the upper bounds of this and all later clauses is below θ (the k-th best partial score
   * so far, a lower bound of the final k-th score), no untouched row can reach the top k, so the
   * remaining clauses only update rows already touched, and touched rows whose partial score plus
   * that sum stays below θ are dropped. With a prefilter, θ is taken over allowed rows only: at
   * each check the touched rows not yet seen are tested once, and rows it rejects are dropped
   * (they can never be results; their touched stamp keeps later clauses from re-adding them).
   */
  private runShouldOnly(plans: Plan[], k: number, avgdl: number, allowed: ((pos: number) => boolean) | undefined, minScore: number): void {
    plans.sort(byCost);
    const n = plans.length;
    const rest = new Float64Array(n + 1);
    for (let i = n - 1; i >= 0; i--) rest[i] = rest[i + 1]! + this.upperBound(plans[i]!, avgdl);
    if (rest[0]! < minScore) return; // no row can reach the caller's threshold
    let update = false;
    // θ the block-max first clause ended with (the k-th best allowed score then, or minScore):
    // right after it, it is exactly what the check below would compute.
    let firstTheta: number | undefined;
    for (let i = 0; i < n; i++) {
      const p = plans[i]!;
      if (i === 0 && p.clause.kind === 'term' && p.terms.length === 1 && p.cost >= PRUNE_MIN_POSTINGS && p.clause.boost * p.terms[0]!.idf > 0) {
        firstTheta = this.runFirstTermPruned(p.terms[0]!, p.clause.boost * p.terms[0]!.idf, avgdl, k, rest[1]!, minScore, allowed);
        continue;
      }
      if (i > 0 && (update || p.cost >= 64) && (this.nTouched >= k || rest[i]! < minScore)) {
        let theta = minScore;
        if (i === 1 && firstTheta !== undefined) theta = firstTheta;
        else if (this.nTouched >= k) {
          if (allowed !== undefined) this.keepAllowed(allowed);
          if (this.nTouched >= k) theta = Math.max(theta, this.kthScore(k));
        }
        if (rest[i]! < theta) {
          update = true;
          const bound = theta - rest[i]!;
          const scores = this.scores;
          this.compactTouched((d) => scores[d]! >= bound);
        }
      }
      this.runClause(p, update ? Mode.Update : Mode.Touch, avgdl);
    }
  }

  /**
   * The first (rarest) optional clause when it is one term with a long posting list: like
   * `runTerm` in Touch mode, but block by block (`BLOCK_POSTINGS` postings), skipping a block
   * when even its best row — the block's bound plus the upper bounds of every later clause
   * (`restAfter`) — stays below θ: the k-th best score so far among allowed rows, or the
   * caller's `minScore`, whichever is higher. Exact: a skipped row's final score is below θ, θ
   * is at most the final k-th score, so it can neither be a result nor push one out (later
   * clauses that touch it add less than its true score). Nothing is touched before this clause,
   * so no touched row misses this term's contribution. Inside a block that is scored, rows
   * below the same bound are not touched either. Returns θ at the end.
   */
  private runFirstTermPruned(
    r: ResolvedTerm,
    weight: number,
    avgdl: number,
    k: number,
    restAfter: number,
    minScore: number,
    allowed: ((pos: number) => boolean) | undefined,
  ): number {
    this.mode = Mode.Touch;
    const cEpoch = ++this.clauseEpoch;
    const post = this.postOf(r.id);
    const end = r.end;
    const base = this.base;
    const docLen = this.docLen;
    const k1p1 = BM25_K1 + 1;
    const c0 = BM25_K1 * (1 - BM25_B);
    const c1 = (BM25_K1 * BM25_B) / avgdl;
    const blocks = this.termBlocks(r.id, end, avgdl);
    // A block's value was computed with avgdl = blocks.avgdl; for this query's avgdl the
    // denominator tf + c0 + c1·dl shrinks by at most min(1, blocks.avgdl / avgdl).
    const scale = ((weight * k1p1) / Math.min(1, blocks.avgdl / avgdl)) * (1 + 1e-9);
    const vals = blocks.vals;
    const nb = blocks.count;
    const mask = this.mask;
    const epoch = this.epoch;
    const excl = this.exclStamp;
    const stamp = this.stamp;
    const scores = this.scores;
    const cnt = this.mustCnt;
    const cst = this.clauseStamp;
    const touched = this.touched;
    let nt = this.nTouched;
    // Min-heap of the k best allowed scores: heap[0] is the k-th best once full.
    const heap = new Float64Array(k);
    let size = 0;
    let theta = minScore;
    for (let b = 0, from = 0; from < end; b++, from += BLOCK_POSTINGS) {
      const to = Math.min(end, from + BLOCK_POSTINGS);
      if (b < nb && vals[b]! * scale + restAfter < theta) {
        ftsSearchWork.prunedSkipped += to - from;
        continue;
      }
      ftsSearchWork.prunedScored += to - from;
      let prevEnd = from === 0 ? 0 : post[2 * from - 1]!;
      for (let j = from; j < to; j++) {
        const d = post[2 * j]! - base;
        const e = post[2 * j + 1]!;
        const tf = e - prevEnd;
        prevEnd = e;
        if (mask !== undefined && mask[d + base] !== 1) continue;
        const s = (weight * tf * k1p1) / (tf + c0 + c1 * docLen[d]!);
        // A row that cannot reach θ even with every later clause is not touched at all (the
        // same argument as a skipped block): most rows of a long list, once θ has risen.
        if (s + restAfter < theta || excl[d] === epoch) continue;
        stamp[d] = epoch;
        scores[d] = s;
        cnt[d] = 1;
        cst[d] = cEpoch;
        touched[nt++] = d;
        if (size === k && s <= heap[0]!) continue;
        if (mask === undefined && allowed !== undefined && !allowed(d + base)) continue;
        if (size < k) {
          let i = size++;
          while (i > 0) {
            const parent = (i - 1) >> 1;
            if (heap[parent]! <= s) break;
            heap[i] = heap[parent]!;
            i = parent;
          }
          heap[i] = s;
        } else {
          let i = 0;
          for (;;) {
            const l = 2 * i + 1;
            if (l >= size) break;
            const m = l + 1 < size && heap[l + 1]! < heap[l]! ? l + 1 : l;
            if (heap[m]! >= s) break;
            heap[i] = heap[m]!;
            i = m;
          }
          heap[i] = s;
        }
        if (size === k && heap[0]! > theta) theta = heap[0]!;
      }
    }
    this.nTouched = nt;
    return theta;
  }

  /**
   * Block-max bounds of term `id`'s first `end` postings: per full block of `BLOCK_POSTINGS`,
   * the largest tf / (tf + c0 + c1·dl) with c1 from `avgdl` at the time the block was computed.
   * Postings are only ever appended, so full blocks never change: the cache grows with the list.
   */
  private termBlocks(id: number, end: number, avgdl: number): TermBlocks {
    let t = this.blockMax.get(id);
    const want = Math.floor(end / BLOCK_POSTINGS);
    if (t && t.count >= want) return t;
    if (!t) {
      if (this.blockMax.size >= MAX_BLOCK_MAX_TERMS) this.blockMax.clear();
      t = { avgdl, vals: new Float64Array(Math.max(16, want)), count: 0 };
      this.blockMax.set(id, t);
    }
    if (t.vals.length < want) {
      const next = new Float64Array(Math.max(want, 2 * t.vals.length));
      next.set(t.vals.subarray(0, t.count));
      t.vals = next;
    }
    const post = this.postOf(id);
    const base = this.base;
    const docLen = this.docLen;
    const c0 = BM25_K1 * (1 - BM25_B);
    const c1 = (BM25_K1 * BM25_B) / t.avgdl;
    for (let b = t.count; b < want; b++) {
      const from = b * BLOCK_POSTINGS;
      let prevEnd = from === 0 ? 0 : post[2 * from - 1]!;
      let best = 0;
      for (let j = from; j < from + BLOCK_POSTINGS; j++) {
        const e = post[2 * j + 1]!;
        const tf = e - prevEnd;
        prevEnd = e;
        const v = tf / (tf + c0 + c1 * docLen[post[2 * j]! - base]!);
        if (v > best) best = v;
      }
      t.vals[b] = best;
    }
    t.count = want;
    return t;
  }

  /** Drops touched rows the prefilter rejects, testing each row at most once per search. */
  private keepAllowed(allowed: (pos: number) => boolean): void {
    const seen = this.allowStamp;
    const epoch = this.epoch;
    const base = this.base;
    this.compactTouched((d) => {
      if (seen[d] === epoch) return true;
      if (!allowed(d + base)) return false;
      seen[d] = epoch;
      return true;
    });
  }

  /** Upper bound of a clause's score (boost included) for any row. */
  private upperBound(p: Plan, avgdl: number): number {
    const c = p.clause;
    if (c.kind === 'phrase') {
      let tf = Infinity;
      let dl = 0;
      let idf = 0;
      for (const r of p.terms) {
        tf = Math.min(tf, this.maxTf[r.id]!);
        dl = Math.max(dl, this.minDl[r.id]!);
        idf += r.idf;
      }
      return c.boost * idf * bm25TfBound(tf, dl, avgdl);
    }
    let ub = 0;
    for (const r of p.terms) ub += r.idf * bm25TfBound(this.maxTf[r.id]!, this.minDl[r.id]!, avgdl);
    return c.boost * ub;
  }

  /** The k-th largest score among touched rows (nTouched ≥ k). */
  private kthScore(k: number): number {
    const n = this.nTouched;
    if (scratch.selectBuf.length < n) scratch.selectBuf = new Float64Array(Math.max(n, scratch.selectBuf.length * 2));
    const a = scratch.selectBuf;
    const scores = this.scores;
    const touched = this.touched;
    for (let i = 0; i < n; i++) a[i] = scores[touched[i]!]!;
    // Quickselect for index k − 1 in descending order.
    let lo = 0;
    let hi = n - 1;
    const want = k - 1;
    while (lo < hi) {
      const pivot = a[(lo + hi) >>> 1]!;
      let i = lo;
      let j = hi;
      while (i <= j) {
        while (a[i]! > pivot) i++;
        while (a[j]! < pivot) j--;
        if (i <= j) {
          const t = a[i]!;
          a[i] = a[j]!;
          a[j] = t;
          i++;
          j--;
        }
      }
      if (want <= j) hi = j;
      else if (want >= i) lo = i;
      else break;
    }
    return a[want]!;
  }

  /** Keeps only the touched rows satisfying `keep` (order preserved). */
  private compactTouched(keep: (d: number) => boolean): void {
    const t = this.touched;
    let w = 0;
    for (let i = 0; i < this.nTouched; i++) {
      const d = t[i]!;
      if (keep(d)) t[w++] = d;
    }
    this.nTouched = w;
  }

  /** Query term `t` here: its id, its postings below the cutoff and (when scoring) its idf; null when it has none. */
  private resolveTerm(t: string, stats: FtsStats, maxPosition: number | undefined, scoring: boolean): ResolvedTerm | null {
    const id = this.readTerm(t);
    if (id === undefined) return null;
    const end = this.postingsBelow(id, maxPosition);
    if (end === 0) return null;
    if (!scoring) return { id, end, idf: 0 };
    const df = stats.docFreq.get(t);
    if (df === undefined) {
      throw new Error(`FtsStats has no docFreq for query term ${JSON.stringify(t)}: build the statistics from queryTerms(query) (see collectFtsStats)`);
    }
    return { id, end, idf: bm25Idf(stats.docCount, df) };
  }

  // No closures here: a query plans each clause once per source, and a function made per call
  // costs ~1 µs under tsx (its `keepNames` names every one at run time).
  private planClause(c: FtsClause, stats: FtsStats, maxPosition: number | undefined, scoring: boolean): Plan {
    if (c.kind === 'term') {
      const r = this.resolveTerm(c.term, stats, maxPosition, scoring);
      return { clause: c, terms: r ? [r] : [], cost: r ? r.end : 0 };
    }
    if (c.kind === 'phrase') {
      const rs: ResolvedTerm[] = [];
      let cost = Infinity;
      for (const t of c.terms) {
        const r = this.resolveTerm(t, stats, maxPosition, scoring);
        if (r === null) return { clause: c, terms: [], cost: 0 };
        rs.push(r);
        if (r.end < cost) cost = r.end;
      }
      return { clause: c, terms: rs, cost };
    }
    // Fuzzy: expansions chosen from the (global) statistics' terms.
    const cands: Candidate[] = [];
    const len = codePointLength(c.term);
    const matcher = new FuzzyMatcher(c.term, c.fuzziness);
    for (const [t, df] of stats.docFreq) {
      if (!(df > 0)) continue;
      if (Math.abs(codePointLength(t) - len) > c.fuzziness) continue;
      const d = matcher.distance(t);
      if (d <= c.fuzziness) cands.push({ term: t, dist: d });
    }
    const rs: ResolvedTerm[] = [];
    let cost = 0;
    for (const t of selectExpansions(cands, c.maxExpansions)) {
      const r = this.resolveTerm(t, stats, maxPosition, scoring);
      if (r === null) continue;
      rs.push(r);
      cost += r.end;
    }
    return { clause: c, terms: rs, cost };
  }

  private prepareScratch(): void {
    const s = scratch;
    const n = this.span;
    if (s.scores.length < n) {
      const cap = Math.max(n, s.scores.length * 2);
      s.scores = new Float64Array(cap);
      s.stamp = new Uint32Array(cap);
      s.exclStamp = new Uint32Array(cap);
      s.allowStamp = new Uint32Array(cap);
      s.clauseStamp = new Uint32Array(cap);
      s.mustCnt = new Uint16Array(cap);
      s.touched = new Uint32Array(cap);
      s.epoch = 0;
      s.clauseEpoch = 0;
    }
    if (s.epoch >= 0xfffffff0 || s.clauseEpoch >= 0xfffff000) {
      s.stamp.fill(0);
      s.exclStamp.fill(0);
      s.allowStamp.fill(0);
      s.clauseStamp.fill(0);
      s.epoch = 0;
      s.clauseEpoch = 0;
    }
    this.scores = s.scores;
    this.stamp = s.stamp;
    this.exclStamp = s.exclStamp;
    this.allowStamp = s.allowStamp;
    this.clauseStamp = s.clauseStamp;
    this.mustCnt = s.mustCnt;
    this.touched = s.touched;
    this.epoch = ++s.epoch;
    this.clauseEpoch = s.clauseEpoch;
    this.nTouched = 0;
  }

  /** Whether a hit on local row `d` can still change anything in the current mode. */
  private live(d: number): boolean {
    switch (this.mode) {
      case Mode.Exclude:
        return this.exclStamp[d] !== this.epoch;
      case Mode.Touch:
        return this.exclStamp[d] !== this.epoch;
      case Mode.MustNext:
        return this.stamp[d] === this.epoch && (this.clauseStamp[d] === this.clauseEpoch || this.mustCnt[d] === this.mustIndex);
      case Mode.ShouldWithMust:
        return this.stamp[d] === this.epoch && this.mustCnt[d] === this.nMust;
      case Mode.Update:
        return this.stamp[d] === this.epoch;
    }
  }

  private hit(d: number, s: number): void {
    const epoch = this.epoch;
    switch (this.mode) {
      case Mode.Exclude:
        this.exclStamp[d] = epoch;
        return;
      case Mode.Touch:
        if (this.exclStamp[d] === epoch) return;
        if (this.stamp[d] !== epoch) {
          this.stamp[d] = epoch;
          this.scores[d] = 0;
          this.mustCnt[d] = 0;
          this.touched[this.nTouched++] = d;
        }
        if (this.clauseStamp[d] !== this.clauseEpoch) {
          this.clauseStamp[d] = this.clauseEpoch;
          this.mustCnt[d]!++;
        }
        this.scores[d] += s;
        return;
      case Mode.MustNext:
        if (this.stamp[d] !== epoch) return;
        if (this.clauseStamp[d] !== this.clauseEpoch) {
          if (this.mustCnt[d] !== this.mustIndex) return;
          this.clauseStamp[d] = this.clauseEpoch;
          this.mustCnt[d]!++;
        }
        this.scores[d] += s;
        return;
      case Mode.ShouldWithMust:
        if (this.stamp[d] === epoch && this.mustCnt[d] === this.nMust) this.scores[d] += s;
        return;
      case Mode.Update:
        if (this.stamp[d] === epoch) this.scores[d] += s;
        return;
    }
  }

  private runClause(p: Plan, mode: Mode, avgdl: number): void {
    this.mode = mode;
    this.clauseEpoch++;
    const c = p.clause;
    if (c.kind === 'phrase') this.runPhrase(p, avgdl);
    else for (const r of p.terms) this.runTerm(r, c.boost * r.idf, avgdl);
  }

  /** Term-at-a-time over one posting list; `weight` = boost × idf. */
  private runTerm(r: ResolvedTerm, weight: number, avgdl: number): void {
    const post = this.postOf(r.id);
    const base = this.base;
    const docLen = this.docLen;
    const end = r.end;
    if (this.mode === Mode.Exclude) {
      const excl = this.exclStamp;
      const epoch = this.epoch;
      for (let j = 0; j < end; j++) excl[post[2 * j]! - base] = epoch;
      return;
    }
    const k1p1 = BM25_K1 + 1;
    const c0 = BM25_K1 * (1 - BM25_B);
    const c1 = (BM25_K1 * BM25_B) / avgdl;
    if (this.mode === Mode.Touch) {
      ftsSearchWork.touchScanned += end;
      // Hot path, inlined.
      const epoch = this.epoch;
      const cEpoch = this.clauseEpoch;
      const excl = this.exclStamp;
      const stamp = this.stamp;
      const scores = this.scores;
      const cnt = this.mustCnt;
      const cst = this.clauseStamp;
      const touched = this.touched;
      const mask = this.mask;
      let nt = this.nTouched;
      let prevEnd = 0;
      for (let j = 0; j < end; j++) {
        const d = post[2 * j]! - base;
        const e = post[2 * j + 1]!;
        const tf = e - prevEnd;
        prevEnd = e;
        // A row the prefilter rejects can never be a result: not touched.
        if (excl[d] === epoch || (mask !== undefined && mask[d + base] !== 1)) continue;
        const s = (weight * tf * k1p1) / (tf + c0 + c1 * docLen[d]!);
        if (stamp[d] !== epoch) {
          stamp[d] = epoch;
          scores[d] = s;
          cnt[d] = 1;
          cst[d] = cEpoch;
          touched[nt++] = d;
        } else {
          if (cst[d] !== cEpoch) {
            cst[d] = cEpoch;
            cnt[d]!++;
          }
          scores[d] += s;
        }
      }
      this.nTouched = nt;
      return;
    }
    // Modes below only update touched rows: when those are few, look each up in the postings
    // (galloping) instead of scanning the whole list.
    const m = this.nTouched;
    if (m * 8 < end) {
      ftsSearchWork.galloped += m;
      this.sortTouched();
      const touched = this.touched;
      let j = 0;
      for (let t = 0; t < m; t++) {
        const d = touched[t]!;
        if (!this.live(d)) continue;
        const target = d + base;
        if (post[2 * j]! < target) {
          let lo = j;
          let step = 1;
          let hi = j + 1;
          while (hi < end && post[2 * hi]! < target) {
            lo = hi;
            step *= 2;
            hi = j + step;
          }
          if (hi > end) hi = end;
          while (lo < hi) {
            const mid = (lo + hi) >>> 1;
            if (post[2 * mid]! < target) lo = mid + 1;
            else hi = mid;
          }
          j = lo;
          if (j >= end) break;
        }
        if (post[2 * j] === target) {
          const tf = post[2 * j + 1]! - (j === 0 ? 0 : post[2 * j - 1]!);
          this.hit(d, (weight * tf * k1p1) / (tf + c0 + c1 * docLen[d]!));
        }
      }
      return;
    }
    ftsSearchWork.updateScanned += end;
    let prevEnd = 0;
    for (let j = 0; j < end; j++) {
      const d = post[2 * j]! - base;
      const e = post[2 * j + 1]!;
      const tf = e - prevEnd;
      prevEnd = e;
      if (!this.live(d)) continue;
      this.hit(d, (weight * tf * k1p1) / (tf + c0 + c1 * docLen[d]!));
    }
  }

  /** Sorts the touched list ascending if it is not already. */
  private sortTouched(): void {
    const t = this.touched;
    const n = this.nTouched;
    for (let i = 1; i < n; i++) {
      if (t[i]! < t[i - 1]!) {
        t.subarray(0, n).sort();
        return;
      }
    }
  }

  private runPhrase(p: Plan, avgdl: number): void {
    const c = p.clause as Extract<FtsClause, { kind: 'phrase' }>;
    const rs = p.terms;
    const n = rs.length;
    let sumIdf = 0;
    for (const r of rs) sumIdf += r.idf;
    const weight = c.boost * sumIdf;
    const k1p1 = BM25_K1 + 1;
    const c0 = BM25_K1 * (1 - BM25_B);
    const c1 = (BM25_K1 * BM25_B) / avgdl;
    const base = this.base;
    // Driver: the rarest token.
    let drv = 0;
    for (let j = 1; j < n; j++) if (rs[j]!.end < rs[drv]!.end) drv = j;
    const posts = rs.map((r) => this.postOf(r.id));
    const toks = rs.map((r) => this.tokOf(r.id));
    const cur = new Int32Array(n); // posting cursor per token
    const starts = new Uint32Array(n);
    const ends = new Uint32Array(n);
    const cursors = new Uint32Array(n);
    const dPost = posts[drv]!;
    const dEnd = rs[drv]!.end;
    outer: for (let i = 0; i < dEnd; i++) {
      const doc = dPost[2 * i]!;
      const d = doc - base;
      if (!this.live(d)) continue;
      for (let j = 0; j < n; j++) {
        const pj = posts[j]!;
        const ej = rs[j]!.end;
        let cj = j === drv ? i : cur[j]!;
        if (j !== drv) {
          // Gallop forward to the first posting ≥ doc.
          if (cj < ej && pj[2 * cj]! < doc) {
            let step = 1;
            let lo = cj;
            let hi = cj + 1;
            while (hi < ej && pj[2 * hi]! < doc) {
              lo = hi;
              step *= 2;
              hi = cj + step;
            }
            if (hi > ej) hi = ej;
            while (lo < hi) {
              const mid = (lo + hi) >>> 1;
              if (pj[2 * mid]! < doc) lo = mid + 1;
              else hi = mid;
            }
            cj = lo;
          }
          cur[j] = cj;
          if (cj >= ej) break outer;
          if (pj[2 * cj]! !== doc) continue outer;
        }
        starts[j] = cj === 0 ? 0 : pj[2 * cj - 1]!;
        ends[j] = pj[2 * cj + 1]!;
      }
      const pf = phraseFrequency(toks, starts, ends, c.offsets, c.slop, cursors);
      if (pf === 0) continue;
      this.hit(d, (weight * pf * k1p1) / (pf + c0 + c1 * this.docLen[d]!));
    }
  }

  private topK(k: number, allowed: ((pos: number) => boolean) | undefined): FtsSearchResult {
    const nT = this.nTouched;
    const cap = Math.min(k, nT);
    const hs = new Float64Array(cap);
    const hp = new Uint32Array(cap);
    let size = 0;
    const touched = this.touched;
    const scores = this.scores;
    const cnt = this.mustCnt;
    const nMust = this.nMust;
    const base = this.base;
    // Min-heap on (score, -pos): the root is the worst kept result (see `worse`).
    for (let i = 0; i < nT; i++) {
      const d = touched[i]!;
      if (nMust > 0 && cnt[d] !== nMust) continue;
      const s = scores[d]!;
      const pos = d + base;
      if (size === cap && !worse(hs[0]!, hp[0]!, s, pos)) continue;
      if (allowed !== undefined && !allowed(pos)) continue;
      if (size < cap) {
        // Sift up.
        let j = size++;
        while (j > 0) {
          const parent = (j - 1) >> 1;
          if (!worse(s, pos, hs[parent]!, hp[parent]!)) break;
          hs[j] = hs[parent]!;
          hp[j] = hp[parent]!;
          j = parent;
        }
        hs[j] = s;
        hp[j] = pos;
      } else {
        // Replace root, sift down.
        let j = 0;
        while (true) {
          const l = 2 * j + 1;
          if (l >= size) break;
          const r = l + 1;
          let m = l;
          if (r < size && worse(hs[r]!, hp[r]!, hs[l]!, hp[l]!)) m = r;
          if (!worse(hs[m]!, hp[m]!, s, pos)) break;
          hs[j] = hs[m]!;
          hp[j] = hp[m]!;
          j = m;
        }
        hs[j] = s;
        hp[j] = pos;
      }
    }
    const order = new Uint32Array(size);
    for (let i = 0; i < size; i++) order[i] = i;
    heapScores = hs;
    heapPositions = hp;
    order.sort(bestFirst);
    const positions = new Uint32Array(size);
    const out = new Float32Array(size);
    for (let i = 0; i < size; i++) {
      positions[i] = hp[order[i]!]!;
      out[i] = hs[order[i]!]!;
    }
    return { positions, scores: out };
  }

  // -------------------------------------------------------------------------------------------
  // Remapping (a flush reuses the MemTable's index instead of re-tokenising the rows)

  /**
   * A new index over a subset of this index's rows under new positions, without re-tokenising:
   * `newPosition[old]` is the new position of the row at position `old`, or −1 to drop it (rows
   * at or past `newPosition.length` are dropped too). The map must keep the order of positions
   * (a flush's dedup does); it throws otherwise.
   *
   * The result equals the index `add` builds from the kept rows at their new positions: it
   * covers positions [0, 1 + the largest new position), each new position holding what its old
   * row held (a document of the same tokens, or no document for a null text; a new position no
   * kept row maps to, or whose old row this index never held, is no document), and terms left
   * without postings are gone — so statistics, search results and `toArrow` are the same. Work
   * is O(rows + postings + token positions), on typed arrays.
   */
  remapped(newPosition: Int32Array): InvertedIndex {
    return runSteps(this.remapSteps(newPosition, Infinity));
  }

  /**
   * This index itself, for a flush whose rows all keep their positions (the map of `remapped`
   * is the identity): a generation can read the MemTable's index, where a remapped copy
   * re-sorted the dictionary, renumbered every term and remapped the forward index (~0.27 s of
   * the main thread per 100 000 rows of Zipf text). What the MemTable needed to grow goes: each
   * term's postings and token positions move from their slab arrays (up to 4× their length, room
   * to grow) into arrays of their exact length packed into new slab chunks, in term id order (an
   * array with a chunk of its own, over 32 Ki entries, stays), the old chunks go to the process's
   * pool (slab-allocator.ts), and the insertion buffers and word caches are released. The new
   * chunks come from that pool too: a flush's index costs no fresh memory once the process has
   * flushed before (two exact buffers, fresh each flush, page-faulted ~6 000 times a 100 000
   * rows). An index of less than four chunks goes into two exact buffers (`runs`) still.
   * Readers between steps see each term either still in its old array or already moved, never
   * half-moved. A later `add` would still work (arrays grow out of their exact ones).
   */
  *sealSteps(sliceWork = REMAP_SLICE_WORK): Generator<void, InvertedIndex, void> {
    this.flush();
    this.surface.clear();
    this.bTerm = new Uint32Array(16);
    this.bPos = new Uint32Array(16);
    this.bDoc = new Uint32Array(16);
    this.sDoc = new Uint32Array(16);
    const n = this.termStr.length;
    // The lexicon-id map stays (reads go through it) unless it is sparse — a long-lived process's
    // lexicon numbers far more terms than one index holds: then the string map is filled, in
    // steps, and the array dropped.
    if (this.localOf.length > 4 * n + 1024) {
      for (let i = this.termIdsSynced; i < n; i++) {
        if ((i & 8191) === 8191 && sliceWork !== Infinity) yield;
        this.termIds.set(this.termStr[i]!, i);
      }
      this.termIdsSynced = n;
      this.lexComplete = false;
      this.localOf = new Int32Array(0);
    }
    // Postings in segments: moved into exact arrays, in one pass over the segments.
    if (this.segs.length > 0) {
      yield* this.mergeSegmentsSteps(sliceWork);
      if (this.runs !== null) ftsSealCounts.runs++;
      else ftsSealCounts.packed++;
      return this;
    }
    // Already in runs (an index made by `remapped` or `fromArrow` and not added to since): kept.
    if (this.runs !== null) return this;
    let totalPost = 0;
    let totalTok = 0;
    for (let id = 0; id < n; id++) {
      totalPost += this.postCount[id]!;
      totalTok += this.posCount[id]!;
    }
    // A small index goes into two exact buffers (a packed slab would hold at least a whole
    // chunk, and a few fresh pages cost little).
    if (2 * totalPost + totalTok < SEAL_IN_CHUNKS_ENTRIES) {
      ftsSealCounts.runs++;
      return yield* this.sealIntoRuns(n, totalPost, totalTok, sliceWork);
    }
    ftsSealCounts.packed++;
    const slab = this.slab;
    const oldEnd = slab.startCompaction();
    let work = 0;
    for (let id = 0; id < n; id++) {
      if (work >= sliceWork) {
        work = 0;
        yield;
      }
      const L = id * LOC_STRIDE;
      const c = this.postCount[id]!;
      const pc = this.posCount[id]!;
      this.compactArray(L, id, true, 2 * c);
      this.compactArray(L + 3, id, false, pc);
      // Views of the old arrays go (a reader between steps may have made one).
      this.post[id] = undefined;
      this.tokPos[id] = undefined;
      work += c + pc;
    }
    // Every term has moved and no view of an old array is kept: the old chunks go to other slabs.
    slab.recycleBefore(oldEnd);
    return this;
  }

  /**
   * Moves every term's postings out of the segments into arrays of their exact length — two
   * buffers (`runs`) for a small index, packed standard slab chunks otherwise, as `sealSteps`
   * lays them out — and drops the segments: its arrays' postings first, then its runs in the
   * segments in order (those from `matTo[id]` on), written segment after segment (each segment
   * read once, in order). A reader between steps sees the index as it was (and may still move a
   * term's postings into its old arrays); the new arrays replace the old ones at the end, at once.
   *
   * Steps are bounded by work units weighed by what they cost here — a (term, segment) pair ~8
   * (a few random counter updates), a term's allocation ~16, a posting or token position ~1 —
   * and by time (`StepPace`: the first flush of a process runs this code cold).
   * The new memory is touched page by page before the scatter writes it: fresh pages fault on
   * first touch (~11 µs each on the VMs this project is measured on), and the scatter's random
   * order put thousands of them into its first step (a 78 ms event-loop stall for 200 000 rows).
   */
  private *mergeSegmentsSteps(sliceWork: number): Generator<void, void, void> {
    this.flush();
    const segs = this.segs;
    if (segs.length === 0) return;
    const n = this.termStr.length;
    this.reserveTerms(n);
    // What each term's arrays hold as of now; the segments give the rest.
    const heldPost = this.postCount.slice(0, n);
    const heldTok = this.posCount.slice(0, n);
    const maxTf = this.maxTf.slice(0, n);
    const minDl = this.minDl.slice(0, n);
    const matTo = this.matTo.slice(0, n);
    const postCount = heldPost.slice();
    const posCount = heldTok.slice();
    const pace = new StepPace(sliceWork);
    for (const seg of segs) {
      countSegmentRuns(seg, matTo, postCount, posCount);
      if (pace.add(8 * seg.nTerms)) yield;
    }
    let totalPost = 0;
    let totalTok = 0;
    for (let id = 0; id < n; id++) {
      totalPost += postCount[id]!;
      totalTok += posCount[id]!;
    }
    // Each term's new arrays: indexes into `dst` and offsets (`where`), then the write cursors.
    const small = 2 * totalPost + totalTok < SEAL_IN_CHUNKS_ENTRIES;
    const runs = small ? emptyRuns(n, totalPost, totalTok) : null;
    const slab = new SlabAllocator();
    const dst: Uint32Array[] = runs ? [runs.post, runs.tok] : slab.chunks;
    const where = new Int32Array(4 * n);
    const loc = new Int32Array(runs ? 0 : Math.max(16, n) * LOC_STRIDE);
    let po = 0;
    let to = 0;
    for (let id = 0; id < n; id++) {
      const np = 2 * postCount[id]!;
      const nt = posCount[id]!;
      const W = 4 * id;
      if (runs) {
        where[W] = 0;
        where[W + 1] = runs.postAt[id] = po;
        where[W + 2] = 1;
        where[W + 3] = runs.tokAt[id] = to;
        po += np;
        to += nt;
      } else {
        const L = id * LOC_STRIDE;
        slab.allocFixed(Math.max(1, np));
        where[W] = loc[L] = slab.chunk;
        where[W + 1] = loc[L + 1] = slab.offset;
        loc[L + 2] = np;
        slab.allocFixed(Math.max(1, nt));
        where[W + 2] = loc[L + 3] = slab.chunk;
        where[W + 3] = loc[L + 4] = slab.offset;
        loc[L + 5] = nt;
      }
      if (pace.add(16)) yield;
    }
    // The new memory, a page at a time (a pooled chunk's pages are resident: ~free).
    for (let c = runs ? 0 : 1; c < dst.length; c++) {
      const a = dst[c]!;
      for (let k = 0; k < a.length; k += 1024) {
        a[k] = 0;
        if (pace.add(256)) yield;
      }
    }
    // What the terms' arrays hold, first.
    const curPost = new Uint32Array(n);
    const curTok = new Uint32Array(n);
    for (let id = 0; id < n; id++) {
      const W = 4 * id;
      const hp = 2 * heldPost[id]!;
      const ht = heldTok[id]!;
      if (hp > 0) {
        const p = this.backing(id * LOC_STRIDE, id, true);
        copyRun(p, this.backingAt, dst[where[W]!]!, where[W + 1]!, hp);
        const t = this.backing(id * LOC_STRIDE + 3, id, false);
        copyRun(t, this.backingAt, dst[where[W + 2]!]!, where[W + 3]!, ht);
      }
      curPost[id] = where[W + 1]! + hp;
      curTok[id] = where[W + 3]! + ht;
      if (pace.add(2 + hp + ht)) yield;
    }
    // Then the segments' runs, segment after segment.
    const docLen = this.docLen;
    const base = this.base;
    const cursors: MergeCursors = { dst, where, curPost, curTok, maxTf, minDl, matTo };
    for (const seg of segs) {
      const copied = copySegmentRuns(seg, cursors, docLen, base);
      if (pace.add(8 * seg.nTerms + copied)) yield;
    }
    // The new arrays replace the old ones; no view of an old one is kept.
    this.post.fill(undefined);
    this.tokPos.fill(undefined);
    this.slab.recycle();
    this.slab = runs ? new SlabAllocator() : slab;
    this.loc = loc;
    this.runs = runs;
    this.postCount = postCount;
    this.posCount = posCount;
    this.maxTf = maxTf;
    this.minDl = minDl;
    this.matTo.fill(segs[segs.length - 1]!.to, 0, n);
    this.segs = [];
    this.segArena.release();
    this.segArena = new SegmentArena();
    ftsSegmentCounts.mergedAll++;
  }

  /** `sealSteps` of a small index: every term's arrays copied into two exact buffers (`runs`), in term id order. */
  private *sealIntoRuns(n: number, totalPost: number, totalTok: number, sliceWork: number): Generator<void, InvertedIndex, void> {
    const runs = emptyRuns(n, totalPost, totalTok);
    const loc = this.loc;
    let po = 0;
    let to = 0;
    let work = 0;
    for (let id = 0; id < n; id++) {
      if (work >= sliceWork) {
        work = 0;
        // Terms below `id` are in `runs` (slab location 0), the others still in the slab: a
        // reader (`viewOf`, `backing`) looks in the slab first.
        this.runs = runs;
        yield;
      }
      const L = id * LOC_STRIDE;
      const c = this.postCount[id]!;
      const pc = this.posCount[id]!;
      const p = this.backing(L, id, true);
      copyRun(p, this.backingAt, runs.post, po, 2 * c);
      const t = this.backing(L + 3, id, false);
      copyRun(t, this.backingAt, runs.tok, to, pc);
      runs.postAt[id] = po;
      runs.tokAt[id] = to;
      loc[L] = 0;
      loc[L + 3] = 0;
      this.post[id] = undefined;
      this.tokPos[id] = undefined;
      po += 2 * c;
      to += pc;
      work += c + pc;
    }
    this.runs = runs;
    // Every term has moved to `runs` and its slab views are dropped: the chunks go to other slabs.
    this.slab.recycle();
    this.slab = new SlabAllocator();
    this.loc = new Int32Array(0);
    return this;
  }

  /**
   * Moves the first `n` entries of the array at `loc[L..L+2]` (term `id`'s postings or token
   * positions) to an array of exactly `n` entries in the slab's current chunk; one in a chunk of
   * its own stays. See `sealSteps`.
   */
  private compactArray(L: number, id: number, postings: boolean, n: number): void {
    const loc = this.loc;
    const c = loc[L]!;
    if (c !== 0 && this.slab.isOwnChunk(c)) return;
    if (n === 0) {
      loc[L] = 0;
      return;
    }
    const src = this.backing(L, id, postings);
    const at = this.backingAt;
    const slab = this.slab;
    slab.allocExact(n);
    copyRun(src, at, slab.chunks[slab.chunk]!, slab.offset, n);
    loc[L] = slab.chunk;
    loc[L + 1] = slab.offset;
    loc[L + 2] = n;
  }

  /**
   * `remapped` in steps: the generator pauses (yields) after about `sliceWork` postings and token
   * positions, so a caller can give the event loop a turn between steps, and returns the
   * remapped index. This index must not change until the generator is done.
   */
  *remapSteps(newPosition: Int32Array, sliceWork = REMAP_SLICE_WORK): Generator<void, InvertedIndex, void> {
    yield* this.mergeSegmentsSteps(sliceWork);
    const out = new InvertedIndex(this.options);
    const limit = newPosition.length;
    let last = -1;
    let dropped = 0;
    for (let i = 0; i < limit; i++) {
      const j = newPosition[i]!;
      if (j < 0) {
        dropped++;
        continue;
      }
      if (j <= last) throw new RangeError(`InvertedIndex.remapped: the position map must keep row order (position ${i} maps to ${j} after ${last})`);
      last = j;
    }
    const newSpan = last + 1;
    if (newSpan === 0) return out;
    if (newSpan > 0xffffffff) throw new RangeError('row positions must fit in 32 bits');

    // Documents.
    out.base = 0;
    out.reserveRows(0, newSpan);
    const isDoc = new Uint8Array(newSpan);
    const docLen = out.docLen;
    if (this.base >= 0) {
      const end = Math.min(this.span, limit - this.base);
      for (let i = 0; i < end; i++) {
        const j = newPosition[this.base + i]!;
        if (j < 0 || this.prefDocs[i + 1]! === this.prefDocs[i]!) continue;
        isDoc[j] = 1;
        docLen[j] = this.docLen[i]!;
      }
    }
    const prefDocs = out.prefDocs;
    const prefTokens = out.prefTokens;
    let docs = 0;
    let tokens = 0;
    for (let j = 0; j < newSpan; j++) {
      if (isDoc[j] === 1) {
        docs++;
        tokens += docLen[j]!;
      } else docLen[j] = 0;
      prefDocs[j + 1] = docs;
      prefTokens[j + 1] = tokens;
    }
    out.docCount = docs;
    out.totalTokens = tokens;
    out.span = newSpan;

    // Terms: count the kept postings and token positions per term, then copy them into one
    // owned buffer each (every term gets views into them, as in `fromArrow`).
    const nTerms = this.termStr.length;
    let keptPost: Uint32Array;
    let keptTok: Uint32Array;
    let totalPost = 0;
    let totalTok = 0;
    // The identity map (a flush that drops nothing) leaves every posting as it is.
    const identity = dropped === 0 && last === limit - 1;
    if (dropped === 0 && limit >= this.base + this.span) {
      // No row dropped: every posting is kept.
      keptPost = this.postCount.subarray(0, nTerms);
      keptTok = this.posCount.subarray(0, nTerms);
      for (let id = 0; id < nTerms; id++) {
        totalPost += keptPost[id]!;
        totalTok += keptTok[id]!;
      }
    } else {
      keptPost = new Uint32Array(nTerms);
      keptTok = new Uint32Array(nTerms);
      let work = 0;
      for (let id = 0; id < nTerms; id++) {
        const c = this.postCount[id]!;
        const kp = countKept(this.postingsOnce(id), c, newPosition, keptTok, id);
        keptPost[id] = kp;
        totalPost += kp;
        totalTok += keptTok[id]!;
        if ((work += c) >= sliceWork) {
          work = 0;
          yield;
        }
      }
    }
    // The surviving terms get ids in UTF-16 order (the sidecar's order), and their postings and
    // token positions are laid out in that order in one buffer each: `toArrow` then needs no
    // sort, and copies the token positions in one piece. The dictionary and the per-term arrays
    // are filled in bulk.
    const kept: string[] = [];
    for (let id = 0; id < nTerms; id++) if (keptPost[id] !== 0) kept.push(this.termStr[id]!);
    yield;
    const alive = sliceWork === Infinity ? kept.sort() : yield* sortStringsSteps(kept, SORT_SLICE_TERMS);
    yield;
    const nNew = alive.length;
    const oldOf = new Uint32Array(nNew);
    const newId = new Int32Array(nTerms).fill(-1);
    for (let i = 0; i < nNew; i++) {
      // ~0.5 µs a term (a lookup and an insert): pause every few thousand (a 50 000-term
      // dictionary in one step held a flush's event loop ~25 ms).
      if ((i & 8191) === 8191 && sliceWork !== Infinity) yield;
      const term = alive[i]!;
      const id = this.idOf(term)!;
      oldOf[i] = id;
      newId[id] = i;
      out.termIds.set(term, i);
      out.termStr.push(term);
      out.termChars += term.length;
    }
    // Its terms came by string, not through the lexicon.
    out.termIdsSynced = nNew;
    out.lexComplete = false;
    yield;
    const cap = Math.max(16, nNew);
    out.postCount = new Uint32Array(cap);
    out.posCount = new Uint32Array(cap);
    out.maxTf = new Uint32Array(cap);
    out.minDl = new Uint32Array(cap);
    out.bCount = new Uint32Array(cap);
    // The by-length buckets are filled when a fuzzy query first needs them (`syncByLen`).
    const runs = emptyRuns(nNew, totalPost, totalTok);
    const { post: postAll, tok: tokAll, postAt, tokAt } = runs;
    let po = 0;
    let to = 0;
    let work = 0;
    for (let nid = 0; nid < nNew; nid++) {
      if (work >= sliceWork) {
        work = 0;
        yield;
      }
      const id = oldOf[nid]!;
      const kp = keptPost[id]!;
      const c = this.postCount[id]!;
      const pc = this.posCount[id]!;
      const p = this.postingsOnce(id);
      const tp = this.tokensOnce(id);
      const kt = keptTok[id]!;
      postAt[nid] = po;
      tokAt[nid] = to;
      if (kp === c) {
        // Every posting kept: token positions and end offsets are unchanged, and so are the
        // score bounds (each document keeps its length); only the row positions move.
        copyAllKept(p, c, tp, pc, identity ? null : newPosition, postAll, po, tokAll, to);
        out.maxTf[nid] = this.maxTf[id]!;
        out.minDl[nid] = this.minDl[id]!;
      } else {
        copyKept(p, c, tp, newPosition, docLen, postAll, po, tokAll, to);
        out.maxTf[nid] = keptBounds[0]!;
        out.minDl[nid] = keptBounds[1]!;
      }
      out.postCount[nid] = kp;
      out.posCount[nid] = kt;
      po += 2 * kp;
      to += kt;
      work += c + pc;
    }
    out.post.length = nNew;
    out.tokPos.length = nNew;
    out.runs = runs;
    out.packed = { post: postAll, tok: tokAll, postings: totalPost, tokens: totalTok };
    // The forward index moves with the rows.
    yield;
    if (this.base >= 0) out.fwd = yield* this.fwd.remapSteps(newPosition, this.base, newId, newSpan, sliceWork);
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Arrow sidecar

  /**
   * The index as one Arrow table (layout in the module comment, "Sidecar"). Row i < termCount
   * holds the i-th term in UTF-16 order with its postings; row i < docSpan holds the length of
   * row position base_position + i; the shorter of the two is padded with nulls.
   */
  toArrow(): Table {
    return runSteps(this.toArrowSteps(Infinity));
  }

  /**
   * `toArrow` in steps: the generator pauses (yields) after about `sliceWork` postings and token
   * positions are copied, so a flush can give the event loop turns. This index must not change
   * until the generator is done. `take` supplies the three largest arrays (postings' documents and
   * frequencies, token positions; any contents, written in full): a flush writing the table out
   * hands in reused memory and takes it back once the file is written.
   */
  *toArrowSteps(sliceWork = REMAP_SLICE_WORK, take: (entries: number) => Uint32Array = (n) => new Uint32Array(n)): Generator<void, Table, void> {
    yield* this.mergeSegmentsSteps(sliceWork);
    const nTerms = this.termStr.length;
    const span = this.base < 0 ? 0 : this.span;
    const rows = Math.max(nTerms, span);
    const packed = this.packed;
    // Default sort compares UTF-16 code units, like `<` (and is faster than a comparator). A
    // packed index (see `packed`) has its terms in that order already.
    const sortedTerms = packed ? this.termStr : sliceWork === Infinity ? this.termStr.slice().sort() : yield* sortStringsSteps(this.termStr, SORT_SLICE_TERMS);
    const order = new Uint32Array(nTerms);
    let totalPost = 0;
    let totalPos = 0;
    if (packed) {
      for (let i = 0; i < nTerms; i++) order[i] = i;
      totalPost = packed.postings;
      totalPos = packed.tokens;
    } else {
      for (let i = 0; i < nTerms; i++) {
        // A lookup each (~0.3 µs cold): pause every few thousand, as `remapSteps` does.
        if ((i & 8191) === 8191 && sliceWork !== Infinity) yield;
        const id = this.idOf(sortedTerms[i]!)!;
        order[i] = id;
        totalPost += this.postCount[id]!;
        totalPos += this.posCount[id]!;
      }
    }
    // All terms encoded at once; per-term byte offsets from their UTF-8 lengths.
    const strData = new TextEncoder().encode(sortedTerms.join(''));
    if (totalPos > 0x7fffffff || strData.length > 0x7fffffff) throw new RangeError('index too large for 32-bit Arrow offsets');
    const strOff = new Int32Array(rows + 1);
    const postOff = new Int32Array(rows + 1);
    const docs = take(totalPost);
    const freqs = take(totalPost);
    const tokOff = new Int32Array(rows + 1);
    const toks = take(totalPos);
    let so = 0;
    let po = 0;
    let to = 0;
    // Steps end on work or on time (a process's first flush runs this cold: 20–40 ms steps).
    const pace = new StepPace(sliceWork);
    for (let i = 0; i < nTerms; i++) {
      const id = order[i]!;
      if (pace.add(2 + this.postCount[id]! + (packed ? 0 : this.posCount[id]!))) yield;
      so += utf8Length(sortedTerms[i]!);
      // Read where the array lives — its run, its slab chunk (an index a generation shares with
      // its MemTable), or a view already made — without making a view per term.
      const p = this.backing(id * LOC_STRIDE, id, true);
      const pa = this.backingAt;
      const c = this.postCount[id]!;
      let prev = 0;
      for (let j = 0; j < c; j++) {
        docs[po + j] = p[pa + 2 * j]!;
        freqs[po + j] = p[pa + 2 * j + 1]! - prev;
        prev = p[pa + 2 * j + 1]!;
      }
      po += c;
      const pc = this.posCount[id]!;
      if (!packed) {
        const tp = this.backing(id * LOC_STRIDE + 3, id, false);
        const ta = this.backingAt;
        for (let j = 0; j < pc; j++) toks[to + j] = tp[ta + j]!;
      }
      to += pc;
      strOff[i + 1] = so;
      postOff[i + 1] = po;
      tokOff[i + 1] = to;
    }
    if (so !== strData.length) throw new Error('internal error: UTF-8 length mismatch');
    // Packed: every term's token positions, in term order, are the buffer's first `to` entries
    // (copied in slices: the fresh array page-faults as it fills, ~80 ms for 200k documents).
    if (packed) {
      for (let o = 0; o < to; o += sliceWork) {
        toks.set(packed.tok.subarray(o, Math.min(to, o + sliceWork)), o);
        if (o + sliceWork < to) yield;
      }
    }
    for (let i = nTerms; i < rows; i++) {
      strOff[i + 1] = so;
      postOff[i + 1] = po;
      tokOff[i + 1] = to;
    }
    const validity = (valid: number): Uint8Array => {
      const bm = new Uint8Array((rows + 7) >> 3);
      for (let i = 0; i < valid; i++) bm[i >> 3]! |= 1 << (i & 7);
      return bm;
    };
    const termValid = validity(nTerms);
    const listType = () => new List(new Field('item', new Uint32(), false));
    const list = (off: Int32Array, values: Uint32Array) =>
      makeData({
        type: listType(),
        length: rows,
        nullCount: rows - nTerms,
        nullBitmap: termValid,
        valueOffsets: off,
        child: makeData({ type: new Uint32(), length: values.length, nullCount: 0, data: values }),
      });
    const docLenValid = new Uint8Array((rows + 7) >> 3);
    const lens = new Uint32Array(rows);
    let lenNulls = rows;
    for (let i = 0; i < span; i++) {
      if (this.prefDocs[i + 1]! !== this.prefDocs[i]!) {
        docLenValid[i >> 3]! |= 1 << (i & 7);
        lens[i] = this.docLen[i]!;
        lenNulls--;
      }
    }
    const fields = [
      new Field('term', new Utf8(), true),
      new Field('doc_positions', listType(), true),
      new Field('frequencies', listType(), true),
      new Field('token_positions', listType(), true),
      new Field('doc_length', new Uint32(), true),
    ];
    const children = [
      makeData({ type: new Utf8(), length: rows, nullCount: rows - nTerms, nullBitmap: termValid, valueOffsets: strOff, data: strData }),
      list(postOff, docs),
      list(postOff, freqs),
      list(tokOff, toks),
      makeData({ type: new Uint32(), length: rows, nullCount: lenNulls, nullBitmap: docLenValid, data: lens }),
    ];
    const meta = new Map<string, string>([
      [`${META_PREFIX}version`, FORMAT_VERSION],
      [`${META_PREFIX}tokenizer`, JSON.stringify(this.options)],
      [`${META_PREFIX}base_position`, String(this.base < 0 ? 0 : this.base)],
      [`${META_PREFIX}doc_span`, String(span)],
      [`${META_PREFIX}term_count`, String(nTerms)],
      [`${META_PREFIX}doc_count`, String(this.docCount)],
      [`${META_PREFIX}total_tokens`, String(this.totalTokens)],
    ]);
    const schema = new Schema(fields, meta);
    const batch = new RecordBatch(schema, makeData({ type: new Struct(fields), length: rows, nullCount: 0, children }));
    return new Table(schema, [batch]);
  }

  /** Rebuilds an index from `toArrow()` output (possibly after an IPC round trip). */
  static fromArrow(table: Table, opts: TokenizerOptions = {}): InvertedIndex {
    return runSteps(InvertedIndex.fromArrowSteps(table, opts, Infinity));
  }

  /**
   * `fromArrow` in steps: pauses (yields) after about `sliceWork` postings are read or
   * transposed into the forward index, so a generation load can give the event loop turns.
   */
  static *fromArrowSteps(table: Table, opts: TokenizerOptions = {}, sliceWork = REMAP_SLICE_WORK): Generator<void, InvertedIndex, void> {
    const meta = table.schema.metadata;
    const get = (key: string): string => {
      const v = meta.get(META_PREFIX + key);
      if (v === undefined) throw new Error(`not an FTS sidecar: schema metadata ${META_PREFIX}${key} is missing`);
      return v;
    };
    if (get('version') !== FORMAT_VERSION) throw new Error(`unsupported FTS sidecar version ${get('version')}`);
    const stored = JSON.parse(get('tokenizer')) as TokenizerOptions;
    if (!sameTokenizerOptions(stored, opts)) {
      throw new Error(`tokenizer options ${JSON.stringify(resolveTokenizerOptions(opts))} differ from the sidecar's ${JSON.stringify(stored)}`);
    }
    const idx = new InvertedIndex(opts);
    const span = Number(get('doc_span'));
    const nTerms = Number(get('term_count'));
    const base = Number(get('base_position'));
    const col = (name: string) => {
      const c = table.getChild(name);
      if (c === null) throw new Error(`not an FTS sidecar: column ${name} is missing`);
      return c;
    };
    // Documents.
    if (span > 0) {
      idx.base = base;
      idx.reserveRows(base, span);
      let local = 0;
      for (const d of col('doc_length').data as Data<Uint32>[]) {
        const vals = d.values;
        // Validity read from the bitmap directly (Data.getValid per row was ~15 ms a 100k-row sidecar).
        const bitmap = d.nullCount > 0 ? d.nullBitmap : undefined;
        const bit0 = d.offset;
        for (let i = 0; i < d.length && local < span; i++, local++) {
          const isDoc = bitmap === undefined || bitmap.length === 0 || (bitmap[(bit0 + i) >> 3]! & (1 << ((bit0 + i) & 7))) !== 0;
          const dl = isDoc ? vals[i]! : 0;
          idx.docLen[local] = dl;
          idx.prefDocs[local + 1] = idx.prefDocs[local]! + (isDoc ? 1 : 0);
          idx.prefTokens[local + 1] = idx.prefTokens[local]! + dl;
          if (isDoc) {
            idx.docCount++;
            idx.totalTokens += dl;
          }
        }
      }
      if (local !== span) throw new Error('FTS sidecar: doc_length column is shorter than doc_span');
      idx.span = span;
    }
    // Terms.
    const termData = col('term').data as Data<Utf8>[];
    const docData = col('doc_positions').data as Data<List<Uint32>>[];
    const freqData = col('frequencies').data as Data<List<Uint32>>[];
    const tokData = col('token_positions').data as Data<List<Uint32>>[];
    // One owned buffer of postings and one of token positions for every chunk's terms; each
    // term is a run of them (see `runs`).
    let totalPost = 0;
    let totalTok = 0;
    for (let ch = 0, left = nTerms; ch < termData.length && left > 0; ch++) {
      const n = Math.min(termData[ch]!.length, left);
      totalPost += docData[ch]!.valueOffsets[n]! - docData[ch]!.valueOffsets[0]!;
      totalTok += tokData[ch]!.valueOffsets[n]! - tokData[ch]!.valueOffsets[0]!;
      left -= n;
    }
    const runs = emptyRuns(nTerms, totalPost, totalTok);
    const { post: postAll, tok: tokAll, postAt, tokAt } = runs;
    let postBase = 0;
    let tokBase = 0;
    let t = 0;
    for (let ch = 0; ch < termData.length && t < nTerms; ch++) {
      const td = termData[ch]!;
      const dd = docData[ch]!;
      const fd = freqData[ch]!;
      const kd = tokData[ch]!;
      const rowsHere = Math.min(td.length, nTerms - t);
      if (rowsHere <= 0) continue;
      const dVals = dd.children[0]!.values as Uint32Array;
      const fVals = fd.children[0]!.values as Uint32Array;
      const kVals = kd.children[0]!.values as Uint32Array;
      const d0All = dd.valueOffsets[0]!;
      const nPost = dd.valueOffsets[rowsHere]! - d0All;
      const k0All = kd.valueOffsets[0]!;
      const nTok = kd.valueOffsets[rowsHere]! - k0All;
      tokAll.set(kVals.subarray(k0All, k0All + nTok), tokBase);
      // Term strings: decode the chunk's bytes once when they are ASCII (byte = char offsets).
      const sBytes = td.values.subarray(td.valueOffsets[0]!, td.valueOffsets[rowsHere]!);
      let ascii = true;
      for (let i = 0; i < sBytes.length; i++) {
        if (sBytes[i]! >= 0x80) {
          ascii = false;
          break;
        }
      }
      const allStr = ascii ? decoder.decode(sBytes) : '';
      const s0 = td.valueOffsets[0]!;
      let work = 0;
      for (let i = 0; i < rowsHere; i++, t++) {
        if (work >= sliceWork) {
          work = 0;
          yield;
        }
        const term = ascii
          ? allStr.slice(td.valueOffsets[i]! - s0, td.valueOffsets[i + 1]! - s0)
          : decoder.decode(td.values.subarray(td.valueOffsets[i]!, td.valueOffsets[i + 1]!));
        const id = idx.termId(term, false); // throws on a duplicate term

        const d0 = dd.valueOffsets[i]!;
        const c = dd.valueOffsets[i + 1]! - d0;
        const f0 = fd.valueOffsets[i]!;
        const k0 = kd.valueOffsets[i]!;
        const nPos = kd.valueOffsets[i + 1]! - k0;
        work += c + 64; // a term's own set-up costs about as much as 64 postings
        const at = postBase + 2 * (d0 - d0All);
        let e = 0;
        let maxTf = 0;
        let minDl = 0xffffffff;
        for (let j = 0; j < c; j++) {
          const doc = dVals[d0 + j]!;
          const tf = fVals[f0 + j]!;
          if (doc < base || doc >= base + span) throw new Error(`FTS sidecar: posting position ${doc} of ${JSON.stringify(term)} outside the document range`);
          postAll[at + 2 * j] = doc;
          e += tf;
          postAll[at + 2 * j + 1] = e;
          if (tf > maxTf) maxTf = tf;
          const dl = idx.docLen[doc - base]!;
          if (dl < minDl) minDl = dl;
        }
        if (e !== nPos) throw new Error(`FTS sidecar: frequencies of ${JSON.stringify(term)} do not match its token positions`);
        idx.maxTf[id] = maxTf;
        idx.minDl[id] = minDl;
        postAt[id] = at;
        tokAt[id] = tokBase + k0 - k0All;
        idx.postCount[id] = c;
        idx.posCount[id] = nPos;
      }
      postBase += 2 * nPost;
      tokBase += nTok;
    }
    if (t !== nTerms) throw new Error('FTS sidecar: fewer term rows than term_count');
    // `termId` gave every term empty arrays: they are runs now.
    idx.post.fill(undefined);
    idx.tokPos.fill(undefined);
    idx.runs = runs;
    if (span > 0) idx.fwd = yield* RowTerms.fromPostingsSteps(postAll, postAt, idx.postCount, nTerms, base, span, sliceWork);
    return idx;
  }
}

/**
 * Postings of one term (`post`: `c` pairs (row position, token end offset)) whose row
 * `newPosition` keeps; their token positions are added to `keptTok[id]`.
 */
function countKept(post: Uint32Array, c: number, newPosition: Int32Array, keptTok: Uint32Array, id: number): number {
  const limit = newPosition.length;
  let kp = 0;
  let kt = 0;
  let prev = 0;
  for (let j = 0; j < 2 * c; j += 2) {
    const d = post[j]!;
    const e = post[j + 1]!;
    if (d < limit && newPosition[d]! >= 0) {
      kp++;
      kt += e - prev;
    }
    prev = e;
  }
  keptTok[id] = kt;
  return kp;
}

/**
 * Copies every posting of one term (`c` of them, `pc` token positions) under their new
 * positions (`newPosition` null: the identity) into `np` from `pAt` / `nt` from `tAt`. Short arrays by hand: a subarray view costs more than copying a
 * few entries.
 */
function copyAllKept(post: Uint32Array, c: number, tokPos: Uint32Array, pc: number, newPosition: Int32Array | null, np: Uint32Array, pAt: number, nt: Uint32Array, tAt: number): void {
  if (c < 32) {
    if (newPosition === null) for (let j = 0; j < 2 * c; j++) np[pAt + j] = post[j]!;
    else {
      for (let j = 0; j < 2 * c; j += 2) {
        np[pAt + j] = newPosition[post[j]!]!;
        np[pAt + j + 1] = post[j + 1]!;
      }
    }
  } else {
    np.set(post.subarray(0, 2 * c), pAt);
    if (newPosition !== null) for (let j = pAt; j < pAt + 2 * c; j += 2) np[j] = newPosition[np[j]!]!;
  }
  if (pc < 64) for (let j = 0; j < pc; j++) nt[tAt + j] = tokPos[j]!;
  else nt.set(tokPos.subarray(0, pc), tAt);
}

/** `copyKept`'s score bounds: the kept postings' largest tf and smallest document length. */
const keptBounds = new Uint32Array(2);

/**
 * Copies the postings of one term that `newPosition` keeps, under their new positions, with
 * their token positions, into `np` from `pAt` / `nt` from `tAt` (end offsets relative to `tAt`); sets `keptBounds` (document
 * lengths read from `docLen` by new position).
 */
function copyKept(post: Uint32Array, c: number, tokPos: Uint32Array, newPosition: Int32Array, docLen: Uint32Array, np: Uint32Array, pAt: number, nt: Uint32Array, tAt: number): void {
  const limit = newPosition.length;
  let po = pAt;
  let to = 0;
  let prev = 0;
  let maxTf = 0;
  let minDl = 0xffffffff;
  for (let j = 0; j < 2 * c; j += 2) {
    const d = post[j]!;
    const e = post[j + 1]!;
    const nd = d < limit ? newPosition[d]! : -1;
    if (nd >= 0) {
      const tf = e - prev;
      if (tf === 1) nt[tAt + to++] = tokPos[prev]!;
      else for (let q = prev; q < e; q++) nt[tAt + to++] = tokPos[q]!;
      np[po++] = nd;
      np[po++] = to;
      if (tf > maxTf) maxTf = tf;
      const dl = docLen[nd]!;
      if (dl < minDl) minDl = dl;
    }
    prev = e;
  }
  keptBounds[0] = maxTf;
  keptBounds[1] = minDl;
}

function checkMaxPosition(maxPosition: number | undefined): void {
  if (maxPosition !== undefined && !(maxPosition >= 0)) {
    throw new RangeError(`maxPosition must be a number ≥ 0, got ${maxPosition}`);
  }
}

function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Picks the best `max` candidates by (distance, term). */
function selectExpansions(cands: Candidate[], max: number): string[] {
  cands.sort(byDistThenTerm);
  const n = Math.min(max, cands.length);
  const out: string[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = cands[i]!.term;
  return out;
}

/**
 * Number of start positions of in-order phrase occurrences (see module comment).
 * `toks[j].subarray(starts[j], ends[j])` are token j's sorted positions in the document.
 */
function phraseFrequency(
  toks: Uint32Array[],
  starts: Uint32Array,
  ends: Uint32Array,
  offsets: readonly number[],
  slop: number,
  cur: Uint32Array, // scratch: per-token cursor into its position list
): number {
  const n = toks.length;
  const span = offsets[n - 1]! - offsets[0]!;
  cur.set(starts);
  let pf = 0;
  const t0 = toks[0]!;
  for (let a = starts[0]!; a < ends[0]!; a++) {
    const p0 = t0[a]!;
    let prev = p0;
    for (let j = 1; j < n; j++) {
      const need = prev + (offsets[j]! - offsets[j - 1]!);
      const tj = toks[j]!;
      let c = cur[j]!;
      const e = ends[j]!;
      while (c < e && tj[c]! < need) c++;
      cur[j] = c;
      if (c >= e) return pf; // no admissible position now, nor for any later start
      prev = tj[c]!;
    }
    if (prev - p0 - span <= slop) pf++;
  }
  return pf;
}
