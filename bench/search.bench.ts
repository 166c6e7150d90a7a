/**
 * Search benchmark at the table level (`npm run bench:search`, issue 7): what a user gets from
 * `table.search` over an active MemTable plus flushed generations, one query at a time.
 *
 * Data (bench/search-data.ts, seeded): N rows of `id Int64` (primary key), `year Int32`
 * (uniform 2000–2024), `body Utf8` (8–40 words, Zipf vocabulary of 50 000 words) and
 * `vector FixedSizeList<Float32>[128]` (256 overlapping Gaussian clusters of uneven size,
 * low-rank shape plus noise). Query vectors are fresh draws from the cluster model, not data rows; query words
 * (1–3) are drawn by corpus frequency.
 *
 * Build, through the public API only (`connect` on a temp local directory, fsync on unless
 * FSYNC=0): create the table with writer settings that never freeze a MemTable on their own
 * (maxMemtableRows/Size/Batches and the backpressure bound set far above N), put the first tenth
 * of the rows (5 000-row puts, 4 in flight), `createIndex` vector `ivf_pq` (trained on that
 * tenth), body `fts`, year `scalar`, `flush()`; then each further tenth and `flush()`, so the
 * rows sit in TEN generations; then upsert 5 % of the keys again (new year, body and vector)
 * WITHOUT flushing, so those versions sit in the active MemTable and supersede rows in the
 * generations. The generation cache is set to 16 GiB so every generation stays loaded (the
 * default, 512 MiB, is smaller than the 1M-row table; see the report).
 *
 * Cases, per size in SEARCH_SIZES (QUERIES timed queries after WARMUP, latency p50/p99 of each
 * awaited `table.search`, all columns returned):
 *  1. vector top-10, default nprobes (20) and refine (40), recall@10 against exact search;
 *  2. the same with `filter: 'year >= 2021'` (16 % of rows), recall against the exact filtered
 *     answer. Ground truth: a brute-force pass (squared L2, plain loops) over the live rows,
 *     which the bench keeps in memory beside the table (bench/search-data.ts `LiveRows`);
 *  3. BM25 top-10 of 1–3 words, without and with the filter;
 *  4. put between queries: a 20-row put (upserts of random keys, fresh values, awaited) before a
 *     query, for vector and text, interleaved round by round with a query right after it (no
 *     put between: plain) and a query after an idle wait as long as the put (no put); reports
 *     what the put adds over the plain queries (p50 difference), the put's own share over the
 *     idle ones (what a pause alone costs the next query on a shared VM), and the put's latency.
 *     Vector recall is checked afterwards by replaying the puts on the in-memory rows;
 *  5. every size in SEARCH_SIZES (default 10 000, 100 000, SEARCH_ROWS), to see how cost grows;
 *  6. at the largest size, the same rows in ONE generation (same training tenth, one flush) plus
 *     the same 5 % upserts in the MemTable (built right after the ten-generation table, before
 *     any query), for vector and text, against ten generations —
 *     each table in its own phase, then the same queries interleaved on both tables (which
 *     goes first alternating), the measure the goal is judged on;
 *  7. `flush()` of 200 000 indexed rows: a fresh table, put 200 000 rows, create the three
 *     indexes (the model trains on them), time `flush()`;
 *  8. the event loop's longest stall during `createIndex('vector', { type: 'ivf_pq' })` on a
 *     100 000-row table (training + indexing the MemTable); that table then gets the FTS and
 *     scalar indexes and is flushed, and is reopened with the DEFAULT writer settings for ingest:
 *     200 000 rows in 1 000-row puts sequentially, then 200 000 with 8 in flight (rows/s, put
 *     latency, generations flushed meanwhile; each window after INGEST_LEAD rows put untimed at
 *     its puts in flight, so it starts with a flush under way), with the IVF-PQ model already
 *     trained and all three indexes maintained (one put first, timed on its own, then the helper threads it
 *     started are waited for; every window's batches built before timing). The windows measure
 *     sustained ingest: before them the process ingests INGEST_WARMUP rows (200 000) into another
 *     table of the same shape and indexes, 8 in flight, reported on its own — the first indexed
 *     rows of a process also pay for V8 compiling the write path, buffer pools and recycled
 *     index memory filling, and the tokenize worker's lexicon. Stalls: a 1 ms setInterval probe (the longest gap between its ticks) and
 *     perf_hooks' monitorEventLoopDelay max, which agree. Then (8d, INDEX_SET_ROWS) the same two
 *     windows into three more tables built the same way that maintain the scalar index alone,
 *     IVF-PQ + scalar and FTS + scalar: what each index costs the write path.
 *  Cases 7 and 8 run in a child process of their own (WRITE_CASES_ONLY=file), as a server's
 *  writes do: what the query cases left in this heap made the ingest windows' major collections
 *  mark it. The rows' JS data itself (~300 MB of body strings at 1M) is let go once a size's
 *  tables are built (`dropRows`), so the query cases' collections do not mark it either.
 * benny: ops/s of cases 1–3 per size (BENNY_TIME s each).
 *
 * Peer (PEERS=lancedb, default when bench/peers is installed): LanceDB 0.31.0 in a child process
 * (bench/peers/lancedb-search.ts) gets the same rows (base rows, then the same 5 % upserts by
 * merge_insert), builds IVF-PQ (256 partitions, 16 sub-vectors, L2), FTS on body, btree on year,
 * and runs the same queries; recall is computed here against the same ground truth. The child
 * gets LANCE_CPU_THREADS = max(2, cores) unless set: LanceDB's default on a 2-core machine is a
 * 1-thread CPU pool, on which its FTS index build deadlocks (lancedb/lancedb#3568); and it is
 * killed after PEER_TIMEOUT_S (default 3600) s.
 *
 * Results: stdout, bench/results/search.json and search.md (SEARCH_RESULTS_DIR=dir writes them there instead).
 * Knobs: SEARCH_ROWS=1000000 SEARCH_SIZES=10000,100000,$SEARCH_ROWS QUERIES=200 WARMUP=20
 * BENNY_TIME=2 (0 skips benny) ONE_GEN=1 FSYNC=1 PEERS=lancedb|none FLUSH_ROWS=200000
 * INGEST_ROWS=200000 INGEST_LEAD=100000 INGEST_BATCH=1000 INGEST_INFLIGHT=8 INGEST_SLICE=512 (writer indexSliceRows) INGEST_WARMUP=200000 (0: none)
 * STALL_ROWS=100000 CASES78=1 (0 skips 7 and 8) INDEX_SET_ROWS=200000 (0 skips 8d)
 * BENCH_DIR (parent of the temp directories) PEER_TIMEOUT_S=3600 PEER_ONLY=1 (re-run only the peer
 * for the sizes in the existing search.json, keeping its Quiver figures) REPORT_ONLY=1 (rewrite
 * search.md from search.json).
 */
import { encodeWorkerReady } from '../src/index/vector/encode-worker.js';
import { tokenizeWorkerReady } from '../src/index/fts/tokenize-worker.js';
import { fileWriteWorkerReady } from '../src/storage/file-write-worker.js';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { constants, monitorEventLoopDelay, performance as perfHooks, PerformanceObserver } from 'node:perf_hooks';
import { add, complete, configure, cycle, suite } from 'benny';
import { type RecordBatch, Table as ArrowTable, tableToIPC } from 'apache-arrow';
import { connect, type Database } from '../src/database.js';
import { DEFAULT_WRITER_CONFIG } from '../src/region/writer-config.js';
import { defaultPartitions } from '../src/index/vector/ivf-pq-model.js';
import type { Table } from '../src/table/table.js';
import { envList, envNumber } from './env.js';
import { codeVersion, log } from './lib/machine.js';
import { summarize, type Summary } from './lib/stats.js';
import { ClusterModel, distinctKeys, LiveRows, makeRows, putRowRange, Rng, type RowGenerator, type Rows, rowsBatch, searchSchema, ZipfVocabulary } from './lib/data.js';
import type { LanceDbSearchResult } from './peers/lancedb-search.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';

// ---- settings --------------------------------------------------------------------------------

const SEARCH_ROWS = envNumber('SEARCH_ROWS', 1_000_000);
const SIZES = [...new Set(envList('SEARCH_SIZES', `10000,100000,${SEARCH_ROWS}`).map(Number))].sort((a, b) => a - b);
for (const s of SIZES) if (!Number.isInteger(s) || s < 1000) throw new Error(`SEARCH_SIZES: sizes must be integers >= 1000, got ${s}`);
const LARGEST = SIZES[SIZES.length - 1];
const QUERIES = envNumber('QUERIES', 200);
const WARMUP = envNumber('WARMUP', 20);
const BENNY_TIME = envNumber('BENNY_TIME', 2);
const ONE_GEN = envNumber('ONE_GEN', 1) > 0;
const FSYNC = envNumber('FSYNC', 1) > 0;
const FLUSH_ROWS = envNumber('FLUSH_ROWS', 200_000);
/**
 * Rows of each ingest window: two MemTables' worth (default writer: 100 000 rows each), so a
 * window pays for the flushes its rows cause (one a MemTable: with INGEST_LEAD, one is under way
 * at its start and the next at its end); a 100 000-row window paid for none (1 in flight) or for
 * one that ended after it (8 in flight).
 */
const INGEST_ROWS = envNumber('INGEST_ROWS', 200_000);
/**
 * Rows put untimed before each ingest window, at the window's puts in flight: one MemTable's
 * worth, so a window starts as a steady stream's would, the previous MemTable's flush under way.
 * Without it the first window after reopening started with no flush running and carried about
 * one flush's work where a later window carried two (1 in flight looked ~2–3 µs of CPU a row
 * cheaper than 8 in flight: libuv's pool, the file worker and the event loop; 2026-12-07).
 */
const INGEST_LEAD = envNumber('INGEST_LEAD', DEFAULT_WRITER_CONFIG.maxMemtableRows);
const INGEST_BATCH = envNumber('INGEST_BATCH', 1000);
const INGEST_INFLIGHT = envNumber('INGEST_INFLIGHT', 8);
const INGEST_SLICE = envNumber('INGEST_SLICE', DEFAULT_WRITER_CONFIG.indexSliceRows);
const STALL_ROWS = envNumber('STALL_ROWS', 100_000);
/** Rows the write-cases process ingests into a warm-up table before the timed ingest windows (0: none). */
const INGEST_WARMUP = envNumber('INGEST_WARMUP', 200_000);
/** Rows of each window of case 8d (ingest by index set; 0: not measured). */
const INDEX_SET_ROWS = envNumber('INDEX_SET_ROWS', 200_000);
/** Rows the warm-up table's IVF-PQ model is trained on. */
const WARMUP_TRAIN_ROWS = 20_000;
const CASES78 = envNumber('CASES78', 1) > 0;
const PEERS = envList('PEERS', 'lancedb').filter((p) => p !== 'none');
const PEER_TIMEOUT_S = envNumber('PEER_TIMEOUT_S', 3600);
/**
 * LanceDB's CPU pool is num_cpus − 2 (LANCE_IO_CORE_RESERVATION) threads, at least 1: one thread
 * on this 2-core machine, where 0.31.0's FTS index build deadlocks (all threads parked, 0 % CPU;
 * lancedb/lancedb#3568) from about 100k rows on. The peer gets at least 2 (the core count here).
 */
