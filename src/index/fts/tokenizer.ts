/**
 * Tokenizer shared by documents and queries of the full-text index.
 *
 * Pipeline (the same for documents and query words):
 *  1. Unicode normalisation: text containing any non-ASCII character is normalised to NFKC
 *     (composes "e + combining acute" into "é", folds full-width forms and ligatures).
 *  2. Lower-casing (`String.prototype.toLowerCase`, locale independent).
 *  3. Word splitting: maximal runs matching `[\p{L}\p{N}][\p{L}\p{M}\p{N}]*` (letters and digits;
 *     combining marks may continue a word so scripts such as Devanagari are not cut at vowel
 *     signs). Everything else (punctuation, whitespace, symbols, `_`, apostrophes) separates
 *     words: "don't" gives "don" + "t", "3.14" gives "3" + "14". Scripts without spaces (CJK)
 *     are not segmented further: "東京" is one token.
 *  4. Tokens longer than `maxTokenLength` UTF-16 code units (default 40) are dropped.
 *  5. Optional English stop-word removal (the 33-word Lucene/tantivy English list below),
 *     checked on the lower-cased surface form, before stemming.
 *  6. Optional English Porter stemming (`stemmer` package), applied only to tokens made of ASCII
 *     letters a–z; other tokens (digits, accented or non-Latin words) are kept as they are.
 *
 * Positions: every word found in step 3 occupies one position, counted from 0. A word removed
 * in step 4 or 5 is not emitted but still advances the position counter, so the gap stays
 * visible to phrase matching: with stop words removed the query phrase "quick the fox" becomes
 * quick@0 fox@2 and matches "quick a fox" or "quick red fox" but not "quick fox".
 */
import { stemmer } from 'stemmer';

export interface TokenizerOptions {
  /** English Porter stemming; default true. */
  stem?: boolean;
  /** Remove English stop words; default false. */
  stopWords?: boolean;
  /** Tokens longer than this many UTF-16 code units are dropped; default 40. */
  maxTokenLength?: number;
}

/** Options with every default filled in. */
export interface ResolvedTokenizerOptions {
  stem: boolean;
  stopWords: boolean;
  maxTokenLength: number;
}

export interface Tokens {
  /** Tokens in text order (after stop-word removal, length filter and stemming). */
  terms: string[];
  /** `positions[i]` is the word position of `terms[i]` (removed words still count). */
  positions: Uint32Array;
}

/** English stop words (Lucene `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`, also tantivy's list). */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it',
  'no', 'not', 'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these',
  'they', 'this', 'to', 'was', 'will', 'with',
]);

export function resolveTokenizerOptions(opts: TokenizerOptions = {}): ResolvedTokenizerOptions {
  const maxTokenLength = opts.maxTokenLength ?? 40;
  if (!Number.isInteger(maxTokenLength) || maxTokenLength < 1) {
    throw new RangeError(`maxTokenLength must be a positive integer, got ${String(opts.maxTokenLength)}`);
  }
  return { stem: opts.stem ?? true, stopWords: opts.stopWords ?? false, maxTokenLength };
}

/** True when two option sets tokenize identically. */
export function sameTokenizerOptions(a: TokenizerOptions, b: TokenizerOptions): boolean {
  const x = resolveTokenizerOptions(a);
  const y = resolveTokenizerOptions(b);
  return x.stem === y.stem && x.stopWords === y.stopWords && x.maxTokenLength === y.maxTokenLength;
}

// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\u0000-\u007f]/;
const ASCII_LETTERS = /^[a-z]+$/;
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;
const MARK = /^\p{M}$/u;

/** Character classes: 0 separator, 1 letter/digit (starts or continues a word), 2 mark (continues only). */
const CLASS_CACHE = new Uint8Array(65536); // 0 = not computed yet, else class + 1
for (let c = 0; c < 128; c++) {
  const isWord = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  CLASS_CACHE[c] = isWord ? 2 : 1;
}

function classOf(cp: number): number {
  if (cp < 65536) {
    const k = CLASS_CACHE[cp]!;
    if (k !== 0) return k - 1;
  }
  const ch = String.fromCodePoint(cp);
  const cls = LETTER_OR_DIGIT.test(ch) ? 1 : MARK.test(ch) ? 2 : 0;
  if (cp < 65536) CLASS_CACHE[cp] = cls + 1;
  return cls;
}

