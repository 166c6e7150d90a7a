/**
 * Indexes made by `remapped` and `fromArrow` keep every term's postings as runs of two buffers
 * and make a term's arrays when first read. Checked against the index they came from, for every
 * (word, row): postings, statistics, search results and scores, the forward index, a sidecar
 * read back from several record batches, and rows appended afterwards (which move a term's run
 * into growable arrays). A MemTable index sealed for a flush (`sealSteps`) packs its arrays to
 * their exact lengths term by term and answers the same between steps.
 */
import test, { type ExecutionContext } from 'ava';
import { RecordBatch, Table, tableToIPC } from 'apache-arrow';
import { InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { runSteps } from '../../../src/util/steps.js';
import { mulberry32 } from '../../helpers/rng.js';
import { skewedTexts, wordList } from './synthetic.js';

const WORDS = wordList(80);
const opts = { stem: false, stopWords: false } as const;

const texts = (rng: () => number, n: number) => skewedTexts(rng, n, WORDS, 12, 0.05, 0.02);

function same(t: ExecutionContext, got: InvertedIndex, want: InvertedIndex, rows: number, label: string): void {
  let bad = 0;
  for (const w of WORDS) for (let pos = 0; pos < rows; pos++) if (got.hasPosting(w, pos) !== want.hasPosting(w, pos)) bad++;
  t.is(bad, 0, `${label}: postings`);
  t.deepEqual(got.stats(WORDS, rows), want.stats(WORDS, rows), `${label}: statistics`);
  for (const q of ['w0', 'w3 w17', '"w1 w2"', 'w5~1 w40', '+w0 -w1']) {
    const a = got.search(got.parseQuery(q), { k: 25 });
    const b = want.search(want.parseQuery(q), { k: 25 });
    t.deepEqual([Array.from(a.positions), Array.from(a.scores)], [Array.from(b.positions), Array.from(b.scores)], `${label}: ${q}`);
  }
  const fg = got.forwardIndex();
  const fw = want.forwardIndex();
  const ids = (f: typeof fg, r: number, of: InvertedIndex) => {
    const out: string[] = [];
    for (let k = f.start(r); k < f.end(r); k++) out.push(WORDS.find((w) => of.termIdOf(w) === f.id(k)) ?? '?');
    return out.sort().join();
  };
  let fbad = 0;
  for (let r = 0; r < rows; r++) if (ids(fg, r, got) !== ids(fw, r, want)) fbad++;
  t.is(fbad, 0, `${label}: forward index`);
}

test('remapped and fromArrow indexes answer like the index they came from, also after appends', (t) => {
  const rng = mulberry32(21);
  const rows = 3000;
  const all = texts(rng, rows + 400);
  const original = new InvertedIndex(opts);
  original.add(0, all.slice(0, rows));
  const identity = Int32Array.from({ length: rows }, (_, i) => i);
  const remapped = original.remapped(identity);
  same(t, remapped, original, rows, 'remapped');
  // The sidecar split into several record batches.
  const table = remapped.toArrow();
  const batch = table.batches[0]!;
  const cuts = [0, 7, 800, 1500, batch.numRows];
  const split = new Table(table.schema, cuts.slice(1).map((end, i) => batch.slice(cuts[i], end) as RecordBatch));
  const loaded = InvertedIndex.fromArrow(split, opts);
  same(t, loaded, original, rows, 'fromArrow of 4 batches');
  // Appends: some terms leave their run for growable arrays, others stay.
  const more = all.slice(rows);
  for (const ix of [original, remapped, loaded]) ix.add(rows, more);
  same(t, remapped, original, rows + 400, 'remapped, appended to');
  same(t, loaded, original, rows + 400, 'fromArrow, appended to');
  // And out again: the sidecars of all three agree.
  const bytes = (ix: InvertedIndex) => Buffer.from(tableToIPC(ix.toArrow(), 'file'));
  t.true(bytes(loaded).equals(bytes(original)), 'sidecar of the loaded index, appended to');
  t.true(bytes(remapped).equals(bytes(original)), 'sidecar of the remapped index, appended to');
});

test('sealSteps packs a MemTable index term by term: readers between steps, the sidecar and later appends see the same index', (t) => {
  const rng = mulberry32(33);
  const rows = 3000;
  const all = texts(rng, rows + 400);
  const reference = new InvertedIndex(opts);
  reference.add(0, all.slice(0, rows));
  const sealing = new InvertedIndex(opts);
  // In slices with the tokens deferred, as a MemTable indexes a large entry.
  for (let s = 0; s < rows; s += 700) sealing.add(s, all.slice(s, Math.min(rows, s + 700)), true);
  const steps = sealing.sealSteps(2000);
  let r = steps.next();
  let pauses = 0;
  while (!r.done) {
    pauses++;
    if (pauses % 3 === 1) same(t, sealing, reference, rows, `between steps (${pauses})`);
    r = steps.next();
  }
  t.is(r.value, sealing, 'the index itself');
  t.true(pauses > 5, `paused ${pauses} times`);
  same(t, sealing, reference, rows, 'sealed');
  const bytes = (ix: InvertedIndex) => Buffer.from(tableToIPC(ix.toArrow(), 'file'));
  t.true(bytes(sealing).equals(bytes(reference)), 'its sidecar is the reference index\'s');
  sealing.add(rows, all.slice(rows));
  reference.add(rows, all.slice(rows));
  same(t, sealing, reference, rows + 400, 'sealed, appended to');
  t.true(bytes(sealing).equals(bytes(reference)), 'sidecar after appends');
});

test('toArrowSteps fills every entry of the arrays it is handed (a flush hands in reused memory)', (t) => {
  const rng = mulberry32(34);
  const all = texts(rng, 2000);
  const bytes = (table: Table) => Buffer.from(tableToIPC(table, 'file'));
  // Memory holding old entries: every value a sidecar could hold, so a skipped entry shows.
  const stale = (n: number) => new Uint32Array(n + 5).fill(0xffffffff).subarray(3, 3 + n);
  const slab = new InvertedIndex(opts);
  slab.add(0, all);
  const want = bytes(slab.toArrow());
  let handed = 0;
  const take = (n: number) => {
    handed++;
    return stale(n);
  };
  const steps = (ix: InvertedIndex) => runSteps(ix.toArrowSteps(500, take));
  t.true(bytes(steps(slab)).equals(want), 'an index in its slab');
  // In runs: sealed, and read back from its sidecar.
  const sealed = new InvertedIndex(opts);
  sealed.add(0, all);
  runSteps(sealed.sealSteps(500));
  t.true(bytes(steps(sealed)).equals(want), 'a sealed index');
  t.true(bytes(steps(InvertedIndex.fromArrow(slab.toArrow(), opts))).equals(want), 'an index read from its sidecar');
  t.is(handed, 9, 'three arrays each time');
});
