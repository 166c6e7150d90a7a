import test from 'ava';
import { WordTable, hashSpan } from '../../../src/index/fts/word-table.js';
import { mulberry32 } from './synthetic.js';

test('WordTable maps string spans to values through growth, collisions and clear', (t) => {
  const rnd = mulberry32(3);
  const table = new WordTable(16);
  const words = new Map<string, number>([['abc', 0]]);
  const letters = 'abcdeéß東';
  while (words.size < 20_000) {
    const n = 1 + Math.floor(rnd() * 8);
    let w = '';
    for (let i = 0; i < n; i++) w += letters[Math.floor(rnd() * letters.length)]!;
    if (!words.has(w)) words.set(w, words.size);
  }
  for (const [w, v] of words) {
    // Insert from a span inside a larger string.
    const s = `  ${w}  `;
    t.is(table.get(s, 2, 2 + w.length, hashSpan(s, 2, 2 + w.length)), undefined);
    table.set(s, 2, 2 + w.length, hashSpan(s, 2, 2 + w.length), v);
  }
  t.is(table.size, words.size);
  let ok = 0;
  for (const [w, v] of words) if (table.get(w, 0, w.length, hashSpan(w, 0, w.length)) === v) ok++;
  t.is(ok, words.size);
  t.is(table.get('zzz', 0, 3, hashSpan('zzz', 0, 3)), undefined);
  // Same hash bucket, different lengths / contents.
  t.is(table.get('abcx', 0, 3, hashSpan('abcx', 0, 3)), words.get('abc'));
  table.clear();
  t.is(table.size, 0);
  t.is(table.get('abc', 0, 3, hashSpan('abc', 0, 3)), undefined);
});
