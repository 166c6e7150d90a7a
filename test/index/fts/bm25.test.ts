import test, { type ExecutionContext } from 'ava';
import { tableFromIPC, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import {
  InvertedIndex,
  collectFtsStats,
  mergeFtsStats,
  type FtsSearchResult,
  type FtsStats,
} from '../../../src/index/fts/inverted-index.js';
import { parseFtsQuery, type FtsQuery } from '../../../src/index/fts/query.js';
import { mulberry32 } from '../../helpers/rng.js';
import type { TokenizerOptions } from '../../../src/index/fts/tokenizer.js';
import { RefIndex, refDocs, refPhraseFreq, topK, type RefHit } from './reference.js';

const CORPUS: (string | null)[] = [
  'The quick brown fox jumps over the lazy dog.',
  'A quick brown dog outpaces a quick fox; quick quick!',
  null,
  '',
  'Lazy dogs sleep all day. The fox is not lazy at all.',
  'Brown bears and brown foxes: the brownest of the brown.',
  'Running runners ran; the runner runs. Run, fox, run!',
  '!!! ... ???',
  'Quick thinking: the fox, the dog and the cat are friends of the quick brown fox.',
  'Café naïve 東京 123 — colour color colours coloring',
  'fox fox fox fox fox fox fox fox dog',
  'The dog barked at the quick red fox near the brown lazy river.',
  'Searching for the quick fox in the brown forest, the hunter saw a dog.',
  'colour colors color colr collar cooler',
  'A long document about nothing in particular: words words words words words words words words words words words fox.',
  'Brown: the quick. Fox: the lazy.',
];

const QUERIES = [
  // terms (Match = OR)
  'fox',
  'quick fox',
  'brown dog cat',
  'nonexistent',
  'nonexistent fox',
  // phrases
  '"quick brown"',
  '"brown fox"',
  '"quick brown fox"',
  '"quick fox"~1',
  '"quick fox"~2',
  '"quick fox"~5',
  '"the fox"~3',
  '"fox fox"',
  '"fox dog"~0',
  '"lazy fox"~4',
  // required / excluded
  '+fox',
  '+fox +dog',
  '+fox -dog',
  '+brown +"quick fox"~3',
  'fox -"quick brown"',
  '+quick dog cat',
  '-fox',
  '+fox +nonexistent',
  // fuzzy
  'colour~',
  'colour~1',
  'colr~2',
  'dgo~1',
  'fxo~',
  'runer~',
  // boost
  'fox^2 dog',
  '"quick brown"^3 fox',
  'dog^0.5 cat^4',
  // combinations
  '+fox "quick brown"^2 -cat lazy~1',
  '+"brown fox"~2 +dog^1.5 quick',
  'colour~1^2 +brown',
  '+runs~ -"lazy dog"',
  'café 東京 123',
];

function hitsOf(r: FtsSearchResult): RefHit[] {
  return Array.from(r.positions, (pos, i) => ({ pos, score: r.scores[i]! }));
}

const TOL = 1e-6;

function assertSameHits(t: ExecutionContext, got: RefHit[], want: RefHit[], label: string): void {
  t.deepEqual(got.map((h) => h.pos).sort((a, b) => a - b), want.map((h) => h.pos).sort((a, b) => a - b), `${label}: matching positions`);
  const w = new Map(want.map((h) => [h.pos, h.score]));
  for (const h of got) {
    const ref = w.get(h.pos);
    if (ref === undefined) continue;
    // Scores come back as Float32: allow its rounding (relative 2^-24) on top of the absolute 1e-6.
    const tol = Math.max(TOL, Math.abs(ref) * 2 ** -23);
    t.true(Math.abs(h.score - ref) <= tol, `${label}: pos ${h.pos} score ${h.score} vs reference ${ref}`);
  }
  for (let i = 1; i < got.length; i++) {
    const a = got[i - 1]!;
    const b = got[i]!;
    t.true(a.score > b.score || (a.score === b.score && a.pos < b.pos), `${label}: order at ${i}`);
  }
}

for (const opts of [{}, { stem: false }, { stopWords: true }] as TokenizerOptions[]) {
  const tag = JSON.stringify(opts);
  test(`BM25 equals the reference for every query form ${tag}`, (t) => {
    const idx = new InvertedIndex(opts);
    idx.add(0, CORPUS);
    const ref = new RefIndex(refDocs(0, CORPUS, opts));
    let nonEmpty = 0;
    for (const qs of QUERIES) {
      const q = parseFtsQuery(qs, opts);
      const got = hitsOf(idx.search(q, { k: 1000 }));
      const want = ref.search(q);
      if (want.length > 0) nonEmpty++;
      assertSameHits(t, got, want, `${tag} ${qs}`);
      // Top-k cut: the first 3 of the full ranking.
      const top3 = hitsOf(idx.search(q, { k: 3 }));
      t.deepEqual(top3.map((h) => h.pos), hitsOf(idx.search(q, { k: 1000 })).slice(0, 3).map((h) => h.pos), `${tag} ${qs}: top 3`);
    }
    t.true(nonEmpty >= QUERIES.length - 6, 'most queries match something');
  });
}

test('hand-checked BM25 numbers for a tiny corpus', (t) => {
  const idx = new InvertedIndex({ stem: false });
  idx.add(0, ['a b', 'a a c', null, '']);
  // N = 3 (the empty text counts, null does not), totalTokens = 5, avgdl = 5/3.
  const st = idx.stats(['a', 'c', 'zzz']);
  t.is(st.docCount, 3);
  t.is(st.totalTokens, 5);
  t.deepEqual([...st.docFreq], [['a', 2], ['c', 1], ['zzz', 0]]);
  const idf = Math.log((3 - 2 + 0.5) / (2 + 0.5) + 1);
  const avgdl = 5 / 3;
  const s = (tf: number, dl: number) => idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl));
  const r = idx.search(parseFtsQuery('a', { stem: false }), { k: 10 });
  t.deepEqual([...r.positions], [1, 0]);
  t.true(Math.abs(r.scores[0]! - s(2, 3)) < 1e-6);
  t.true(Math.abs(r.scores[1]! - s(1, 2)) < 1e-6);
});

