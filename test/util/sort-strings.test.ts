/**
 * sortStringsSteps (issue 7): the same order as one `sort()` — UTF-16 code units, so surrogate
 * pairs, upper case and the empty string land where `<` puts them — in several steps.
 */
import test from 'ava';
import { sortStringsSteps } from '../../src/util/sort-strings.js';
import { mulberry32 } from '../helpers/rng.js';

test('sorts like sort() in steps, whatever the first code units', (t) => {
  const rnd = mulberry32(7);
  const alphabet = ['a', 'b', 'z', 'A', 'Z', '0', 'é', 'ß', '中', '😀', '\uffff', 'ab', 'a\u0000'];
  const strings = Array.from({ length: 20_000 }, () => Array.from({ length: Math.floor(rnd() * 6) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join(''));
  strings.push('', '', 'a', 'a');
  const steps = sortStringsSteps(strings, 1000);
  let pauses = 0;
  let r = steps.next();
  while (!r.done) {
    pauses++;
    r = steps.next();
  }
  t.deepEqual(r.value, strings.slice().sort());
  t.true(pauses >= 5, `paused ${pauses} times`);
  t.is(strings.length, 20_004, 'the input is left as it was');
});

test('a short list is sorted in one step', (t) => {
  const steps = sortStringsSteps(['b', 'a', 'c'], 10);
  const r = steps.next();
  t.true(r.done);
  t.deepEqual(r.value, ['a', 'b', 'c']);
});
