/**
 * Top-k pruning (MaxScore-style skipping of rows that cannot reach the top k, galloping updates)
 * must not change results: on a Zipfian corpus large enough for it to kick in, top-k results equal
 * the reference and the head of a full ranking (k = every document: nothing can be pruned), with
 * and without a prefilter (pruning then ranks by allowed rows only).
 */
import test from 'ava';
import { collectFtsStats, ftsSearchWork, InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { parseFtsQuery } from '../../../src/index/fts/query.js';
import { mulberry32, syntheticDocs, zipf } from './synthetic.js';
import { RefIndex, refDocs, topK } from './reference.js';

const rnd = mulberry32(1234);
const z = zipf(3000, 1.0, rnd);
const texts = syntheticDocs(3000, z, rnd, 5, 60);
const opts = { stem: false };
const index = new InvertedIndex(opts);
index.add(0, texts);
const ref = new RefIndex(refDocs(0, texts, opts));

const qrnd = mulberry32(99);
const word = () => z.vocab[z.sample()]!;
const pick = <T>(xs: T[]): T => xs[Math.floor(qrnd() * xs.length)]!;
const queries: string[] = [];
for (let i = 0; i < 120; i++) {
  const n = 1 + Math.floor(qrnd() * 4);
  const parts: string[] = [];
  for (let j = 0; j < n; j++) {
    const w = word();
    parts.push(pick([w, w, w, `${w}^2`, `${w}^0.5`, `+${w}`, `-${w}`, `"${w} ${word()}"~2`, `${w}~1`]));
  }
  queries.push(parts.join(' '));
}

test('pruned top-k equals the full ranking', (t) => {
  for (const qs of queries) {
    const q = parseFtsQuery(qs, opts);
    for (const k of [1, 10, 50]) {
      const pruned = index.search(q, { k });
      const full = index.search(q, { k: texts.length });
      t.deepEqual(Array.from(pruned.positions), Array.from(full.positions.subarray(0, k)), `${qs} k=${k} vs full ranking`);
      t.deepEqual(Array.from(pruned.scores), Array.from(full.scores.subarray(0, k)), `${qs} k=${k} scores vs full ranking`);
    }
  }
});

test('with a prefilter, pruned top-k equals the full ranking restricted to allowed rows', (t) => {
  const frnd = mulberry32(7);
  for (const density of [0.02, 0.15, 0.5, 1]) {
    const allowedRows = Uint8Array.from({ length: texts.length }, () => (frnd() < density ? 1 : 0));
    const allowed = (pos: number) => allowedRows[pos] === 1;
    for (const qs of queries) {
      const q = parseFtsQuery(qs, opts);
      const full = index.search(q, { k: texts.length });
      const keep = Array.from(full.positions.keys()).filter((i) => allowed(full.positions[i]!));
      for (const k of [1, 10, 50]) {
        const got = index.search(q, { k, allowed });
        const want = keep.slice(0, k);
        t.deepEqual(Array.from(got.positions), want.map((i) => full.positions[i]!), `${qs} k=${k} density ${density}`);
        t.deepEqual(Array.from(got.scores), want.map((i) => full.scores[i]!), `${qs} k=${k} density ${density} scores`);
      }
    }
  }
});

test('top-10 equals the reference on a 3000-document Zipfian corpus', (t) => {
  for (const qs of queries.slice(0, 60)) {
    const q = parseFtsQuery(qs, opts);
    const got = index.search(q, { k: 10 });
    const want = topK(ref.search(q), 10);
    t.deepEqual(Array.from(got.positions), want.map((h) => h.pos), qs);
    want.forEach((h, i) => t.true(Math.abs(got.scores[i]! - h.score) <= Math.max(1e-6, h.score * 2 ** -23), `${qs} #${i}`));
  }
});

test('block-max skipping of a long first term runs and keeps results exact, as the list grows and under shared statistics', (t) => {
  // One index grown in three steps, queried after each (its block bounds are cached and extended),
  // against the full ranking; then two halves scored with merged statistics (another avgdl than
  // the one a half's bounds were computed with) and a caller threshold, against one index.
  const grown = new InvertedIndex(opts);
  const common = z.vocab.slice(0, 5);
  // The most frequent words (long lists) and some rarer ones, alone and with a second word.
  const probes = [...z.vocab.slice(0, 20), ...z.vocab.slice(100, 110), `${z.vocab[0]} ${z.vocab[150]}`, `${z.vocab[300]} ${z.vocab[1]}`];
  ftsSearchWork.prunedSkipped = 0;
  ftsSearchWork.prunedScored = 0;
  for (const [from, to] of [[0, 1000], [1000, 2200], [2200, 3000]] as const) {
    grown.add(from, texts.slice(from, to));
    for (const qs of probes) {
      const q = parseFtsQuery(qs, opts);
      const full = grown.search(q, { k: to });
      for (const k of [1, 10]) {
        const got = grown.search(q, { k });
        t.deepEqual(Array.from(got.positions), Array.from(full.positions.subarray(0, k)), `${qs} k=${k} after ${to} rows`);
        t.deepEqual(Array.from(got.scores), Array.from(full.scores.subarray(0, k)), `${qs} k=${k} after ${to} rows (scores)`);
      }
    }
  }
  t.true(ftsSearchWork.prunedSkipped > 0, 'the block-max path skipped postings');
  t.true(ftsSearchWork.prunedScored > 0);

  const a = new InvertedIndex(opts);
  const b = new InvertedIndex(opts);
  a.add(0, texts.slice(0, 1500));
  b.add(1500, texts.slice(1500));
  for (const qs of common) {
    const q = parseFtsQuery(qs, opts);
    // Bounds computed first with this half's own avgdl, then used under the merged one.
    a.search(q, { k: 10 });
    b.search(q, { k: 10 });
    const stats = collectFtsStats([{ index: a }, { index: b }], q);
    const want = index.search(q, { k: 10 });
    const fromA = a.search(q, { k: 10, stats });
    const threshold = fromA.scores.length === 10 ? fromA.scores[9]! * (1 - 1e-6) : undefined;
    const fromB = b.search(q, { k: 10, stats, minScore: threshold });
    const merged = [...fromA.positions].map((p, i) => ({ p, s: fromA.scores[i]! }));
    fromB.positions.forEach((p, i) => merged.push({ p, s: fromB.scores[i]! }));
    merged.sort((x, y) => y.s - x.s || x.p - y.p);
    t.deepEqual(merged.slice(0, 10).map((h) => h.p), Array.from(want.positions), `${qs}: two halves with merged stats and a threshold`);
  }
});

test('indexes share one search scratch: searches alternating over indexes of different sizes each equal their reference', (t) => {
  // The per-row score and stamp arrays are the thread's, not the index's (see SearchScratch): a
  // stamp left by one index's search must never count as touched in the next index's.
  const srnd = mulberry32(31);
  const small = syntheticDocs(200, z, srnd, 5, 60);
  const mid = syntheticDocs(1200, z, srnd, 5, 60);
  const others = [
    { index: new InvertedIndex(opts), ref: new RefIndex(refDocs(0, small, opts)) },
    { index: new InvertedIndex(opts), ref: new RefIndex(refDocs(7000, mid, opts)) },
  ];
  others[0].index.add(0, small);
  others[1].index.add(7000, mid);
  const all = [{ index, ref }, ...others];
  let i = 0;
  for (const qs of queries.slice(0, 60)) {
    const q = parseFtsQuery(qs, opts);
    // Each query on every index, in an order that changes from query to query.
    for (let j = 0; j < all.length; j++) {
      const { index: ix, ref: r } = all[(i + j) % all.length]!;
      const got = ix.search(q, { k: 10 });
      const want = topK(r.search(q), 10);
      t.deepEqual(Array.from(got.positions), want.map((h) => h.pos), `${qs} on index ${(i + j) % all.length}`);
    }
    i++;
  }
});
