/**
 * LanceDB peer for the search benchmark (bench/search.bench.ts): the same rows, the same 5 %
 * upserts and the same queries as Quiver's ten-generation table, on LanceDB 0.31.0 (pinned in
 * bench/peers/package.json), one query at a time.
 *
 * Run as a child process by the search benchmark (`node --import=tsx
 * bench/peers/lancedb-search.ts <base.arrow> <upserts.arrow> <queries.json>`, from the
 * repository root), for the reasons given in lancedb-write.ts (own apache-arrow 18, own native
 * thread pool and memory). The parent sets LANCE_CPU_THREADS (LanceDB's default CPU pool on a
 * 2-core machine is one thread, on which 0.31.0's FTS index build deadlocks: lancedb/lancedb#3568).
 *
 * Build: `createTable` with the base rows (one Arrow IPC file written by the parent), then
 * `createIndex` vector IVF-PQ (QUERY.partitions partitions, QUERY.subVectors sub-vectors, L2),
 * body FTS (stemming on, stop words kept, like Quiver's default), year btree; then the upserts by
 * `mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll()`, not re-indexed: those
 * rows are searched unindexed (flat) and their old versions are deleted, as Quiver's MemTable
 * upserts supersede rows in its generations.
 *
 * Queries: vector `vectorSearch(q).limit(k)` (default nprobes 20, no refine), with and without
 * `.where(filter)` (LanceDB prefilters by default), and both again with `.refineFactor(refine)`
 * (Quiver's default refine, so recall can be compared at the same re-ranking depth); FTS `search(text, 'fts', 'body').limit(k)`,
 * with and without the filter. All columns returned, as Quiver's cases do. Every case runs
 * twice: first with the upserts unindexed (the state Quiver is measured in: its MemTable holds
 * them), then after `table.optimize()` (compaction + indexing the new rows, which a LanceDB user
 * runs periodically). Latency of each
 * awaited `toArray()` after warm-up. The ids of the vector results go back to the parent, which
 * computes recall against its exact ground truth. Output: one JSON line on stdout.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Table as ArrowTable } from 'apache-arrow';
import { summarize } from '../lib/stats.js';

interface LanceQuery {
  limit(n: number): LanceQuery;
  where(predicate: string): LanceQuery;
  nprobes(n: number): LanceQuery;
  refineFactor(n: number): LanceQuery;
  toArray(): Promise<Record<string, unknown>[]>;
}
interface LanceTable {
  createIndex(column: string, options: { config: unknown }): Promise<void>;
  mergeInsert(on: string): { whenMatchedUpdateAll(): { whenNotMatchedInsertAll(): { execute(data: ArrowTable): Promise<unknown> } } };
  vectorSearch(v: Float32Array): LanceQuery;
  search(q: string, queryType: string, columns: string): LanceQuery;
  optimize(): Promise<unknown>;
  countRows(filter?: string): Promise<number>;
  close(): void;
}
interface LanceConnection {
  createTable(name: string, data: ArrowTable): Promise<LanceTable>;
  close(): void;
}
interface LanceDbModule {
  connect(uri: string): Promise<LanceConnection>;
  Index: {
    ivfPq(o: { numPartitions: number; numSubVectors: number; distanceType: string }): unknown;
    fts(o: { stem: boolean; removeStopWords: boolean; withPosition: boolean }): unknown;
    btree(): unknown;
  };
}

export interface PeerLatency {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

export interface PeerCases {
  cases: { vector: PeerLatency; vectorFiltered: PeerLatency; vectorRefine: PeerLatency; vectorFilteredRefine: PeerLatency; text: PeerLatency; textFiltered: PeerLatency };
  meanHits: { vector: number; vectorFiltered: number; text: number; textFiltered: number };
  ids: { vector: number[][]; vectorFiltered: number[][]; vectorRefine: number[][]; vectorFilteredRefine: number[][] };
}

export interface LanceDbSearchResult {
  engine: 'lancedb';
  version: string;
  rows: number;
  upserts: number;
  build: { addMs: number; vectorIndexMs: number; ftsIndexMs: number; btreeIndexMs: number; upsertMs: number };
  /** Upserts unindexed (searched flat by LanceDB). */
  cases: PeerCases['cases'];
  meanHits: PeerCases['meanHits'];
  ids: PeerCases['ids'];
  /** After `table.optimize()`, which indexes the upserted rows. */
  afterOptimize: PeerCases & { optimizeMs: number };
  refineFactor: number;
  cpuMs: number;
  lanceCpuThreads: string;
}

interface QueryFile {
  k: number;
  filter: string;
  partitions: number;
  subVectors: number;
  /** Refine factor of the extra `vectorRefine` cases (Quiver's default). */
  refine: number;
  vectorWarmup: number[][];
  vectors: number[][];
  textWarmup: string[];
  texts: string[];
}

const require = createRequire(import.meta.url);
// CommonJS Arrow, the copy LanceDB itself requires (see lancedb-write.ts).
const arrow = require('apache-arrow') as typeof import('apache-arrow');