test('phrase frequency counts overlapping start positions and respects order', (t) => {
  const idx = new InvertedIndex({ stem: false });
  idx.add(0, ['a a a', 'b a', 'a x b', 'a x y b']);
  const q = (s: string) => [...idx.search(parseFtsQuery(s, { stem: false }), { k: 10 }).positions].sort();
  t.deepEqual(q('"a a"'), [0]);
  t.deepEqual(q('"a b"'), []);
  t.deepEqual(q('"a b"~1'), [2]);
  t.deepEqual(q('"a b"~2'), [2, 3]);
  t.deepEqual(q('"b a"'), [1]);
  // "a a" occurs at starts 0 and 1 of "a a a": the phrase scores with tf = 2.
  const ref = new RefIndex(refDocs(0, ['a a a', 'b a', 'a x b', 'a x y b'], { stem: false }));
  t.is(refPhraseFreq(ref.docs[0]!, ['a', 'a'], [0, 1], 0), 2);
  const score = idx.search(parseFtsQuery('"a a"', { stem: false }), { k: 1 }).scores[0]!;
  t.true(Math.abs(score - 2 * ref.bm25('a', 2, 3)) < 1e-6);
});

test('stop-word gaps stay in phrases (stopWords: true)', (t) => {
  const opts = { stopWords: true, stem: false };
  const idx = new InvertedIndex(opts);
  idx.add(0, ['quick fox', 'quick a fox', 'quick red fox', 'quick the red fox']);
  const q = parseFtsQuery('"quick the fox"', opts);
  t.deepEqual(q.should[0], { kind: 'phrase', terms: ['quick', 'fox'], offsets: [0, 2], slop: 0, boost: 1 });
  t.deepEqual([...idx.search(q, { k: 10 }).positions].sort(), [1, 2]);
  t.deepEqual([...idx.search(parseFtsQuery('"quick the fox"~1', opts), { k: 10 }).positions].sort(), [1, 2, 3]);
});

// ---------------------------------------------------------------------------------------------
// Global statistics

function splitSearch(parts: { index: InvertedIndex; maxPosition?: number }[], q: FtsQuery, k: number): RefHit[] {
  const stats = collectFtsStats(parts, q);
  const all: RefHit[] = [];
  for (const p of parts) all.push(...hitsOf(p.index.search(q, { k, stats, maxPosition: p.maxPosition })));
  return topK(all, k);
}

function assertIdentical(t: ExecutionContext, got: RefHit[], want: RefHit[], label: string): void {
  t.deepEqual(got.map((h) => h.pos), want.map((h) => h.pos), `${label}: positions`);
  for (let i = 0; i < Math.min(got.length, want.length); i++) {
    t.true(Math.abs(got[i]!.score - want[i]!.score) <= 1e-6, `${label}: score of ${got[i]!.pos}`);
  }
}

