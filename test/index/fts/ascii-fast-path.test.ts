/**
 * The ASCII fast path of the full-text write path (issue 7) against the general path:
 * `scanAsciiWords` (words from UTF-8 bytes) against `scanWordSpans` (NFKC, lower-casing and
 * Unicode word boundaries on a string), `PackedWordTable`, `WordTable.getAscii` against `get`,
 * `isAsciiBytes`, and whole indexes built from Arrow Utf8 columns (rows tokenized from their
 * bytes when ASCII) against indexes of the same texts given as strings (always the general path)
 * and against the tokens `tokenize` gives per row: same terms, postings, token positions,
 * statistics, score bounds, sidecar.
 */
import test, { type ExecutionContext } from 'ava';
import { type Data, tableFromIPC, tableToIPC, type Table, Utf8, vectorFromArray } from 'apache-arrow';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import {
  isAsciiBytes,
  PACKED_WORD_BYTES,
  scanAsciiWords,
  scanWordSpans,
  tokenize,
  type TokenizerOptions,
  unpackWord,
  WordSpans,
} from '../../../src/index/fts/tokenizer.js';
import { hashAsciiWord, hashSpan, PackedWordTable, WordTable } from '../../../src/index/fts/word-table.js';
import { mulberry32 } from './synthetic.js';

const encoder = new TextEncoder();

/** Random ASCII text: letters of both cases, digits, punctuation, apostrophes, controls, DEL. */
function asciiText(rnd: () => number, len: number): string {
  const parts = ['a', 'b', 'z', 'Q', 'Z', 'e', 'E', 's', '0', '7', '9', ' ', ' ', '  ', "'", '-', '_', '.', ',', '\t', '\n', '\u0000', '\u007f', '@', '`', '{', '[', '/', ':'];
  let s = '';
  while (s.length < len) {
    // Runs of word characters of varied length, so long words occur too.
    if (rnd() < 0.5) {
      const n = 1 + Math.floor(rnd() * (rnd() < 0.05 ? 60 : 9));
      for (let i = 0; i < n; i++) s += parts[Math.floor(rnd() * 11)]!;
    } else s += parts[Math.floor(rnd() * parts.length)]!;
  }
  return s;
}

const UNICODE_BITS = ['Café', 'naïve', 'ÉCOLE', 'Straße', '東京', 'ＡＢＣ１２', 'Cafe\u0301', 'नमस्ते', 'ﬁre', 'Ǆemal', 'İstanbul', '😀x', '\u00a0', '–', 'Ω', '\ufeff'];

/** Text mixing ASCII and non-ASCII pieces (or pure ASCII when `unicode` is 0). */
function mixedText(rnd: () => number, words: number, unicode: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    if (rnd() < unicode) out.push(UNICODE_BITS[Math.floor(rnd() * UNICODE_BITS.length)]!);
    else out.push(asciiText(rnd, 1 + Math.floor(rnd() * 12)));
  }
  return out.join(rnd() < 0.5 ? ' ' : '');
}

function utf8Data(texts: readonly (string | null)[]): Data<Utf8> {
  return vectorFromArray(texts as (string | null)[], new Utf8()).data[0]!;
}

/** Words (lower-cased) and positions of the general path. */
function generalWords(text: string, maxLen: number): { words: string[]; positions: number[]; used: number } {
  const words: string[] = [];
  const positions: number[] = [];
  const used = scanWordSpans(text, maxLen, (s, a, b, p) => {
    words.push(s.slice(a, b));
    positions.push(p);
  });
  return { words, positions, used };
}

function asciiWords(bytes: Uint8Array, from: number, to: number, maxLen: number) {
  const spans = new WordSpans();
  const used = scanAsciiWords(bytes, from, to, maxLen, spans);
  const words: string[] = [];
  const positions: number[] = [];
  let bad = 0;
  for (let k = 0; k < spans.count; k++) {
    const [a, b, c, p] = spans.data.subarray(4 * k, 4 * k + 4);
    let w: string;
    if (a !== 0) {
      // Packed: the bytes (lower-cased), little-endian, zero-padded.
      w = unpackWord(a!, b!, c!);
      if (w.length > PACKED_WORD_BYTES) bad++;
      const repacked = new Int32Array(3);
      for (let i = 0; i < w.length; i++) repacked[i >> 2]! |= w.charCodeAt(i) << (8 * (i & 3));
      if (repacked[0] !== a || repacked[1] !== b || repacked[2] !== c) bad++;
    } else {
      w = String.fromCharCode(...bytes.subarray(b!, b! + c!)).toLowerCase();
      if (c! <= PACKED_WORD_BYTES) bad++;
      if (hashAsciiWord(bytes, b!, c!) !== hashSpan(w, 0, w.length)) bad++;
    }
    words.push(w);
    positions.push(p!);
  }
  return { words, positions, used, bad };
}