const LANCE_CPU_THREADS = process.env.LANCE_CPU_THREADS ?? String(Math.max(2, os.cpus().length));
for (const p of PEERS) if (p !== 'lancedb') throw new Error(`unknown peer ${p} in PEERS (use lancedb or none)`);

const DIM = 128;
const CLUSTERS = 256;
const VOCAB = 50_000;
const K = 10;
const GENERATIONS = 10;
const UPSERT_FRACTION = 0.05;
const PUT_ROWS = 20;
const BUILD_PUT_ROWS = 5000;
const BUILD_INFLIGHT = 4;
const FILTER = 'year >= 2021';
const FILTER_MIN_YEAR = 2021;
/**
 * Overlapping clusters: centres 0.3·N(0, 1) per dimension (about 4.8 apart), each cluster a
 * 16-dimensional Gaussian (std 0.5–1.5 per direction) plus N(0, 0.3²) noise per dimension (about
 * 5.4 across), so nearest neighbours often sit in neighbouring partitions. On the bare index
 * (100k rows, 128 partitions) nprobes 20 + refine 40 reach recall@10 ≈ 0.99, without refine ≈ 0.49.
 */
const CLUSTER_PARAMS = { dim: DIM, clusters: CLUSTERS, seed: 12, centreStd: 0.3, spread: 1.0, noise: 0.3, latentDim: 16, weightSigma: 1.0 };

const HERE = path.dirname(new URL(import.meta.url).pathname);
const RESULTS_DIR = process.env.SEARCH_RESULTS_DIR ? path.resolve(process.env.SEARCH_RESULTS_DIR) : path.join(HERE, 'results');
const PEERS_DIR = path.join(HERE, 'peers');
const GiB = 1024 ** 3;

/** Writer settings of the built tables: no MemTable freezes before `flush()`. */
const BUILD_WRITER = HOLD_IN_MEMTABLE;

/** Goals from issue 7. */
const GOALS = {
  vectorP50Ms: 3,
  recallAt10: 0.95,
  bm25P50Ms: 2,
  putAddsMs: 0.2,
  tenVsOne: 1.5,
  flush200kMs: 2000,
  ingestRowsPerSec: 100_000,
  stallMs: 50,
};

// ---- helpers ---------------------------------------------------------------------------------

let CODE = codeVersion();

/** Latency of a case: the shared nearest-rank summary (bench/lib/stats.ts); the peer's lacks `min`. */
type Latency = Omit<Summary, 'min'>;
const latencyOf = summarize;

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const met = (ok: boolean) => (ok ? 'met' : 'MISSED');

/**
 * Event loop stall probe: a 1 ms interval (longest gap between ticks) and monitorEventLoopDelay,
 * plus the garbage collections meanwhile (longest pause and its kind), so a stall can be told
 * apart from a collection of garbage the process made earlier.
 */
class StallProbe {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private maxGap = 0;
  private readonly hist = monitorEventLoopDelay({ resolution: 1 });
  private gcMax = 0;
  private gcMaxKind = '';
  private gcTotal = 0;
  private readonly gc = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.noteGc(e);
  });
  private noteGc(e: PerformanceEntry): void {
    this.gcTotal += e.duration;
    if (e.duration <= this.gcMax) return;
    this.gcMax = e.duration;
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    this.gcMaxKind = kind === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : kind === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL ? 'incremental' : 'weak callbacks';
  }
  start(): void {
    this.last = performance.now();
    this.maxGap = 0;
    this.gcMax = 0;
    this.gcTotal = 0;
    this.gcMaxKind = '';
    this.hist.reset();
    this.hist.enable();
    this.gc.observe({ entryTypes: ['gc'] });
    this.timer = setInterval(() => {
      const now = performance.now();
      this.maxGap = Math.max(this.maxGap, now - this.last);
      this.last = now;
    }, 1);
  }
  stop(): { maxGapMs: number; eldMaxMs: number; eldP99Ms: number; gcMaxMs: number; gcMaxKind: string; gcTotalMs: number } {
    clearInterval(this.timer);
    this.maxGap = Math.max(this.maxGap, performance.now() - this.last);
    this.hist.disable();
    for (const e of this.gc.takeRecords()) this.noteGc(e); // entries not yet delivered
    this.gc.disconnect();
    return { maxGapMs: this.maxGap, eldMaxMs: this.hist.max / 1e6, eldP99Ms: this.hist.percentile(99) / 1e6, gcMaxMs: this.gcMax, gcMaxKind: this.gcMaxKind, gcTotalMs: this.gcTotal };
  }
}

async function generationLayout(table: Table): Promise<{ generations: number; memtableRows: number }> {
  let generations = 0;
  let memtableRows = 0;
  for (const { state } of await table.readStates()) {
    generations += state.manifest.flushedGenerations.length;
    for (const m of state.memtables) memtableRows += m.memtable.store.rowsBefore(m.batchCount);
  }
  return { generations, memtableRows };
}

async function bennyOps(name: string, fn: () => Promise<void>): Promise<{ ops: number; margin: number; samples: number } | undefined> {
  if (BENNY_TIME <= 0) return undefined;
  const summary = await suite(name, configure({ minDisplayPrecision: 2 }), add(name, fn, { minSamples: 5, maxTime: BENNY_TIME }), cycle(), complete());
  const r = summary.results[0];
  return { ops: r.ops, margin: r.margin, samples: r.samples };
}

function idsOf(result: ArrowTable): number[] {
  const col = result.getChild('id');
  if (!col) return [];
  return Array.from(col.toArray() as BigInt64Array, Number);
}

/** Fraction of queries whose score lists are equal (relative 1e-5). */
function sameScores(a: number[][], b: number[][]): number {
  let same = 0;
  a.forEach((x, i) => {
    const y = b[i];
    if (x.length === y.length && x.every((v, j) => Math.abs(v - y[j]) <= 1e-5 * Math.max(1, Math.abs(v)))) same++;
  });
  return same / Math.max(1, a.length);
}

function recallOf(got: number[], want: number[]): number {
  if (want.length === 0) return got.length === 0 ? 1 : 0;
  const w = new Set(want);
  let hit = 0;
  for (const g of got) if (w.has(g)) hit++;
  return hit / want.length;
}

// ---- workload --------------------------------------------------------------------------------

interface Workload {
  n: number;
  gen: RowGenerator;
  /**
   * The rows (base, then the upserts), until the tables are built (`dropRows`); `workloadRows`
   * makes them again (same seeds) for the peer.
   */
  base?: Rows;
  upserts?: Rows;
  vectorQueries: Float32Array[];
  vectorWarmup: Float32Array[];
  textQueries: string[];
  textWarmup: string[];
  /** Exact top-10 keys per vector query over the live rows (base + upserts). */
  truth: { all: number[]; filtered: number[] }[];
  live: LiveRows;
  filteredFraction: number;
}

function makeWorkload(n: number): Workload {
  const t0 = performance.now();
  const gen: RowGenerator = {
    vocab: new ZipfVocabulary(VOCAB, 1.0, 11),
    model: new ClusterModel(CLUSTER_PARAMS),
    minWords: 8,
    maxWords: 40,
  };
  const { base, upserts } = generateRows(gen, n);
  const qrng = new Rng(4000 + n);
  const vq = (count: number) =>
    Array.from({ length: count }, () => {
      const v = new Float32Array(DIM);
      gen.model.sample(qrng, v, 0);
      return v;
    });
  const tq = (count: number) =>
    Array.from({ length: count }, () => {
      const words = 1 + qrng.int(3);
      return Array.from({ length: words }, () => gen.vocab.sample(qrng)).join(' ');
    });
  const vectorWarmup = vq(WARMUP);
  const vectorQueries = vq(QUERIES);
  const textWarmup = tq(WARMUP);
  const textQueries = tq(QUERIES);
  const live = new LiveRows(n, DIM);
  live.apply(base);
  live.apply(upserts);
  let passing = 0;
  for (let i = 0; i < n; i++) if (live.years[i] >= FILTER_MIN_YEAR) passing++;
  const genMs = performance.now() - t0;
  const t1 = performance.now();
  const truth = vectorQueries.map((q) => live.exactTopK(q, K, FILTER_MIN_YEAR));
  log(`data ${n} rows generated in ${(genMs / 1000).toFixed(1)} s; exact ground truth ${((performance.now() - t1) / vectorQueries.length).toFixed(1)} ms/query; filter passes ${((100 * passing) / n).toFixed(1)} %`);
  return { n, gen, base, upserts, vectorQueries, vectorWarmup, textQueries, textWarmup, truth, live, filteredFraction: passing / n };
}

/** The workload's rows, made from fixed seeds: the same rows every time. */
function generateRows(gen: RowGenerator, n: number): { base: Rows; upserts: Rows } {
  const keys = Int32Array.from({ length: n }, (_, i) => i);
  const base = makeRows(gen, new Rng(1000 + n), keys);
  const upsertKeys = distinctKeys(new Rng(2000 + n), n, Math.round(n * UPSERT_FRACTION));
  return { base, upserts: makeRows(gen, new Rng(3000 + n), upsertKeys) };
}

/** The workload's rows: kept ones, or made again after `dropRows`. */
function workloadRows(w: Workload): { base: Rows; upserts: Rows } {
  return w.base && w.upserts ? { base: w.base, upserts: w.upserts } : generateRows(w.gen, w.n);
}

/**
 * Lets the rows go once the size's tables are built: their body strings (~300 MB at 1M rows)
 * stayed reachable from this process through every query case, and each major collection of
 * the query phases marked them (a server does not hold its clients' data in its heap). Ground
 * truth, queries and the live rows' vectors and years stay.
 */
function dropRows(w: Workload): void {
  w.base = undefined;
  w.upserts = undefined;
}

interface BuildReport {
  generationsWanted: number;
  generations: number;
  memtableRows: number;
  putMs: number;
  createIndexMs: Record<string, number>;
  flushMs: number[];
  upsertMs: number;
  /** Waiting for background index work (a grown IVF-PQ model re-encoding older generations). */
  settleMs: number;
  totalMs: number;
  /** Whether createIndex trained the IVF-PQ model (else the first search did). */
  trainedAtCreateIndex: boolean;
  /** The model in use after the searches (read through the table's internals, for the report). */
  partitions?: number;
  subVectors?: number;
}

/** The trained IVF-PQ model's shape, read from the table's internals (the API does not expose it). */
function ivfModel(table: Table): { partitions?: number; subVectors?: number } {
  const ctx = (table as unknown as { ctx: { indexing: { defs: readonly { type: string; name: string; model?: string }[]; model(d: unknown): { partitions: number; subVectors: number } | undefined } } }).ctx;
  const def = ctx.indexing.defs.find((d) => d.type === 'ivf_pq');
  const model = def ? ctx.indexing.model(def) : undefined;
  return { partitions: model?.partitions, subVectors: model?.subVectors };
}

