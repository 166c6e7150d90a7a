/**
 * A MemTable's full-text index keeps each flush of its insertion buffer as a segment grouped by
 * term (posting-segments.ts): a read moves the postings of the terms it reads into their arrays,
 * sealing moves every term's. Seeded simulations of an index's life — adds of every size, eager
 * and deferred, reads of every kind at random points (with row cutoffs), a seal read between its
 * steps, appends after it, a remap and a sidecar round trip — checked against the plain
 * reference implementation (reference.ts), not against another build of the same index. Fails if
 * a read misses postings still in segments, moves some twice, or a seal loses or reorders any.
 * QUIVER_FTS_SEGMENT_SEEDS=7-100 sweeps other seeds.
 */
import test, { type ExecutionContext } from 'ava';
import { ftsSegmentCounts, InvertedIndex, type FtsSearchResult } from '../../../src/index/fts/inverted-index.js';
import { parseFtsQuery } from '../../../src/index/fts/query.js';
import { mulberry32 } from '../../helpers/rng.js';
import { RefIndex, refDocs, type RefDoc, type RefHit } from './reference.js';
import { skewedTexts, wordList } from './synthetic.js';

const WORDS = wordList(80);
const opts = { stem: false, stopWords: false } as const;
const QUERIES = ['w1', 'w2 w40', '+w3 w5', '+w0 -w1', '"w0 w1"', '"w2 w2"~2', 'w7~1', '+w10 w11~1 -"w1 w0"', 'w79 w78 w77', 'nothing'];

function hitsOf(r: FtsSearchResult): RefHit[] {
  return Array.from(r.positions, (pos, i) => ({ pos, score: r.scores[i]! }));
}

function sameHits(t: ExecutionContext, got: RefHit[], want: RefHit[], label: string): boolean {
  const g = got.map((h) => h.pos).sort((a, b) => a - b);
  const w = want.map((h) => h.pos).sort((a, b) => a - b);
  if (g.length !== w.length || g.some((p, i) => p !== w[i])) {
    t.deepEqual(g, w, `${label}: matching positions`);
    return false;
  }
  const ref = new Map(want.map((h) => [h.pos, h.score]));
  for (const h of got) {
    const r = ref.get(h.pos)!;
    if (Math.abs(h.score - r) > Math.max(1e-6, Math.abs(r) * 2 ** -23)) {
      t.fail(`${label}: pos ${h.pos} score ${h.score} vs reference ${r}`);
      return false;
    }
  }
  return true;
}

/** Every kind of read, at cutoff `cut` (undefined: all rows), against the reference over `docs`. */
function checkReads(t: ExecutionContext, ix: InvertedIndex, docs: RefDoc[], rng: () => number, label: string): void {
  const end = docs.length === 0 ? 0 : docs[docs.length - 1]!.pos + 1;
  const cut = rng() < 0.5 ? undefined : Math.floor(rng() * (end + 1));
  const ref = new RefIndex(docs);
  const qs = QUERIES[Math.floor(rng() * QUERIES.length)]!;
  const q = parseFtsQuery(qs, opts);
  // The index's own statistics (a single source), and the cutoff's; every match (k above the rows).
  const got = hitsOf(ix.search(q, { k: 1 << 20, maxPosition: cut }));
  sameHits(t, got, ref.search(q, cut), `${label} search ${qs} cut ${cut}`);
  const words = [WORDS[Math.floor(rng() * rng() * WORDS.length)]!, WORDS[Math.floor(rng() * WORDS.length)]!];
  const stats = ix.stats(words, cut);
  t.is(stats.docCount, ref.N(cut), `${label} docCount`);
  t.is(stats.totalTokens, ref.totalTokens(cut), `${label} totalTokens`);
  for (const w of words) t.is(stats.docFreq.get(w), ref.df(w, cut), `${label} df ${w}`);
  const w = words[1]!;
  const id = ix.termIdOf(w);
  t.is(id >= 0, ref.df(w) > 0, `${label} termIdOf ${w}`);
  if (id >= 0) t.is(ix.postingsBefore(id, cut ?? end), ref.df(w, cut ?? end), `${label} postingsBefore ${w}`);
  const doc = docs[Math.floor(rng() * docs.length)];
  if (doc) t.is(ix.hasPosting(words[0]!, doc.pos), doc.terms?.includes(words[0]!) ?? false, `${label} hasPosting ${words[0]} @${doc.pos}`);
}