/**
 * Steps 1–4 of the pipeline without creating strings: calls `emit(s, start, end, position)` for
 * every word `s.slice(start, end)` of at most `maxTokenLength` code units, where `s` is the
 * normalised, lower-cased text; returns the number of positions used (all words, including the
 * dropped long ones). Equivalent to matching `/[\p{L}\p{N}][\p{L}\p{M}\p{N}]*\/gu` on `s`.
 */
export function scanWordSpans(
  text: string,
  maxTokenLength: number,
  emit: (s: string, start: number, end: number, position: number) => void,
): number {
  if (text.length === 0) return 0;
  let s = text;
  if (NON_ASCII.test(s)) s = s.normalize('NFKC');
  s = s.toLowerCase();
  const n = s.length;
  let pos = 0;
  let start = -1;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    let cls: number;
    let width = 1;
    if (c < 128) {
      cls = CLASS_CACHE[c]! - 1;
    } else {
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
          width = 2;
        }
      }
      cls = classOf(c);
    }
    if (start < 0) {
      if (cls === 1) start = i;
    } else if (cls === 0) {
      if (i - start <= maxTokenLength) emit(s, start, i, pos);
      pos++;
      start = -1;
    }
    i += width - 1;
  }
  if (start >= 0) {
    if (n - start <= maxTokenLength) emit(s, start, n, pos);
    pos++;
  }
  return pos;
}

/**
 * For each byte: the lower-cased character code when the byte is an ASCII letter or digit (a
 * word character), else 0 (ASCII separators, and every byte ≥ 0x80).
 */
export const ASCII_WORD_BYTE: Uint8Array = (() => {
  const t = new Uint8Array(256);
  for (let c = 48; c <= 57; c++) t[c] = c;
  for (let c = 97; c <= 122; c++) t[c] = c;
  for (let c = 65; c <= 90; c++) t[c] = c + 32;
  return t;
})();

/** True when every byte of `bytes[from, to)` is below 0x80 (the UTF-8 text is ASCII). */
export function isAsciiBytes(bytes: Uint8Array, from: number, to: number): boolean {
  let i = from;
  let acc = 0;
  if (to - from >= 64) {
    // Four bytes at a time through an aligned 32-bit view of the middle part.
    const at = bytes.byteOffset + i;
    const head = (4 - (at & 3)) & 3;
    for (const e = i + head; i < e; i++) acc |= bytes[i]!;
    const words = (to - i) >>> 2;
    const w = new Uint32Array(bytes.buffer, bytes.byteOffset + i, words);
    let wacc = 0;
    for (let k = 0; k < words; k++) wacc |= w[k]!;
    if ((wacc & 0x80808080) !== 0) return false;
    i += words * 4;
  }
  for (; i < to; i++) acc |= bytes[i]!;
  return (acc & 0x80) === 0;
}

/** Words of at most this many bytes are packed into three int32 by `scanAsciiWords`. */
export const PACKED_WORD_BYTES = 12;

/**
 * Words found by `scanAsciiWords`, four int32 a word in one growable Int32Array:
 *  - a word of at most PACKED_WORD_BYTES bytes: its lower-cased bytes packed little-endian, four
 *    to an int32, zero-padded (w0, w1, w2; w0 ≠ 0 since a word has a byte and word bytes are
 *    never 0), then its position;
 *  - a longer word: 0, its start (byte offset), its length in bytes, its position.
 */
export class WordSpans {
  data: Int32Array = new Int32Array(1024);
  /** Number of words (entries used: 4 × count). */
  count = 0;

  grow(): void {
    const next = new Int32Array(this.data.length * 2);
    next.set(this.data);
    this.data = next;
  }
}

/**
 * Steps 1–4 of the pipeline for ASCII text given as UTF-8 bytes `bytes[from, to)`, all below 0x80
 * (check with `isAsciiBytes`; other text goes through `scanWordSpans`). On ASCII text NFKC is the
 * identity, lower-casing maps only A–Z (to a–z), and the word characters (`\p{L}\p{N}`, no marks)
 * are exactly 0–9, A–Z, a–z; so the words are the maximal runs of ASCII letters and digits and
 * their lower-cased forms are the words `scanWordSpans` emits for the decoded string, at the
 * same positions (a byte is a UTF-16 code unit, so lengths agree too). Appends the words of at
 * most `maxTokenLength` bytes to `out` (see `WordSpans`; nothing is written to `bytes`) and
 * returns the number of positions used, dropped long words included.
 */