// Many near-identical terms so fuzzy clauses hit the 50-expansion cap; the two halves hold
// different parts of the candidate set.
function fuzzCorpus(): string[] {
  const docs: string[] = [];
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (let i = 0; i < 26; i++) {
    docs.push(`${letters[i]}at c${letters[i]}t ca${letters[i]} fox`);
    docs.push(`${letters[i]}${letters[(i * 7) % 26]}t dog ${i % 3 === 0 ? 'cat cat' : 'quick'}`);
  }
  return docs;
}

test('global statistics: two halves with merged stats score exactly like one index', (t) => {
  const opts = { stem: false };
  const texts = [...CORPUS, ...fuzzCorpus()];
  const whole = new InvertedIndex(opts);
  whole.add(100, texts);
  const half = Math.floor(texts.length / 2);
  const a = new InvertedIndex(opts);
  const b = new InvertedIndex(opts);
  a.add(100, texts.slice(0, half));
  b.add(100 + half, texts.slice(half));
  // Reference over the whole corpus too.
  const ref = new RefIndex(refDocs(100, texts, opts));
  const queries = [...QUERIES, 'cat~', 'cat~1', '+cat~1 fox', 'zat~1 dog', 'bat~2^2 -fox'];
  for (const qs of queries) {
    const q = parseFtsQuery(qs, opts);
    const one = hitsOf(whole.search(q, { k: 1000 }));
    const two = splitSearch([{ index: a }, { index: b }], q, 1000);
    assertIdentical(t, two, one, `split ${qs}`);
    assertSameHits(t, one, ref.search(q), `ref ${qs}`);
    // Top-k across the split equals the whole index's top-k.
    assertIdentical(t, splitSearch([{ index: a }, { index: b }], q, 5), hitsOf(whole.search(q, { k: 5 })), `split top5 ${qs}`);
  }
  // The 50-expansion cap is really exercised.
  t.true(ref.expansions('cat', 1, 1000).length > 50);
});

test('global statistics survive toArrow → IPC → fromArrow', (t) => {
  const opts = { stopWords: true };
  const texts = [...CORPUS, ...fuzzCorpus()];
  const whole = new InvertedIndex(opts);
  whole.add(0, texts);
  const half = 20;
  const a = new InvertedIndex(opts);
  const b = new InvertedIndex(opts);
  a.add(0, texts.slice(0, half));
  b.add(half, texts.slice(half));
  const roundTrip = (x: InvertedIndex) => InvertedIndex.fromArrow(tableFromIPC(tableToIPC(x.toArrow())), opts);
  const a2 = roundTrip(a);
  const b2 = roundTrip(b);
  const whole2 = roundTrip(whole);
  t.is(whole2.termCount, whole.termCount);
  t.is(whole2.documentCount, whole.documentCount);
  for (const qs of [...QUERIES, 'cat~1', '+cat~1 fox']) {
    const q = parseFtsQuery(qs, opts);
    const one = hitsOf(whole.search(q, { k: 1000 }));
    assertIdentical(t, hitsOf(whole2.search(q, { k: 1000 })), one, `restored whole ${qs}`);
    assertIdentical(t, splitSearch([{ index: a2 }, { index: b2 }], q, 1000), one, `restored split ${qs}`);
  }
});

test('mergeFtsStats sums counts and document frequencies', (t) => {
  const a: FtsStats = { docCount: 3, totalTokens: 10, docFreq: new Map([['x', 1], ['y', 2]]) };
  const b: FtsStats = { docCount: 4, totalTokens: 7, docFreq: new Map([['y', 3], ['z', 1]]) };
  const m = mergeFtsStats(a, b);
  t.is(m.docCount, 7);
  t.is(m.totalTokens, 17);
  t.deepEqual(Object.fromEntries(m.docFreq), { x: 1, y: 5, z: 1 });
  t.deepEqual(Object.fromEntries(a.docFreq), { x: 1, y: 2 }, 'inputs untouched');
});

test('stats missing a scored query term is an error, not a silent wrong score', (t) => {
  const idx = new InvertedIndex();
  idx.add(0, ['quick fox']);
  const q = parseFtsQuery('quick fox');
  const err = t.throws(() => idx.search(q, { k: 5, stats: idx.stats(['quick']) }));
  t.regex(err!.message, /"fox"/);
});

// ---------------------------------------------------------------------------------------------
// Visibility cutoff and prefilter

