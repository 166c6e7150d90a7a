/**
 * LanceDB peer for the write benchmark: sequential `table.add()` of the same 20-row batches that
 * Quiver's `sequential` case puts, so bench/write.bench.ts can set Quiver's durable puts beside
 * what an embedded LanceDB (0.31.0, pinned in bench/peers/package.json) does on the same data
 * and machine.
 *
 * It runs as a child process of the write benchmark (`node --import=tsx
 * bench/peers/lancedb-write.ts <batches.arrow>`, from the repository root): LanceDB's native
 * thread pool and memory then never share a process with Quiver's cases, and this sub-package
 * resolves its own apache-arrow (LanceDB 0.31.0 accepts apache-arrow <= 18.1.0; Quiver uses 21).
 * The batches come as one Arrow IPC stream written by the parent, one record batch per add, so
 * both engines get the very same rows.
 *
 * What one add() does: LanceDB converts the Arrow table to IPC, writes a new data file (one
 * fragment) and commits a new table version (a new manifest) — on a local directory through
 * its object store, which writes and renames files **without fsync**. Its ack therefore means
 * "in the page cache", not "durable", unlike Quiver's put (which fsyncs the WAL entry and its
 * directory). The output says so (`fsync: false`); compare latencies with that in mind.
 *
 * Timing: WARMUP_ADDS adds into a scratch table first (untimed: native code paths, the first
 * version commits), then every batch is added to a fresh table, one add awaited at a time; the
 * MB/s figure uses the row size the parent passes in ROW_BYTES (Lance's `8 + 4·dim + 70`), the
 * same definition as Quiver's figures. Output: one JSON line on stdout; progress on stderr.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { Table as ArrowTable } from 'apache-arrow';
import { percentile as nearestRank } from '../lib/stats.js';

/** The part of LanceDB's API used here (imported by name at run time; see `loadLanceDb`). */
interface LanceTable {
  add(data: ArrowTable): Promise<unknown>;
  countRows(): Promise<number>;
  close(): void;
}
interface LanceConnection {
  createEmptyTable(name: string, schema: ArrowTable['schema']): Promise<LanceTable>;
  close(): void;
}
interface LanceDbModule {
  connect(uri: string): Promise<LanceConnection>;
}

export interface LanceDbWriteResult {
  engine: 'lancedb';
  version: string;
  arrowVersion: string;
  /** LanceDB's local object store does not fsync data files or manifests. */
  fsync: false;
  storage: string;
  adds: number;
  rows: number;
  bytes: number;
  elapsedMs: number;
  addsPerSec: number;
  rowsPerSec: number;
  mbPerSec: number;
  addMs: { p50: number; p90: number; p99: number; max: number };
  /**
   * add() p50 over each tenth of the run, in order: every add commits a new table version whose
   * manifest lists every fragment so far, so the cost can grow with the adds already made.
   */
  addMsP50ByTenth: number[];
  cpuMs: number;
  warmupAdds: number;
}

const MB = 1e6;
const require = createRequire(import.meta.url);
// LanceDB is CommonJS and checks `instanceof Table` against the apache-arrow it requires; an ESM
// import would load the package's ESM build, a second copy whose tables fail that check
// ("schemas must be equivalent"). So take Arrow through require too.
const arrow = require('apache-arrow') as typeof import('apache-arrow');

/**
 * The specifier is a variable so that type-checking the repository (tsconfig includes bench/)
 * does not need this sub-package installed; the benchmark only starts this module when it is.
 */
async function loadLanceDb(): Promise<{ lancedb: LanceDbModule; version: string }> {
  const name = '@lancedb/lancedb';
  const lancedb = (await import(name)) as LanceDbModule;
  return { lancedb, version: await packageVersion(name) };
}

