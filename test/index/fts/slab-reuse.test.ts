/**
 * Slab chunks are reused across indexes (slab-allocator.ts): a sealed index gives its chunks to a
 * process-wide pool, and so does a dropped one once it is garbage; a new index fills them. A
 * reused chunk still holds the old index's entries — here they are overwritten with 0xFFFFFFFF
 * first — and an index built in reused chunks must read exactly like one built in fresh memory:
 * the same sidecar bytes, postings, statistics and search results (phrases read token positions).
 */
import test from 'ava';
import { tableToIPC } from 'apache-arrow';
import { createHash } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { ftsSealCounts, InvertedIndex } from '../../../src/index/fts/inverted-index.js';
import { fillIdleSlabChunksForTests, slabChunkStats } from '../../../src/index/fts/slab-allocator.js';
import { estimateBytes } from '../../../src/util/memory-estimate.js';
import { runSteps } from '../../../src/util/steps.js';
import { mulberry32, syntheticDocs, zipf } from './synthetic.js';

const opts = { stem: false, stopWords: false } as const;
const rnd = mulberry32(7);
const Z = zipf(3000, 1.0, rnd);
// ~4 000 documents of 10–150 words: several 1 MiB chunks of postings and token positions; the
// other corpus is large enough for a seal to pack it into chunks (not two buffers).
const DOCS = syntheticDocs(4000, Z, rnd);
const OTHER = syntheticDocs(9000, Z, mulberry32(11));
const QUERIES = [Z.vocab[0]!, `${Z.vocab[3]} ${Z.vocab[40]}`, `"${Z.vocab[0]} ${Z.vocab[1]}"`, `${Z.vocab[900]} ${Z.vocab[2500]}`, `+${Z.vocab[2]} -${Z.vocab[5]}`];

/** Builds an index of `docs` the way a MemTable does: batches, some deferred. */
function build(docs: readonly string[]): InvertedIndex {
  const index = new InvertedIndex(opts);
  for (let s = 0, b = 0; s < docs.length; s += 500, b++) index.add(s, docs.slice(s, s + 500), b % 2 === 0);
  return index;
}

function fingerprint(index: InvertedIndex): { sidecar: string; results: unknown[]; stats: unknown } {
  const results = QUERIES.map((q) => {
    const r = index.search(index.parseQuery(q), { k: 50 });
    return [Array.from(r.positions), Array.from(r.scores)];
  });
  return { sidecar: createHash('sha256').update(tableToIPC(index.toArrow())).digest('hex'), results, stats: index.stats(Z.vocab.slice(0, 200)) };
}

test.serial('an index built in chunks another index gave back reads like one built in fresh memory', (t) => {
  const want = fingerprint(build(DOCS));
  const sealedRef = fingerprint(build(OTHER));
  // A sealed MemTable index gives its chunks back …
  const filler = build(OTHER);
  const recycled0 = slabChunkStats.recycled;
  runSteps(filler.sealSteps(Infinity));
  t.true(slabChunkStats.recycled > recycled0, 'sealing gave chunks to the pool');
  t.true(fillIdleSlabChunksForTests(0xffffffff) > 0, 'idle chunks to poison');
  // … an index is built, and sealed in steps (its arrays packed into chunks), in reused memory …
  const other = build(OTHER);
  const packed0 = ftsSealCounts.packed;
  const steps = other.sealSteps(20_000);
  for (let r = steps.next(); !r.done; r = steps.next()) fillIdleSlabChunksForTests(0xffffffff);
  t.is(ftsSealCounts.packed - packed0, 1, 'packed into chunks');
  t.deepEqual(fingerprint(other), sealedRef, 'an index sealed in reused chunks');
  // The MemTable's room to grow is gone: about the memory of the index read from its sidecar.
  const [sealedBytes, loadedBytes] = [estimateBytes(other), estimateBytes(InvertedIndex.fromArrow(other.toArrow(), opts))];
  t.true(sealedBytes < 1.25 * loadedBytes, `sealed ${sealedBytes} bytes vs loaded ${loadedBytes}`);
  t.true(fillIdleSlabChunksForTests(0xffffffff) > 0, 'its old chunks went to the pool');
  // … and a new index fills them.
  const reused0 = slabChunkStats.reused;
  const got = build(DOCS);
  t.true(slabChunkStats.reused > reused0, 'the new index took recycled chunks');
  t.deepEqual(fingerprint(got), want);
  // The sealed index still answers the same.
  t.deepEqual(fingerprint(other), sealedRef);
  // Rows added after the reuse grow arrays inside poisoned memory: still the same as fresh.
  const more = syntheticDocs(500, Z, mulberry32(13));
  got.add(DOCS.length, more);
  const fresh = build(DOCS);
  fresh.add(DOCS.length, more);
  t.deepEqual(fingerprint(got), fingerprint(fresh));
});

test.serial('a dropped index gives its chunks back once it is garbage', async (t) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const recycled0 = slabChunkStats.recycled + slabChunkStats.dropped;
  (() => {
    build(OTHER);
  })();
  // The finalizer runs after a collection, in a later task.
  for (let i = 0; i < 20 && slabChunkStats.recycled + slabChunkStats.dropped === recycled0; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  t.true(slabChunkStats.recycled + slabChunkStats.dropped > recycled0);
  fillIdleSlabChunksForTests(0xffffffff);
  const reused0 = slabChunkStats.reused;
  const got = build(DOCS);
  t.true(slabChunkStats.reused > reused0);
  t.deepEqual(fingerprint(got), fingerprint(build(DOCS)));
});
