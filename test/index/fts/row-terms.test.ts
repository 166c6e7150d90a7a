/**
 * The forward index (row → distinct term ids) of an inverted index, however the index was made:
 * by `add` (recorded as tokens move into the postings, across buffer flushes, with null texts,
 * empty texts and position gaps), by `remapped` (moved with the rows), by `fromArrow` (built
 * from the postings) and by appends to either. Checked against `hasPosting` for
 * every (row, word).
 */
import test, { type ExecutionContext } from 'ava';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { mulberry32 } from '../../helpers/rng.js';
import { skewedTexts, wordList } from './synthetic.js';

const WORDS = wordList(40);
const opts = { stem: false, stopWords: false } as const;

// Repeats within a document are common (skewed draw): each must be recorded once.
const texts = (rng: () => number, n: number) => skewedTexts(rng, n, WORDS, 30, 0.05, 0.03);

/** Every row in [from, to): its forward ids are exactly the ids of the words it holds, once each. */
function checkForward(t: ExecutionContext, index: InvertedIndex, from: number, to: number, label: string, words: readonly string[] = WORDS): void {
  const fwd = index.forwardIndex();
  const base = index.basePosition;
  const wordOf = new Map<number, string>();
  for (const w of words) if (index.termIdOf(w) >= 0) wordOf.set(index.termIdOf(w), w);
  let bad = 0;
  for (let pos = from; pos < to; pos++) {
    const r = pos - base;
    const got: string[] = [];
    if (r >= 0) for (let k = fwd.start(r); k < fwd.end(r); k++) got.push(wordOf.get(fwd.id(k)) ?? `?${fwd.id(k)}`);
    const want = words.filter((w) => index.hasPosting(w, pos));
    if (got.length !== want.length || [...got].sort().join() !== [...want].sort().join()) {
      if (bad++ < 3) t.fail(`${label}: row ${pos} holds [${want}] but its forward ids are [${got}]`);
    }
  }
  t.is(bad, 0, `${label}: rows whose forward ids differ`);
}

test('the forward index of an index built by add, over buffer flushes, nulls, empty texts and gaps', (t) => {
  const rng = mulberry32(5);
  const index = new InvertedIndex(opts);
  let pos = 7;
  for (let round = 0; round < 30; round++) {
    // Batches of 1..3000 rows (the insertion buffer flushes inside the larger ones), some after a gap.
    if (rng() < 0.3) pos += 1 + Math.floor(rng() * 50);
    const batch = texts(rng, 1 + Math.floor(rng() * (round % 3 === 0 ? 3000 : 40)));
    index.add(pos, batch);
    pos += batch.length;
    if (round % 10 === 9) checkForward(t, index, 0, pos + 5, `after round ${round}`);
  }
  checkForward(t, index, 0, pos + 5, 'at the end');
});

test('the forward index moves with remapped rows, is built from the postings by fromArrow, and grows with appends to both', (t) => {
  const rng = mulberry32(11);
  const index = new InvertedIndex(opts);
  index.add(0, texts(rng, 2500));
  // A flush's map: drop about a third of the rows, keep order, leave gaps.
  const map = new Int32Array(2600).fill(-1);
  let next = 3;
  for (let i = 0; i < 2500; i++) if (rng() < 0.66) map[i] = next += 1 + (rng() < 0.1 ? 2 : 0);
  const remapped = index.remapped(map);
  checkForward(t, remapped, 0, next + 3, 'remapped');
  const again = remapped.remapped(Int32Array.from({ length: next + 1 }, (_, i) => (i % 5 === 0 ? -1 : i)));
  checkForward(t, again, 0, next + 3, 'remapped twice');
  const loaded = InvertedIndex.fromArrow(remapped.toArrow(), opts);
  checkForward(t, loaded, 0, next + 3, 'fromArrow');
  // Appends to an index whose forward index was built from its postings.
  loaded.add(next + 10, texts(rng, 700));
  checkForward(t, loaded, 0, next + 720, 'fromArrow, then appended to');
  remapped.add(next + 1, texts(rng, 300));
  checkForward(t, remapped, 0, next + 310, 'remapped, then appended to');
});

test('a forward index longer than one storage chunk (2^18 ids), built by add, remapped and fromArrow', (t) => {
  const rng = mulberry32(23);
  const vocab = Array.from({ length: 2000 }, (_, i) => `v${i}`);
  const index = new InvertedIndex(opts);
  let pos = 0;
  for (let b = 0; b < 14; b++) {
    const batch = Array.from({ length: 1000 }, () => Array.from({ length: 30 }, () => vocab[Math.floor(rng() * vocab.length)]).join(' '));
    index.add(pos, batch);
    pos += batch.length;
  }
  t.true(index.forwardIndex().end(pos - 1) > 1 << 18, 'spans more than one chunk');
  checkForward(t, index, 0, pos, 'add', vocab);
  const remapped = index.remapped(Int32Array.from({ length: pos }, (_, i) => (i % 7 === 3 ? -1 : i)));
  checkForward(t, remapped, 0, pos, 'remapped', vocab);
  checkForward(t, InvertedIndex.fromArrow(remapped.toArrow(), opts), 0, pos, 'fromArrow', vocab);
});