test('maxPosition cutoff: stats and results only see rows below it', (t) => {
  const opts = {};
  const ref = new RefIndex(refDocs(0, CORPUS, opts));
  const idx = new InvertedIndex(opts);
  idx.add(0, CORPUS.slice(0, 6));
  idx.add(6, CORPUS.slice(6));
  for (const cut of [0, 1, 5, 6, 9, 12, 100]) {
    const prefix = new InvertedIndex(opts);
    if (cut > 0) prefix.add(0, CORPUS.slice(0, cut));
    for (const qs of QUERIES) {
      const q = parseFtsQuery(qs, opts);
      const got = hitsOf(idx.search(q, { k: 1000, maxPosition: cut }));
      assertIdentical(t, got, hitsOf(prefix.search(q, { k: 1000 })), `cut ${cut} ${qs} vs prefix index`);
      if (cut > 0) assertSameHits(t, got, ref.search(q, cut), `cut ${cut} ${qs} vs reference`);
      for (const h of got) t.true(h.pos < cut);
    }
    const terms = ['fox', 'quick', 'brown', 'nothing'];
    const st = idx.stats(terms, cut);
    t.is(st.docCount, cut === 0 ? 0 : ref.N(cut));
    t.is(st.totalTokens, cut === 0 ? 0 : ref.totalTokens(cut));
    for (const term of terms) t.is(st.docFreq.get(term), cut === 0 ? 0 : ref.df(term, cut));
  }
});

test('allowed is a true prefilter: k results whenever k allowed documents match', (t) => {
  const texts = Array.from({ length: 300 }, (_, i) => `fox ${'dog '.repeat(i % 7)} ${i % 5 === 0 ? 'quick' : 'slow'}`);
  const idx = new InvertedIndex();
  idx.add(1000, texts);
  const ref = new RefIndex(refDocs(1000, texts, {}));
  const allowed = (pos: number) => pos % 13 === 0;
  for (const qs of ['fox', 'fox quick', '+fox -quick dog']) {
    const q = parseFtsQuery(qs);
    const got = hitsOf(idx.search(q, { k: 10, allowed }));
    t.is(got.length, 10, qs);
    const want = topK(ref.search(q), 10, allowed);
    assertIdentical(t, got, want, `allowed ${qs}`);
    // With a cutoff as well.
    const got2 = hitsOf(idx.search(q, { k: 10, allowed, maxPosition: 1150 }));
    assertSameHits(t, got2, topK(ref.search(q, 1150), 10, allowed), `allowed+cutoff ${qs}`);
  }
  // Fewer allowed matches than k: all of them.
  t.is(idx.search(parseFtsQuery('quick'), { k: 50, allowed: (p) => p < 1020 }).positions.length, 4);
});

// ---------------------------------------------------------------------------------------------
// Insertion forms

test('Arrow Utf8 input (sliced, with nulls), position gaps and appends after fromArrow', (t) => {
  const texts = ['quick fox', null, 'lazy dog', '', 'quick dog', 'fox fox'];
  const vec = vectorFromArray(['ignored', ...texts, 'ignored too'], new Utf8()).slice(1, 1 + texts.length);
  const fromArrow = new InvertedIndex();
  fromArrow.add(0, vec.data[0]!);
  const fromStrings = new InvertedIndex();
  fromStrings.add(0, texts);
  const q = parseFtsQuery('quick fox dog');
  t.deepEqual(hitsOf(fromArrow.search(q, { k: 10 })), hitsOf(fromStrings.search(q, { k: 10 })));
  t.is(fromArrow.documentCount, 5);

  // Gaps are not documents.
  const gap = new InvertedIndex();
  gap.add(0, ['quick fox']);
  gap.add(10, ['lazy fox', 'quick']);
  t.is(gap.stats([]).docCount, 3);
  t.is(gap.endPosition, 12);
  t.deepEqual([...gap.search(parseFtsQuery('fox'), { k: 10 }).positions].sort((x, y) => x - y), [0, 10]);
  t.throws(() => gap.add(11, ['late']), { message: /increasing position order/ });

  // A restored index keeps growing like the original.
  const restored = InvertedIndex.fromArrow(tableFromIPC(tableToIPC(gap.toArrow())), {});
  gap.add(20, ['quick quick fox', null, 'fox']);
  restored.add(20, ['quick quick fox', null, 'fox']);
  for (const qs of ['fox', 'quick', '"quick fox"', '+quick -lazy']) {
    t.deepEqual(hitsOf(restored.search(parseFtsQuery(qs), { k: 10 })), hitsOf(gap.search(parseFtsQuery(qs), { k: 10 })), qs);
  }
  t.throws(() => InvertedIndex.fromArrow(gap.toArrow(), { stem: false }), { message: /tokenizer options/ });
});

