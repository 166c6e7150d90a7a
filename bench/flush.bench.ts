/**
 * Flush benchmark (`npm run bench:flush`, issue 7): how long `table.flush()` of a MemTable of
 * FLUSH_ROWS indexed rows takes, and the longest event-loop stall while it runs.
 *
 * Data (bench/search-data.ts generators, seeded): rows `id Int32` (primary key), `body Utf8`
 * (8–40 words from a Zipf vocabulary of 50 000 words) and `vector FixedSizeList<Float32>[128]`
 * (256 Gaussian clusters of uneven size).
 *
 * Build, through the public API: a table on a temp local directory (fsync on unless FSYNC=0)
 * with writer settings that never freeze a MemTable on their own; the first TRAIN_ROWS rows in
 * 5 000-row puts (4 in flight); `createIndex` vector `ivf_pq` with 256 partitions (trained on
 * those rows) and body `fts` (and id `scalar` with SCALAR=1); the remaining rows, indexed as they
 * are written; then UPSERTS rows of random existing keys again (superseded versions the flush's
 * dedup drops). Then `flush()` is timed, with a 1 ms setInterval probe measuring the longest gap
 * between its ticks (and perf_hooks' monitorEventLoopDelay max beside it). REPEAT > 1 repeats the
 * whole case on fresh tables.
 *
 * Knobs: FLUSH_ROWS=200000 TRAIN_ROWS=20000 UPSERTS=0 SCALAR=0 FSYNC=1 REPEAT=1 BENCH_DIR MARK=1 (print
 * FLUSH START/END in CLOCK_MONOTONIC seconds, for `perf record -e page-faults` windows).
 * PROFILE=file.cpuprofile writes a CPU profile of one flush only (PROFILE_REP=0: the first; 1: the
 * second, with the process's buffer pools warm); the whole run:
 * `node --cpu-prof --import=tsx bench/flush.bench.ts`.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Field, FixedSizeList, Float32, Int32, makeData, RecordBatch, Schema, Struct, Utf8 } from 'apache-arrow';
import { connect } from '../src/database.js';
import type { Table } from '../src/table/table.js';
import { envNumber } from './env.js';
import { ClusterModel, distinctKeys, Rng, ZipfVocabulary } from './lib/data.js';
import { log } from './lib/machine.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';

const FLUSH_ROWS = envNumber('FLUSH_ROWS', 200_000);
const TRAIN_ROWS = Math.min(FLUSH_ROWS, envNumber('TRAIN_ROWS', 20_000));
const UPSERTS = Math.min(FLUSH_ROWS, envNumber('UPSERTS', 0));
const SCALAR = envNumber('SCALAR', 0) > 0;
const FSYNC = envNumber('FSYNC', 1) > 0;
const REPEAT = Math.max(1, envNumber('REPEAT', 1));
const PROFILE = process.env.PROFILE;
const PROFILE_REP = Number(process.env.PROFILE_REP ?? 0);
const DIM = 128;
const PARTITIONS = 256;
const PUT_ROWS = 5000;
const INFLIGHT = 4;
const GiB = 1024 ** 3;
const CLUSTER_PARAMS = { dim: DIM, clusters: 256, seed: 12, centreStd: 0.3, spread: 1.0, noise: 0.3, latentDim: 16, weightSigma: 1.0 };

const schema = new Schema([
  new Field('id', new Int32(), false),
  new Field('body', new Utf8(), true),
  new Field('vector', new FixedSizeList(DIM, new Field('item', new Float32(), true)), true),
]);

interface Rows {
  ids: Int32Array;
  bodies: string[];
  vectors: Float32Array;
}

function makeRows(vocab: ZipfVocabulary, model: ClusterModel, rng: Rng, keys: ArrayLike<number>): Rows {
  const n = keys.length;
  const rows: Rows = { ids: Int32Array.from(keys), bodies: new Array(n), vectors: new Float32Array(n * DIM) };
  for (let i = 0; i < n; i++) {
    rows.bodies[i] = vocab.document(rng, 8, 40);
    model.sample(rng, rows.vectors, i * DIM);
  }
  return rows;
}

const encoder = new TextEncoder();

function batchOf(rows: Rows, start: number, end: number): RecordBatch {
  const n = end - start;
  let bytes = 0;
  for (let i = start; i < end; i++) bytes += rows.bodies[i].length; // ASCII words
  const offsets = new Int32Array(n + 1);
  const values = new Uint8Array(bytes);
  let o = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = o;
    o += encoder.encodeInto(rows.bodies[start + i], values.subarray(o)).written;
  }
  offsets[n] = o;
  const [idF, bodyF, vecF] = schema.fields;
  const children = [
    makeData({ type: idF.type as Int32, length: n, nullCount: 0, data: rows.ids.subarray(start, end) }),
    makeData({ type: bodyF.type as Utf8, length: n, nullCount: 0, valueOffsets: offsets, data: values }),
    makeData({
      type: vecF.type as FixedSizeList,
      length: n,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: n * DIM, nullCount: 0, data: rows.vectors.subarray(start * DIM, end * DIM) }),
    }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }));
}

async function putRange(table: Table, rows: Rows, start: number, end: number): Promise<void> {
  const pending = new Set<Promise<void>>();
  for (let s = start; s < end; s += PUT_ROWS) {
    const p: Promise<void> = table.put(batchOf(rows, s, Math.min(end, s + PUT_ROWS))).then(() => void pending.delete(p));
    pending.add(p);
    if (pending.size >= INFLIGHT) await Promise.race(pending);
  }
  await Promise.all(pending);
}

/** The longest gap between ticks of a 1 ms interval, and monitorEventLoopDelay's max. */
class StallProbe {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private maxGap = 0;
  private readonly hist = monitorEventLoopDelay({ resolution: 1 });
  start(): void {
    this.last = performance.now();
    this.maxGap = 0;
    this.hist.reset();
    this.hist.enable();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.maxGap = Math.max(this.maxGap, now - this.last);
      this.last = now;
    }, 1);
  }
  stop(): { maxGapMs: number; eldMaxMs: number } {
    clearInterval(this.timer);
    this.maxGap = Math.max(this.maxGap, performance.now() - this.last);
    this.hist.disable();
    return { maxGapMs: this.maxGap, eldMaxMs: this.hist.max / 1e6 };
  }
}

