/**
 * `quiver load` embedded: every input format, a 1M-row CSV with its peak memory measured, bad
 * rows (failing names the line and what was durably loaded; --on-error skip counts them),
 * upserts into an existing table, and Parquet written by DuckDB read back equal.
 */
import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
import { quiver, QUIVER_BIN, samplePeakRss, tempDir } from './quiver-process.js';
import { writeCsv, writeNdjson } from './load-data.js';

async function rows(data: string, sql: string): Promise<Record<string, unknown>[]> {
  const r = await quiver(['sql', '--data', data, '--format', 'ndjson', sql]);
  if (r.code !== 0) throw new Error(r.stderr);
  return r.stdout.trim() ? r.stdout.trim().split('\n').map((l) => JSON.parse(l)) : [];
}

/** Runs quiver, sampling the child's resident memory until it exits. */
function quiverWithPeakRss(args: string[]): Promise<{ code: number; stdout: string; stderr: string; peakRssMb: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [QUIVER_BIN, ...args], { env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b) => (stdout += b));
    child.stderr.on('data', (b) => (stderr += b));
    const peak = samplePeakRss(child.pid!);
    const timer = setTimeout(() => child.kill('SIGKILL'), 280_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, peakRssMb: peak() });
    });
  });
}

test('a 1M-row CSV loads in batches with bounded memory, progress lines and a summary', async (t) => {
  const dir = tempDir();
  try {
    // Memory bounded, not proportional to the file: a file four times as large peaks at about the
    // same resident memory. (Before the loader built its batches from small chunks and kept its
    // flushes in step, 1M rows peaked ~260 MB above 250k rows: parsed rows, frozen MemTables
    // and cached generations grew with the file.)
    const small = join(dir.path, 'small.csv');
    await writeCsv(small, 250_000);
    const base = await quiverWithPeakRss(['load', 'small', small, '--data', join(dir.path, 'db-small'), '--primary-key', 'id', '-q']);
    t.is(base.code, 0, base.stderr);
    const csv = join(dir.path, 'big.csv');
    await writeCsv(csv, 1_000_000);
    const r = await quiverWithPeakRss(['load', 'big', csv, '--data', join(dir.path, 'db'), '--primary-key', 'id']);
    t.is(r.code, 0, r.stderr);
    t.regex(r.stdout, /^loaded 1000000 rows into big in [\d.]+ s \([\d,]+ rows\/s, [\d.]+ MB\/s\)\n$/);
    t.regex(r.stderr, /^load: \d+ rows, [\d.]+ MB of [\d.]+ MB \(\d+%\)/m, 'periodic progress lines when stderr is not a terminal');
    t.log(`peak RSS ${r.peakRssMb.toFixed(0)} MB for a ${(readFileSync(csv).length / 1048576).toFixed(0)} MB CSV (${base.peakRssMb.toFixed(0)} MB for a quarter of it): ${r.stdout.trim()}`);
    // The loader's own budget: two batches in flight, frozen MemTables up to 64 MiB, a 16 MiB
    // generation cache; the rest is noise in when the collector runs.
    t.true(r.peakRssMb - base.peakRssMb < 130, `peak RSS ${r.peakRssMb.toFixed(0)} MB for 1M rows vs ${base.peakRssMb.toFixed(0)} MB for 250k rows`);
    const [agg] = await rows(join(dir.path, 'db'), 'SELECT count(*) AS n, sum(id) AS s, count(DISTINCT name) AS names, min(ts) AS t0, max(ts) AS t1 FROM big');
    t.deepEqual(agg, { n: 1_000_000, s: 499_999_500_000, names: 9973, t0: '2024-01-01T00:00:00', t1: '2024-01-12T13:46:39' });
  } finally {
    dir.remove();
  }
});