test('sidecar layout: term rows sorted, postings and doc lengths as documented', (t) => {
  const idx = new InvertedIndex({ stem: false });
  idx.add(5, ['b a b', null, 'a']);
  const tab = idx.toArrow();
  t.deepEqual(tab.schema.fields.map((f) => f.name), ['term', 'doc_positions', 'frequencies', 'token_positions', 'doc_length']);
  t.is(tab.schema.metadata.get('quiver.fts.base_position'), '5');
  t.is(tab.schema.metadata.get('quiver.fts.doc_span'), '3');
  t.is(tab.schema.metadata.get('quiver.fts.term_count'), '2');
  const rows = tab.toArray().map((r) => r.toJSON());
  t.is(rows.length, 3);
  t.is(rows[0].term, 'a');
  t.deepEqual([...rows[0].doc_positions], [5, 7]);
  t.deepEqual([...rows[0].frequencies], [1, 1]);
  t.deepEqual([...rows[0].token_positions], [1, 0]);
  t.is(rows[1].term, 'b');
  t.deepEqual([...rows[1].doc_positions], [5]);
  t.deepEqual([...rows[1].frequencies], [2]);
  t.deepEqual([...rows[1].token_positions], [0, 2]);
  t.is(rows[2].term, null);
  t.deepEqual(rows.map((r) => r.doc_length), [3, null, 1]);
});

test('empty index and degenerate queries', (t) => {
  const idx = new InvertedIndex();
  t.is(idx.search(parseFtsQuery('fox'), { k: 10 }).positions.length, 0);
  t.is(idx.toArrow().numRows, 0);
  t.is(InvertedIndex.fromArrow(idx.toArrow()).termCount, 0);
  idx.add(0, ['fox']);
  t.is(idx.search(parseFtsQuery('fox'), { k: 0 }).positions.length, 0);
  t.is(idx.search(parseFtsQuery('-fox'), { k: 10 }).positions.length, 0, 'only must_not matches nothing');
  t.is(idx.search({ must: [], should: [], mustNot: [] }, { k: 10 }).positions.length, 0);
});

test('global statistics with per-source visibility cutoffs equal one index over the visible rows', (t) => {
  const opts = { stem: false };
  const texts = [...CORPUS, ...fuzzCorpus()];
  const half = 30;
  const a = new InvertedIndex(opts);
  const b = new InvertedIndex(opts);
  a.add(0, texts.slice(0, half));
  b.add(half, texts.slice(half));
  // Source a sees rows < 25, source b rows < 50: visible = [0, 25) ∪ [30, 50).
  const visible = texts.map((x, i) => ((i < 25 || (i >= half && i < 50)) ? x : null));
  const one = new InvertedIndex(opts);
  one.add(0, visible);
  for (const qs of [...QUERIES, 'cat~1', '+cat~1 fox', 'zat~1 dog']) {
    const q = parseFtsQuery(qs, opts);
    const parts = [{ index: a, maxPosition: 25 }, { index: b, maxPosition: 50 }];
    assertIdentical(t, splitSearch(parts, q, 1000), hitsOf(one.search(q, { k: 1000 })), `cutoff split ${qs}`);
  }
});

test('queryTerms lists query tokens and local fuzzy candidates; bad arguments are rejected', (t) => {
  const idx = new InvertedIndex({ stem: false });
  idx.add(0, ['cat cot cut dog', 'cart']);
  t.deepEqual(idx.queryTerms(parseFtsQuery('"big dog" -mouse cat~1', { stem: false })).sort(), ['big', 'cart', 'cat', 'cot', 'cut', 'dog', 'mouse']);
  t.deepEqual(idx.queryTerms(parseFtsQuery('cat~1', { stem: false }), 1).sort(), ['cat', 'cot', 'cut'], 'cutoff hides "cart"');
  t.throws(() => idx.search(parseFtsQuery('cat'), { k: 1, maxPosition: -1 }), { instanceOf: RangeError });
  t.throws(() => idx.stats(['cat'], Number.NaN), { instanceOf: RangeError });
  t.throws(() => idx.add(-1, ['x']), { instanceOf: RangeError });
  const err = t.throws(() => idx.search(parseFtsQuery('cat'), {
    k: 1,
    allowed: () => idx.search(parseFtsQuery('dog'), { k: 1 }).positions.length > 0,
  }));
  t.regex(err!.message, /not reentrant/);
  t.is(idx.search(parseFtsQuery('cat'), { k: 1 }).positions.length, 1, 'usable after the error');
});