/** Builds a table from the workload: `generations` flushed generations + 5 % upserts in the MemTable. */
async function buildTable(db: Database, name: string, w: Workload, generations: number): Promise<{ table: Table; build: BuildReport }> {
  const t0 = performance.now();
  const { base, upserts } = workloadRows(w);
  const table = await db.createTable(name, searchSchema(DIM), { primaryKey: 'id', writer: BUILD_WRITER });
  const report: BuildReport = { generationsWanted: generations, generations: 0, memtableRows: 0, putMs: 0, createIndexMs: {}, flushMs: [], upsertMs: 0, settleMs: 0, totalMs: 0, trainedAtCreateIndex: false };
  const tenth = Math.ceil(w.n / GENERATIONS);
  for (let part = 0; part < GENERATIONS; part++) {
    const start = part * tenth;
    const end = Math.min(w.n, start + tenth);
    let t = performance.now();
    await putRowRange(table, base, start, end, BUILD_PUT_ROWS, BUILD_INFLIGHT);
    report.putMs += performance.now() - t;
    if (part === 0) {
      for (const [column, type] of [['vector', 'ivf_pq'], ['body', 'fts'], ['year', 'scalar']] as const) {
        t = performance.now();
        const def = await table.createIndex(column, { type });
        report.createIndexMs[column] = performance.now() - t;
        if (type === 'ivf_pq') report.trainedAtCreateIndex = def.model !== undefined;
      }
    }
    // Ten generations: flush after each tenth; one generation: only after the last.
    if (generations === GENERATIONS || part === GENERATIONS - 1) {
      t = performance.now();
      await table.flush();
      report.flushMs.push(performance.now() - t);
    }
  }
  const t = performance.now();
  await putRowRange(table, upserts, 0, upserts.ids.length, BUILD_PUT_ROWS, BUILD_INFLIGHT);
  report.upsertMs = performance.now() - t;
  // Queries measure the settled table: a model grown during the build has re-encoded every
  // generation (until then a query searches both models' codes).
  const settle = performance.now();
  await table.settleIndexes();
  report.settleMs = performance.now() - settle;
  const layout = await generationLayout(table);
  report.generations = layout.generations;
  report.memtableRows = layout.memtableRows;
  report.totalMs = performance.now() - t0;
  log(
    `built ${name}: ${layout.generations} generations + ${layout.memtableRows} MemTable rows in ${(report.totalMs / 1000).toFixed(1)} s ` +
      `(puts ${(report.putMs / 1000).toFixed(1)} s, createIndex ${Object.entries(report.createIndexMs).map(([c, ms]) => `${c} ${(ms / 1000).toFixed(1)} s`).join(', ')}, ` +
      `flushes ${(report.flushMs.reduce((a, b) => a + b, 0) / 1000).toFixed(1)} s, upserts ${(report.upsertMs / 1000).toFixed(1)} s, index work settled in ${(report.settleMs / 1000).toFixed(1)} s)`,
  );
  return { table, build: report };
}

interface SearchCase {
  name: string;
  kind: 'vector' | 'text';
  filter: boolean;
  latency: Latency;
  recall?: number;
  meanHits: number;
  benny?: { ops: number; margin: number; samples: number };
}

/** A vector top-K search request, with the benchmark's filter when `filter`. */
function vectorRequest(q: Float32Array, filter: boolean) {
  return { vector: { column: 'vector', query: q }, k: K, ...(filter ? { filter: FILTER } : {}) };
}

/** A BM25 top-K search request, with the benchmark's filter when `filter`. */
function textRequest(q: string, filter: boolean) {
  return { text: { column: 'body', query: q }, k: K, ...(filter ? { filter: FILTER } : {}) };
}

async function vectorCase(table: Table, w: Workload, filter: boolean, label: string): Promise<{ c: SearchCase; ids: number[][] }> {
  const req = (q: Float32Array) => vectorRequest(q, filter);
  for (const q of w.vectorWarmup) await table.search(req(q));
  const ms: number[] = [];
  const ids: number[][] = [];
  let recall = 0;
  let hits = 0;
  for (let i = 0; i < w.vectorQueries.length; i++) {
    const t = performance.now();
    const r = await table.search(req(w.vectorQueries[i]));
    ms.push(performance.now() - t);
    const got = idsOf(r);
    ids.push(got);
    hits += got.length;
    recall += recallOf(got, filter ? w.truth[i].filtered : w.truth[i].all);
  }
  let qi = 0;
  const benny = await bennyOps(`${label} vector${filter ? ' + filter' : ''}`, async () => {
    await table.search(req(w.vectorQueries[qi++ % w.vectorQueries.length]));
  });
  return { c: { name: `vector top-${K}${filter ? ` + ${FILTER}` : ''}`, kind: 'vector', filter, latency: latencyOf(ms), recall: recall / w.vectorQueries.length, meanHits: hits / ms.length, benny }, ids };
}

async function textCase(table: Table, w: Workload, filter: boolean, label: string): Promise<{ c: SearchCase; ids: number[][]; scores: number[][] }> {
  const req = (q: string) => textRequest(q, filter);
  for (const q of w.textWarmup) await table.search(req(q));
  const ms: number[] = [];
  const ids: number[][] = [];
  const scores: number[][] = [];
  let hits = 0;
  for (const q of w.textQueries) {
    const t = performance.now();
    const r = await table.search(req(q));
    ms.push(performance.now() - t);
    const got = idsOf(r);
    ids.push(got);
    scores.push(Array.from((r.getChild('_score')?.toArray() as Float32Array | undefined) ?? []));
    hits += got.length;
  }
  let qi = 0;
  const benny = await bennyOps(`${label} BM25${filter ? ' + filter' : ''}`, async () => {
    await table.search(req(w.textQueries[qi++ % w.textQueries.length]));
  });
  return { c: { name: `BM25 top-${K}${filter ? ` + ${FILTER}` : ''}`, kind: 'text', filter, latency: latencyOf(ms), meanHits: hits / ms.length, benny }, ids, scores };
}

/** Ten generations against one, measured in one loop (see `pairedTenVsOne`). */
interface PairedCase {
  name: string;
  kind: 'vector' | 'text';
  filter: boolean;
  ten: Latency;
  one: Latency;
}

/**
 * The ten- and one-generation tables' queries interleaved: each query runs on both, which table
 * goes first alternating from query to query, so both see the same machine. Measured one after
 * the other (`vectorCase` on one table, later on the other), the ratio moved with this VM's
 * drift between the phases: the same code gave 1.11× and 1.54× for vector at 1M in two runs.
 */
async function pairedTenVsOne(ten: Table, one: Table, w: Workload): Promise<PairedCase[]> {
  const out: PairedCase[] = [];
  for (const kind of ['vector', 'text'] as const) {
    for (const filter of [false, true]) {
      const reqs = kind === 'vector' ? w.vectorQueries.map((q) => vectorRequest(q, filter)) : w.textQueries.map((q) => textRequest(q, filter));
      const warm = kind === 'vector' ? w.vectorWarmup.map((q) => vectorRequest(q, filter)) : w.textWarmup.map((q) => textRequest(q, filter));
      for (const r of warm) {
        await ten.search(r);
        await one.search(r);
      }
      const tenMs: number[] = [];
      const oneMs: number[] = [];
      for (let i = 0; i < reqs.length; i++) {
        for (const [table, ms] of i % 2 === 0 ? ([[ten, tenMs], [one, oneMs]] as const) : ([[one, oneMs], [ten, tenMs]] as const)) {
          const t = performance.now();
          await table.search(reqs[i]);
          ms.push(performance.now() - t);
        }
      }
      out.push({ name: `${kind === 'vector' ? 'vector' : 'BM25'} top-${K}${filter ? ` + ${FILTER}` : ''}`, kind, filter, ten: latencyOf(tenMs), one: latencyOf(oneMs) });
    }
  }
  return out;
}

interface PutCase {
  name: string;
  kind: 'vector' | 'text';
  /** Queries right after a put. */
  query: Latency;
  put: Latency;
  recall?: number;
  /** Queries right after another query, interleaved with the others (no put, no wait between). */
  plain: Latency;
  /** Query p50 after a put minus the interleaved plain queries' p50. */
  addsP50Ms: number;
  /** The p50 of the same kind's own case (1 / 3), measured earlier in the run, for reference. */
  separateP50Ms: number;
  /**
   * Queries after an idle wait as long as that round's put instead of a put: what a pause alone
   * costs the next query on this machine (caches and TLB cold, the CPU descheduled).
   */
  idle: Latency;
  /** Query p50 after a put minus the p50 after an idle wait: the put's own share. */
  addsVsIdleP50Ms: number;
}

/**
 * Case 4: a 20-row put (upserts of random keys) before a query, against queries with nothing
 * between them and queries after an idle wait, interleaved round by round. Measured in separate
 * phases, the machine's drift between phases moved the difference by more than the 0.2 ms goal
 * (a p50 of one phase 2 ms above the next on this shared VM); paired in one loop, the three
 * kinds of query see the same machine. Each round: put, query (after a put); query (plain, right
 * after it); an idle wait as long as this round's put, query (after idle). The three roles take
 * the same query list at offsets of a third of it, so each role asks every query once, and a
 * query's repetitions are ~QUERIES queries apart (no warmer for one role than for another).
 */
async function putBetweenCases(table: Table, w: Workload, vectorP50: number, textP50: number): Promise<PutCase[]> {
  const rng = new Rng(5000 + w.n);
  const makePut = () => {
    const keys = new Set<number>();
    while (keys.size < PUT_ROWS) keys.add(rng.int(w.n));
    return makeRows(w.gen, rng, [...keys]);
  };
  const total = WARMUP + QUERIES;
  const schema = table.schema;
  const out: PutCase[] = [];
  for (const kind of ['vector', 'text'] as const) {
    const puts = Array.from({ length: total }, makePut);
    const batches = puts.map((p) => rowsBatch(schema, p, 0, p.ids.length));
    const search = (warm: boolean, i: number) =>
      kind === 'vector'
        ? table.search({ vector: { column: 'vector', query: warm ? w.vectorWarmup[i % WARMUP] : w.vectorQueries[i % QUERIES] }, k: K })
        : table.search({ text: { column: 'body', query: warm ? w.textWarmup[i % WARMUP] : w.textQueries[i % QUERIES] }, k: K });
    const third = Math.floor(QUERIES / 3);
    const putMs: number[] = [];
    const queryMs: number[] = [];
    const plainMs: number[] = [];
    const idleMs: number[] = [];
    const got: number[][] = [];
    for (let i = 0; i < total; i++) {
      const warm = i < WARMUP;
      const qi = i - WARMUP;
      let t = performance.now();
      await table.put(batches[i]);
      const pm = performance.now() - t;
      t = performance.now();
      const r = await search(warm, warm ? i : qi);
      const qm = performance.now() - t;
      t = performance.now();
      await search(warm, warm ? i + 1 : qi + third);
      const plain = performance.now() - t;
      await new Promise((resolve) => setTimeout(resolve, pm));
      t = performance.now();
      await search(warm, warm ? i + 2 : qi + 2 * third);
      const idle = performance.now() - t;
      if (!warm) {
        putMs.push(pm);
        queryMs.push(qm);
        plainMs.push(plain);
        idleMs.push(idle);
        got.push(idsOf(r));
      }
    }
    let recall: number | undefined;
    if (kind === 'vector') {
      // Replay the puts on the in-memory live rows; exact answer at each query after a put.
      let sum = 0;
      for (let i = 0; i < total; i++) {
        w.live.apply(puts[i]);
        if (i < WARMUP) continue;
        const truth = w.live.exactTopK(w.vectorQueries[i - WARMUP], K, FILTER_MIN_YEAR).all;
        sum += recallOf(got[i - WARMUP], truth);
      }
      recall = sum / QUERIES;
    } else {
      for (const p of puts) w.live.apply(p);
    }
    const query = latencyOf(queryMs);
    const plain = latencyOf(plainMs);
    const idle = latencyOf(idleMs);
    out.push({
      name: `${kind === 'vector' ? 'vector' : 'BM25'} top-${K}, ${PUT_ROWS}-row put before each`,
      kind,
      query,
      put: latencyOf(putMs),
      recall,
      plain,
      addsP50Ms: query.p50 - plain.p50,
      separateP50Ms: kind === 'vector' ? vectorP50 : textP50,
      idle,
      addsVsIdleP50Ms: query.p50 - idle.p50,
    });
  }
  return out;
}

