/**
 * Adds with `defer` keep tokens in the insertion buffer; every read must move them first. An
 * index fed by deferred adds (random slice sizes, a read at random points in between) answers
 * every read exactly like one fed by eager adds of the same rows: search results and scores,
 * statistics, postings, term ids, query terms and the forward index. Fails if any read path
 * forgets to move the buffer (it would miss the latest rows).
 */
import test from 'ava';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { mulberry32 } from '../../helpers/rng.js';
import { skewedTexts, wordList } from './synthetic.js';

const WORDS = wordList(60);
const opts = { stem: false, stopWords: false } as const;

const texts = (rng: () => number, n: number) => skewedTexts(rng, n, WORDS, 12, 0.05);

type Read = (index: InvertedIndex, end: number) => unknown;

const READS: Record<string, Read> = {
  search: (ix) => {
    const r = ix.search(ix.parseQuery('w1 w7 w30'), { k: 10 });
    return [Array.from(r.positions), Array.from(r.scores)];
  },
  // With the caller's statistics the search reads no statistics of its own.
  'search with given stats': (ix, end) => {
    const stats = { docCount: end, totalTokens: 6 * end, docFreq: new Map([['w1', end >> 2], ['w7', end >> 3]]) };
    const r = ix.search(ix.parseQuery('w1 w7'), { k: 10, stats });
    return [Array.from(r.positions), Array.from(r.scores)];
  },
  stats: (ix, end) => ix.stats(['w0', 'w5', 'w59'], end),
  termIdOf: (ix) => WORDS.map((w) => ix.termIdOf(w)),
  postingsBefore: (ix, end) => WORDS.slice(0, 10).map((w) => ix.postingsBefore(ix.termIdOf(w), end)),
  hasPosting: (ix, end) => WORDS.slice(0, 6).map((w) => ix.hasPosting(w, end - 1)),
  queryTerms: (ix) => ix.queryTerms(ix.parseQuery('w3~1 w4')),
  forwardIndex: (ix, end) => {
    const f = ix.forwardIndex();
    const out: number[][] = [];
    for (let r = Math.max(0, end - 20 - ix.basePosition); r < end - ix.basePosition; r++) {
      const ids: number[] = [];
      for (let k = f.start(r); k < f.end(r); k++) ids.push(f.id(k));
      out.push(ids);
    }
    return out;
  },
};

for (const [name, read] of Object.entries(READS)) {
  test(`${name} after deferred adds sees every row added, like after eager adds`, (t) => {
    const rng = mulberry32(name.length * 31 + 7);
    const eager = new InvertedIndex(opts);
    const deferred = new InvertedIndex(opts);
    let pos = 3;
    for (let round = 0; round < 40; round++) {
      const batch = texts(rng, 1 + Math.floor(rng() * (round % 7 === 0 ? 12_000 : 300)));
      eager.add(pos, batch);
      deferred.add(pos, batch, true);
      pos += batch.length;
      if (rng() < 0.4) t.deepEqual(read(deferred, pos), read(eager, pos), `round ${round}`);
    }
    t.deepEqual(read(deferred, pos), read(eager, pos), 'at the end');
    // A deferred add followed by an eager one leaves nothing behind either.
    const tail = texts(rng, 50);
    eager.add(pos, tail);
    deferred.add(pos, tail);
    t.deepEqual(read(deferred, pos + 50), read(eager, pos + 50), 'after an eager add');
  });
}

test('remapped and toArrow of a deferred index hold the buffered rows', (t) => {
  const rng = mulberry32(99);
  const eager = new InvertedIndex(opts);
  const deferred = new InvertedIndex(opts);
  const rows = texts(rng, 2000);
  eager.add(0, rows);
  deferred.add(0, rows.slice(0, 1500), true);
  deferred.add(1500, rows.slice(1500), true);
  const keep = Int32Array.from({ length: 2000 }, (_, i) => (i % 3 === 0 ? -1 : i));
  const q = eager.parseQuery('w2 w9');
  const a = eager.remapped(keep).search(q, { k: 20 });
  const b = deferred.remapped(keep).search(q, { k: 20 });
  t.deepEqual(Array.from(b.positions), Array.from(a.positions));
  t.true(b.positions.length > 0);
  const c = InvertedIndex.fromArrow(new InvertedIndex(opts).toArrow(), opts);
  t.is(c.documentCount, 0);
  const d = new InvertedIndex(opts);
  d.add(0, rows, true);
  const e = InvertedIndex.fromArrow(d.toArrow(), opts).search(q, { k: 20 });
  t.deepEqual(Array.from(e.positions), Array.from(eager.search(q, { k: 20 }).positions));
});
