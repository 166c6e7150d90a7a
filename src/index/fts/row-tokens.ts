/**
 * Full-text rows tokenized on one thread and indexed on another (issue 7: the main thread spent
 * about a fifth of a put's time finding and analysing words).
 *
 * `tokenizeRows` runs where the words are analysed (the tokenize worker): a chunk of Utf8 rows
 * becomes, per row, its kept tokens as ids of that thread's `SharedLexicon` (see
 * shared-lexicon.ts) with their positions — exactly the tokens `InvertedIndex.add` finds for
 * the same rows (the same scans, `analyzeWord` and stop words). Lexicon ids mean nothing to
 * another thread, so each answer also carries the terms of the ids the receiving side has not
 * been sent yet, and the receiving side keeps a `LexiconMirror` (id → term) per tokenizer
 * configuration. Both sides name the lexicon by `source` (the worker instance) and
 * epoch: a worker that restarted or a lexicon that started over begins a new mirror.
 *
 * `InvertedIndex.addTokenized` consumes `TokenizedRows` with a mirror: a token costs one array
 * lookup there (its term id in that index, by lexicon id); a term that index has not seen, an
 * array lookup in the mirror (its id in this thread's lexicon; its string is looked up there
 * once per mirror). The index it builds is the one `add` builds, term ids and sidecar bytes
 * included (test/index/fts/row-tokens.test.ts).
 */
import type { Data, Utf8 } from 'apache-arrow';
import { int32WithRoom } from '../../util/int32-room.js';
import { SharedLexicon } from './shared-lexicon.js';
import { asciiWordString, isAsciiBytes, scanAsciiWords, scanWordSpans, analyzeWord, type TokenizerOptions, WordSpans } from './tokenizer.js';

/** One chunk of rows as ids of a lexicon. */
export interface TokenizedRows {
  /** The lexicon the ids belong to: its source (worker instance) and epoch. */
  readonly source: number;
  readonly epoch: number;
  /** Terms of lexicon ids [termsFrom, termsFrom + newTerms.length), not sent before. */
  readonly termsFrom: number;
  readonly newTerms: string[];
  /** Per row: its kept tokens (−1: a null text, not a document). */
  readonly docLen: Int32Array;
  /** Per kept token, in row order: its lexicon id and its position in the document. */
  readonly tokTerm: Uint32Array;
  readonly tokPos: Uint32Array;
}

/** Where a chunk of `TokenizedRows` is added up to (`InvertedIndex.addTokenized` a piece at a time). */
export interface TokenCursor {
  /** The next row of the chunk to add. */
  row: number;
  /** Its first token. */
  token: number;
}

/** The Utf8 rows of one chunk: `values[offsets[i], offsets[i + 1])` is row i's text, or null. */
export interface Utf8Rows {
  readonly values: Uint8Array;
  readonly offsets: Int32Array;
  /** Row i is null when bit i is clear (LSB first); null: no nulls. */
  readonly validity: Uint8Array | null;
  readonly count: number;
}

/**
 * Memory for an array a thread hands to another: an ArrayBuffer of at least `bytes` (reused
 * ones welcome: fresh memory page-faults as it fills, ~11 µs a 4 KiB page on the VMs this
 * project is measured on, and a tokenize job's text and tokens are ~1 MB a 1 000 rows).
 */
export type TakeBuffer = (bytes: number) => ArrayBuffer;

const freshBuffer: TakeBuffer = (bytes) => new ArrayBuffer(bytes);

/**
 * The rows of an Arrow Utf8 chunk (a slice too) as `Utf8Rows`: offsets re-based to 0, validity
 * bits from bit 0 when it has nulls. With `copy` the bytes and then the offsets are in one buffer
 * of their own from `take` (to be transferred to another thread); else the bytes are a view of
 * the chunk's.
 */