// ---- peer ------------------------------------------------------------------------------------

function peerInstalled(): boolean {
  return existsSync(path.join(PEERS_DIR, 'node_modules', '@lancedb', 'lancedb'));
}

async function runPeer(w: Workload, dir: string): Promise<LanceDbSearchResult> {
  const schema = searchSchema(DIM);
  const batches = (rows: Rows): RecordBatch[] => batchesOf(schema, rows, 0, rows.ids.length, 50_000);
  const basePath = path.join(dir, 'base.arrow');
  const upsertPath = path.join(dir, 'upserts.arrow');
  const queryPath = path.join(dir, 'queries.json');
  const rows = workloadRows(w);
  await writeFile(basePath, tableToIPC(new ArrowTable(batches(rows.base)), 'file'));
  await writeFile(upsertPath, tableToIPC(new ArrowTable(batches(rows.upserts)), 'file'));
  await writeFile(
    queryPath,
    JSON.stringify({
      k: K,
      filter: FILTER,
      partitions: 256,
      subVectors: 16,
      refine: 40,
      vectorWarmup: w.vectorWarmup.map((q) => Array.from(q)),
      vectors: w.vectorQueries.map((q) => Array.from(q)),
      textWarmup: w.textWarmup,
      texts: w.textQueries,
    }),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', path.join(PEERS_DIR, 'lancedb-search.ts'), basePath, upsertPath, queryPath], {
      cwd: path.join(HERE, '..'),
      env: { ...process.env, BENCH_DIR: dir, LANCE_CPU_THREADS: LANCE_CPU_THREADS },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, PEER_TIMEOUT_S * 1000);
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) return reject(new Error(`lancedb-search did not finish within ${PEER_TIMEOUT_S} s (killed)`));
      if (code !== 0) return reject(new Error(`lancedb-search exited with ${code}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as LanceDbSearchResult);
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** Runs the LanceDB peer on the workload and records it (or its failure) in `result`. */
async function peerFor(result: SizeResult, w: Workload): Promise<void> {
  const parent = process.env.BENCH_DIR ?? os.tmpdir();
  const peerDir = await mkdtemp(path.join(parent, 'lancedb-search-'));
  try {
    log(`LanceDB peer at ${w.n} rows (LANCE_CPU_THREADS=${LANCE_CPU_THREADS})`);
    const runAt = new Date().toISOString();
    const loadavgAtStart = os.loadavg();
    const r = await runPeer(w, peerDir);
    const avg = (ids: number[][], which: 'all' | 'filtered') => ids.reduce((s, x, i) => s + recallOf(x, w.truth[i][which]), 0) / Math.max(1, ids.length);
    const recall = (ids: LanceDbSearchResult['ids']): PeerRecall => ({
      vector: avg(ids.vector, 'all'),
      vectorFiltered: avg(ids.vectorFiltered, 'filtered'),
      vectorRefine: avg(ids.vectorRefine, 'all'),
      vectorFilteredRefine: avg(ids.vectorFilteredRefine, 'filtered'),
    });
    const { ids, afterOptimize, ...rest } = r;
    const { ids: idsAfter, ...after } = afterOptimize;
    result.lancedb = { ...rest, afterOptimize: after, recall: recall(ids), recallAfterOptimize: recall(idsAfter), runAt, loadavgAtStart };
    delete result.lancedbError;
    const l = result.lancedb;
    log(
      `LanceDB ${w.n} rows: vector p50 ${f(r.cases.vector.p50, 3)} ms recall ${f(l.recall.vector, 4)} (refine ${r.refineFactor}: ${f(r.cases.vectorRefine.p50, 3)} ms, ${f(l.recall.vectorRefine, 4)}); ` +
        `filtered p50 ${f(r.cases.vectorFiltered.p50, 3)} ms recall ${f(l.recall.vectorFiltered, 4)}; FTS p50 ${f(r.cases.text.p50, 3)} ms; after optimize(): FTS p50 ${f(r.afterOptimize.cases.text.p50, 3)} ms`,
    );
  } catch (e) {
    result.lancedbError = (e as Error).message;
    log(`LanceDB peer failed at ${w.n} rows: ${result.lancedbError}`);
  } finally {
    await rm(peerDir, { recursive: true, force: true });
  }
}

/**
 * PEER_ONLY=1: re-runs only the LanceDB peer for the sizes of the existing search.json (same
 * seeded data, queries and ground truth) and rewrites the results with the Quiver figures kept.
 */
let peerRerun: { at: string; loadavgAtStart: number[] } | undefined;

/** Peer-only and report-only runs keep the measured run's end time and load. */
let measuredRun: { generatedAt: string; loadavgAtEnd: number[] } | undefined;

interface PreviousResults {
  generatedAt: string;
  startedAt: string;
  peerRerun?: { at: string; loadavgAtStart: number[] };
  machine: { code: { commit: string; uncommitted: string[] }; loadavgAtStart: number[]; loadavgAtEnd: number[] };
  sizes: SizeResult[];
  writeCases?: WriteCases;
}

/** The existing search.json, whose Quiver figures a peer-only or report-only run keeps (with the code they measured). */
async function previousResults(): Promise<PreviousResults> {
  const prev = JSON.parse(await readFile(path.join(RESULTS_DIR, 'search.json'), 'utf8')) as PreviousResults;
  CODE = prev.machine.code;
  peerRerun = prev.peerRerun;
  measuredRun = { generatedAt: prev.generatedAt, loadavgAtEnd: prev.machine.loadavgAtEnd };
  return prev;
}

/** REPORT_ONLY=1: rewrites search.md (and search.json) from search.json, running nothing. */
async function reportOnly(): Promise<void> {
  const prev = await previousResults();
  await writeResults(prev.startedAt, prev.machine.loadavgAtStart, prev.sizes, prev.writeCases, prev.sizes.some((s) => s.lancedb), true);
}

async function peerOnly(): Promise<void> {
  const prev = await previousResults();
  peerRerun = { at: new Date().toISOString(), loadavgAtStart: os.loadavg() };
  for (const result of prev.sizes) if (SIZES.includes(result.rows)) delete result.lancedb;
  for (const result of prev.sizes) {
    if (!SIZES.includes(result.rows)) continue;
    await peerFor(result, makeWorkload(result.rows));
    await writeResults(prev.startedAt, prev.machine.loadavgAtStart, prev.sizes, prev.writeCases, true, true);
  }
}

// ---- cases 7 and 8 -----------------------------------------------------------------------------

interface WriteCases {
  flush: { rows: number; createIndexMs: Record<string, number>; flushMs: number; flushStall: ReturnType<StallProbe['stop']> };
  createIndexStall: { rows: number; ms: number; stall: ReturnType<StallProbe['stop']> };
  /** The first put after the table is reopened (it loads what the writer reads lazily), before the timed windows. */
  firstPutMs?: number;
  /** The process's first indexed ingest, into another table of the same shape, before the timed windows (JIT, buffer pools and the tokenize worker's lexicon warming). */
  warmup?: { rows: number; inflight: number; ms: number; rowsPerSec: number; cpuUsPerRow: number; mainBusyUsPerRow: number; generationsFlushed: number };
  /** cpuUsPerRow: process CPU (every thread) a row; mainBusyUsPerRow: the event loop's busy time a row. */
  /** lead: rows put untimed just before the window at its puts in flight (absent in results from before 2026-12-07: none). */
  ingest: { rows: number; batch: number; inflight: number; lead?: number; ms: number; rowsPerSec: number; stall: ReturnType<StallProbe['stop']>; generationsFlushed: number; putMs: Latency; cpuUsPerRow?: number; mainBusyUsPerRow?: number }[];
  /** Case 8d: the same ingest into tables with fewer indexes — what each index costs the write path. Absent in results from before it was measured. */
  byIndexSet?: IndexSetIngest[];
}

/** One window of case 8d. */
interface IndexSetIngest {
  /** The indexes the table maintains ('year' scalar always: the bench table's filter column). */
  indexes: string;
  rows: number;
  inflight: number;
  rowsPerSec: number;
  cpuUsPerRow: number;
  mainBusyUsPerRow: number;
}

async function writeCases(root: string): Promise<WriteCases> {
  const gen: RowGenerator = { vocab: new ZipfVocabulary(VOCAB, 1.0, 11), model: new ClusterModel(CLUSTER_PARAMS), minWords: 8, maxWords: 40 };
  const schema = searchSchema(DIM);
  const db = await connect(path.join(root, 'write-cases'), { fsync: FSYNC, generationCacheBytes: 16 * GiB });
  try {
    // 7. flush() of FLUSH_ROWS indexed rows.
    const t7 = await db.createTable('flush_case', schema, { primaryKey: 'id', writer: BUILD_WRITER });
    await putRowRange(t7, makeRows(gen, new Rng(7000), Int32Array.from({ length: FLUSH_ROWS }, (_, i) => i)), 0, FLUSH_ROWS, BUILD_PUT_ROWS, BUILD_INFLIGHT);
    const createIndexMs: Record<string, number> = {};
    for (const [column, type] of [['vector', 'ivf_pq'], ['body', 'fts'], ['year', 'scalar']] as const) {
      const t = performance.now();
      await t7.createIndex(column, { type });
      createIndexMs[column] = performance.now() - t;
    }
    const probe7 = new StallProbe();
    probe7.start();
    let t = performance.now();
    await t7.flush();
    const flushMs = performance.now() - t;
    const flushStall = probe7.stop();
    log(`flush() of ${FLUSH_ROWS} indexed rows: ${flushMs.toFixed(0)} ms (longest event-loop stall ${flushStall.maxGapMs.toFixed(0)} ms)`);
    await t7.close();

    // 8a. Event-loop stall during createIndex ivf_pq on STALL_ROWS rows.
    const ingestTotal = 2 * (INGEST_LEAD + INGEST_ROWS);
    let rows8: Rows | null = makeRows(gen, new Rng(8000), Int32Array.from({ length: STALL_ROWS + ingestTotal + INGEST_BATCH }, (_, i) => i));
    const t8 = await db.createTable('ingest_case', schema, { primaryKey: 'id', writer: BUILD_WRITER });
    await putRowRange(t8, rows8, 0, STALL_ROWS, BUILD_PUT_ROWS, BUILD_INFLIGHT);
    // The batches of 8b's windows (below) are built now, before anything is timed — what a client
    // spends making Arrow data is not Quiver's ingest — and the rows' JS strings are then dropped:
    // a server's heap does not hold its clients' source data. 300 000 rows of strings held made
    // each major GC in the windows mark ~300 MB that was not Quiver's (dev-ingest PREBUILD=1 A/B
    // in search-notes), and the ~500 000 held during the createIndex case below put a 51 ms major
    // GC pause into its stall (the run of 02:16 on 2026-12-07).
    const windows = [1, INGEST_INFLIGHT].map((inflight, w) => {
      const first = STALL_ROWS + w * (INGEST_LEAD + INGEST_ROWS);
      return { inflight, rows: INGEST_ROWS, lead: batchesOf(schema, rows8!, first, INGEST_LEAD), batches: batchesOf(schema, rows8!, first + INGEST_LEAD, INGEST_ROWS) };
    });
    const warmBatch = rowsBatch(schema, rows8, STALL_ROWS + ingestTotal, STALL_ROWS + ingestTotal + INGEST_BATCH);
    rows8 = null;
    const probe = new StallProbe();
    probe.start();
    t = performance.now();
    // The partitions the default picks for these rows, fixed: the ingest windows take the table
    // to 5× the rows the model trains on, and a default model would grow (retrain and re-encode
    // every generation, table/model-growth.ts) in them — a one-off cost measured on its own
    // (bench/dev-growth.ts), not the index maintenance these windows measure.
    await t8.createIndex('vector', { type: 'ivf_pq', partitions: defaultPartitions(STALL_ROWS) });
    const ciMs = performance.now() - t;
    const ciStall = probe.stop();
    log(`createIndex ivf_pq on ${STALL_ROWS} rows: ${ciMs.toFixed(0)} ms, longest event-loop stall ${ciStall.maxGapMs.toFixed(0)} ms (longest GC pause ${ciStall.gcMaxMs.toFixed(0)} ms, ${ciStall.gcMaxKind})`);
    await t8.createIndex('body', { type: 'fts' });
    await t8.createIndex('year', { type: 'scalar' });
    await t8.flush();
    await t8.close();

    // 8b. Ingest into an indexed table (model trained) with the default writer settings: the
    // build settings stored with the table are overridden by the connection's.
    const ingest: WriteCases['ingest'] = [];
    let firstPutMs: number | undefined;
    let warmup: WriteCases['warmup'];
    let byIndexSet: WriteCases['byIndexSet'];
    const db3 = await connect(path.join(root, 'write-cases'), { fsync: FSYNC, generationCacheBytes: 16 * GiB, writer: { ...DEFAULT_WRITER_CONFIG, indexSliceRows: INGEST_SLICE } });
    try {
      // 8c. Warm-up: the windows measure sustained ingest, what a server that has been taking
      // writes sustains; the first indexed rows a process takes also pay for V8 compiling the
      // write path (~0.4 s of compiler threads a 100 000 rows at first), for buffer pools and
      // recycled index memory filling (fresh memory page-faults) and for the tokenize worker's
      // lexicon. That happens here, on a table of the same shape and indexes (so the ingest
      // table's model does not grow in the windows), and is reported on its own.
      if (INGEST_WARMUP > 0) warmup = await ingestWarmup(db, db3, gen, schema);
      const ti = await db3.openTable('ingest_case');
      // One put first, timed on its own: the first put after opening loads what the writer reads
      // lazily (the older generations' keys, the index models); the windows measure a writer
      // that is running, as a server's is.
      const tw = performance.now();
      await ti.put(warmBatch);
      firstPutMs = performance.now() - tw;
      log(`first put after reopening (${INGEST_BATCH} rows): ${firstPutMs.toFixed(1)} ms`);
      // The helper threads that put started (encode, tokenize, file write: each started on first
      // use, ~1 s of CPU under tsx) are running in a server that has been writing; wait for them,
      // so their start-up is not in the first window.
      const ready = await Promise.all([encodeWorkerReady(), tokenizeWorkerReady(), fileWriteWorkerReady()]);
      log(`helper threads ready (encode, tokenize, file write): ${ready.join(', ')}`);
      for (const { inflight, rows, lead, batches } of windows) {
        await timedIngest(ti, lead, inflight, INGEST_LEAD);
        const before = Object.values(await ti.writerStats()).reduce((n, s) => n + s.generationsFlushed, 0);
        const p8 = new StallProbe();
        p8.start();
        const { ms, putMs, cpuUsPerRow, mainBusyUsPerRow } = await timedIngest(ti, batches, inflight, rows);
        const stall = p8.stop();
        const after = Object.values(await ti.writerStats()).reduce((n, s) => n + s.generationsFlushed, 0);
        ingest.push({ rows, batch: INGEST_BATCH, inflight, lead: INGEST_LEAD, ms, rowsPerSec: rows / (ms / 1000), stall, generationsFlushed: after - before, putMs: latencyOf(putMs), cpuUsPerRow, mainBusyUsPerRow });
        log(`ingest ${rows} rows in ${INGEST_BATCH}-row puts, ${inflight} in flight: ${(rows / (ms / 1000)).toFixed(0)} rows/s, longest stall ${stall.maxGapMs.toFixed(0)} ms (longest GC pause ${stall.gcMaxMs.toFixed(0)} ms, ${stall.gcMaxKind}), ${after - before} generations flushed meanwhile; CPU ${cpuUsPerRow.toFixed(1)} µs a row over all threads, main thread busy ${mainBusyUsPerRow.toFixed(1)}; JS heap ${(v8.getHeapStatistics().used_heap_size / 2 ** 20).toFixed(0)} MB`);
      }
      await ti.close();
      byIndexSet = INDEX_SET_ROWS > 0 ? await ingestByIndexSet(db, db3, gen, schema) : undefined;
    } finally {
      await db3.close();
    }
    return { flush: { rows: FLUSH_ROWS, createIndexMs, flushMs, flushStall }, createIndexStall: { rows: STALL_ROWS, ms: ciMs, stall: ciStall }, firstPutMs, warmup, ingest, byIndexSet };
  } finally {
    await db.close();
  }
}

/** Rows [first, first + count) of `rows` as batches of `size` rows (the last may be shorter). */
function batchesOf(schema: ReturnType<typeof searchSchema>, rows: Rows, first: number, count: number, size = INGEST_BATCH): RecordBatch[] {
  const out: RecordBatch[] = [];
  for (let s = first; s < first + count; s += size) out.push(rowsBatch(schema, rows, s, Math.min(first + count, s + size)));
  return out;
}

/**
 * Puts `batches` (of `rows` rows in all) into `table`, up to `inflight` at a time: wall ms, each
 * put's latency, process CPU (every thread) and the event loop's busy time, in µs a row.
 */
async function timedIngest(table: Table, batches: readonly RecordBatch[], inflight: number, rows: number): Promise<{ ms: number; putMs: number[]; cpuUsPerRow: number; mainBusyUsPerRow: number }> {
  const putMs: number[] = [];
  const pending = new Set<Promise<void>>();
  const cpu0 = process.cpuUsage();
  const elu0 = perfHooks.eventLoopUtilization();
  const t0 = performance.now();
  for (const batch of batches) {
    const ts = performance.now();
    const p: Promise<void> = table.put(batch).then(() => {
      putMs.push(performance.now() - ts);
      pending.delete(p);
    });
    pending.add(p);
    if (pending.size >= inflight) await Promise.race(pending);
  }
  await Promise.all(pending);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const elu = perfHooks.eventLoopUtilization(elu0);
  return { ms, putMs, cpuUsPerRow: (cpu.user + cpu.system) / rows, mainBusyUsPerRow: (elu.active * 1000) / rows };
}

/**
 * A table for ingest windows: its first `trainRows` rows put, then the indexes created on them
 * (the scalar `year` index always; IVF-PQ with the partitions the default picks for those rows,
 * fixed, so its model does not grow in the windows — a background re-encoding that could run on
 * into them), flushed and closed for the caller to reopen with the writer settings it measures.
 */
async function buildIngestTable(db: Database, name: string, schema: ReturnType<typeof searchSchema>, rows: Rows, trainRows: number, indexes: { vector: boolean; body: boolean }): Promise<void> {
  const tb = await db.createTable(name, schema, { primaryKey: 'id', writer: BUILD_WRITER });
  await putRowRange(tb, rows, 0, trainRows, BUILD_PUT_ROWS, BUILD_INFLIGHT);
  if (indexes.vector) await tb.createIndex('vector', { type: 'ivf_pq', partitions: defaultPartitions(trainRows) });
  if (indexes.body) await tb.createIndex('body', { type: 'fts' });
  await tb.createIndex('year', { type: 'scalar' });
  await tb.flush();
  await tb.close();
}

/**
 * Case 8c: a table like the ingest table (its own rows, indexes created on its first
 * WARMUP_TRAIN_ROWS), reopened through `db3` (default writer settings) and given INGEST_WARMUP
 * rows in INGEST_BATCH-row puts, INGEST_INFLIGHT in flight; timed like the windows.
 */
async function ingestWarmup(db: Database, db3: Database, gen: RowGenerator, schema: ReturnType<typeof searchSchema>): Promise<NonNullable<WriteCases['warmup']>> {
  let rows: Rows | null = makeRows(gen, new Rng(8100), Int32Array.from({ length: WARMUP_TRAIN_ROWS + INGEST_WARMUP }, (_, i) => i));
  await buildIngestTable(db, 'ingest_warmup', schema, rows, WARMUP_TRAIN_ROWS, { vector: true, body: true });
  const batches = batchesOf(schema, rows, WARMUP_TRAIN_ROWS, INGEST_WARMUP);
  rows = null;
  const tw = await db3.openTable('ingest_warmup');
  try {
    const before = Object.values(await tw.writerStats()).reduce((n, s) => n + s.generationsFlushed, 0);
    const { ms, cpuUsPerRow, mainBusyUsPerRow } = await timedIngest(tw, batches, INGEST_INFLIGHT, INGEST_WARMUP);
    const after = Object.values(await tw.writerStats()).reduce((n, s) => n + s.generationsFlushed, 0);
    const out = { rows: INGEST_WARMUP, inflight: INGEST_INFLIGHT, ms, rowsPerSec: INGEST_WARMUP / (ms / 1000), cpuUsPerRow, mainBusyUsPerRow, generationsFlushed: after - before };
    log(`warm-up: ${INGEST_WARMUP} rows into another table, ${INGEST_INFLIGHT} in flight: ${out.rowsPerSec.toFixed(0)} rows/s, CPU ${out.cpuUsPerRow.toFixed(1)} µs a row over all threads, main thread busy ${out.mainBusyUsPerRow.toFixed(1)}, ${out.generationsFlushed} generations flushed`);
    return out;
  } finally {
    await tw.close();
  }
}

/**
 * Case 8d: the ingest windows again (INDEX_SET_ROWS rows, 1 and then INGEST_INFLIGHT in flight)
 * into tables like the ingest table that maintain fewer indexes — the scalar `year` index alone,
 * IVF-PQ + scalar, FTS + scalar — so the report shows what each index costs the write path
 * (same process, warmed; each table built on STALL_ROWS rows, the IVF-PQ model trained there
 * with fixed partitions, then reopened with the default writer settings).
 */
async function ingestByIndexSet(db: Database, db3: Database, gen: RowGenerator, schema: ReturnType<typeof searchSchema>): Promise<IndexSetIngest[]> {
  const out: IndexSetIngest[] = [];
  const sets: { name: string; label: string; vector: boolean; body: boolean }[] = [
    { name: 'ingest_scalar', label: 'scalar only', vector: false, body: false },
    { name: 'ingest_vector', label: 'IVF-PQ + scalar', vector: true, body: false },
    { name: 'ingest_fts', label: 'FTS + scalar', vector: false, body: true },
  ];
  for (const [i, set] of sets.entries()) {
    const total = STALL_ROWS + 2 * (INGEST_LEAD + INDEX_SET_ROWS);
    let rows: Rows | null = makeRows(gen, new Rng(8200 + i), Int32Array.from({ length: total + INGEST_BATCH }, (_, k) => k));
    await buildIngestTable(db, set.name, schema, rows, STALL_ROWS, set);
    const windows = [1, INGEST_INFLIGHT].map((inflight, w) => {
      const first = STALL_ROWS + w * (INGEST_LEAD + INDEX_SET_ROWS);
      return { inflight, lead: batchesOf(schema, rows!, first, INGEST_LEAD), batches: batchesOf(schema, rows!, first + INGEST_LEAD, INDEX_SET_ROWS) };
    });
    const warmBatch = rowsBatch(schema, rows, total, total + INGEST_BATCH);
    rows = null;
    const t = await db3.openTable(set.name);
    try {
      await t.put(warmBatch);
      for (const { inflight, lead, batches } of windows) {
        await timedIngest(t, lead, inflight, INGEST_LEAD);
        const { ms, cpuUsPerRow, mainBusyUsPerRow } = await timedIngest(t, batches, inflight, INDEX_SET_ROWS);
        const r = { indexes: set.label, rows: INDEX_SET_ROWS, inflight, rowsPerSec: INDEX_SET_ROWS / (ms / 1000), cpuUsPerRow, mainBusyUsPerRow };
        out.push(r);
        log(`ingest, ${set.label}: ${INDEX_SET_ROWS} rows, ${inflight} in flight: ${r.rowsPerSec.toFixed(0)} rows/s, CPU ${cpuUsPerRow.toFixed(1)} µs a row over all threads, main thread busy ${mainBusyUsPerRow.toFixed(1)}`);
      }
    } finally {
      await t.close();
    }
  }
  return out;
}

// ---- main ------------------------------------------------------------------------------------

interface PeerRecall {
  vector: number;
  vectorFiltered: number;
  vectorRefine: number;
  vectorFilteredRefine: number;
}

/** The peer's result as stored: recall instead of the result ids, and when it ran. */
type StoredPeer = Omit<LanceDbSearchResult, 'ids' | 'afterOptimize'> & {
  afterOptimize: Omit<LanceDbSearchResult['afterOptimize'], 'ids'>;
  recall: PeerRecall;
  recallAfterOptimize: PeerRecall;
  runAt: string;
  loadavgAtStart: number[];
};

interface SizeResult {
  rows: number;
  filteredFraction: number;
  loadavgAtStart: number[];
  build: BuildReport;
  cases: SearchCase[];
  putBetween: PutCase[];
  oneGeneration?: { build: BuildReport; cases: SearchCase[]; /** Absent in results from before it was measured. */ paired?: PairedCase[]; agreementWithTen: { vector: number; text: number; textScoresEqual: number } };
  lancedb?: StoredPeer;
  lancedbError?: string;
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadStart = os.loadavg();
  const parent = process.env.BENCH_DIR ?? os.tmpdir();
  const root = await mkdtemp(path.join(parent, 'quiver-search-'));
  const usePeer = PEERS.includes('lancedb') && peerInstalled();
  if (PEERS.includes('lancedb') && !usePeer) log('LanceDB peer skipped: bench/peers is not installed (npm --prefix bench/peers ci)');
  log(`sizes ${SIZES.join(', ')}; ${QUERIES} queries after ${WARMUP} warm-up; fsync ${FSYNC ? 'on' : 'off'}; directory ${root}`);
  const sizes: SizeResult[] = [];
  let writes: WriteCases | undefined;
  try {
    for (const n of SIZES) {
      const loadavgAtStart = os.loadavg();
      const w = makeWorkload(n);
      const db = await connect(path.join(root, `n${n}`), { fsync: FSYNC, generationCacheBytes: 16 * GiB });
      let result: SizeResult;
      try {
        const { table, build } = await buildTable(db, 'docs', w, GENERATIONS);
        // Both tables are built before any query (the one-generation table at the largest size
        // only), so the rows can go before the query cases (`dropRows`).
        const one = ONE_GEN && n === LARGEST ? await buildTable(db, 'docs_one_gen', w, 1) : undefined;
        dropRows(w);
        const label = `${n} rows, ${build.generations} gen`;
        const v = await vectorCase(table, w, false, label);
        Object.assign(build, ivfModel(table));
        const vf = await vectorCase(table, w, true, label);
        const tx = await textCase(table, w, false, label);
        const txf = await textCase(table, w, true, label);
        const cases = [v.c, vf.c, tx.c, txf.c];
        for (const c of cases) log(`${n} rows, ten generations: ${c.name}: p50 ${f(c.latency.p50, 3)} ms, p99 ${f(c.latency.p99, 3)} ms${c.recall !== undefined ? `, recall@10 ${f(c.recall, 4)}` : ''}, hits ${f(c.meanHits, 1)}`);
        result = { rows: n, filteredFraction: w.filteredFraction, loadavgAtStart, build, cases, putBetween: [] };
        if (one) {
          const label1 = `${n} rows, 1 gen`;
          const ov = await vectorCase(one.table, w, false, label1);
          Object.assign(one.build, ivfModel(one.table));
          const ovf = await vectorCase(one.table, w, true, label1);
          const ot = await textCase(one.table, w, false, label1);
          const otf = await textCase(one.table, w, true, label1);
          const agree = (a: number[][], b: number[][]) => a.reduce((s, x, i) => s + recallOf(x, b[i]), 0) / a.length;
          const paired = await pairedTenVsOne(table, one.table, w);
          result.oneGeneration = { build: one.build, cases: [ov.c, ovf.c, ot.c, otf.c], paired, agreementWithTen: { vector: agree(ov.ids, v.ids), text: agree(ot.ids, tx.ids), textScoresEqual: sameScores(ot.scores, tx.scores) } };
          for (const c of result.oneGeneration.cases) log(`${n} rows, one generation: ${c.name}: p50 ${f(c.latency.p50, 3)} ms, p99 ${f(c.latency.p99, 3)} ms${c.recall !== undefined ? `, recall@10 ${f(c.recall, 4)}` : ''}`);
          for (const c of paired) log(`${n} rows, ten vs one generation interleaved: ${c.name}: p50 ${f(c.ten.p50, 3)} / ${f(c.one.p50, 3)} ms = ${f(c.ten.p50 / c.one.p50, 2)}×`);
          await one.table.close();
        }
        result.putBetween = await putBetweenCases(table, w, v.c.latency.p50, tx.c.latency.p50);
        for (const c of result.putBetween) log(`${n} rows: ${c.name}: query p50 ${f(c.query.p50, 3)} ms (+${f(c.addsP50Ms, 3)} over the interleaved plain queries' ${f(c.plain.p50, 3)} ms; after an idle wait instead ${f(c.idle.p50, 3)} ms, so the put's own share +${f(c.addsVsIdleP50Ms, 3)}), put p50 ${f(c.put.p50, 2)} ms${c.recall !== undefined ? `, recall@10 ${f(c.recall, 4)}` : ''}`);
      } finally {
        await db.close();
        await rm(path.join(root, `n${n}`), { recursive: true, force: true });
      }
      if (usePeer) await peerFor(result, w);
      sizes.push(result);
      await writeResults(startedAt, loadStart, sizes, writes, usePeer, false);
    }
    if (CASES78) writes = await writeCasesInChild(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  await writeResults(startedAt, loadStart, sizes, writes, usePeer, true);
}

// ---- report ----------------------------------------------------------------------------------

async function writeResults(startedAt: string, loadStart: number[], sizes: SizeResult[], writes: WriteCases | undefined, peer: boolean, final: boolean): Promise<void> {
  const cpus = os.cpus();
  const machine = { code: CODE, cpus: cpus.length, model: cpus[0]?.model ?? '', node: process.version, platform: `${os.platform()} ${os.release()}`, memGb: +(os.totalmem() / 1e9).toFixed(1), loadavgAtStart: loadStart, loadavgAtEnd: measuredRun?.loadavgAtEnd ?? os.loadavg() };
  const settings = {
    sizes: SIZES,
    queries: QUERIES,
    warmup: WARMUP,
    k: K,
    dim: DIM,
    clusters: CLUSTERS,
    vocab: VOCAB,
    bodyWords: '8-40',
    generations: GENERATIONS,
    upsertFraction: UPSERT_FRACTION,
    putRowsBetweenQueries: PUT_ROWS,
    filter: FILTER,
    buildPutRows: BUILD_PUT_ROWS,
    buildInflight: BUILD_INFLIGHT,
    buildWriter: BUILD_WRITER,
    generationCacheBytes: 16 * GiB,
    fsync: FSYNC,
    searchDefaults: { nprobes: 20, refine: 40 },
    bennyMaxTimeS: BENNY_TIME,
  };
  const goals = evaluateGoals(sizes, writes);
  const out = { generatedAt: measuredRun?.generatedAt ?? new Date().toISOString(), reportWrittenAt: new Date().toISOString(), startedAt, complete: final, peerRerun, machine, settings, goals: GOALS, verdicts: goals, sizes, writeCases: writes };
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'search.json'), JSON.stringify(out, null, 2) + '\n');
  const md = markdown(out.generatedAt, machine, sizes, writes, goals, peer, final);
  await writeFile(path.join(RESULTS_DIR, 'search.md'), md);
  if (final) {
    console.log('\n' + md);
    console.log(`wrote ${path.join(RESULTS_DIR, 'search.json')} and search.md`);
  }
}

interface Verdict {
  goal: string;
  measured: string;
  ok: boolean;
}

function evaluateGoals(sizes: SizeResult[], writes: WriteCases | undefined): Verdict[] {
  const v: Verdict[] = [];
  const largest = sizes.find((s) => s.rows === LARGEST) ?? sizes[sizes.length - 1];
  if (largest) {
    const at = `${largest.rows.toLocaleString('en-US')} rows`;
    for (const c of largest.cases) {
      if (c.kind === 'vector') {
        v.push({ goal: `${c.name}: p50 ≤ ${GOALS.vectorP50Ms} ms at recall@10 ≥ ${GOALS.recallAt10} (${at})`, measured: `p50 ${f(c.latency.p50, 2)} ms, recall ${f(c.recall!, 3)}`, ok: c.latency.p50 <= GOALS.vectorP50Ms && c.recall! >= GOALS.recallAt10 });
      } else {
        v.push({ goal: `${c.name}: p50 ≤ ${GOALS.bm25P50Ms} ms (${at})`, measured: `p50 ${f(c.latency.p50, 2)} ms`, ok: c.latency.p50 <= GOALS.bm25P50Ms });
      }
    }
    for (const c of largest.putBetween) {
      v.push({ goal: `${c.name}: adds ≤ ${GOALS.putAddsMs} ms (${at})`, measured: `+${f(c.addsP50Ms, 2)} ms (p50 ${f(c.query.p50, 2)} ms after a put, ${f(c.plain.p50, 2)} ms interleaved without)`, ok: c.addsP50Ms <= GOALS.putAddsMs });
    }
    if (largest.oneGeneration) {
      for (const kind of ['vector', 'text'] as const) {
        // Judged on the interleaved measurement (`pairedTenVsOne`); the separate phases' ratio is beside it.
        const pair = largest.oneGeneration.paired?.find((c) => c.kind === kind && !c.filter);
        const ten = largest.cases.find((c) => c.kind === kind && !c.filter)!;
        const one = largest.oneGeneration.cases.find((c) => c.kind === kind && !c.filter)!;
        const separate = `${f(ten.latency.p50, 2)} / ${f(one.latency.p50, 2)} ms = ${f(ten.latency.p50 / one.latency.p50, 2)}×`;
        const ratio = pair ? pair.ten.p50 / pair.one.p50 : ten.latency.p50 / one.latency.p50;
        v.push({
          goal: `${kind === 'vector' ? 'vector' : 'BM25'}: ten generations within ${GOALS.tenVsOne}× of one (p50, ${at}${pair ? ', queries interleaved' : ''})`,
          measured: pair ? `${f(pair.ten.p50, 2)} / ${f(pair.one.p50, 2)} ms = ${f(ratio, 2)}× (in separate phases ${separate})` : separate,
          ok: ratio <= GOALS.tenVsOne,
        });
      }
    }
  }
  if (writes) {
    v.push({ goal: `flush() of ${writes.flush.rows.toLocaleString('en-US')} indexed rows ≤ ${GOALS.flush200kMs / 1000} s`, measured: `${f(writes.flush.flushMs / 1000, 2)} s`, ok: writes.flush.flushMs <= GOALS.flush200kMs });
    for (const i of writes.ingest) {
      v.push({ goal: `ingest ≥ ${GOALS.ingestRowsPerSec.toLocaleString('en-US')} rows/s (${i.batch}-row puts, ${i.inflight} in flight)`, measured: `${Math.round(i.rowsPerSec).toLocaleString('en-US')} rows/s`, ok: i.rowsPerSec >= GOALS.ingestRowsPerSec });
      v.push({ goal: `longest event-loop stall < ${GOALS.stallMs} ms during ingest (${i.inflight} in flight)`, measured: `${f(i.stall.maxGapMs, 1)} ms`, ok: i.stall.maxGapMs < GOALS.stallMs });
    }
    v.push({ goal: `longest event-loop stall < ${GOALS.stallMs} ms during createIndex ivf_pq (${writes.createIndexStall.rows.toLocaleString('en-US')} rows)`, measured: `${f(writes.createIndexStall.stall.maxGapMs, 0)} ms`, ok: writes.createIndexStall.stall.maxGapMs < GOALS.stallMs });
  }
  return v;
}

function markdown(generatedAt: string, machine: { code: { commit: string; uncommitted: string[] }; cpus: number; model: string; node: string; memGb: number; loadavgAtStart: number[]; loadavgAtEnd: number[] }, sizes: SizeResult[], writes: WriteCases | undefined, verdicts: Verdict[], peer: boolean, final: boolean): string {
  const L: string[] = [];
  const la = (a: number[]) => a.map((x) => x.toFixed(2)).join(' / ');
  L.push('# Search benchmark (table level)');
  L.push('');
  L.push(`\`npm run bench:search\`, ${generatedAt}${final ? '' : ' (partial: run still in progress)'}: ${machine.cpus} × ${machine.model}, Node ${machine.node}, ${machine.memGb} GB RAM; load average (1/5/15 min) ${la(machine.loadavgAtStart)} at start, ${la(machine.loadavgAtEnd)} at end. Code: commit ${machine.code.commit}${machine.code.uncommitted.length ? ` plus uncommitted changes to ${machine.code.uncommitted.join(', ')}` : ''}.`);
  L.push('');
  L.push(
    `Rows: id Int64 (PK), year Int32 (2000–2024), body Utf8 (8–40 words, Zipf vocabulary of ${VOCAB.toLocaleString('en-US')}), vector FLOAT4[${DIM}] (${CLUSTERS} overlapping Gaussian clusters of uneven size). ` +
      `Built through the public API on a local temp directory (fsync ${FSYNC ? 'on' : 'off'}): rows in ${GENERATIONS} flushed generations (\`flush()\` after each tenth; indexes created after the first tenth, so the IVF-PQ model is trained on it), ` +
      `then ${UPSERT_FRACTION * 100} % of the keys upserted again (new year, body, vector) and left in the active MemTable. ` +
      `\`table.search\` one query at a time, awaited, all columns returned, k = ${K}, default nprobes 20 / refine 40; ${QUERIES} queries after ${WARMUP} warm-up. ` +
      `Filter \`${FILTER}\`. Query vectors are fresh draws from the cluster model (not data rows); recall@10 is against an exact brute-force top-10 over the live rows. ` +
      `Generation cache 16 GiB (the default 512 MiB would not hold the 1M-row table).`,
  );
  L.push('');
  L.push('## Latency by size (ten generations + MemTable)');
  L.push('');
  L.push('| rows | case | p50 ms | p90 ms | p99 ms | recall@10 | hits | benny ops/s | goal |');
  L.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const s of sizes) {
    for (const c of s.cases) {
      const goal = c.kind === 'vector' ? `p50 ≤ ${GOALS.vectorP50Ms}, recall ≥ ${GOALS.recallAt10}: ${met(c.latency.p50 <= GOALS.vectorP50Ms && c.recall! >= GOALS.recallAt10)}` : `p50 ≤ ${GOALS.bm25P50Ms}: ${met(c.latency.p50 <= GOALS.bm25P50Ms)}`;
      L.push(`| ${s.rows.toLocaleString('en-US')} | ${c.name} | ${f(c.latency.p50, 3)} | ${f(c.latency.p90, 3)} | ${f(c.latency.p99, 3)} | ${c.recall !== undefined ? f(c.recall, 4) : '—'} | ${f(c.meanHits, 1)} | ${c.benny ? `${f(c.benny.ops, 1)} ±${f(c.benny.margin, 0)}%` : '—'} | ${goal} |`);
    }
  }
  L.push('');
  L.push('## Put between queries');
  L.push('');
  L.push(`Rounds of three timed queries, interleaved: one awaited \`put\` of ${PUT_ROWS} rows (upserts of random keys with new values, fsync ${FSYNC ? 'on' : 'off'}) and a query (*after a put*); a query right after it (*plain*: no put between); an idle wait as long as that round's put and a query (*after an idle wait*). Only queries are timed. *adds* = the p50 after a put minus the plain p50; *put's own share* = the p50 after a put minus the p50 after an idle wait. Paired in one loop, the three see the same machine (in separate phases this VM's drift moved the difference by more than the goal); the same kind's own case p50 from above is beside them.`);
  L.push('');
  L.push('| rows | case | query p50 ms | query p99 ms | plain p50 ms (own case above) | adds (p50) ms | after an idle wait p50 ms | put\'s own share ms | put p50 ms | recall@10 | goal (adds ≤ 0.2 ms) |');
  L.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const s of sizes) {
    for (const c of s.putBetween) {
      L.push(`| ${s.rows.toLocaleString('en-US')} | ${c.name} | ${f(c.query.p50, 3)} | ${f(c.query.p99, 3)} | ${c.plain ? `${f(c.plain.p50, 3)} (${f(c.separateP50Ms, 3)})` : "—"} | ${f(c.addsP50Ms, 3)} | ${f(c.idle.p50, 3)} | ${f(c.addsVsIdleP50Ms, 3)} | ${f(c.put.p50, 2)} | ${c.recall !== undefined ? f(c.recall, 4) : '—'} | ${met(c.addsP50Ms <= GOALS.putAddsMs)} |`);
    }
  }
  const largest = sizes.find((s) => s.oneGeneration);
  if (largest?.oneGeneration) {
    const og = largest.oneGeneration;
    L.push('');
    L.push(`## Ten generations vs one (${largest.rows.toLocaleString('en-US')} rows)`);
    L.push('');
    L.push(`Same rows, same training tenth, same ${UPSERT_FRACTION * 100} % upserts in the MemTable; one \`flush()\` instead of ten. Top-10 id agreement between the two tables: vector ${f(og.agreementWithTen.vector, 3)}, BM25 ${f(og.agreementWithTen.text, 3)}; BM25 queries whose ten scores are equal in both (to 1e-5, so id differences are ties at the cut): ${f(og.agreementWithTen.textScoresEqual * 100, 1)} %.`);
    L.push('');
    L.push('Each table measured in its own phase (the cases above, then the same on the one-generation table):');
    L.push('');
    L.push('| case | ten gen p50 ms | one gen p50 ms | ratio | ten gen p99 | one gen p99 | recall ten / one |');
    L.push('| --- | --- | --- | --- | --- | --- | --- |');
    for (const one of og.cases) {
      const ten = largest.cases.find((c) => c.name === one.name)!;
      const ratio = ten.latency.p50 / one.latency.p50;
      L.push(`| ${one.name} | ${f(ten.latency.p50, 3)} | ${f(one.latency.p50, 3)} | ${f(ratio, 2)}× | ${f(ten.latency.p99, 3)} | ${f(one.latency.p99, 3)} | ${one.recall !== undefined ? `${f(ten.recall!, 4)} / ${f(one.recall, 4)}` : '—'} |`);
    }
    if (og.paired) {
    L.push('');
    L.push('The same queries interleaved — each on both tables, which goes first alternating — so both see the same machine (the goal is judged on these; in separate phases the ratio moved with the VM between them):');
    L.push('');
    L.push('| case | ten gen p50 ms | one gen p50 ms | ratio | ten gen p99 | one gen p99 | goal (≤ 1.5×) |');
    L.push('| --- | --- | --- | --- | --- | --- | --- |');
    for (const c of og.paired) {
      const ratio = c.ten.p50 / c.one.p50;
      L.push(`| ${c.name} | ${f(c.ten.p50, 3)} | ${f(c.one.p50, 3)} | ${f(ratio, 2)}× | ${f(c.ten.p99, 3)} | ${f(c.one.p99, 3)} | ${met(ratio <= GOALS.tenVsOne)} |`);
    }
    }
  }
  if (peer || sizes.some((s) => s.lancedb || s.lancedbError)) {
    L.push('');
    L.push('## Beside LanceDB 0.31.0 (same rows, same upserts, same queries)');
    L.push('');
    if (peerRerun) L.push(`The LanceDB figures come from separate runs of the peer alone (PEER_ONLY=1) on the same seeded rows and queries; each size's run time and load average are in its build row.`, '');
    L.push('LanceDB in a child process (bench/peers/lancedb-search.ts): base rows added, IVF-PQ (256 partitions, 16 sub-vectors, L2), FTS on body and btree on year created, then the same upserts by `mergeInsert(\"id\")`: first queried as they are (the upserted rows unindexed, searched flat by LanceDB, as Quiver keeps them in its MemTable), then again after `table.optimize()` (compaction and indexing of the new rows, which LanceDB users run periodically); LanceDB\'s default nprobes 20 and no refine, and again with refine 40 (Quiver\'s default); prefilter. Quiver (Quiver\'s defaults: nprobes 20, refine 40) runs on one JS thread; LanceDB uses its own thread pool, LANCE_CPU_THREADS=' + LANCE_CPU_THREADS + ' (its default here would be 1 thread, on which its FTS index build deadlocks from ~100k rows: lancedb/lancedb#3568).');
    L.push('');
    L.push('| rows | case | Quiver p50 ms | Quiver p99 ms | Quiver recall | LanceDB query | LanceDB p50 ms | p99 ms | recall | LanceDB after optimize() p50 ms | p99 ms | recall |');
    L.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const s of sizes) {
      if (s.lancedbError) {
        L.push(`| ${s.rows.toLocaleString('en-US')} | LanceDB failed: ${s.lancedbError} | | | | | | | | | | |`);
        continue;
      }
      if (!s.lancedb) continue;
      const lc = s.lancedb.cases;
      // Results written before the optimize() cases existed lack them.
      const oc = s.lancedb.afterOptimize?.cases ?? {};
      const r = s.lancedb.recall;
      const o = s.lancedb.recallAfterOptimize ?? {};
      const rf = s.lancedb.refineFactor;
      const rows: [SearchCase, string, Latency, number | undefined, Latency | undefined, number | undefined][] = [
        [s.cases[0], 'nprobes 20, no refine (default)', lc.vector, r.vector, oc.vector, o.vector],
        [s.cases[0], `nprobes 20, refine ${rf}`, lc.vectorRefine, r.vectorRefine, oc.vectorRefine, o.vectorRefine],
        [s.cases[1], 'nprobes 20, no refine (default)', lc.vectorFiltered, r.vectorFiltered, oc.vectorFiltered, o.vectorFiltered],
        [s.cases[1], `nprobes 20, refine ${rf}`, lc.vectorFilteredRefine, r.vectorFilteredRefine, oc.vectorFilteredRefine, o.vectorFilteredRefine],
        [s.cases[2], 'FTS', lc.text, undefined, oc.text, undefined],
        [s.cases[3], 'FTS', lc.textFiltered, undefined, oc.textFiltered, undefined],
      ];
      for (const [c, how, l, lr, ol, orc] of rows) {
        const rc = (x: number | undefined) => (x !== undefined ? f(x, 4) : '—');
        L.push(`| ${s.rows.toLocaleString('en-US')} | ${c.name} | ${f(c.latency.p50, 3)} | ${f(c.latency.p99, 3)} | ${rc(c.recall)} | ${how} | ${f(l.p50, 3)} | ${f(l.p99, 3)} | ${rc(lr)} | ${f(ol?.p50 ?? NaN, 3)} | ${f(ol?.p99 ?? NaN, 3)} | ${rc(orc)} |`);
      }
      const b = s.lancedb.build;
      L.push(`| ${s.rows.toLocaleString('en-US')} | LanceDB build: add ${f(b.addMs / 1000, 1)} s, IVF-PQ ${f(b.vectorIndexMs / 1000, 1)} s, FTS ${f(b.ftsIndexMs / 1000, 1)} s, btree ${f(b.btreeIndexMs / 1000, 1)} s, upserts ${f(b.upsertMs / 1000, 1)} s, optimize() ${f((s.lancedb.afterOptimize?.optimizeMs ?? NaN) / 1000, 1)} s${s.lancedb.runAt ? `; run ${s.lancedb.runAt}, load ${la(s.lancedb.loadavgAtStart)}` : ''} | | | | | | | | | | |`);
    }
  }
  L.push('');
  L.push('## Build');
  L.push('');
  L.push('| table | rows | generations (+ MemTable rows) | puts s | createIndex vector / body / year s | flushes s (sum) | upserts s | total s | IVF-PQ model |');
  L.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  const buildRow = (name: string, rows: number, b: BuildReport) =>
    `| ${name} | ${rows.toLocaleString('en-US')} | ${b.generations} (+${b.memtableRows.toLocaleString('en-US')}) | ${f(b.putMs / 1000, 1)} | ${['vector', 'body', 'year'].map((c) => f((b.createIndexMs[c] ?? NaN) / 1000, 1)).join(' / ')} | ${f(b.flushMs.reduce((a, x) => a + x, 0) / 1000, 1)} | ${f(b.upsertMs / 1000, 1)} | ${f(b.totalMs / 1000, 1)} | ${b.partitions ?? '?'} partitions × ${b.subVectors ?? '?'} sub-vectors, trained by ${b.trainedAtCreateIndex ? 'createIndex (first tenth)' : 'the first search (first tenth < 2 048 rows)'} |`;
  for (const s of sizes) {
    L.push(buildRow('ten generations', s.rows, s.build));
    if (s.oneGeneration) L.push(buildRow('one generation', s.rows, s.oneGeneration.build));
  }
  if (writes) {
    L.push('');
    L.push('## Flush, ingest, event-loop stalls');
    L.push('');
    L.push('| case | result | longest event-loop stall (1 ms probe / monitorEventLoopDelay max) | garbage collection meanwhile (longest pause, kind; total) |');
    L.push('| --- | --- | --- | --- |');
    const st = (s: { maxGapMs: number; eldMaxMs: number; gcMaxMs?: number; gcMaxKind?: string; gcTotalMs?: number }) =>
      `${f(s.maxGapMs, 1)} ms / ${f(s.eldMaxMs, 1)} ms | ${s.gcMaxMs === undefined ? '—' : `${f(s.gcMaxMs, 1)} ms ${s.gcMaxKind}; ${f(s.gcTotalMs ?? 0, 0)} ms`}`;
    L.push(`| \`flush()\` of ${writes.flush.rows.toLocaleString('en-US')} indexed rows (fresh table; createIndex vector ${f(writes.flush.createIndexMs.vector / 1000, 1)} s, body ${f(writes.flush.createIndexMs.body / 1000, 1)} s, year ${f(writes.flush.createIndexMs.year / 1000, 1)} s before it) | ${f(writes.flush.flushMs / 1000, 2)} s | ${st(writes.flush.flushStall)} |`);
    L.push(`| \`createIndex('vector', { type: 'ivf_pq' })\` on ${writes.createIndexStall.rows.toLocaleString('en-US')} rows | ${f(writes.createIndexStall.ms / 1000, 2)} s | ${st(writes.createIndexStall.stall)} |`);
    if (writes.warmup) {
      const w = writes.warmup;
      L.push(`| warm-up before the windows: the first ${w.rows.toLocaleString('en-US')} indexed rows this process ingests, into another table of the same shape, ${w.inflight} in flight (V8 compiling the write path, buffer pools and recycled index memory filling; ${w.generationsFlushed} generation(s) flushed) | ${Math.round(w.rowsPerSec).toLocaleString('en-US')} rows/s (CPU ${f(w.cpuUsPerRow, 1)} µs a row over all threads, main thread busy ${f(w.mainBusyUsPerRow, 1)}) | — | — |`);
    }
    if (writes.firstPutMs !== undefined) L.push(`| the first ${writes.ingest[0]?.batch.toLocaleString('en-US') ?? ''}-row put after reopening the ingest table (loads what the writer reads lazily; before the timed windows) | ${f(writes.firstPutMs, 1)} ms | — | — |`);
    for (const i of writes.ingest) {
      L.push(`| ingest ${i.rows.toLocaleString('en-US')} rows, ${i.batch}-row puts, ${i.inflight} in flight (IVF-PQ + FTS + scalar maintained, default writer settings; ${i.lead ? `after ${i.lead.toLocaleString('en-US')} rows put untimed at the same puts in flight; ` : ''}${i.generationsFlushed} generation(s) flushed meanwhile) | ${Math.round(i.rowsPerSec).toLocaleString('en-US')} rows/s (put p50 ${f(i.putMs.p50, 1)} ms, p99 ${f(i.putMs.p99, 1)} ms${i.cpuUsPerRow === undefined ? '' : `; CPU ${f(i.cpuUsPerRow, 1)} µs a row over all threads, main thread busy ${f(i.mainBusyUsPerRow ?? NaN, 1)}`}) | ${st(i.stall)} |`);
    }
    if (writes.byIndexSet && writes.byIndexSet.length > 0) {
      const sets = [...new Set(writes.byIndexSet.map((r) => r.indexes))];
      const inflights = [...new Set(writes.byIndexSet.map((r) => r.inflight))];
      const both = (inflight: number) => writes.ingest.find((i) => i.inflight === inflight);
      const cell = (r: { rowsPerSec: number; cpuUsPerRow?: number; mainBusyUsPerRow?: number } | undefined) =>
        r === undefined ? '—' : `${Math.round(r.rowsPerSec).toLocaleString('en-US')} (${f(r.cpuUsPerRow ?? NaN, 1)} / ${f(r.mainBusyUsPerRow ?? NaN, 1)})`;
      L.push('');
      L.push(`What each index costs the write path: the same windows (${writes.byIndexSet[0]!.rows.toLocaleString('en-US')} rows, ${INGEST_BATCH}-row puts) into tables of the same shape that maintain fewer indexes, built and reopened like the ingest table, ${writes.ingest[0]?.lead ? 'each window after the same untimed lead-in, ' : ''}in the same process after it. rows/s (CPU µs a row over all threads / main thread busy µs a row):`);
      L.push('');
      L.push(`| indexes maintained | ${inflights.map((n) => `${n} in flight`).join(' | ')} |`);
      L.push(`| --- | ${inflights.map(() => '---').join(' | ')} |`);
      for (const set of sets) L.push(`| ${set} | ${inflights.map((n) => cell(writes.byIndexSet!.find((r) => r.indexes === set && r.inflight === n))).join(' | ')} |`);
      L.push(`| IVF-PQ + FTS + scalar (the windows above) | ${inflights.map((n) => cell(both(n))).join(' | ')} |`);
    }
  }
  L.push('');
  L.push('## Goals (issue 7)');
  L.push('');
  L.push('| goal | measured | verdict |');
  L.push('| --- | --- | --- |');
  for (const v of verdicts) L.push(`| ${v.goal} | ${v.measured} | ${met(v.ok)} |`);
  L.push('');
  L.push('Hand-written notes on a run (where its time went, odd things), for the commit they name: [search-notes.md](search-notes.md).');
  L.push('');
  return L.join('\n');
}