test('scanAsciiWords finds the words and positions scanWordSpans finds on ASCII text (packed or with their hash)', (t) => {
  const rnd = mulberry32(71);
  let checked = 0;
  for (let round = 0; round < 3000; round++) {
    const text = asciiText(rnd, Math.floor(rnd() * 200));
    const maxLen = [1, 3, 8, 40][round % 4]!;
    // Inside a larger buffer, to check the offsets.
    const pad = Math.floor(rnd() * 5);
    const bytes = encoder.encode(' x'.repeat(pad) + text + 'Yz');
    const from = 2 * pad;
    const to = from + text.length;
    t.true(isAsciiBytes(bytes, from, to));
    const g = generalWords(text, maxLen);
    const a = asciiWords(bytes, from, to, maxLen);
    if (a.used !== g.used || a.words.join('\u0001') !== g.words.join('\u0001') || a.positions.join() !== g.positions.join() || a.bad !== 0) {
      t.fail(`differs on ${JSON.stringify(text)} (maxTokenLength ${maxLen})`);
      return;
    }
    checked += a.words.length;
  }
  t.true(checked > 5000, `${checked} words`);
  // Edge cases.
  for (const text of ['', ' ', 'a', 'A', '9', "don't", 'abcdefghijkl', 'ABCDEFGHIJKLM', 'z0123456789Z', 'Foo_Bar', '3.14', 'x'.repeat(41), `a ${'x'.repeat(41)} b`, 'ABC\u007fdef\u0000GHI']) {
    const bytes = encoder.encode(text);
    const g = generalWords(text, 40);
    const a = asciiWords(bytes, 0, bytes.length, 40);
    t.deepEqual({ words: a.words, positions: a.positions, used: a.used }, g, JSON.stringify(text));
    t.is(a.bad, 0);
  }
});

test('isAsciiBytes finds a byte >= 0x80 anywhere, at any alignment and length', (t) => {
  const rnd = mulberry32(5);
  const buf = new Uint8Array(400);
  for (let i = 0; i < buf.length; i++) buf[i] = Math.floor(rnd() * 128);
  for (let from = 0; from < 9; from++) {
    for (const len of [0, 1, 3, 4, 5, 63, 64, 65, 66, 67, 130, 300]) {
      const to = from + len;
      t.true(isAsciiBytes(buf, from, to));
      for (const at of new Set([from, from + 1, from + 3, to - 4, to - 2, to - 1, from + (len >> 1)])) {
        if (at < from || at >= to) continue;
        const keep = buf[at]!;
        buf[at] = 0x80 | keep;
        t.false(isAsciiBytes(buf, from, to), `from ${from} len ${len} at ${at}`);
        // Outside the range it does not count.
        t.true(at === from || isAsciiBytes(buf, from, at));
        t.true(isAsciiBytes(buf, at + 1, Math.max(at + 1, to)));
        buf[at] = keep;
      }
    }
  }
  // A view that starts at an odd offset of its buffer.
  const view = new Uint8Array(buf.buffer, 3, 200);
  t.true(isAsciiBytes(view, 0, 200));
  view[150] = 0xc3;
  t.false(isAsciiBytes(view, 0, 200));
  t.true(isAsciiBytes(view, 0, 150));
});