export function utf8Rows(d: Data<Utf8>, copy: boolean, take: TakeBuffer = freshBuffer): Utf8Rows {
  const n = d.length;
  const src = d.valueOffsets;
  const from = src[0]!;
  const bytes = src[n]! - from;
  let values: Uint8Array;
  let offsets: Int32Array;
  if (copy) {
    const at = (bytes + 3) & ~3;
    const buffer = take(at + 4 * (n + 1));
    values = new Uint8Array(buffer, 0, bytes);
    values.set(d.values.subarray(from, src[n]!));
    offsets = new Int32Array(buffer, at, n + 1);
  } else {
    values = d.values.subarray(from, src[n]!);
    offsets = new Int32Array(n + 1);
  }
  for (let i = 0; i <= n; i++) offsets[i] = src[i]! - from;
  let validity: Uint8Array | null = null;
  if (d.nullCount > 0) {
    validity = new Uint8Array((n + 7) >>> 3);
    for (let i = 0; i < n; i++) if (d.getValid(i)) validity[i >>> 3]! |= 1 << (i & 7);
  }
  return { values, offsets, validity, count: n };
}

const decoder = new TextDecoder();

/** Per lexicon on this thread: how many of its terms the other side has been sent. */
const sent = new WeakMap<SharedLexicon, { epoch: number; upTo: number }>();

/**
 * Tokens of `rows` as ids of this thread's lexicon for `options` (or of `lexicon`, a test's
 * stand-in for another thread's), with the terms the other side lacks (`source` names this
 * thread's lexicons there). Throws when one chunk holds more distinct terms than the lexicon's
 * bound (the caller then indexes it the ordinary way). `tokTerm` and `tokPos` are views of one
 * buffer from `take` (see `tokensBuffer`).
 */
export function tokenizeRows(rows: Utf8Rows, options: TokenizerOptions, source: number, lexicon = SharedLexicon.of(options), take: TakeBuffer = freshBuffer): TokenizedRows {
  // A lexicon starting over mid-chunk would leave ids of two epochs: the chunk is done again
  // from the new epoch (which then has room for it).
  for (let attempt = 0; attempt < 2; attempt++) {
    const epoch = lexicon.epoch;
    const out = tokenizeIn(lexicon, rows, take);
    if (lexicon.epoch !== epoch) continue;
    let s = sent.get(lexicon);
    if (s === undefined || s.epoch !== epoch) sent.set(lexicon, (s = { epoch, upTo: 0 }));
    const termsFrom = s.upTo;
    const newTerms = lexicon.termsFrom(termsFrom);
    s.upTo = termsFrom + newTerms.length;
    return { source, epoch, termsFrom, newTerms, ...out };
  }
  throw new Error('a chunk of rows holds more distinct words than the lexicon keeps');
}

/** The buffer `tokensBuffer` returns: term ids in [0, cap), positions in [cap, 2·cap). */
function tokensBuffer(take: TakeBuffer, cap: number): { tokTerm: Uint32Array; tokPos: Uint32Array } {
  const buffer = take(8 * cap);
  const c = buffer.byteLength >>> 3;
  return { tokTerm: new Uint32Array(buffer, 0, c), tokPos: new Uint32Array(buffer, 4 * c, c) };
}

