import test from 'ava';
import { FtsQueryError, MAX_FUZZY_EXPANSIONS, autoFuzziness, parseFtsQuery, validateFtsQuery } from '../../../src/index/fts/query.js';

const noStem = { stem: false };

test('plain terms are optional (OR-ed) term clauses', (t) => {
  t.deepEqual(parseFtsQuery('Quick  brown\tfox', noStem), {
    must: [],
    should: [
      { kind: 'term', term: 'quick', boost: 1 },
      { kind: 'term', term: 'brown', boost: 1 },
      { kind: 'term', term: 'fox', boost: 1 },
    ],
    mustNot: [],
  });
  // Query words go through the same tokenizer (stemming by default).
  t.deepEqual(parseFtsQuery('Running').should, [{ kind: 'term', term: 'run', boost: 1 }]);
});

test('phrases, slop, must / must_not, boosts', (t) => {
  const q = parseFtsQuery('"quick brown" +"quick fox"~2 -"lazy dog"^3 +fox^2.5 -cat .5', noStem);
  t.deepEqual(q.should, [
    { kind: 'phrase', terms: ['quick', 'brown'], offsets: [0, 1], slop: 0, boost: 1 },
    { kind: 'term', term: '5', boost: 1 },
  ]);
  t.deepEqual(q.must, [
    { kind: 'phrase', terms: ['quick', 'fox'], offsets: [0, 1], slop: 2, boost: 1 },
    { kind: 'term', term: 'fox', boost: 2.5 },
  ]);
  t.deepEqual(q.mustNot, [
    { kind: 'phrase', terms: ['lazy', 'dog'], offsets: [0, 1], slop: 0, boost: 3 },
    { kind: 'term', term: 'cat', boost: 1 },
  ]);
  // Suffixes in either order.
  t.deepEqual(parseFtsQuery('"a b"^2~3', noStem).should[0], { kind: 'phrase', terms: ['a', 'b'], offsets: [0, 1], slop: 3, boost: 2 });
  t.deepEqual(parseFtsQuery('x^.5', noStem).should[0], { kind: 'term', term: 'x', boost: 0.5 });
});

test('fuzzy: auto fuzziness by length, explicit fuzziness, 50 expansions', (t) => {
  t.is(autoFuzziness('ab'), 0);
  t.is(autoFuzziness('abc'), 1);
  t.is(autoFuzziness('abcde'), 1);
  t.is(autoFuzziness('abcdef'), 2);
  t.is(autoFuzziness('東京'), 0);
  t.deepEqual(parseFtsQuery('colour~', noStem).should[0], { kind: 'fuzzy', term: 'colour', fuzziness: 2, maxExpansions: MAX_FUZZY_EXPANSIONS, boost: 1 });
  t.deepEqual(parseFtsQuery('+fox~', noStem).must[0], { kind: 'fuzzy', term: 'fox', fuzziness: 1, maxExpansions: 50, boost: 1 });
  t.deepEqual(parseFtsQuery('colour~1^2', noStem).should[0], { kind: 'fuzzy', term: 'colour', fuzziness: 1, maxExpansions: 50, boost: 2 });
  // Fuzziness 0 (explicit, or auto for ≤ 2 chars) is an exact term.
  t.deepEqual(parseFtsQuery('ox~', noStem).should[0], { kind: 'term', term: 'ox', boost: 1 });
  t.deepEqual(parseFtsQuery('colour~0', noStem).should[0], { kind: 'term', term: 'colour', boost: 1 });
  // Auto fuzziness uses the analysed (stemmed) term: "running" → "run" → 1.
  t.deepEqual(parseFtsQuery('running~').should[0], { kind: 'fuzzy', term: 'run', fuzziness: 1, maxExpansions: 50, boost: 1 });
});

