/**
 * Dev harness (issue 7): bench:search's ingest case alone — a table of BASE rows gets the
 * IVF-PQ, FTS and scalar indexes (INDEXES), is flushed and reopened with the default writer
 * settings, then takes ROWS rows in PUT-row puts, 1 and then INFLIGHT in flight. Per run: wall
 * rows/s, process CPU µs a row (every thread) and the main thread's busy µs a row (event-loop
 * utilisation), and how many rows the encode worker encoded.
 * Knobs: BASE=10000 ROWS=100000 PUT=1000 INFLIGHT=8 INDEXES=vector,body,year FSYNC=1 WARM=1
 * (start the encode worker before timing) QUIVER_ENCODE_WORKER=0 (encode on the main thread)
 * PROF=1 or PROF=$INFLIGHT (CPU profile of that run to /tmp/q/ingest.cpuprofile) SLICES=512,256 REPS=2
 * (writer indexSliceRows values, each run in turn REPS times) RUNS=8,8,8 (puts in flight of each timed run)
 * PROF_RUN=1 (profile the first timed run) GAPS=1 GAP_MS=40 (event-loop gaps over GAP_MS to /tmp/q/gaps-<run>.json) MARK=1 (print RUN START/END with CLOCK_MONOTONIC seconds, for `perf report --time` or counting --trace-gc lines).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import type { RecordBatch } from 'apache-arrow';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { connect } from '../src/database.js';
import { DEFAULT_WRITER_CONFIG } from '../src/region/writer-config.js';
import { encodeWorkerReady, encodeWorkerStats } from '../src/index/vector/encode-worker.js';
import { fileWriteWorkerReady, fileWriteWorkerStats } from '../src/storage/file-write-worker.js';
import { tokenizeWorkerReady, tokenizeWorkerStats } from '../src/index/fts/tokenize-worker.js';
import { envList, envNumber } from './env.js';
import { makeRows, Rng, rowsBatch, searchRowGenerator, searchSchema } from './lib/data.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';
import { walEntryBuffers } from '../src/wal/entry-buffer-pool.js';
import { stagedWriteStats } from '../src/storage/staged-write.js';

const BASE = envNumber('BASE', 10_000);
const ROWS = envNumber('ROWS', 100_000);
const PUT = envNumber('PUT', 1000);
const INFLIGHT = envNumber('INFLIGHT', 8);
const INDEXES = envList('INDEXES', 'vector,body,year');
const FSYNC = envNumber('FSYNC', 1) === 1;
const SLICES = envList('SLICES', String(DEFAULT_WRITER_CONFIG.indexSliceRows)).map(Number);
const REPS = envNumber('REPS', 1);
const SETTLE_MS = envNumber('SETTLE_MS', 2000);
const GAP_MS = envNumber('GAP_MS', 40);
/** Puts in flight of each timed run, in order (default 1, then INFLIGHT). */
const RUNS = envList('RUNS', `1,${INFLIGHT}`).map(Number);
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
      out.set(`${name}#${tid} sys`, Number(f[12]) * 10);
    }
  } catch {
    // not Linux
  }
  return out;
}

