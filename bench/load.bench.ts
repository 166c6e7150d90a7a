/**
 * `npm run bench:load`: `quiver load` throughput and peak memory, as a user runs it (the CLI in
 * its own process): a 1M-row CSV (id BIGINT, name TEXT, score DOUBLE, ts TIMESTAMP, flag
 * BOOLEAN; ~46 MB) and a Parquet file of the same rows written by DuckDB, each into a new table
 * of a fresh embedded database; then the same two files through `quiver serve` (spawned on
 * loopback, `quiver load --connect grpc://…`, CommandStatementIngest). Peak RSS is the loader
 * child's VmHWM, sampled from /proc; for the server case the server's peak RSS (sampled) too.
 * Options: --rows N (default 1000000); --only embedded|server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { writeCsv } from '../test/cli/load-data.js';
import { QUIVER_BIN, samplePeakRss } from '../test/cli/quiver-process.js';
import { startServe } from '../test/flight/serve-process.js';

const rowsArg = process.argv.indexOf('--rows');
const ROWS = rowsArg > 0 ? Number(process.argv[rowsArg + 1]) : 1_000_000;
const onlyArg = process.argv.indexOf('--only');
const ONLY = onlyArg > 0 ? process.argv[onlyArg + 1] : undefined;

function load(args: string[]): Promise<{ seconds: number; peakMb: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [QUIVER_BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (b) => (stdout += b));
    const peak = samplePeakRss(child.pid!);
    child.on('close', (code) => {
      const peakMb = peak();
      if (code !== 0) reject(new Error(`quiver load exited ${code}`));
      else resolve({ seconds: (performance.now() - started) / 1000, peakMb, stdout });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'quiver-bench-load-'));
try {
  const csv = join(dir, 'rows.csv');
  const parquet = join(dir, 'rows.parquet');
  await writeCsv(csv, ROWS);
  const duck = await DuckDBInstance.create(':memory:');
  const c = await duck.connect();
  await c.run(`COPY (SELECT * FROM read_csv('${csv}', timestampformat='%Y-%m-%dT%H:%M:%S')) TO '${parquet}' (FORMAT parquet)`);
  c.closeSync();
  const results: Record<string, unknown>[] = [];
  const files = [['csv', csv], ['parquet', parquet]] as const;
  const record = (target: string, name: string, file: string, r: { seconds: number; peakMb: number; stdout: string }, extra: Record<string, unknown> = {}) => {
    const bytes = statSync(file).size;
    const loaderSeconds = Number(/in ([\d.]+) s/.exec(r.stdout)?.[1]);
    results.push({
      target,
      format: name,
      rows: ROWS,
      fileMB: +(bytes / 1048576).toFixed(1),
      seconds: +loaderSeconds.toFixed(2),
      processSeconds: +r.seconds.toFixed(2),
      rowsPerSecond: Math.round(ROWS / loaderSeconds),
      mbPerSecond: +(bytes / 1048576 / loaderSeconds).toFixed(2),
      peakRssMB: Math.round(r.peakMb),
      ...extra,
    });
    console.log(JSON.stringify(results.at(-1)));
  };
  if (ONLY !== 'server') {
    for (const [name, file] of files) record('embedded', name, file, await load(['load', name, file, '--data', join(dir, `db-${name}`), '--primary-key', 'id', '-q']));
  }
  if (ONLY !== 'embedded') {
    const server = await startServe(['--port', '0', '--data', join(dir, 'served')]);
    try {
      for (const [name, file] of files) {
        let serverPeak = 0;
        const sample = setInterval(() => (serverPeak = Math.max(serverPeak, server.rss())), 50);
        try {
          const r = await load(['load', name, file, '--connect', server.url, '--primary-key', 'id', '-q']);
          record('server', name, file, r, { serverPeakRssMB: Math.round(serverPeak / 1048576) });
        } finally {
          clearInterval(sample);
        }
      }
    } finally {
      await server.stop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