test('a bad value fails the load naming its line; what was durable before it stays, nothing after', async (t) => {
  const dir = tempDir();
  try {
    const csv = join(dir.path, 'bad.csv');
    // Row 65000 (line 65002: the header is line 1) has a score that is not a number.
    await writeCsv(csv, 100_000, (i, line) => (i === 65_000 ? line.replace(/,(\d+(\.\d+)?),2024/, ',oops,2024') : line));
    const db = join(dir.path, 'db');
    const r = await quiver(['load', 'bad', csv, '--data', db, '--primary-key', 'id', '--batch-rows', '10000', '-q']);
    t.is(r.code, 1);
    t.regex(r.stderr, /^quiver: invalid: line 65002: column score: "oops" is not a valid DOUBLE; 60000 rows were loaded \(durable\) before it, nothing after$/m);
    t.deepEqual(await rows(db, 'SELECT count(*) AS n, max(id) AS m FROM bad'), [{ n: 60000, m: 59999 }]);

    const skip = await quiver(['load', 'bad2', csv, '--data', db, '--primary-key', 'id', '--on-error', 'skip']);
    t.is(skip.code, 0, skip.stderr);
    t.regex(skip.stdout, /loaded 99999 rows into bad2 .*; 1 bad line skipped/);
    t.regex(skip.stderr, /quiver: skipped line 65002: column score: "oops" is not a valid DOUBLE/);
    t.deepEqual(await rows(db, 'SELECT count(*) AS n FROM bad2 WHERE id = 65000'), [{ n: 0 }]);

    // A malformed line (a field too many) is named by the CSV parser.
    writeFileSync(csv, 'id,s\n1,a\n2,b,c\n3,d\n');
    const shape = await quiver(['load', 'shape', csv, '--data', db, '--primary-key', 'id', '-q']);
    t.is(shape.code, 1);
    t.regex(shape.stderr, /^quiver: invalid: line 3: /m);
    const shapeSkip = await quiver(['load', 'shape', csv, '--data', db, '--primary-key', 'id', '--on-error', 'skip', '-q']);
    t.is(shapeSkip.code, 0, shapeSkip.stderr);
    t.regex(shapeSkip.stdout, /loaded 2 rows .*1 bad line skipped/);
    t.deepEqual(await rows(db, 'SELECT id, s FROM shape ORDER BY id'), [{ id: 1, s: 'a' }, { id: 3, s: 'd' }]);
  } finally {
    dir.remove();
  }
});

test('NDJSON, Arrow IPC file and stream load; --schema sets types; an existing table is upserted', async (t) => {
  const dir = tempDir();
  try {
    const db = join(dir.path, 'db');
    const nd = join(dir.path, 'a.ndjson');
    await writeNdjson(nd, 5000);
    const a = await quiver(['load', 'nd', nd, '--data', db, '--primary-key', 'id', '-q']);
    t.is(a.code, 0, a.stderr);
    t.deepEqual(await rows(db, 'SELECT id, name, score, ts, flag FROM nd WHERE id = 4242'), [{ id: 4242, name: 'name 4242', score: 30.25, ts: '2024-01-01T01:10:42', flag: true }]);

    const big = 2n ** 62n + 1n;
    const arrow = tableFromArrays({ id: BigInt64Array.from([1n, 2n, big]), v: Float32Array.from([0.5, 1.5, 2.5]), s: ['x', 'y', 'z'] });
    writeFileSync(join(dir.path, 'a.arrow'), tableToIPC(arrow, 'file'));
    writeFileSync(join(dir.path, 'a.arrows'), tableToIPC(arrow, 'stream'));
    t.is((await quiver(['load', 'ar', join(dir.path, 'a.arrow'), '--data', db, '--primary-key', 'id', '-q'])).code, 0);
    t.deepEqual(await rows(db, 'SELECT id, v, s FROM ar ORDER BY id'), [{ id: 1, v: 0.5, s: 'x' }, { id: 2, v: 1.5, s: 'y' }, { id: Number(big), v: 2.5, s: 'z' }]);
    t.regex((await quiver(['sql', '--data', db, '--format', 'csv', 'SELECT id FROM ar WHERE id > 2'])).stdout, new RegExp(`^id\\n${big}\\n$`));
    const s = await quiver(['load', 'ar2', join(dir.path, 'a.arrows'), '--data', db, '--primary-key', 'id', '-q']);
    t.is(s.code, 0, s.stderr);
    t.deepEqual(await rows(db, 'SELECT count(*) AS n FROM ar2'), [{ n: 3 }]);

    // --schema: the types of a new table; then an upsert into it from a second file.
    const csv = join(dir.path, 'k.csv');
    writeFileSync(csv, 'id,n,day\n1,10,2024-05-01\n2,20,2024-05-02\n');
    const k = await quiver(['load', 'k', csv, '--data', db, '--primary-key', 'id', '--schema', 'id INT, n SMALLINT, day DATE', '-q']);
    t.is(k.code, 0, k.stderr);
    const desc = JSON.parse((await quiver(['describe', 'k', '--data', db, '--format', 'json'])).stdout);
    t.deepEqual(desc.columns.map((c: { type: string }) => c.type), ['INTEGER', 'SMALLINT', 'DATE']);
    writeFileSync(csv, 'id,n\n2,21\n3,30\n');
    const up = await quiver(['load', 'k', csv, '--data', db, '-q']);
    t.is(up.code, 0, up.stderr);
    t.deepEqual(await rows(db, 'SELECT id, n, day FROM k ORDER BY id'), [{ id: 1, n: 10, day: '2024-05-01' }, { id: 2, n: 21, day: null }, { id: 3, n: 30, day: null }]);
    // Usage errors: a new table without --primary-key, --schema for an existing table.
    t.is((await quiver(['load', 'nokey', csv, '--data', db])).code, 2);
    t.is((await quiver(['load', 'k', csv, '--data', db, '--schema', 'id INT'])).code, 2);
    t.is((await quiver(['load', 'k', join(dir.path, 'x.unknown'), '--data', db])).code, 2);
  } finally {
    dir.remove();
  }
});

