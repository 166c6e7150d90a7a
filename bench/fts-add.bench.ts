/**
 * Full-text insert benchmark (`npm run bench:fts-add`): the cost of `InvertedIndex.add` as the
 * table's ingest path calls it, one Arrow Utf8 `Data` of 1 000 rows at a time.
 *
 * Corpus: the search benchmark's rows (bench/search-data.ts): ZipfVocabulary of 50 000
 * pseudo-words (Zipf s = 1), bodies of 8–40 words (uniform), ASCII, one space between words,
 * built into Utf8 columns like `rowsBatch` does. Default tokenizer (stemming on).
 *
 * Each round indexes all N documents into a fresh index (so the dictionary grows as in ingest);
 * the first round includes JIT warm-up. Prints per round µs per document and ns per token, by wall
 * clock and by process CPU time (the machine may be shared), then the best and median round, and a digest of the sidecar
 * (`tableToIPC(index.toArrow())`, FNV-1a over the bytes) of the last round's index so that a
 * change to the write path can be checked to give identical output.
 *
 * Knobs: N=100000 ROUNDS=5 BATCH=1000 VOCAB=50000 MIN_WORDS=8 MAX_WORDS=40 INPUT=arrow|strings|tokenized
 * DIGEST=1 SEAL=1 (after each round, also time what a flush does with the index: `sealSteps` and
 * `toArrowSteps`, run through, the sidecar arrays from a reused pool as `writeGeneration` takes them). Run with --expose-gc (the npm script does) so that rounds start from a collected heap.
 * For a profile: `node --cpu-prof --import=tsx bench/fts-add.bench.ts`.
 */
import os from 'node:os';
import { Data, makeData, tableToIPC, Utf8 } from 'apache-arrow';
import { runSteps } from '../src/util/steps.js';
import { InvertedIndex } from '../src/index/fts/inverted-index.js';
import { LexiconMirror, tokenizeRows, type TokenizedRows } from '../src/index/fts/row-tokens.js';
import { envNumber } from './env.js';
import { Rng, ZipfVocabulary } from './lib/data.js';

const N = envNumber('N', 100_000);
const ROUNDS = envNumber('ROUNDS', 5);
const BATCH = envNumber('BATCH', 1000);
const VOCAB = envNumber('VOCAB', 50_000);
const MIN_WORDS = envNumber('MIN_WORDS', 8);
const MAX_WORDS = envNumber('MAX_WORDS', 40);
const INPUT = process.env.INPUT ?? 'arrow';
const DIGEST = envNumber('DIGEST', 1);
const SEAL = envNumber('SEAL', 0);

const encoder = new TextEncoder();
const gc = (globalThis as { gc?: () => void }).gc;

function utf8Column(texts: readonly string[]): Data<Utf8> {
  let bytes = 0;
  for (const t of texts) bytes += t.length * 3;
  const offsets = new Int32Array(texts.length + 1);
  const values = new Uint8Array(bytes);
  let o = 0;
  for (let i = 0; i < texts.length; i++) {
    offsets[i] = o;
    o += encoder.encodeInto(texts[i]!, values.subarray(o)).written;
  }
  offsets[texts.length] = o;
  return makeData({ type: new Utf8(), length: texts.length, nullCount: 0, valueOffsets: offsets, data: values.slice(0, o) });
}

