/**
 * The word analysis inverted indexes of one tokenizer configuration share (shared-lexicon.ts):
 * a second index over words the first has seen analyses none of them again; indexes of other
 * options never see another configuration's terms; an index whose terms all came through the
 * lexicon keeps no string map of its own, and still answers every read; and when the lexicon
 * starts over in the middle of an index's life, the index goes on with the same terms and ids —
 * checked against an index built with no start-over, over ASCII, long and non-ASCII words.
 */
import test from 'ava';
import { tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { SharedLexicon } from '../../../src/index/fts/shared-lexicon.js';
import { runSteps } from '../../../src/util/steps.js';
import { analyzeWord, resolveTokenizerOptions } from '../../../src/index/fts/tokenizer.js';
import { mulberry32 } from '../../helpers/rng.js';
import { skewedTexts, wordList } from './synthetic.js';

// Words the other test files do not use, so the lexicon's counters here see only this file's
// indexes (each test file runs in a process of its own).
const WORDS = [...wordList(300).map((w) => `lex${w}`), 'internationalization', 'Überraschung', 'naïveté', 'running', 'runs', 'ran'];
const texts = (seed: number, n: number) => skewedTexts(mulberry32(seed), n, WORDS, 14, 0.1);

function build(docs: readonly (string | null)[], opts = {}, between?: (done: number) => void): InvertedIndex {
  const ix = new InvertedIndex(opts);
  for (let s = 0; s < docs.length; s += 100) {
    between?.(s);
    ix.add(s, vectorFromArray(docs.slice(s, s + 100), new Utf8()));
  }
  return ix;
}

const sidecar = (ix: InvertedIndex) => tableToIPC(ix.toArrow());

/** What reads answer; `ids` too unless `noIds` (a remapped copy numbers its terms anew). */
function reads(ix: InvertedIndex, noIds = false): unknown {
  const r = ix.search(ix.parseQuery('lexw1 lexw7 running internationalization Überraschung'), { k: 20 });
  return {
    hits: [Array.from(r.positions), Array.from(r.scores)],
    stats: ix.stats(['lexw0', 'run', 'überraschung', 'nope']),
    found: WORDS.map((w) => ix.termIdOf(w.toLowerCase()) >= 0),
    ids: noIds ? null : WORDS.map((w) => ix.termIdOf(w.toLowerCase())),
    terms: ix.termCount,
  };
}

test.serial('a second index over known words analyses none of them again, and equals the first', (t) => {
  const lex = SharedLexicon.of({});
  const docs = texts(1, 2000);
  const a = build(docs);
  const analysed = lex.analysed;
  t.true(analysed > 0, 'the first index analysed its words');
  const b = build(docs);
  t.is(lex.analysed, analysed, 'the second analysed nothing');
  t.deepEqual(sidecar(b), sidecar(a));
  t.deepEqual(reads(b), reads(a));
});

test.serial('indexes of other options have lexicons of their own', (t) => {
  const docs = [...texts(2, 500), 'running runs ran', 'the Running man runs'];
  const stemmed = build(docs);
  const plain = build(docs, { stem: false });
  t.not(SharedLexicon.of({ stem: false }), SharedLexicon.of({}));
  t.true(plain.termIdOf('running') >= 0 && plain.termIdOf('runs') >= 0, 'unstemmed terms in the unstemmed index');
  t.is(stemmed.termIdOf('running'), -1, 'the stemmed index holds "run" only');
  t.true(stemmed.termIdOf('run') >= 0);
});

test.serial('an index whose terms came through the lexicon keeps no string map, and answers reads as one that does', (t) => {
  const docs = texts(3, 1500);
  const ix = build(docs);
  const inner = ix as unknown as { termIds: Map<string, number> };
  const r = reads(ix);
  t.is(inner.termIds.size, 0, 'no string map was filled');
  // The same terms by string: a remapped copy (terms by string, not through the lexicon).
  const copy = ix.remapped(Int32Array.from({ length: docs.length }, (_, i) => i));
  t.true((copy as unknown as { termIds: Map<string, number> }).termIds.size > 0);
  t.deepEqual(reads(copy, true), reads(ix, true));
  t.deepEqual(reads(ix), r, 'reads change nothing');
  t.deepEqual(sidecar(copy), sidecar(ix));
});

test.serial('the lexicon starting over in the middle of an index leaves its terms, ids and answers as they would be', (t) => {
  const docs = texts(4, 3000);
  const steady = build(docs);
  const lex = SharedLexicon.of({});
  const epoch = lex.epoch;
  // Twice, at points where words already seen and new words both follow.
  const interrupted = build(docs, {}, (done) => {
    if (done === 1000 || done === 2200) lex.startOver();
  });
  t.is(lex.epoch, epoch + 2);
  t.deepEqual(sidecar(interrupted), sidecar(steady));
  t.deepEqual(reads(interrupted), reads(steady));
  // And an index begun after the start-over, over the same rows.
  t.deepEqual(sidecar(build(docs)), sidecar(steady));
});

test.serial('sealing an index whose lexicon-id map is sparse trades it for the string map, and reads stay the same', (t) => {
  // Many terms numbered by the lexicon first, so a small index's terms have large lexicon ids.
  build(Array.from({ length: 200 }, (_, d) => Array.from({ length: 50 }, (_, i) => `sparsea${d * 50 + i}`).join(' ')));
  const small = build(Array.from({ length: 60 }, (_, d) => `sparseb${d % 7} sparseb${d % 11} lexw${d % 5}`));
  const inner = small as unknown as { termIds: Map<string, number>; localOf: Int32Array };
  t.true(inner.localOf.length > 4 * small.termCount + 1024, 'the map is sparse');
  const q = () => {
    const r = small.search(small.parseQuery('sparseb3 lexw1'), { k: 5 });
    return { hits: [Array.from(r.positions), Array.from(r.scores)], ids: ['sparseb3', 'sparseb10', 'lexw4', 'nope'].map((w) => small.termIdOf(w)) };
  };
  const before = q();
  const sealed = runSteps(small.sealSteps(4));
  t.is(sealed, small);
  t.is(inner.localOf.length, 0, 'the sparse map is dropped');
  t.is(inner.termIds.size, small.termCount, 'the string map holds every term');
  t.deepEqual(q(), before);
});

test.serial('a start-over caused by another index, which then fills the lexicon again, does not mislead an index that was idle meanwhile', (t) => {
  const docs = texts(5, 2000);
  const steady = build(docs);
  const lex = SharedLexicon.of({});
  const idle = new InvertedIndex({});
  idle.add(0, vectorFromArray(docs.slice(0, 1000), new Utf8()));
  // Meanwhile: the lexicon starts over and another index gives the same words new lexicon ids.
  lex.startOver();
  build([...docs.slice(1000)].reverse());
  idle.add(1000, vectorFromArray(docs.slice(1000), new Utf8()));
  t.deepEqual(sidecar(idle), sidecar(steady));
  t.deepEqual(reads(idle), reads(steady));
});

test('a lexicon starts over by itself past its limit, and its ids stay right within each epoch', (t) => {
  const lex = new SharedLexicon(resolveTokenizerOptions({}), 4);
  const pack = (w: string): [number, number, number] => {
    const out = [0, 0, 0] as [number, number, number];
    for (let i = 0; i < w.length; i++) out[i >> 2]! |= w.charCodeAt(i) << ((i & 3) * 8);
    return out;
  };
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'running'];
  for (const w of words) {
    const g = lex.addWord(...pack(w));
    t.is(lex.term(g), analyzeWord(w, lex.options)!, `${w} in epoch ${lex.epoch}`);
    t.is(lex.words.get(...pack(w)), g);
  }
  t.true(lex.epoch >= 1, 'it started over');
  t.is(lex.words.get(...pack('running')), lex.idOf(analyzeWord('running', lex.options)!), 'a word and its term share an id');
});
