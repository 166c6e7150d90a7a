/**
 * LiveCorpusStats (issue 7): per-term live document frequencies over a source whose rows are
 * cleared (superseded) and appended between queries, followed row by row once a term was counted
 * — for term ids across a dictionary of hundreds of terms, so the per-term bookkeeping grows — and
 * equal at every step to a count over the live rows.
 */
import test from 'ava';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { liveCorpusWork, LiveCorpusStats } from '../../../src/index/fts/live-corpus-stats.js';
import { mulberry32 } from './synthetic.js';

test('document frequencies follow cleared and appended rows for every term id, each counted over its postings when first asked', (t) => {
  const rnd = mulberry32(11);
  const words = Array.from({ length: 400 }, (_, i) => `w${i}`);
  const doc = () => Array.from({ length: 3 + Math.floor(rnd() * 6) }, () => words[Math.floor(rnd() * words.length)]).join(' ');
  const index = new InvertedIndex({ stem: false, stopWords: false });
  const texts = Array.from({ length: 500 }, doc);
  index.add(0, texts);
  const state = { rows: texts.length, live: new Uint8Array(2000).fill(1), cleared: [] as number[] };
  const stats = new LiveCorpusStats(index, state);
  const truth = (w: string) => {
    let n = 0;
    for (let pos = 0; pos < state.rows; pos++) if (state.live[pos] && texts[pos].split(' ').includes(w)) n++;
    return n;
  };
  const asked = new Set<string>();
  for (let step = 0; step < 40; step++) {
    // Clear a few live rows, append a few.
    for (let i = 0; i < 5; i++) {
      const pos = Math.floor(rnd() * state.rows);
      if (state.live[pos]) {
        state.live[pos] = 0;
        state.cleared.push(pos);
      }
    }
    const more = Array.from({ length: 3 }, doc);
    index.add(state.rows, more);
    texts.push(...more);
    state.rows += more.length;
    // Terms from the whole dictionary, high ids included; each is counted over its postings once.
    for (let i = 0; i < 12; i++) {
      const w = words[Math.floor(rnd() * words.length)];
      const before = liveCorpusWork.termsCounted;
      t.is(stats.docFreq(w), truth(w), `step ${step}: ${w}`);
      if (!asked.has(w)) t.is(liveCorpusWork.termsCounted - before, 1, `step ${step}: ${w} counted when first asked`);
      asked.add(w);
    }
  }
});

test('a term reads only the rows changed since it was last asked, or is counted afresh when its postings are fewer', (t) => {
  const rnd = mulberry32(23);
  // w0 is in every document (many postings: always followed); w1..w49 are rare.
  const words = Array.from({ length: 50 }, (_, i) => `w${i}`);
  const doc = () => ['w0', ...Array.from({ length: 2 + Math.floor(rnd() * 4) }, () => words[1 + Math.floor(rnd() * (words.length - 1))])].join(' ');
  const index = new InvertedIndex({ stem: false, stopWords: false });
  const texts = Array.from({ length: 200 }, doc);
  index.add(0, texts);
  const state = { rows: texts.length, live: new Uint8Array(20_000).fill(1), cleared: [] as number[] };
  const stats = new LiveCorpusStats(index, state);
  const truth = (w: string) => {
    let n = 0;
    for (let pos = 0; pos < state.rows; pos++) if (state.live[pos] && texts[pos].split(' ').includes(w)) n++;
    return n;
  };
  const change = (cleared: number, appended: number) => {
    for (let i = 0; i < cleared; i++) {
      let pos = Math.floor(rnd() * state.rows);
      while (!state.live[pos]) pos = (pos + 1) % state.rows;
      state.live[pos] = 0;
      state.cleared.push(pos);
    }
    const more = Array.from({ length: appended }, doc);
    index.add(state.rows, more);
    texts.push(...more);
    state.rows += more.length;
  };
  const ask = (w: string, backlog: number) => {
    const r0 = liveCorpusWork.rowsRead;
    const c0 = liveCorpusWork.termsCounted;
    t.is(stats.docFreq(w), truth(w), w);
    const postings = index.postingCount(index.termIdOf(w));
    if (backlog > 0 && postings < 2 * backlog) {
      t.is(liveCorpusWork.termsCounted - c0, 1, `${w}: ${postings} postings against ${backlog} changed rows: counted afresh`);
      t.is(liveCorpusWork.rowsRead - r0, 0);
      return 'counted';
    } else {
      t.is(liveCorpusWork.termsCounted - c0, 0, `${w}: followed`);
      t.is(liveCorpusWork.rowsRead - r0, backlog, `${w} reads the ${backlog} changed rows`);
      return 'followed';
    }
  };
  t.is(stats.docFreq('w0'), truth('w0'));
  t.is(stats.docFreq('w1'), truth('w1'));
  // w0 is asked after every change, w1 only at the end: each reads the rows changed since its own last count.
  for (let i = 0; i < 10; i++) {
    change(4, 3);
    t.is(ask('w0', 7), 'followed');
    const totals = stats.totals();
    t.is(totals.docCount, state.live.subarray(0, state.rows).reduce((a, b) => a + b, 0));
  }
  t.is(ask('w1', 70), 'counted');
  // Asked twice in a row: nothing to read the second time.
  ask('w0', 0);
  change(3, 2);
  for (let i = 2; i < 10; i++) {
    const w = `w${i}`;
    stats.docFreq(w);
    change(1, 1);
    ask(w, 2);
  }
  // A long backlog: the frequent term is still followed, rare ones are counted afresh.
  change(60, 20);
  t.is(ask('w0', 80 + 16 + 5), 'followed');
  t.is(ask('w2', 80 + 14), 'counted');
  t.is(stats.docFreq('nope'), 0);
});
