/**
 * LiveCorpusStats (issue 7): live document frequencies and totals over a source whose rows are
 * cleared (superseded) and appended between queries — some appended rows dead from the start, a
 * snapshot that trails the index — for term ids across a dictionary of hundreds of terms, equal
 * at every step to a count over the live rows; and the work is the dead rows, read once each.
 */
import test from 'ava';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { liveCorpusWork, LiveCorpusStats } from '../../../src/index/fts/live-corpus-stats.js';
import { mulberry32 } from './synthetic.js';

function corpus(seed: number) {
  const rnd = mulberry32(seed);
  const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
  const doc = () => Array.from({ length: 3 + Math.floor(rnd() * 6) }, () => words[Math.floor(rnd() * words.length)]).join(' ');
  return { rnd, words, doc };
}

test('document frequencies and totals follow cleared and appended rows for every term id', (t) => {
  const { rnd, words, doc } = corpus(11);
  const index = new InvertedIndex({ stem: false, stopWords: false });
  const texts: (string | null)[] = Array.from({ length: 500 }, (_, i) => (i % 37 === 5 ? null : doc()));
  index.add(0, texts);
  const state = { rows: texts.length, live: new Uint8Array(4000).fill(1), cleared: [] as number[] };
  // Some rows dead before the follower is made.
  for (let pos = 0; pos < 500; pos += 7) state.live[pos] = 0;
  const stats = new LiveCorpusStats(index, state);
  const truth = (w: string) => {
    let n = 0;
    for (let pos = 0; pos < state.rows; pos++) if (state.live[pos] && texts[pos] !== null && texts[pos]!.split(' ').includes(w)) n++;
    return n;
  };
  const totals = () => {
    let docCount = 0;
    let totalTokens = 0;
    for (let pos = 0; pos < state.rows; pos++) {
      if (!state.live[pos] || texts[pos] === null) continue;
      docCount++;
      totalTokens += texts[pos]!.split(' ').length;
    }
    return { docCount, totalTokens };
  };
  for (let step = 0; step < 40; step++) {
    // Clear a few live rows (some of them rows appended since the last query), append a few,
    // one of them dead from the start (its key written again in the same put).
    const more = Array.from({ length: 3 }, (_, i) => (i === 1 && step % 5 === 0 ? null : doc()));
    index.add(state.rows, more);
    texts.push(...more);
    if (step % 3 === 0) state.live[state.rows] = 0;
    state.rows += more.length;
    for (let i = 0; i < 5; i++) {
      const pos = Math.floor(rnd() * state.rows);
      if (state.live[pos]) {
        state.live[pos] = 0;
        state.cleared.push(pos);
      }
    }
    t.deepEqual(stats.totals(), totals(), `step ${step}: totals`);
    for (let i = 0; i < 12; i++) {
      const w = words[Math.floor(rnd() * words.length)];
      t.is(stats.docFreq(w), truth(w), `step ${step}: ${w}`);
    }
    t.is(stats.docFreq('absent'), 0);
  }
});

test('a snapshot that trails the index counts only its own rows', (t) => {
  const { doc } = corpus(5);
  const index = new InvertedIndex({ stem: false, stopWords: false });
  const texts = Array.from({ length: 300 }, doc);
  index.add(0, texts);
  // The index holds 300 rows; the snapshot 200 of them, a few dead.
  const state = { rows: 200, live: new Uint8Array(300).fill(1), cleared: [] as number[] };
  for (const pos of [3, 50, 199]) state.live[pos] = 0;
  const stats = new LiveCorpusStats(index, state);
  for (const w of ['w1', 'w7', 'w42', 'w399']) {
    let n = 0;
    for (let pos = 0; pos < 200; pos++) if (state.live[pos] && texts[pos].split(' ').includes(w)) n++;
    t.is(stats.docFreq(w), n, w);
  }
});

test('a query reads only the rows that died since the last one, whatever terms it asks', (t) => {
  const { rnd, words, doc } = corpus(3);
  const index = new InvertedIndex({ stem: false, stopWords: false });
  index.add(0, Array.from({ length: 2000 }, doc));
  const state = { rows: 2000, live: new Uint8Array(10_000).fill(1), cleared: [] as number[] };
  const stats = new LiveCorpusStats(index, state);
  for (let step = 0; step < 10; step++) {
    // A put of 20 rows superseding 20 older ones, 2 of its own rows dead from the start.
    index.add(state.rows, Array.from({ length: 20 }, doc));
    state.live[state.rows] = 0;
    state.live[state.rows + 1] = 0;
    state.rows += 20;
    let died = 2;
    while (died < 22) {
      const pos = Math.floor(rnd() * 2000);
      if (!state.live[pos]) continue;
      state.live[pos] = 0;
      state.cleared.push(pos);
      died++;
    }
    const before = liveCorpusWork.rowsRead;
    stats.totals();
    for (let i = 0; i < 50; i++) stats.docFreq(words[Math.floor(rnd() * words.length)]);
    t.is(liveCorpusWork.rowsRead - before, 22, `step ${step}: the 22 rows that died`);
  }
});