/**
 * CPU time of the main (event-loop) thread so far, in ms (Linux: /proc/thread-self/schedstat),
 * or NaN elsewhere. On a loaded machine it says what the flush cost apart from waiting for a core.
 */
function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

async function main(): Promise<void> {
  const vocab = new ZipfVocabulary(50_000, 1.0, 11);
  const model = new ClusterModel(CLUSTER_PARAMS);
  let t = performance.now();
  const rows = makeRows(vocab, model, new Rng(7000), Int32Array.from({ length: FLUSH_ROWS }, (_, i) => i));
  const upserts = makeRows(vocab, model, new Rng(7001), distinctKeys(new Rng(7002), FLUSH_ROWS, UPSERTS));
  log(`generated ${FLUSH_ROWS} rows + ${UPSERTS} upserts in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const root = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'quiver-flush-'));
  const results: { flushMs: number; cpuMs: number; maxGapMs: number; eldMaxMs: number }[] = [];
  try {
    for (let rep = 0; rep < REPEAT; rep++) {
      const db = await connect(path.join(root, `db${rep}`), { fsync: FSYNC, generationCacheBytes: 4 * GiB });
      const table = await db.createTable('flush_case', schema, {
        primaryKey: 'id',
        writer: HOLD_IN_MEMTABLE,
      });
      t = performance.now();
      await putRange(table, rows, 0, TRAIN_ROWS);
      const putMs = performance.now() - t;
      t = performance.now();
      const def = await table.createIndex('vector', { type: 'ivf_pq', partitions: PARTITIONS });
      if (!def.model) throw new Error('the IVF-PQ model did not train');
      await table.createIndex('body', { type: 'fts' });
      if (SCALAR) await table.createIndex('id', { type: 'scalar' });
      const indexMs = performance.now() - t;
      t = performance.now();
      await putRange(table, rows, TRAIN_ROWS, FLUSH_ROWS);
      if (UPSERTS > 0) await putRange(table, upserts, 0, UPSERTS);
      const restMs = performance.now() - t;
      log(
        `table: ${TRAIN_ROWS} rows in ${(putMs / 1000).toFixed(1)} s, createIndex ${(indexMs / 1000).toFixed(1)} s, ` +
          `${FLUSH_ROWS - TRAIN_ROWS} more rows + ${UPSERTS} upserts (indexed as written) in ${(restMs / 1000).toFixed(1)} s`,
      );
      const session = PROFILE && rep === PROFILE_REP ? new Session() : undefined;
      if (session) {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 200 });
        await session.post('Profiler.start');
      }
      const probe = new StallProbe();
      probe.start();
      const cpu0 = mainThreadCpuMs();
      const proc0 = process.cpuUsage();
      const faults0 = process.resourceUsage().minorPageFault;
      // MARK=1: CLOCK_MONOTONIC seconds around the flush, for `perf report --time START,END`.
      const mono = (): string => (Number(process.hrtime.bigint() / 1000n) / 1e6).toFixed(6);
      if (process.env.MARK === '1') log(`FLUSH START ${mono()}`);
      t = performance.now();
      await table.flush();
      const flushMs = performance.now() - t;
      if (process.env.MARK === '1') log(`FLUSH END ${mono()}`);
      const cpuMs = mainThreadCpuMs() - cpu0;
      const proc = process.cpuUsage(proc0);
      const procMs = (proc.user + proc.system) / 1000;
      const faults = process.resourceUsage().minorPageFault - faults0;
      const stall = probe.stop();
      if (session) {
        const { profile } = await session.post('Profiler.stop');
        await writeFile(PROFILE!, JSON.stringify(profile));
        session.disconnect();
        log(`profile of the flush written to ${PROFILE}`);
      }
      results.push({ flushMs, cpuMs, ...stall });
      log(
        `flush() of ${FLUSH_ROWS + UPSERTS} MemTable rows (${FLUSH_ROWS} after dedup; IVF-PQ ${PARTITIONS} partitions + FTS${SCALAR ? ' + scalar' : ''}, fsync ${FSYNC ? 'on' : 'off'}): ` +
          `${flushMs.toFixed(0)} ms (main thread CPU ${cpuMs.toFixed(0)} ms, all threads ${procMs.toFixed(0)} ms of which system ${(proc.system / 1000).toFixed(0)} ms; ${faults} page faults), longest event-loop stall ${stall.maxGapMs.toFixed(0)} ms (monitorEventLoopDelay max ${stall.eldMaxMs.toFixed(0)} ms)`,
      );
      await table.close();
      await db.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  if (results.length > 1) {
    const ms = results.map((r) => r.flushMs).sort((a, b) => a - b);
    const cpu = results.map((r) => r.cpuMs).sort((a, b) => a - b);
    log(`flush() median of ${results.length}: ${ms[ms.length >> 1].toFixed(0)} ms (main thread CPU ${cpu[cpu.length >> 1].toFixed(0)} ms); longest stall max ${Math.max(...results.map((r) => r.maxGapMs)).toFixed(0)} ms`);
  }
}

await main();