const dir = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'dev-ingest-'));
try {
  const schema = searchSchema(DIM);
  let rows: ReturnType<typeof makeRows> | null = makeRows(gen, new Rng(8000), Int32Array.from({ length: BASE + (RUNS.length * ROWS + PUT) * REPS * SLICES.length }, (_, i) => i));
  const total = BASE + (RUNS.length * ROWS + PUT) * REPS * SLICES.length;
  // PREBUILD=1: every put's batch is built now and the rows' JS strings dropped, so the timed
  // windows' garbage collections mark only what Quiver holds (a server's client data is not in its heap).
  const prebuilt = new Map<number, RecordBatch>();
  const batchAt = (s: number, e: number): RecordBatch => prebuilt.get(s) ?? rowsBatch(schema, rows!, s, e);
  const db = await connect(dir, { fsync: FSYNC, writer: HOLD_IN_MEMTABLE });
  const t = await db.createTable('t', schema, { primaryKey: 'id' });
  for (let s = 0; s < BASE; s += 5000) await t.put(rowsBatch(schema, rows, s, Math.min(BASE, s + 5000)));
  // PARTITIONS=n fixes the IVF-PQ model's partitions (no model growth in long runs).
  for (const c of INDEXES) await t.createIndex(c, { type: TYPES[c], ...(TYPES[c] === 'ivf_pq' && process.env.PARTITIONS ? { partitions: Number(process.env.PARTITIONS) } : {}) });
  await t.flush();
  await t.close();
  await db.close();
  if (process.env.PREBUILD === '1') {
    for (let s = BASE; s + PUT <= total; s += PUT) prebuilt.set(s, rowsBatch(schema, rows, s, s + PUT));
    rows = null;
  }
  if (process.env.WARM !== '0') console.log(`encode worker ready: ${await encodeWorkerReady()}, tokenize worker ready: ${await tokenizeWorkerReady()}, file write worker ready: ${await fileWriteWorkerReady()}`);
  let next = BASE;
  for (let rep = 0; rep < REPS; rep++) for (const slice of SLICES) {
    const db2 = await connect(dir, { fsync: FSYNC, writer: { ...DEFAULT_WRITER_CONFIG, indexSliceRows: slice } });
    const ti = await db2.openTable('t');
    if (SLICES.length > 1) console.log(`indexSliceRows ${slice}:`);
    // Warm-up: the first put after opening loads what the table reads lazily; then let it settle.
    await ti.put(batchAt(next, next + PUT));
    next += PUT;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    for (const [run, inflight] of RUNS.entries()) {
      const jobs0 = encodeWorkerStats.rows;
      const pending = new Set<Promise<void>>();
      // The batches are built first: what a client spends making Arrow data is not Quiver's ingest.
      const batches = [];
      for (let s = next; s < next + ROWS; s += PUT) batches.push(batchAt(s, Math.min(next + ROWS, s + PUT)));
      const session = process.env.PROF === String(inflight) || process.env.PROF_RUN === String(run + 1) ? new Session() : undefined;
      if (session) {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
      }
      let gcMs = 0;
      const gcObserver = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) gcMs += e.duration;
      });
      gcObserver.observe({ entryTypes: ['gc'] });
      // GAPS=1: event-loop gaps over GAP_MS, in the CPU profile's clock (µs), for /tmp/gapwin.mjs-style attribution.
      const gaps: [number, number][] = [];
      let lastTick = Number(process.hrtime.bigint() / 1000n);
      const gapTimer =
        process.env.GAPS === '1'
          ? setInterval(() => {
              const now = Number(process.hrtime.bigint() / 1000n);
              if (now - lastTick > GAP_MS * 1000) gaps.push([lastTick, now]);
              lastTick = now;
            }, 1)
          : undefined;
      const threads0 = threadCpu();
      const elu0 = performance.eventLoopUtilization();
      const cpu0 = process.cpuUsage();
      const faults0 = process.resourceUsage().minorPageFault;
      // In perf's default clock (CLOCK_MONOTONIC), for `perf report --time START,END`.
      const mono = (): string => (Number(process.hrtime.bigint() / 1000n) / 1e6).toFixed(6);
      if (process.env.MARK === '1') console.log(`RUN START ${mono()}`);
      const t0 = performance.now();
      for (const batch of batches) {
        const p: Promise<void> = ti.put(batch).then(() => void pending.delete(p));
        pending.add(p);
        if (pending.size >= inflight) await Promise.race(pending);
      }
      await Promise.all(pending);
      const ms = performance.now() - t0;
      if (process.env.MARK === '1') console.log(`RUN END ${mono()}`);
      const cpu = process.cpuUsage(cpu0);
      const faults = process.resourceUsage().minorPageFault - faults0;
      const elu = performance.eventLoopUtilization(elu0);
      gcObserver.disconnect();
      if (gapTimer) {
        clearInterval(gapTimer);
        await mkdir('/tmp/q', { recursive: true });
        await writeFile(`/tmp/q/gaps-${run + 1}.json`, JSON.stringify(gaps));
        console.log(`  gaps over ${GAP_MS} ms: ${gaps.map(([a, b]) => Math.round((b - a) / 1000)).join(', ') || 'none'}`);
      }
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
          `main busy ${us(elu.active * 1000)} µs/row | worker encoded ${encodeWorkerStats.rows - jobs0} rows, tokenized ${tokenizeWorkerStats.rows} rows, file worker jobs ${fileWriteWorkerStats.jobs} | GC ${us(gcMs * 1000)} µs/row | ${(faults / ROWS).toFixed(2)} page faults/row | load ${os.loadavg()[0].toFixed(1)}`,
      );
      const hs = v8.getHeapStatistics();
      console.log(`  buffers: WAL entries reused ${walEntryBuffers.reused} fresh ${walEntryBuffers.fresh}; file worker ${JSON.stringify(fileWriteWorkerStats)}; staged ${JSON.stringify(stagedWriteStats)}; encode worker ${JSON.stringify(encodeWorkerStats)}`);
      console.log(`  heap used ${(hs.used_heap_size / 2 ** 20).toFixed(0)} MB, external ${(hs.external_memory / 2 ** 20).toFixed(0)} MB`);
      console.log(`  threads µs/row: ${threads.filter(([k]) => !k.endsWith(' sys')).map(([k, v]) => `${k} ${us(v * 1000)}`).join(', ')}`);
      console.log(`  of it system: ${threads.filter(([k]) => k.endsWith(' sys')).map(([k, v]) => `${k.slice(0, -4)} ${us(v * 1000)}`).join(', ')}`);
    }
    await ti.close();
    await db2.close();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
