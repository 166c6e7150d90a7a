import test from 'ava';
import { FuzzyMatcher, boundedLevenshtein, charMask, mayBeWithin } from '../../../src/index/fts/fuzzy.js';
import { mulberry32 } from './synthetic.js';
import { levenshtein } from './reference.js';

const ALPHABET = ['a', 'b', 'c', 'd', 'é', '東', '😀', '𝒳', 'z', 'y'];

function randomWord(rnd: () => number, maxLen: number): string {
  const n = Math.floor(rnd() * (maxLen + 1));
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rnd() * ALPHABET.length)]!;
  return s;
}

test('boundedLevenshtein agrees with the plain DP (code points, astral characters included)', (t) => {
  const rnd = mulberry32(5);
  for (let i = 0; i < 3000; i++) {
    const a = randomWord(rnd, 7);
    const b = rnd() < 0.3 ? a.slice(0, -1) + randomWord(rnd, 2) : randomWord(rnd, 7);
    const d = levenshtein(a, b);
    for (const max of [0, 1, 2]) {
      const got = boundedLevenshtein(a, b, max);
      if (d <= max) t.is(got, d, `${a} ${b} max ${max}`);
      else t.is(got, max + 1, `${a} ${b} max ${max}`);
    }
  }
  t.is(boundedLevenshtein('kitten', 'sitting', 3), 3);
  t.is(boundedLevenshtein('😀a', '😀b', 1), 1, 'an astral character is one position');
});

test('the character-mask pre-filter never rejects a term within the distance', (t) => {
  const rnd = mulberry32(6);
  let rejected = 0;
  for (let i = 0; i < 5000; i++) {
    const a = randomWord(rnd, 8);
    const b = randomWord(rnd, 8);
    const d = levenshtein(a, b);
    for (const max of [1, 2]) {
      const may = mayBeWithin(charMask(a), charMask(b), max);
      if (d <= max) t.true(may, `${a} ${b}`);
      if (!may) rejected++;
    }
  }
  t.true(rejected > 0, 'the filter does reject something');
});

test('FuzzyMatcher (bit-parallel) agrees with the plain DP', (t) => {
  const rnd = mulberry32(8);
  const ascii = ['a', 'b', 'c', 'd', 'e', 'z', '1', 'é', 'ß'];
  const word = (n: number) => Array.from({ length: n }, () => ascii[Math.floor(rnd() * ascii.length)]!).join('');
  for (let i = 0; i < 3000; i++) {
    const a = word(Math.floor(rnd() * 12));
    const b = rnd() < 0.5 ? a.slice(0, Math.floor(rnd() * a.length)) + word(Math.floor(rnd() * 3)) + a.slice(Math.floor(rnd() * a.length)) : word(Math.floor(rnd() * 12));
    const d = levenshtein(a, b);
    for (const max of [0, 1, 2, 3]) {
      const m = new FuzzyMatcher(a, max);
      t.is(m.distance(b), d <= max ? d : max + 1, `${a} ${b} max ${max}`);
    }
  }
  // 32-character terms use every bit; longer ones and astral characters fall back to the DP.
  const long = 'abcdefghijklmnopqrstuvwxyzabcdef';
  t.is(new FuzzyMatcher(long, 2).distance(long.slice(0, 31) + 'x'), 1);
  t.is(new FuzzyMatcher(long, 2).distance('x' + long), 1);
  t.is(new FuzzyMatcher(long + 'gh', 2).distance(long), 2);
  t.is(new FuzzyMatcher('😀ab', 1).distance('😀b'), 1);
});