function tokenizeIn(lexicon: SharedLexicon, rows: Utf8Rows, take: TakeBuffer): { docLen: Int32Array; tokTerm: Uint32Array; tokPos: Uint32Array } {
  const { values, offsets, validity, count } = rows;
  const maxTokenLength = lexicon.options.maxTokenLength;
  const words = lexicon.words;
  const docLen = new Int32Array(count);
  // ASCII text holds at most a token per two bytes (a word character and a separator); other
  // text may hold more after NFKC (¼ → 1⁄4: two words from two bytes), so the arrays grow.
  // Both in one buffer, answered as views of it (no copy to the exact length).
  let { tokTerm, tokPos } = tokensBuffer(take, ((offsets[count]! - offsets[0]!) >>> 1) + count);
  const room = (need: number): void => {
    if (need <= tokTerm.length) return;
    const grown = tokensBuffer(take, Math.max(need, 2 * tokTerm.length));
    grown.tokTerm.set(tokTerm);
    grown.tokPos.set(tokPos);
    tokTerm = grown.tokTerm;
    tokPos = grown.tokPos;
  };
  const spans = new WordSpans();
  let n = 0;
  const emit = (s: string, start: number, end: number, p: number): void => {
    const t = analyzeWord(s.slice(start, end), lexicon.options);
    if (t === null) return;
    room(n + 1);
    tokTerm[n] = lexicon.idOf(t);
    tokPos[n++] = p;
  };
  for (let i = 0; i < count; i++) {
    if (validity !== null && (validity[i >>> 3]! & (1 << (i & 7))) === 0) {
      docLen[i] = -1;
      continue;
    }
    const from = offsets[i]!;
    const to = offsets[i + 1]!;
    const before = n;
    if (isAsciiBytes(values, from, to)) {
      spans.count = 0;
      scanAsciiWords(values, from, to, maxTokenLength, spans);
      room(n + spans.count);
      const data = spans.data;
      for (let k = 0; k < 4 * spans.count; k += 4) {
        const w0 = data[k]!;
        let g: number;
        if (w0 !== 0) {
          const w1 = data[k + 1]!;
          const w2 = data[k + 2]!;
          g = words.get(w0, w1, w2) ?? lexicon.addWord(w0, w1, w2);
        } else {
          const t = analyzeWord(asciiWordString(values, data[k + 1]!, data[k + 2]!), lexicon.options);
          g = t === null ? -1 : lexicon.idOf(t);
        }
        if (g < 0) continue;
        tokTerm[n] = g;
        tokPos[n++] = data[k + 3]!;
      }
    } else {
      scanWordSpans(decoder.decode(values.subarray(from, to)), maxTokenLength, emit);
    }
    docLen[i] = n - before;
  }
  return { docLen, tokTerm: tokTerm.subarray(0, n), tokPos: tokPos.subarray(0, n) };
}

/**
 * The receiving side's copy of one thread's lexicons: per tokenizer configuration, lexicon id →
 * term, fed by every `TokenizedRows` that thread sends, in the order it sent them.
 */
export class LexiconMirror {
  /** Bumped whenever the terms start over (another source or epoch): ids taken before mean nothing. */
  generation = 0;
  private source = -1;
  private epoch = -1;
  private terms: string[] = [];

  /** Takes the terms `rows` carries; every answer of the source must pass here, in order. */
  feed(rows: TokenizedRows): void {
    if (rows.source !== this.source || rows.epoch !== this.epoch) {
      this.source = rows.source;
      this.epoch = rows.epoch;
      this.terms = [];
      this.generation++;
    }
    if (rows.termsFrom !== this.terms.length) {
      throw new Error(`internal: lexicon terms from ${rows.termsFrom} after ${this.terms.length} received`);
    }
    for (const t of rows.newTerms) this.terms.push(t);
  }

  /** Whether `rows` can be read through this mirror now (fed, same lexicon). */
  serves(rows: TokenizedRows): boolean {
    return rows.source === this.source && rows.epoch === this.epoch && rows.termsFrom + rows.newTerms.length <= this.terms.length;
  }

  /** The term of lexicon id `g`. */
  term(g: number): string {
    const t = this.terms[g];
    if (t === undefined) throw new Error(`internal: lexicon id ${g} not received`);
    return t;
  }

  /** Mirrored id → 1 + id in `local` (this thread's lexicon, epoch `localEpoch`); 0: not looked up. */
  private localIds: Int32Array = new Int32Array(0);
  private localLexicon: SharedLexicon | null = null;
  private localEpoch = -1;
  private localGen = -1;

  /**
   * The id in `local` (this thread's lexicon of the same configuration) of mirrored id `g`: its
   * term looked up there once for every index that reads through this mirror (each new
   * MemTable's index meets every term again). May make `local` start over (check its epoch).
   */
  localId(g: number, local: SharedLexicon): number {
    if (local !== this.localLexicon || local.epoch !== this.localEpoch || this.generation !== this.localGen) {
      this.localLexicon = local;
      this.localEpoch = local.epoch;
      this.localGen = this.generation;
      this.localIds.fill(0);
    }
    const ids = this.localIds;
    const l = g < ids.length ? ids[g]! : 0;
    if (l !== 0) return l - 1;
    const gl = local.idOf(this.term(g));
    if (local.epoch !== this.localEpoch) {
      // It started over: every id remembered is of the old epoch.
      this.localEpoch = local.epoch;
      this.localIds.fill(0);
    }
    this.localIds = int32WithRoom(this.localIds, g);
    this.localIds[g] = gl + 1;
    return gl;
  }
}
