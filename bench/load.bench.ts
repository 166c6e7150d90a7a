/**
 * `npm run bench:load`: `quiver load` throughput and peak memory, as a user runs it (the CLI in
 * its own process): a 1M-row CSV (id BIGINT, name TEXT, score DOUBLE, ts TIMESTAMP, flag
 * BOOLEAN; ~46 MB) and a Parquet file of the same rows written by DuckDB, each into a new table
 * of a fresh embedded database. Peak RSS is the child's VmHWM, sampled from /proc.
 * Options: --rows N (default 1000000).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { writeCsv } from '../test/cli/load-data.js';
import { QUIVER_BIN } from '../test/cli/quiver-process.js';

const rowsArg = process.argv.indexOf('--rows');
const ROWS = rowsArg > 0 ? Number(process.argv[rowsArg + 1]) : 1_000_000;

function load(args: string[]): Promise<{ seconds: number; peakMb: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [QUIVER_BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    let peak = 0;
    child.stdout.on('data', (b) => (stdout += b));
    const timer = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peak = Math.max(peak, Number(m[1]) / 1024);
      } catch {
        // exited
      }
    }, 50);
    child.on('close', (code) => {
      clearInterval(timer);
      if (code !== 0) reject(new Error(`quiver load exited ${code}`));
      else resolve({ seconds: (performance.now() - started) / 1000, peakMb: peak, stdout });
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
  const results = [];
  for (const [name, file] of [['csv', csv], ['parquet', parquet]] as const) {
    const bytes = statSync(file).size;
    const r = await load(['load', name, file, '--data', join(dir, `db-${name}`), '--primary-key', 'id', '-q']);
    const loaderSeconds = Number(/in ([\d.]+) s/.exec(r.stdout)?.[1]);
    results.push({
      format: name,
      rows: ROWS,
      fileMB: +(bytes / 1048576).toFixed(1),
      seconds: +loaderSeconds.toFixed(2),
      processSeconds: +r.seconds.toFixed(2),
      rowsPerSecond: Math.round(ROWS / loaderSeconds),
      mbPerSecond: +(bytes / 1048576 / loaderSeconds).toFixed(2),
      peakRssMB: Math.round(r.peakMb),
    });
    console.log(JSON.stringify(results.at(-1)));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