/**
 * Cases 7 and 8 in a fresh process (see the file comment): this script again with
 * WRITE_CASES_ONLY=file, which runs them alone and writes their results to the file.
 */
async function writeCasesInChild(root: string): Promise<WriteCases> {
  const out = path.join(root, 'write-cases.json');
  const script = new URL(import.meta.url).pathname;
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, script], { stdio: 'inherit', env: { ...process.env, WRITE_CASES_ONLY: out, BENCH_DIR: root } });
    child.on('error', reject);
    child.on('exit', resolve);
  });
  if (code !== 0) throw new Error(`the write cases' process exited with code ${code}`);
  return JSON.parse(await readFile(out, 'utf8')) as WriteCases;
}

/** WRITE_CASES_ONLY=file: cases 7 and 8 alone, results to the file (the parent's writeCasesInChild). */
async function writeCasesOnly(file: string): Promise<void> {
  const root = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'quiver-write-cases-'));
  try {
    await writeFile(file, JSON.stringify(await writeCases(root)));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.env.WRITE_CASES_ONLY) await writeCasesOnly(process.env.WRITE_CASES_ONLY);
else if (envNumber('REPORT_ONLY', 0) > 0) await reportOnly();
else if (envNumber('PEER_ONLY', 0) > 0) await peerOnly();
else await main();
