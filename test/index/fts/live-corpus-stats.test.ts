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

test('document frequencies follow cleared and appended rows for every term id, counted once each', (t) => {
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
      t.is(liveCorpusWork.termsCounted - before, asked.has(w) ? 0 : 1, `step ${step}: ${w} counted only when first asked`);
      asked.add(w);
    }
  }
});