test('a word yielding several tokens becomes a phrase; stop words and punctuation drop out', (t) => {
  t.deepEqual(parseFtsQuery('e-mail', noStem).should, [{ kind: 'phrase', terms: ['e', 'mail'], offsets: [0, 1], slop: 0, boost: 1 }]);
  t.deepEqual(parseFtsQuery('+U.S.A^2', noStem).must, [{ kind: 'phrase', terms: ['u', 's', 'a'], offsets: [0, 1, 2], slop: 0, boost: 2 }]);
  const sw = { stopWords: true, stem: false };
  t.deepEqual(parseFtsQuery('+the +fox -a', sw), { must: [{ kind: 'term', term: 'fox', boost: 1 }], should: [], mustNot: [] });
  t.deepEqual(parseFtsQuery('"quick the fox"', sw).should, [{ kind: 'phrase', terms: ['quick', 'fox'], offsets: [0, 2], slop: 0, boost: 1 }]);
  t.deepEqual(parseFtsQuery('"the fox"', sw).should, [{ kind: 'term', term: 'fox', boost: 1 }]);
  // Nothing left: an empty (match-nothing) query, not an error.
  t.deepEqual(parseFtsQuery('the && ||', sw), { must: [], should: [], mustNot: [] });
  // "AND" / "OR" are ordinary words.
  t.is(parseFtsQuery('cats AND dogs', noStem).should.length, 3);
});

function err(t: import('ava').ExecutionContext, query: string, position: number, pattern: RegExp): void {
  const e = t.throws(() => parseFtsQuery(query), { instanceOf: FtsQueryError }, query);
  if (!e) return;
  t.is(e.position, position, `${query}: position (${e.message})`);
  t.regex(e.message, pattern, query);
  t.regex(e.message, new RegExp(`at position ${position}:`), query);
}

test('malformed queries give errors naming the problem and its position', (t) => {
  err(t, '', 0, /empty query/);
  err(t, '   \t ', 0, /empty query/);
  err(t, '"quick brown', 0, /unbalanced quote/);
  err(t, 'fox "quick brown', 4, /unbalanced quote/);
  err(t, 'fox ""', 4, /empty phrase/);
  err(t, '"a b"~', 6, /slop .* non-negative integer/);
  err(t, '"a b"~x', 6, /slop .* non-negative integer/);
  err(t, '"a b"~1.5', 7, /unexpected character "\."/);
  err(t, 'fox^', 4, /boost .* number/);
  err(t, 'fox^abc', 4, /boost .* number/);
  err(t, 'fox^-1', 4, /boost .* number/);
  err(t, 'fox^1.', 4, /boost .* number/);
  err(t, 'fox~3', 4, /fuzziness must be 0, 1 or 2/);
  err(t, 'fox~x', 4, /fuzziness/);
  err(t, 'fox~1~2', 5, /repeated '~'/);
  err(t, 'fox^2^3', 5, /repeated '\^'/);
  err(t, 'a + b', 2, /'\+' must be followed by a term or a phrase/);
  err(t, 'a -', 2, /'-' must be followed/);
  err(t, '+-a', 1, /repeated operator/);
  err(t, '^2 fox', 0, /operator '\^' must follow a term/);
  err(t, 'fox ~', 4, /operator '~' must follow a term/);
  err(t, 'fo"x y"', 2, /unexpected quote inside a term/);
  err(t, '"x y"z', 5, /unexpected character "z" after a phrase/);
  err(t, 'e-mail~', 0, /fuzzy term "e-mail" yields 2 tokens/);
});

test('validateFtsQuery rejects malformed hand-built queries', (t) => {
  t.notThrows(() => validateFtsQuery(parseFtsQuery('"a b"~2 c~1 +d^2')));
  t.throws(() => validateFtsQuery({ must: [], should: [{ kind: 'term', term: 'a', boost: -1 }], mustNot: [] }), { message: /should\[0\]: boost/ });
  t.throws(() => validateFtsQuery({ must: [{ kind: 'phrase', terms: ['a', 'b'], offsets: [0, 0], slop: 0, boost: 1 }], should: [], mustNot: [] }), { message: /must\[0\].*strictly increasing/ });
  t.throws(() => validateFtsQuery({ must: [], should: [], mustNot: [{ kind: 'fuzzy', term: 'a', fuzziness: 3, maxExpansions: 50, boost: 1 }] }), { message: /mustNot\[0\]: fuzziness/ });
});