test('PackedWordTable maps packed words to values through growth and clear', (t) => {
  const rnd = mulberry32(12);
  const table = new PackedWordTable(16);
  const words = new Map<string, number>();
  while (words.size < 30_000) {
    const n = 1 + Math.floor(rnd() * PACKED_WORD_BYTES);
    let w = '';
    for (let i = 0; i < n; i++) w += 'aeiouzq0189'[Math.floor(rnd() * 11)]!;
    if (!words.has(w)) words.set(w, words.size - 1);
  }
  const pack = (w: string) => {
    const spans = new WordSpans();
    scanAsciiWords(encoder.encode(w), 0, w.length, 40, spans);
    return [spans.data[0]!, spans.data[1]!, spans.data[2]!] as const;
  };
  for (const [w, v] of words) {
    const [a, b, c] = pack(w);
    t.is(unpackWord(a, b, c), w);
    if (table.get(a, b, c) !== undefined) t.fail(w);
    table.set(a, b, c, v);
  }
  t.is(table.size, words.size);
  let ok = 0;
  for (const [w, v] of words) if (table.get(...pack(w)) === v) ok++;
  t.is(ok, words.size);
  t.is(table.get(...pack('qqqqqqqqqqqq')), words.get('qqqqqqqqqqqq'));
  table.clear();
  t.is(table.size, 0);
  t.is(table.get(...pack('a')), undefined);
});

test('WordTable.getAscii sees the entries of the lower-cased strings, whatever the case of the bytes', (t) => {
  const rnd = mulberry32(9);
  const table = new WordTable(16);
  const words = new Map<string, number>();
  while (words.size < 5000) {
    const n = 1 + Math.floor(rnd() * 10);
    let w = '';
    for (let i = 0; i < n; i++) w += 'abcxyz0129'[Math.floor(rnd() * 10)]!;
    if (!words.has(w)) words.set(w, words.size - 1); // values from -1 on (stop words are -1)
  }
  for (const [w, v] of words) table.set(w, 0, w.length, hashSpan(w, 0, w.length), v);
  for (const [w, v] of words) {
    const upper = `..${w.replace(/[a-z]/g, (c) => (rnd() < 0.5 ? c.toUpperCase() : c))}!`;
    const bytes = encoder.encode(upper);
    t.is(hashAsciiWord(bytes, 2, w.length), hashSpan(w, 0, w.length));
    t.is(table.getAscii(bytes, 2, w.length, hashSpan(w, 0, w.length)), v);
  }
  // Absent words, and prefixes/extensions of present ones.
  for (const probe of ['zzzzzzzzzzz', 'abcxyz0129abcxyz', 'q']) {
    const bytes = encoder.encode(probe);
    t.is(table.getAscii(bytes, 0, bytes.length, hashSpan(probe, 0, probe.length)), undefined);
  }
});

interface Posting {
  doc: number;
  positions: number[];
}

/** term → postings, from the sidecar. */
function postingsOf(table: Table): Map<string, Posting[]> {
  const out = new Map<string, Posting[]>();
  const terms = table.getChild('term')!;
  const docs = table.getChild('doc_positions')!;
  const freqs = table.getChild('frequencies')!;
  const toks = table.getChild('token_positions')!;
  const n = Number(table.schema.metadata.get('quiver.fts.term_count'));
  for (let i = 0; i < n; i++) {
    const d = Array.from(docs.get(i) as ArrayLike<number>);
    const f = Array.from(freqs.get(i) as ArrayLike<number>);
    const p = Array.from(toks.get(i) as ArrayLike<number>);
    const list: Posting[] = [];
    let at = 0;
    for (let j = 0; j < d.length; j++) {
      list.push({ doc: d[j]!, positions: p.slice(at, at + f[j]!) });
      at += f[j]!;
    }
    out.set(terms.get(i) as string, list);
  }
  return out;
}

/** term → postings computed with `tokenize`, row by row. */
function expectedPostings(texts: readonly (string | null)[], first: number, opts: TokenizerOptions): Map<string, Posting[]> {
  const out = new Map<string, Posting[]>();
  texts.forEach((text, i) => {
    if (text === null) return;
    const { terms, positions } = tokenize(text, opts);
    const byTerm = new Map<string, number[]>();
    terms.forEach((term, j) => {
      let ps = byTerm.get(term);
      if (!ps) byTerm.set(term, (ps = []));
      ps.push(positions[j]!);
    });
    for (const [term, ps] of byTerm) {
      let list = out.get(term);
      if (!list) out.set(term, (list = []));
      list.push({ doc: first + i, positions: ps });
    }
  });
  return out;
}

