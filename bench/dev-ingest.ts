/**
 * Dev harness (issue 7): bench:search's ingest case alone — a table of BASE rows gets the
 * IVF-PQ, FTS and scalar indexes (INDEXES), is flushed and reopened with the default writer
 * settings, then takes ROWS rows in PUT-row puts, 1 and then INFLIGHT in flight. Per run: wall
 * rows/s, process CPU µs a row (every thread) and the main thread's busy µs a row (event-loop
 * utilisation), and how many rows the encode worker encoded.
 * Knobs: BASE=10000 ROWS=100000 PUT=1000 INFLIGHT=8 INDEXES=vector,body,year FSYNC=1 WARM=1
 * (start the encode worker before timing) QUIVER_ENCODE_WORKER=0 (encode on the main thread)
 * PROF=1 or PROF=$INFLIGHT (CPU profile of that run to /tmp/q/ingest.cpuprofile).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect } from '../src/database.js';
import { DEFAULT_WRITER_CONFIG } from '../src/region/writer-config.js';
import { encodeWorkerReady, encodeWorkerStats } from '../src/index/vector/encode-worker.js';
import { envList, envNumber } from './env.js';
import { makeRows, Rng, rowsBatch, searchRowGenerator, searchSchema } from './lib/data.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';

const BASE = envNumber('BASE', 10_000);
const ROWS = envNumber('ROWS', 100_000);
const PUT = envNumber('PUT', 1000);
const INFLIGHT = envNumber('INFLIGHT', 8);
const INDEXES = envList('INDEXES', 'vector,body,year');
const FSYNC = envNumber('FSYNC', 1) === 1;
const DIM = 128;
const TYPES: Record<string, 'ivf_pq' | 'fts' | 'scalar'> = { vector: 'ivf_pq', body: 'fts', year: 'scalar' };
const gen = searchRowGenerator(DIM);

/** CPU ms per thread name (Linux /proc; empty elsewhere), to see where the process's CPU goes. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).trim();
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(`${name}#${tid}`, (Number(f[11]) + Number(f[12])) * 10);
    }
  } catch {
    // not Linux
  }
  return out;
}

const dir = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'dev-ingest-'));
try {
  const schema = searchSchema(DIM);
  const rows = makeRows(gen, new Rng(8000), Int32Array.from({ length: BASE + 2 * ROWS }, (_, i) => i));
  const db = await connect(dir, { fsync: FSYNC, writer: HOLD_IN_MEMTABLE });
  const t = await db.createTable('t', schema, { primaryKey: 'id' });
  for (let s = 0; s < BASE; s += 5000) await t.put(rowsBatch(schema, rows, s, Math.min(BASE, s + 5000)));
  for (const c of INDEXES) await t.createIndex(c, { type: TYPES[c] });
  await t.flush();
  await t.close();
  await db.close();
  if (process.env.WARM !== '0') console.log(`encode worker ready: ${await encodeWorkerReady()}`);
  const db2 = await connect(dir, { fsync: FSYNC, writer: { ...DEFAULT_WRITER_CONFIG } });
  const ti = await db2.openTable('t');
  let next = BASE;
  for (const inflight of [1, INFLIGHT]) {
    const jobs0 = encodeWorkerStats.rows;
    const pending = new Set<Promise<void>>();
    // The batches are built first: what a client spends making Arrow data is not Quiver's ingest.
    const batches = [];
    for (let s = next; s < next + ROWS; s += PUT) batches.push(rowsBatch(schema, rows, s, Math.min(next + ROWS, s + PUT)));
    const session = process.env.PROF === String(inflight) ? new Session() : undefined;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const threads0 = threadCpu();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const batch of batches) {
      const p: Promise<void> = ti.put(batch).then(() => void pending.delete(p));
      pending.add(p);
      if (pending.size >= inflight) await Promise.race(pending);
    }
    await Promise.all(pending);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const elu = performance.eventLoopUtilization(elu0);
    const threads = [...threadCpu()].map(([k, v]) => [k, v - (threads0.get(k) ?? 0)] as const).filter(([, v]) => v > 0);
    next += ROWS;
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      await mkdir('/tmp/q', { recursive: true });
      await writeFile('/tmp/q/ingest.cpuprofile', JSON.stringify(profile));
      session.disconnect();
    }
    const us = (x: number) => (x / ROWS).toFixed(1);
    console.log(
      `${inflight} in flight: ${Math.round(ROWS / (ms / 1000)).toLocaleString('en-US')} rows/s | CPU ${us(cpu.user + cpu.system)} µs/row (all threads) | ` +
        `main busy ${us(elu.active * 1000)} µs/row | worker encoded ${encodeWorkerStats.rows - jobs0} rows | load ${os.loadavg()[0].toFixed(1)}`,
    );
    console.log(`  threads µs/row: ${threads.map(([k, v]) => `${k} ${us(v * 1000)}`).join(', ')}`);
  }
  await ti.close();
  await db2.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