/** A dependency's installed version (neither package exports its package.json). */
async function packageVersion(name: string): Promise<string> {
  let dir = path.dirname(require.resolve(name));
  while (path.basename(dir) !== 'node_modules' && path.dirname(dir) !== dir) {
    try {
      const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version: string };
      if (pkg.name === name) return pkg.version;
    } catch {
      // no package.json at this level: keep walking up
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}

/** Percentile `p` in 0..100 of ascending `sorted` (the shared nearest rank, bench/lib/stats.ts). */
function percentile(sorted: Float64Array, p: number): number {
  return nearestRank(sorted, p / 100);
}

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0, got ${raw}`);
  return v;
}

export async function runLanceDbWrite(ipcPath: string, rowBytes: number, warmupAdds: number): Promise<LanceDbWriteResult> {
  const { lancedb, version } = await loadLanceDb();
  const source = arrow.tableFromIPC(await readFile(ipcPath));
  // One Arrow table per record batch of the stream: the same 20-row batches Quiver puts, built
  // before timing starts.
  const tables = source.batches.map((b) => new arrow.Table(b));
  const parent = process.env.BENCH_DIR ?? os.tmpdir();
  const dir = await mkdtemp(path.join(parent, 'lancedb-bench-'));
  try {
    const db = await lancedb.connect(dir);
    const warm = await db.createEmptyTable('warmup', source.schema);
    for (let i = 0; i < Math.min(warmupAdds, tables.length); i++) await warm.add(tables[i]);
    warm.close();

    const table = await db.createEmptyTable('bench', source.schema);
    const latency = new Float64Array(tables.length);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < tables.length; i++) {
      const s = performance.now();
      await table.add(tables[i]);
      latency[i] = performance.now() - s;
    }
    const elapsedMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const rows = tables.reduce((n, t) => n + t.numRows, 0);
    const stored = await table.countRows();
    if (stored !== rows) throw new Error(`LanceDB table holds ${stored} rows after adding ${rows}`);
    table.close();
    db.close();

    const lat = Float64Array.from(latency).sort();
    const tenth = Math.max(1, Math.ceil(latency.length / 10));
    const byTenth: number[] = [];
    for (let i = 0; i < latency.length; i += tenth) byTenth.push(percentile(latency.slice(i, i + tenth).sort(), 50));
    const bytes = rows * rowBytes;
    return {
      engine: 'lancedb',
      version,
      arrowVersion: await packageVersion('apache-arrow'),
      fsync: false,
      storage: `local directory ${dir} (LanceDB object store, no fsync)`,
      adds: tables.length,
      rows,
      bytes,
      elapsedMs,
      addsPerSec: tables.length / (elapsedMs / 1000),
      rowsPerSec: rows / (elapsedMs / 1000),
      mbPerSec: bytes / MB / (elapsedMs / 1000),
      addMs: { p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), max: lat[lat.length - 1] },
      addMsP50ByTenth: byTenth,
      cpuMs: (cpu.user + cpu.system) / 1000,
      warmupAdds: Math.min(warmupAdds, tables.length),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- command line ----------------------------------------------------------------------------

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const ipcPath = process.argv[2];
  if (!ipcPath) {
    console.error('usage: node --import=tsx bench/peers/lancedb-write.ts <batches.arrow>   (env ROW_BYTES, WARMUP_ADDS, BENCH_DIR)\n' +
      'The write benchmark (npm run bench:write) writes the batches file and runs this itself.');
    process.exit(2);
  }
  const result = await runLanceDbWrite(ipcPath, envNumber('ROW_BYTES', 2126), envNumber('WARMUP_ADDS', 20));
  console.error(
    `lancedb ${result.version}: ${result.adds} sequential adds, p50 ${result.addMs.p50.toFixed(2)} ms, p99 ${result.addMs.p99.toFixed(2)} ms, ` +
      `${result.mbPerSec.toFixed(1)} MB/s (no fsync)`,
  );
  process.stdout.write(JSON.stringify(result) + '\n');
}
