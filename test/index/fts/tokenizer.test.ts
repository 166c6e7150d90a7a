import test from 'ava';
import { ENGLISH_STOP_WORDS, tokenize } from '../../../src/index/fts/tokenizer.js';

const tok = (text: string, opts = {}) => {
  const r = tokenize(text, opts);
  return { terms: r.terms, positions: Array.from(r.positions) };
};

test('Unicode words: letters and digits, lower-cased, CJK runs kept whole', (t) => {
  t.deepEqual(tok('Café naïve 東京 123', { stem: false }), {
    terms: ['café', 'naïve', '東京', '123'],
    positions: [0, 1, 2, 3],
  });
  // Non-ASCII words are never stemmed, even with stemming on.
  t.deepEqual(tok('Café naïve 東京 123').terms, ['café', 'naïve', '東京', '123']);
  t.deepEqual(tok('ÉCOLE Straße ΑΘΗΝΑ', { stem: false }).terms, ['école', 'straße', 'αθηνα']);
});

test('NFKC normalisation: decomposed accents and full-width forms match their composed forms', (t) => {
  t.deepEqual(tok('Cafe\u0301', { stem: false }).terms, ['café']);
  t.deepEqual(tok('ＡＢＣ１２', { stem: false }).terms, ['abc12']);
  // Combining marks continue a word (Devanagari vowel signs).
  t.deepEqual(tok('नमस्ते दुनिया', { stem: false }).terms, ['नमस्ते', 'दुनिया']);
});

test('punctuation, apostrophes, underscores and decimals separate words', (t) => {
  t.deepEqual(tok("Don't e-mail foo_bar 3.14 x@y.com", { stem: false }).terms, ['don', 't', 'e', 'mail', 'foo', 'bar', '3', '14', 'x', 'y', 'com']);
  t.deepEqual(tok('  ...!!!  ').terms, []);
  t.deepEqual(tok('').terms, []);
});

test('stemming on (default) and off', (t) => {
  t.deepEqual(tok('Running runs jumped easily ponies').terms, ['run', 'run', 'jump', 'easili', 'poni']);
  t.deepEqual(tok('Running runs jumped', { stem: false }).terms, ['running', 'runs', 'jumped']);
  // Mixed letter/digit tokens are not stemmed.
  t.deepEqual(tok('mp3s abc123ing').terms, ['mp3s', 'abc123ing']);
});

test('stop words are removed but still advance positions', (t) => {
  t.deepEqual(tok('The quick and the dead', { stopWords: true, stem: false }), {
    terms: ['quick', 'dead'],
    positions: [1, 4],
  });
  t.deepEqual(tok('The quick and the dead', { stem: false }).terms, ['the', 'quick', 'and', 'the', 'dead']);
  t.true(ENGLISH_STOP_WORDS.has('the'));
  t.is(ENGLISH_STOP_WORDS.size, 33);
  // Checked before stemming: "this" is a stop word, "thises" is not.
  t.deepEqual(tok('this was thises', { stopWords: true }).terms, ['thise']);
});

test('maxTokenLength drops long tokens and keeps their position', (t) => {
  const long = 'x'.repeat(41);
  t.deepEqual(tok(`a ${long} b`, { stem: false }), { terms: ['a', 'b'], positions: [0, 2] });
  t.deepEqual(tok(`a ${'x'.repeat(40)} b`, { stem: false }).terms.length, 3);
  t.deepEqual(tok('abcdef abc', { stem: false, maxTokenLength: 3 }), { terms: ['abc'], positions: [1] });
  t.throws(() => tokenize('a', { maxTokenLength: 0 }), { instanceOf: RangeError });
});

test('many tokens (scratch growth) and independence of results', (t) => {
  const text = Array.from({ length: 5000 }, (_, i) => `w${i}`).join(' ');
  const a = tokenize(text, { stem: false });
  const b = tokenize('one two', { stem: false });
  t.is(a.terms.length, 5000);
  t.is(a.positions[4999], 4999);
  t.deepEqual(Array.from(b.positions), [0, 1]);
  t.is(a.positions[1], 1, 'earlier result not overwritten');
});