// QUIVER_FTS_SEGMENT_SEEDS=FROM-TO runs those seeds instead (a longer sweep).
const sweep = /^(\d+)-(\d+)$/.exec(process.env.QUIVER_FTS_SEGMENT_SEEDS ?? '');
const SEEDS = sweep ? Array.from({ length: Number(sweep[2]) - Number(sweep[1]) + 1 }, (_, i) => Number(sweep[1]) + i) : [1, 2, 3, 4, 5, 6];

for (const seed of SEEDS) {
  test(`seed ${seed}: reads between adds, during and after a seal, after a remap and a sidecar round trip answer like the reference`, (t) => {
    const rng = mulberry32(seed * 7919);
    const counts0 = { ...ftsSegmentCounts };
    let ix = new InvertedIndex(opts);
    let docs: RefDoc[] = [];
    let pos = Math.floor(rng() * 5);
    const sealAt = 20 + Math.floor(rng() * 15);
    for (let step = 0; step < 50; step++) {
      // Mostly small writes (each read before the next makes a small segment), some large ones
      // (one of them past the insertion buffer's flush threshold).
      const r = rng();
      const n = step === 10 + seed ? 12_000 : r < 0.65 ? 1 + Math.floor(rng() * 20) : r < 0.95 ? 50 + Math.floor(rng() * 300) : 1000;
      const batch = skewedTexts(rng, n, WORDS, 12, 0.05, 0.02);
      // Gaps between writes hold no document.
      if (rng() < 0.1) pos += 1 + Math.floor(rng() * 3);
      ix.add(pos, batch, rng() < 0.5);
      docs = docs.concat(refDocs(pos, batch, opts));
      pos += n;
      if (rng() < 0.5) checkReads(t, ix, docs, rng, `step ${step}`);
      if (step === sealAt) {
        const steps = ix.sealSteps(300);
        let pauses = 0;
        for (let s = steps.next(); !s.done; s = steps.next()) if (++pauses % 8 === 1) checkReads(t, ix, docs, rng, `seal step ${pauses}`);
        t.true(pauses > 3, `the seal paused (${pauses})`);
        checkReads(t, ix, docs, rng, 'sealed');
      }
    }
    checkReads(t, ix, docs, rng, 'end');
    // A remap that drops a third of the rows: positions renumbered densely.
    const keep = new Int32Array(pos);
    let next = 0;
    for (let p = 0; p < pos; p++) keep[p] = rng() < 0.33 ? -1 : next++;
    const kept = docs.filter((d) => keep[d.pos]! >= 0).map((d) => ({ ...d, pos: keep[d.pos]! }));
    // Gap rows that were kept are still not documents; the reference only lists documents and nulls.
    checkReads(t, ix.remapped(keep), kept, rng, 'remapped');
    ix = InvertedIndex.fromArrow(ix.toArrow(), opts);
    checkReads(t, ix, docs, rng, 'sidecar round trip');
    // The paths under test ran.
    t.true(ftsSegmentCounts.built > counts0.built, 'segments built');
    t.true(ftsSegmentCounts.runsMoved > counts0.runsMoved, 'reads moved runs out of segments');
    t.true(ftsSegmentCounts.mergedAll > counts0.mergedAll, 'a seal merged every segment');
  });
}

test('a run of small writes, each read before the next, merges its segments 8 at a time and reads stay exact', (t) => {
  const rng = mulberry32(4242);
  const merged0 = ftsSegmentCounts.mergedSmall;
  const ix = new InvertedIndex(opts);
  let docs: RefDoc[] = [];
  let pos = 0;
  // 20 writes of 5 rows (far below the small-segment size), each read: a segment each.
  for (let w = 0; w < 20; w++) {
    const batch = skewedTexts(rng, 5, WORDS, 12);
    ix.add(pos, batch);
    docs = docs.concat(refDocs(pos, batch, opts));
    pos += batch.length;
    checkReads(t, ix, docs, rng, `write ${w}`);
  }
  t.true(ftsSegmentCounts.mergedSmall - merged0 >= 2, 'small segments merged');
});