function fnv1a(bytes: Uint8Array): string {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

function main(): void {
  const vocab = new ZipfVocabulary(VOCAB, 1.0, 11);
  const rng = new Rng(2);
  const docs: string[] = new Array(N);
  let words = 0;
  for (let i = 0; i < N; i++) {
    docs[i] = vocab.document(rng, MIN_WORDS, MAX_WORDS);
    words += docs[i]!.split(' ').length;
  }
  const batches: (Data<Utf8> | string[])[] = [];
  for (let s = 0; s < N; s += BATCH) {
    const part = docs.slice(s, Math.min(N, s + BATCH));
    batches.push(INPUT === 'strings' ? part : utf8Column(part));
  }
  console.log(`fts-add: ${N} docs, ${words} tokens (${(words / N).toFixed(1)}/doc), batches of ${BATCH} (${INPUT}), load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${os.cpus().length} CPUs`);

  // INPUT=tokenized: the batches tokenized first (as the tokenize worker does, here on this
  // thread, untimed), then each round times only `addTokenized` — this thread's share.
  let tokenized: TokenizedRows[] | undefined;
  const mirror = new LexiconMirror();
  if (INPUT === 'tokenized') {
    const t0 = performance.now();
    tokenized = batches.map((b) => {
      const d = b as Data<Utf8>;
      return tokenizeRows({ values: d.values, offsets: d.valueOffsets, validity: null, count: d.length }, {}, 1);
    });
    for (const t of tokenized) mirror.feed(t);
    console.log(`tokenized in ${(performance.now() - t0).toFixed(0)} ms (${(((performance.now() - t0) * 1000) / N).toFixed(2)} µs/doc, first pass)`);
  }
  const usPerDoc: number[] = [];
  const sealMs: number[] = [];
  const arrowMs: number[] = [];
  // SEAL=1: toArrowSteps' three large arrays from memory reused round to round (as writeGeneration's pool does).
  const sidecarPool: Uint32Array[] = [];
  let sidecarNext = 0;
  const takeSidecar = (n: number): Uint32Array => {
    const i = sidecarNext++;
    if (sidecarPool[i] === undefined || sidecarPool[i]!.length < n) sidecarPool[i] = new Uint32Array(n);
    return sidecarPool[i]!.subarray(0, n);
  };
  const cpuUsPerDoc: number[] = [];
  let last: InvertedIndex | undefined;
  for (let r = 0; r < ROUNDS; r++) {
    last = undefined;
    gc?.(); // the previous round's index is garbage: collect it outside the timed part
    const index = new InvertedIndex();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let pos = 0;
    if (tokenized) {
      for (const t of tokenized) {
        index.addTokenized(pos, t, mirror);
        pos += t.docLen.length;
      }
    } else {
      for (const b of batches) {
        index.add(pos, b);
        pos += b.length;
      }
    }
    const ms = performance.now() - t0;
    const cu = process.cpuUsage(c0);
    const tokens = index.stats([]).totalTokens;
    if (tokens !== words) throw new Error(`expected ${words} tokens, indexed ${tokens}`);
    const us = (ms * 1000) / N;
    usPerDoc.push(us);
    cpuUsPerDoc.push((cu.user + cu.system) / N);
    console.log(
      `round ${r + 1}: ${ms.toFixed(0)} ms wall, ${((cu.user + cu.system) / 1000).toFixed(0)} ms CPU; ` +
        `${us.toFixed(2)} µs/doc, ${((ms * 1e6) / tokens).toFixed(0)} ns/token wall (CPU ${((cu.user + cu.system) / N).toFixed(2)} µs/doc, ${(((cu.user + cu.system) * 1000) / tokens).toFixed(0)} ns/token), ${index.termCount} terms`,
    );
    if (SEAL) {
      const s0 = performance.now();
      runSteps(index.sealSteps());
      const s1 = performance.now();
      runSteps(index.toArrowSteps(1 << 17, takeSidecar));
      const s2 = performance.now();
      sealMs.push(s1 - s0);
      arrowMs.push(s2 - s1);
      console.log(`  flush: sealSteps ${(s1 - s0).toFixed(1)} ms, toArrowSteps ${(s2 - s1).toFixed(1)} ms (${(((s2 - s0) * 1000) / N).toFixed(2)} µs/doc)`);
      sidecarNext = 0;
    }
    last = index;
  }
  if (SEAL) {
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(`flush median: sealSteps ${med(sealMs).toFixed(1)} ms, toArrowSteps ${med(arrowMs).toFixed(1)} ms`);
  }
  const perTok = (us: number) => ((us * 1000 * N) / words).toFixed(0);
  const summary = (name: string, xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const best = sorted[0]!;
    const median = sorted[Math.floor(sorted.length / 2)]!;
    return `${name}: best ${best.toFixed(2)} µs/doc (${perTok(best)} ns/token), median ${median.toFixed(2)} µs/doc (${perTok(median)} ns/token)`;
  };
  console.log(`${summary('wall', usPerDoc)}; ${summary('CPU', cpuUsPerDoc)}; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  if (DIGEST && last) {
    const ipc = tableToIPC(last.toArrow());
    console.log(`sidecar digest ${fnv1a(ipc)} (${ipc.length} bytes)`);
  }
}

main();