export function scanAsciiWords(bytes: Uint8Array, from: number, to: number, maxTokenLength: number, out: WordSpans): number {
  const W = ASCII_WORD_BYTE;
  let data = out.data;
  let n = out.count * 4;
  let pos = 0;
  let i = from;
  while (i < to) {
    let c = W[bytes[i]!]!;
    if (c === 0) {
      i++;
      continue;
    }
    // Packs the first 12 bytes while looking for the end of the word.
    const start = i;
    let w0 = c;
    let w1 = 0;
    let w2 = 0;
    let shift = 8;
    while (++i < to && (c = W[bytes[i]!]!) !== 0) {
      if (shift < 32) w0 |= c << shift;
      else if (shift < 64) w1 |= c << (shift - 32);
      else if (shift < 96) w2 |= c << (shift - 64);
      shift += 8;
    }
    const len = i - start;
    if (len <= maxTokenLength) {
      if (n + 4 > data.length) {
        out.count = n >> 2;
        out.grow();
        data = out.data;
      }
      if (len <= PACKED_WORD_BYTES) {
        data[n] = w0;
        data[n + 1] = w1;
        data[n + 2] = w2;
      } else {
        data[n] = 0;
        data[n + 1] = start;
        data[n + 2] = len;
      }
      data[n + 3] = pos;
      n += 4;
    }
    pos++;
  }
  out.count = n >> 2;
  return pos;
}

/** The word packed by `scanAsciiWords` into `w0, w1, w2`, as a string. */
export function unpackWord(w0: number, w1: number, w2: number): string {
  let s = '';
  for (const w of [w0, w1, w2]) {
    for (let k = 0; k < 32; k += 8) {
      const c = (w >>> k) & 0xff;
      if (c === 0) return s;
      s += String.fromCharCode(c);
    }
  }
  return s;
}

/** The lower-cased ASCII word `bytes[start, start + len)` (letters and digits) as a string. */
export function asciiWordString(bytes: Uint8Array, start: number, len: number): string {
  let s = '';
  for (let k = 0; k < len; k++) s += String.fromCharCode(ASCII_WORD_BYTE[bytes[start + k]!]!);
  return s;
}

/** Like `scanWordSpans`, with each word as a string. */
export function scanWords(text: string, maxTokenLength: number, emit: (word: string, position: number) => void): number {
  return scanWordSpans(text, maxTokenLength, (s, a, b, p) => emit(s.slice(a, b), p));
}

/**
 * Copies a short string so that it does not keep a large parent string alive (V8 represents
 * substrings of 13+ characters as views into their parent). Used for strings kept in long-lived
 * dictionaries.
 */
export function detachString(s: string): string {
  return s.length < 13 ? s : s.split('').join('');
}

/**
 * Steps 5–6 for one lower-cased word: null for a stop word (when enabled), else the term
 * (stemmed when enabled). Deterministic, so callers may cache it per word.
 */
export function analyzeWord(word: string, opts: ResolvedTokenizerOptions): string | null {
  if (opts.stopWords && ENGLISH_STOP_WORDS.has(word)) return null;
  return opts.stem ? stemWord(word) : word;
}

// Stemming is deterministic, so a bounded module-level memo is safe and saves most of its cost.
const STEM_CACHE_LIMIT = 200_000;
let stemCache = new Map<string, string>();

export function stemWord(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    const key = detachString(word);
    s = ASCII_LETTERS.test(key) ? stemmer(key) : key;
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache = new Map();
    stemCache.set(key, s);
  }
  return s;
}

/**
 * Tokenizes `text` (a document or a query word). Pure function of `text` and `opts`.
 */
export function tokenize(text: string, opts: TokenizerOptions = {}): Tokens {
  const o = resolveTokenizerOptions(opts);
  const terms: string[] = [];
  const positions: number[] = [];
  scanWords(text, o.maxTokenLength, (w, p) => {
    const t = analyzeWord(w, o);
    if (t !== null) {
      terms.push(t);
      positions.push(p);
    }
  });
  return { terms, positions: Uint32Array.from(positions) };
}