test('Parquet written by DuckDB loads and reads back equal to what DuckDB reads', async (t) => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'duck.parquet');
    const duck = await DuckDBInstance.create(':memory:');
    const c = await duck.connect();
    await c.run(
      `COPY (SELECT i::BIGINT AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE 'name ' || i END AS name, i / 8.0 AS score,
              TIMESTAMP '2024-01-01 00:00:00.000001' + to_microseconds(i * 1000003) AS ts, DATE '2020-02-28' + (i % 5)::INT AS d,
              i % 2 = 0 AS flag, (i * 1000)::INTEGER AS n, [i::FLOAT / 4, -1.5]::FLOAT[2] AS v
            FROM range(3000) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`,
    );
    const expected = (await c.runAndReadAll(`SELECT id, name, score, strftime(ts, '%Y-%m-%dT%H:%M:%S.%f') AS ts, strftime(d, '%Y-%m-%d') AS d, flag, n, v FROM '${file}' ORDER BY id`)).getRowObjectsJson();
    c.closeSync();
    const db = join(dir.path, 'db');
    const r = await quiver(['load', 'duck', file, '--data', db, '--primary-key', 'id', '--batch-rows', '700', '-q']);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout.match(/loaded (\d+) rows/)?.[1], '3000');
    const got = await rows(db, 'SELECT id, name, score, ts, d, flag, n, v FROM duck ORDER BY id');
    t.is(got.length, 3000);
    const norm = (ts: string) => ts.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
    for (let i = 0; i < 3000; i++) {
      const e = expected[i] as Record<string, unknown>;
      t.deepEqual(
        { ...got[i], ts: norm(String(got[i].ts)) },
        { id: Number(e.id), name: e.name, score: Number(e.score), ts: norm(String(e.ts)), d: e.d, flag: e.flag, n: Number(e.n), v: (e.v as number[]).map(Number) },
        `row ${i}`,
      );
      if (got[i].id !== Number(e.id)) break;
    }
    const desc = JSON.parse((await quiver(['describe', 'duck', '--data', db, '--format', 'json'])).stdout);
    t.deepEqual(desc.columns.map((c: { type: string }) => c.type), ['BIGINT', 'TEXT', 'DOUBLE PRECISION', 'TIMESTAMP', 'DATE', 'BOOLEAN', 'INTEGER', 'FLOAT4[2]']);
  } finally {
    dir.remove();
  }
});