async function packageVersion(name: string): Promise<string> {
  let dir = path.dirname(require.resolve(name));
  while (path.basename(dir) !== 'node_modules' && path.dirname(dir) !== dir) {
    try {
      const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version: string };
      if (pkg.name === name) return pkg.version;
    } catch {
      // keep walking up
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}

/** The shared nearest-rank summary (bench/lib/stats.ts). */
const latencyOf: (ms: number[]) => PeerLatency = summarize;

const note = (m: string) => process.stderr.write(`  [lancedb] ${m}\n`);

export async function runLanceDbSearch(basePath: string, upsertPath: string, queryPath: string, dir: string): Promise<LanceDbSearchResult> {
  const name = '@lancedb/lancedb';
  const lancedb = (await import(name)) as LanceDbModule;
  const version = await packageVersion(name);
  const q = JSON.parse(await readFile(queryPath, 'utf8')) as QueryFile;
  const base = arrow.tableFromIPC(await readFile(basePath));
  const upserts = arrow.tableFromIPC(await readFile(upsertPath));
  const cpu0 = process.cpuUsage();
  const db = await lancedb.connect(dir);
  let t = performance.now();
  const table = await db.createTable('docs', base);
  const addMs = performance.now() - t;
  t = performance.now();
  await table.createIndex('vector', { config: lancedb.Index.ivfPq({ numPartitions: q.partitions, numSubVectors: q.subVectors, distanceType: 'l2' }) });
  const vectorIndexMs = performance.now() - t;
  t = performance.now();
  await table.createIndex('body', { config: lancedb.Index.fts({ stem: true, removeStopWords: false, withPosition: false }) });
  const ftsIndexMs = performance.now() - t;
  t = performance.now();
  await table.createIndex('year', { config: lancedb.Index.btree() });
  const btreeIndexMs = performance.now() - t;
  t = performance.now();
  await table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(upserts);
  const upsertMs = performance.now() - t;
  const rows = await table.countRows();
  if (rows !== base.numRows) throw new Error(`LanceDB table holds ${rows} rows after upserts, expected ${base.numRows}`);
  note(`built ${rows} rows: add ${(addMs / 1000).toFixed(1)} s, IVF-PQ ${(vectorIndexMs / 1000).toFixed(1)} s, FTS ${(ftsIndexMs / 1000).toFixed(1)} s, btree ${(btreeIndexMs / 1000).toFixed(1)} s, upserts ${(upsertMs / 1000).toFixed(1)} s`);

  const run = async (make: (i: number, warm: boolean) => LanceQuery, count: number, warm: number) => {
    for (let i = 0; i < warm; i++) await make(i, true).toArray();
    const ms: number[] = [];
    const ids: number[][] = [];
    for (let i = 0; i < count; i++) {
      const s = performance.now();
      const r = await make(i, false).toArray();
      ms.push(performance.now() - s);
      ids.push(r.map((row) => Number(row.id as bigint)));
    }
    return { latency: latencyOf(ms), ids, meanHits: ids.reduce((n, x) => n + x.length, 0) / Math.max(1, ids.length) };
  };
  const vec = (i: number, warm: boolean) => Float32Array.from(warm ? q.vectorWarmup[i] : q.vectors[i]);
  const text = (i: number, warm: boolean) => (warm ? q.textWarmup[i] : q.texts[i]);
  const all = async (): Promise<PeerCases> => {
    const v = await run((i, w) => table.vectorSearch(vec(i, w)).limit(q.k), q.vectors.length, q.vectorWarmup.length);
    const vf = await run((i, w) => table.vectorSearch(vec(i, w)).where(q.filter).limit(q.k), q.vectors.length, q.vectorWarmup.length);
    const vr = await run((i, w) => table.vectorSearch(vec(i, w)).refineFactor(q.refine).limit(q.k), q.vectors.length, q.vectorWarmup.length);
    const vfr = await run((i, w) => table.vectorSearch(vec(i, w)).where(q.filter).refineFactor(q.refine).limit(q.k), q.vectors.length, q.vectorWarmup.length);
    const tx = await run((i, w) => table.search(text(i, w), 'fts', 'body').limit(q.k), q.texts.length, q.textWarmup.length);
    const txf = await run((i, w) => table.search(text(i, w), 'fts', 'body').where(q.filter).limit(q.k), q.texts.length, q.textWarmup.length);
    return {
      cases: { vector: v.latency, vectorFiltered: vf.latency, vectorRefine: vr.latency, vectorFilteredRefine: vfr.latency, text: tx.latency, textFiltered: txf.latency },
      meanHits: { vector: v.meanHits, vectorFiltered: vf.meanHits, text: tx.meanHits, textFiltered: txf.meanHits },
      ids: { vector: v.ids, vectorFiltered: vf.ids, vectorRefine: vr.ids, vectorFilteredRefine: vfr.ids },
    };
  };
  const before = await all();
  // Then as a LanceDB user would keep it: optimize() compacts and indexes the upserted rows.
  t = performance.now();
  await table.optimize();
  const optimizeMs = performance.now() - t;
  note(`optimize() ${(optimizeMs / 1000).toFixed(1)} s`);
  const after = await all();
  const cpu = process.cpuUsage(cpu0);
  table.close();
  db.close();
  return {
    engine: 'lancedb',
    version,
    rows,
    upserts: upserts.numRows,
    build: { addMs, vectorIndexMs, ftsIndexMs, btreeIndexMs, upsertMs },
    ...before,
    afterOptimize: { optimizeMs, ...after },
    refineFactor: q.refine,
    cpuMs: (cpu.user + cpu.system) / 1000,
    lanceCpuThreads: process.env.LANCE_CPU_THREADS ?? 'default',
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const [basePath, upsertPath, queryPath] = process.argv.slice(2);
  if (!basePath || !upsertPath || !queryPath) {
    console.error('usage: node --import=tsx bench/peers/lancedb-search.ts <base.arrow> <upserts.arrow> <queries.json>   (env BENCH_DIR)\n' +
      'The search benchmark (npm run bench:search) writes these files and runs this itself.');
    process.exit(2);
  }
  const dir = path.join(process.env.BENCH_DIR ?? path.dirname(basePath), 'lancedb');
  const result = await runLanceDbSearch(basePath, upsertPath, queryPath, dir);
  process.stdout.write(JSON.stringify(result) + '\n');
}