function sortedEntries(m: Map<string, Posting[]>): [string, Posting[]][] {
  return [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/**
 * White-box: the per-term score bounds (largest tf, smallest document length) and counts the
 * write path keeps equal those computed from the sidecar's postings.
 */
function checkBounds(t: ExecutionContext, index: InvertedIndex, what: string): void {
  const inner = index as unknown as { idOf(term: string): number | undefined; maxTf: Uint32Array; minDl: Uint32Array; postCount: Uint32Array; posCount: Uint32Array };
  let bad = 0;
  for (const [term, list] of postingsOf(index.toArrow())) {
    const id = inner.idOf(term)!;
    let maxTf = 0;
    let minDl = 0xffffffff;
    let tokens = 0;
    for (const p of list) {
      maxTf = Math.max(maxTf, p.positions.length);
      minDl = Math.min(minDl, index.documentLength(p.doc));
      tokens += p.positions.length;
    }
    if (inner.maxTf[id] !== maxTf || inner.minDl[id] !== minDl || inner.postCount[id] !== list.length || inner.posCount[id] !== tokens) bad++;
  }
  t.is(bad, 0, `score bounds and counts, ${what}`);
}

function ipc(index: InvertedIndex): Uint8Array {
  return tableToIPC(index.toArrow());
}

function sameBytes(t: ExecutionContext, a: Uint8Array, b: Uint8Array, what: string): void {
  t.true(a.length === b.length && a.every((x, i) => x === b[i]), what);
}

const OPTIONS: TokenizerOptions[] = [{}, { stem: false }, { stopWords: true }, { maxTokenLength: 4 }];

test('Arrow input (ASCII rows from bytes) gives the same index as strings and as tokenize, mixed ASCII/Unicode, nulls, empties', (t) => {
  const rnd = mulberry32(123);
  const texts: (string | null)[] = [];
  for (let i = 0; i < 600; i++) {
    const r = rnd();
    if (r < 0.05) texts.push(null);
    else if (r < 0.08) texts.push('');
    else if (r < 0.6) texts.push(mixedText(rnd, 1 + Math.floor(rnd() * 30), 0));
    else texts.push(mixedText(rnd, 1 + Math.floor(rnd() * 30), 0.15));
  }
  texts.push('The QUICK brown fox: don\'t e-mail foo_bar 3.14 x@y.com and the end', 'Running runs RAN easily; the ponies are not theirs');
  for (const opts of OPTIONS) {
    const fromArrow = new InvertedIndex(opts);
    const fromStrings = new InvertedIndex(opts);
    // In pieces, with a gap before the second piece.
    fromArrow.add(10, utf8Data(texts.slice(0, 250)));
    fromArrow.add(300, utf8Data(texts.slice(250)));
    fromStrings.add(10, texts.slice(0, 250));
    fromStrings.add(300, texts.slice(250));
    sameBytes(t, ipc(fromArrow), ipc(fromStrings), `sidecar, ${JSON.stringify(opts)}`);
    const expected = new Map([...expectedPostings(texts.slice(0, 250), 10, opts)]);
    for (const [term, list] of expectedPostings(texts.slice(250), 300, opts)) expected.set(term, [...(expected.get(term) ?? []), ...list]);
    t.deepEqual(sortedEntries(postingsOf(fromArrow.toArrow())), sortedEntries(expected), `postings, ${JSON.stringify(opts)}`);
    t.is(fromArrow.termCount, expected.size);
    checkBounds(t, fromArrow, JSON.stringify(opts));
    t.is(fromArrow.documentCount, texts.filter((x) => x !== null).length);
    const terms = [...expected.keys()].slice(0, 50);
    t.deepEqual(fromArrow.stats(terms), fromStrings.stats(terms));
    t.deepEqual(fromArrow.stats(terms, 200), fromStrings.stats(terms, 200));
    for (const q of ['fox quick', 'e -a', '"a b"', 'zz~', 'caf* 東京 école']) {
      const query = fromArrow.parseQuery(q);
      t.deepEqual(fromArrow.search(query, { k: 20 }), fromStrings.search(query, { k: 20 }), q);
    }
  }
});

test('sliced Arrow arrays, chunked vectors and very long rows', (t) => {
  const rnd = mulberry32(77);
  const texts: (string | null)[] = [];
  for (let i = 0; i < 200; i++) texts.push(rnd() < 0.1 ? null : mixedText(rnd, 1 + Math.floor(rnd() * 20), i % 3 === 0 ? 0.2 : 0));
  // Two rows longer than the token buffer (2^18 tokens), one ASCII, one with a non-ASCII word.
  const vocab = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
  const long = Array.from({ length: 300_000 }, () => vocab[Math.floor(rnd() * vocab.length)]!).join(' ');
  texts.splice(50, 0, long, `${long.slice(0, 200_000)} Ünïcödé ${long.slice(200_000)}`);
  const vec = vectorFromArray(texts as (string | null)[], new Utf8());
  const sliced = vec.slice(30, 180); // a Vector of one sliced Data (offset 30)
  const chunked = sliced.slice(0, 70).concat(sliced.slice(70)); // two sliced chunks
  const a = new InvertedIndex();
  a.add(0, sliced.data[0]!);
  const b = new InvertedIndex();
  b.add(0, chunked);
  const c = new InvertedIndex();
  c.add(0, texts.slice(30, 180));
  sameBytes(t, ipc(a), ipc(c), 'sliced Data');
  sameBytes(t, ipc(b), ipc(c), 'chunked Vector');
  const expected = expectedPostings(texts.slice(30, 180), 0, {});
  t.deepEqual(sortedEntries(postingsOf(a.toArrow())), sortedEntries(expected));
  t.is(a.documentLength(20), tokenize(long).terms.length);
  checkBounds(t, a, 'long rows');
});

test('appends to an index of fromArrow and of remapped (arrays not made by the insertion path)', (t) => {
  const rnd = mulberry32(31);
  const texts: (string | null)[] = [];
  for (let i = 0; i < 400; i++) texts.push(rnd() < 0.05 ? null : mixedText(rnd, 1 + Math.floor(rnd() * 25), i % 4 === 0 ? 0.2 : 0));
  const whole = new InvertedIndex();
  whole.add(0, utf8Data(texts));
  // Half, through the sidecar, then the rest.
  const half = new InvertedIndex();
  half.add(0, utf8Data(texts.slice(0, 200)));
  const restored = InvertedIndex.fromArrow(tableFromIPC(ipc(half)), {});
  restored.add(200, utf8Data(texts.slice(200, 300)));
  restored.add(300, texts.slice(300));
  sameBytes(t, ipc(restored), ipc(whole), 'fromArrow + add');
  // Half, remapped with the identity map, then the rest (twice: remapped indexes of remapped ones).
  const remapped = half.remapped(Int32Array.from({ length: 200 }, (_, i) => i)).remapped(Int32Array.from({ length: 200 }, (_, i) => i));
  remapped.add(200, utf8Data(texts.slice(200)));
  sameBytes(t, ipc(remapped), ipc(whole), 'remapped + add');
  checkBounds(t, remapped, 'remapped + add');
  checkBounds(t, restored, 'fromArrow + add');
  // The original keeps working after being remapped.
  half.add(200, utf8Data(texts.slice(200)));
  sameBytes(t, ipc(half), ipc(whole), 'add after remapped');
  const q = whole.parseQuery('a e zz 0');
  t.deepEqual(remapped.search(q, { k: 30 }), whole.search(q, { k: 30 }));
});

test('a large Zipf corpus in 1000-row Arrow batches equals the string path (growth of the per-term arrays)', (t) => {
  const rnd = mulberry32(2024);
  const vocab = Array.from({ length: 20_000 }, (_, i) => {
    let w = '';
    let x = i + 1;
    while (x > 0) {
      w += 'kalomineruSATIvozepa'[x % 20];
      x = Math.floor(x / 20);
    }
    return w;
  });
  const cdf = new Float64Array(vocab.length);
  let sum = 0;
  for (let i = 0; i < vocab.length; i++) cdf[i] = sum += 1 / (i + 1);
  const pick = () => {
    const u = rnd() * sum;
    let lo = 0;
    let hi = vocab.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return vocab[lo]!;
  };
  const texts = Array.from({ length: 20_000 }, () => Array.from({ length: 8 + Math.floor(rnd() * 33) }, pick).join(' '));
  const a = new InvertedIndex();
  const b = new InvertedIndex();
  for (let i = 0; i < texts.length; i += 1000) {
    a.add(i, utf8Data(texts.slice(i, i + 1000)));
    b.add(i, texts.slice(i, i + 1000));
  }
  sameBytes(t, ipc(a), ipc(b), 'sidecar');
  checkBounds(t, a, 'Zipf');
  const q = a.parseQuery(`${vocab[0]} ${vocab[100]} ${vocab[5000]}`);
  t.deepEqual(a.search(q, { k: 10 }), b.search(q, { k: 10 }));
});
