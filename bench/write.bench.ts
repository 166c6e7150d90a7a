/**
 * Write benchmark (`npm run bench:write`): durable put throughput and ack latency, modelled on
 * Lance's `mem_wal_write` bench (lance-memwal.md §9.1).
 *
 * Rows: `id Int64` (PK), `vector FixedSizeList<Float32>[512]`, `text Utf8` (~60 chars), counted
 * as `8 + 4·dim + 70` ≈ 2.1 KB a row like Lance does (MB = 10^6 such bytes). Batches of 20
 * rows; one benny op writes NUM_BATCHES batches (default 1 000 ≈ 42.5 MB) into a *fresh table*
 * (a fresh region, as Lance's bench creates a new region per iteration, so no MemTable is ever
 * flushed to a generation during the timed work). Every `table.put` resolves only once its WAL
 * entry is durable, so the client keeps up to WINDOW puts outstanding for group commit to batch.
 *
 * Two cases per target (a temp directory with fsync, and the radosgw on loopback):
 * - `closed`: the op as a batch job sees it — create the table, open its region writer, then
 *   put every batch and wait for every ack. The last partial WAL entry of each op waits for the
 *   group-commit timer (maxWalFlushIntervalMs), since no later put fills it.
 * - `stream`: a continuous writer. The window carries across ops (op k+1's first puts go out
 *   while op k's last entry still waits in its group-commit window; the tables are created and
 *   opened before timing starts), and an op ends once N more puts have been acknowledged.
 *   This is the steady-state put throughput; the drain at the end is not timed.
 *
 * Reported per case: benny's ops/s (and MB/s from it); put-phase MB/s timed here (closed: from
 * the first put to the last ack, the writer already open, as Lance times puts only); ack latency
 * (resolve − call) p50/p99 of every put; WAL PUT time and entry size (bench/timing-store.ts).
 * Per target also: ack latency at a light paced load (PACED_RATE puts/s), where entries are cut
 * by the timer, against the bound "one group-commit interval plus one PUT"; the raw storage
 * ceiling (WAL-sized `putIfAbsent`s, no encoding); and the time to close one table (flushing
 * its MemTable into a generation), which the put numbers leave out.
 *
 * Two put-loop cases per target measure what a client sees at low concurrency, where group
 * commit is leader/follower: with no WAL write in flight a put's rows are written at once, while
 * one is in flight arriving rows gather and go when it completes (maxWalFlushIntervalMs and
 * maxWalBufferSize are only upper bounds). Each case is one run of SEQ_PUTS puts (the first
 * SEQ_PUTS batches above) into *one* fresh table per case, opened and warmed with WARMUP_PUTS
 * puts of other ids before timing. They are not benny suites: their figures are a latency
 * distribution and a rate over those puts, not the ops/s of a repeated op.
 * - `sequential`: one `table.put` at a time, each awaited. An ack should cost one WAL PUT and
 *   little else, so the case reports p50(ack) − p50(WAL PUT) (target: ≤ 2 ms), and splits each
 *   put into before its WAL PUT starts (validation, MemTable append, entry encode, indexing: the
 *   appender issues the PUT after that synchronous work), the PUT, and after it (ack delivery).
 * - `inflight32`: a client keeping exactly INFLIGHT (32) puts outstanding. An entry holds what
 *   gathered during the previous PUT, and the puts acknowledged by one entry are reissued while
 *   the next is in flight, so the 32 split between the entry in flight and the one gathering
 *   (about 16 puts an entry). Throughput runs from the first put to the last ack.
 * Both report puts/s, rows/s, MB/s, ack p50/p99 and the WAL PUT p50 of the same case.
 *
 * Peer: when bench/peers is installed (`npm --prefix bench/peers ci`), LanceDB 0.31.0 adds the
 * same SEQ_PUTS batches one `add()` at a time into a local temp directory, in a child process
 * (bench/peers/lancedb-write.ts), in the same run, before the Quiver cases; the report sets it
 * beside Quiver's `sequential` and `inflight32` cases (target: 32-in-flight MB/s ≥ 10 ×
 * LanceDB's sequential MB/s). LanceDB's add() does not fsync, Quiver's local put does; the
 * report says so. Without the sub-package the peer is skipped with a note.
 *
 * Tables written by the throughput ops are not closed: closing would flush each into a
 * generation, work this benchmark does not measure, and the directory / bucket is removed right
 * after. Results: bench/results/write.json, write.md, and benny's write-benny-<target>-<case>.json.
 *
 * Knobs (environment): BENCH_TARGETS=local,s3  BENCH_CASES=closed,stream,sequential,inflight32
 * BATCH_SIZE=20  NUM_BATCHES=1000  VECTOR_DIM=512  WINDOW=512  MIN_SAMPLES=5  MAX_TIME=3 (s, per
 * case)  PACED_RATE=250  PACED_PUTS=500  MAX_WAL_BUFFER_SIZE, MAX_FLUSH_INTERVAL_MS,
 * MAX_WAL_WRITES_IN_FLIGHT (writer overrides)  BENCH_DIR (parent of the local temp directories)
 * STREAM_TABLES=40 (tables opened ahead for the stream case)  SEQ_PUTS=1000  INFLIGHT=32
 * WARMUP_PUTS=20  PEERS=lancedb (`none` to skip the peer).
 * The radosgw test server keeps objects in 2 GiB of RAM: a case stops with an error rather than
 * write more than S3_MAX_BYTES (default 1.2 GB) before its bucket is emptied, and the server's
 * garbage collector is run after each case (see collectRadosgwGarbage).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { add, complete, configure, cycle, save, suite } from 'benny';
import { type RecordBatch, type Schema, Table as ArrowTable, tableToIPC } from 'apache-arrow';
import { connect, type Database } from '../src/database.js';
import { DEFAULT_WRITER_CONFIG, type RegionWriterConfig } from '../src/region/writer-config.js';
import { LocalObjectStore } from '../src/storage/local-store.js';
import { RetryingObjectStore } from '../src/storage/retrying-store.js';
import type { Table } from '../src/table/table.js';
import { loadS3Env, makeTestBucketStore } from '../test/helpers/s3-env.js';
import { collectRadosgwGarbage } from './lib/radosgw.js';
import { benchSchema, estimatedBytes, estimatedRowBytes, makeBatches } from './lib/data.js';
import { TimingStore } from './timing-store.js';
import { percentile as nearestRank } from './lib/stats.js';
import { envNumber, envList } from './env.js';
import type { LanceDbWriteResult } from './peers/lancedb-write.js';

// ---- settings --------------------------------------------------------------------------------


const BATCH_SIZE = envNumber('BATCH_SIZE', 20);
const NUM_BATCHES = envNumber('NUM_BATCHES', 1000);
const VECTOR_DIM = envNumber('VECTOR_DIM', 512);
const WINDOW = envNumber('WINDOW', 512);
const MIN_SAMPLES = envNumber('MIN_SAMPLES', 5);
const MAX_TIME = envNumber('MAX_TIME', 3);
const PACED_RATE = envNumber('PACED_RATE', 250);
const PACED_PUTS = envNumber('PACED_PUTS', 500);
const S3_MAX_BYTES = envNumber('S3_MAX_BYTES', 1.2e9);
const STREAM_TABLES = envNumber('STREAM_TABLES', 40);
const SEQ_PUTS = envNumber('SEQ_PUTS', 1000);
const INFLIGHT = envNumber('INFLIGHT', 32);
const WARMUP_PUTS = envNumber('WARMUP_PUTS', 20);
const PEERS = envList('PEERS', 'lancedb').filter((p) => p !== 'none');
const TARGETS = envList('BENCH_TARGETS', 'local,s3');
const CASES = envList('BENCH_CASES', 'closed,stream,sequential,inflight32') as (CaseKind | LoopKind)[];
const HERE = path.dirname(new URL(import.meta.url).pathname);
const RESULTS_DIR = path.join(HERE, 'results');
const PEERS_DIR = path.join(HERE, 'peers');
for (const c of CASES) {
  if (!['closed', 'stream', 'sequential', 'inflight32'].includes(c)) throw new Error(`unknown case ${c} in BENCH_CASES (use closed, stream, sequential, inflight32)`);
}
for (const p of PEERS) if (p !== 'lancedb') throw new Error(`unknown peer ${p} in PEERS (use lancedb or none)`);
/** Targets of the put-loop cases (see the header comment). */
const SEQ_GAP_TARGET_MS = 2;
const INFLIGHT_VS_LANCEDB_TARGET = 10;

const writerOverrides: Partial<RegionWriterConfig> = {};
if (process.env.MAX_WAL_BUFFER_SIZE) writerOverrides.maxWalBufferSize = envNumber('MAX_WAL_BUFFER_SIZE', 0);
if (process.env.MAX_FLUSH_INTERVAL_MS) writerOverrides.maxWalFlushIntervalMs = envNumber('MAX_FLUSH_INTERVAL_MS', 0);
if (process.env.MAX_WAL_WRITES_IN_FLIGHT) writerOverrides.maxWalWritesInFlight = envNumber('MAX_WAL_WRITES_IN_FLIGHT', 0);
const writerConfig = { ...DEFAULT_WRITER_CONFIG, ...writerOverrides };

const MB = 1e6;
/** benny suites: a repeated op of NUM_BATCHES puts into a fresh table. */
type CaseKind = 'closed' | 'stream';
/** One timed run of SEQ_PUTS puts into one table. */
type LoopKind = 'sequential' | 'inflight32';

// ---- statistics ------------------------------------------------------------------------------

/** Percentile `p` in 0..100 of ascending `sorted` (the shared nearest rank, bench/lib/stats.ts). */
function percentile(sorted: Float64Array, p: number): number {
  return nearestRank(sorted, p / 100);
}
function sorted(values: Float64Array | number[]): Float64Array {
  return Float64Array.from(values).sort();
}
function concat(parts: Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

// ---- clients ---------------------------------------------------------------------------------

/**
 * Puts batches with at most `window` unacknowledged, across calls: the window belongs to the
 * writer, not to one op, so a `stream` op can start while the previous op's puts are in flight.
 * Records each put's ack latency (resolve time − call time, ms).
 */
class WindowedWriter {
  private issued = 0;
  private acked = 0;
  private error: unknown;
  private roomWaiter: (() => void) | undefined;
  private ackWaiters: { count: number; resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(private readonly window: number) {}

  get outstanding(): number {
    return this.issued - this.acked;
  }
  get ackedCount(): number {
    return this.acked;
  }

  /** Issues every batch (waiting for room in the window); resolves once all are issued. */
  async putAll(table: Table, batches: readonly RecordBatch[], latency: Float64Array): Promise<void> {
    for (let i = 0; i < batches.length; i++) {
      if (this.error) throw this.error;
      if (this.outstanding >= this.window) await new Promise<void>((r) => (this.roomWaiter = r));
      if (this.error) throw this.error;
      this.issued++;
      const start = performance.now();
      table.put(batches[i]).then(
        () => {
          latency[i] = performance.now() - start;
          this.acked++;
          this.wake();
        },
        (e) => {
          this.error ??= e;
          this.wake();
        },
      );
    }
  }

  /** Resolves once `count` puts in all have been acknowledged. */
  whenAcked(count: number): Promise<void> {
    if (this.error) return Promise.reject(this.error);
    if (this.acked >= count) return Promise.resolve();
    return new Promise((resolve, reject) => this.ackWaiters.push({ count, resolve, reject }));
  }

  private wake(): void {
    const room = this.roomWaiter;
    if (room && (this.error || this.outstanding < this.window)) {
      this.roomWaiter = undefined;
      room();
    }
    if (this.ackWaiters.length === 0) return;
    const still: typeof this.ackWaiters = [];
    for (const w of this.ackWaiters) {
      if (this.error) w.reject(this.error);
      else if (this.acked >= w.count) w.resolve();
      else still.push(w);
    }
    this.ackWaiters = still;
  }
}

/** Calls `table.put` at a fixed rate (open loop), whatever the acks do. */
async function putPaced(table: Table, batches: readonly RecordBatch[], ratePerSec: number, latency: Float64Array): Promise<void> {
  const t0 = performance.now();
  const acks: Promise<void>[] = [];
  for (let i = 0; i < batches.length; i++) {
    const wait = t0 + (i * 1000) / ratePerSec - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const start = performance.now();
    acks.push(table.put(batches[i]).then(() => void (latency[i] = performance.now() - start)));
  }
  await Promise.all(acks);
}

/**
 * Creates a table and opens its region writer, so that timed puts do not include the region
 * claim, WAL replay and fence sentinel. There is no "open writer" call: a one-row put (a copy
 * of the first row, which the real first batch then supersedes) starts the open, and
 * `writerStats()` resolves once the writer is open. That row rides in the first WAL entry.
 */
async function openTable(db: Database, name: string, schema: Schema, first: RecordBatch): Promise<{ table: Table; warm: Promise<void> }> {
  const table = await db.createTable(name, schema, { primaryKey: 'id' });
  const warm = table.put(first.slice(0, 1));
  await table.writerStats();
  return { table, warm };
}

// ---- one target ------------------------------------------------------------------------------

interface Target {
  description: string;
  store: TimingStore;
  cleanup(): Promise<void>;
}

async function openTarget(name: string): Promise<Target> {
  if (name === 'local') {
    const parent = process.env.BENCH_DIR ?? os.tmpdir();
    await mkdir(parent, { recursive: true });
    const dir = await mkdtemp(path.join(parent, 'quiver-bench-'));
    const store = new TimingStore(new RetryingObjectStore(new LocalObjectStore(dir, { fsync: true })));
    return {
      description: `local directory ${dir} (fsync on)`,
      store,
      cleanup: async () => {
        await store.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  if (name === 's3') {
    const env = loadS3Env();
    const bucket = await makeTestBucketStore();
    const store = new TimingStore(new RetryingObjectStore(bucket.store));
    return {
      description: `radosgw ${env.endpoint}, bucket ${bucket.bucket} (If-None-Match PUTs)`,
      store,
      cleanup: async () => {
        await store.close();
        await bucket.cleanup();
        collectRadosgwGarbage();
      },
    };
  }
  throw new Error(`unknown target ${name} (use local or s3)`);
}

interface CaseResult {
  target: string;
  case: CaseKind;
  storage: string;
  bytesPerOp: number;
  benny: { opsPerSec: number; mbPerSec: number; samples: number; marginPct: number };
  /** closed: first put to last ack; stream: between successive "N more acks" points. */
  put: { ops: number; mbPerSecMedian: number; mbPerSecAggregate: number; opMsMedian: number; cpuMsMedian: number };
  ackMs: { puts: number; p50: number; p90: number; p99: number; max: number };
  wal: { entries: number; entryMbMean: number; putMsP50: number; putMsP99: number };
  loadAvg: number;
}

interface TargetExtras {
  target: string;
  ceiling: { mbPerSec: number; putMsP50: number; objectMb: number; inFlight: number };
  paced: { ratePutsPerSec: number; offeredMbPerSec: number; puts: number; ackMsP50: number; ackMsP99: number; ackMsMax: number; walPutMsP50: number };
  ackBoundMs: number;
  closeMs: number;
}

async function runCase(
  kind: CaseKind,
  targetName: string,
  target: Target,
  db: Database,
  schema: Schema,
  batches: RecordBatch[],
): Promise<CaseResult> {
  const bytesPerOp = estimatedBytes(batches, VECTOR_DIM);
  const opMs: number[] = [];
  const opCpuMs: number[] = [];
  const latencies: Float64Array[] = [];
  const writer = new WindowedWriter(WINDOW);
  let seq = 0;
  let written = 0;
  let opError: unknown;
  let probed = false;
  const tableName = () => `${kind}_${seq++}`;
  target.store.reset();

  const closedOp = async (): Promise<void> => {
    const { table, warm } = await openTable(db, tableName(), schema, batches[0]);
    const latency = new Float64Array(batches.length);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await writer.putAll(table, batches, latency);
    await writer.whenAcked(writer.ackedCount + writer.outstanding);
    opMs.push(performance.now() - t0);
    const cpu = process.cpuUsage(cpu0);
    opCpuMs.push((cpu.user + cpu.system) / 1000);
    latencies.push(latency);
    await warm;
  };

  // The stream writes a fresh table per op too; creating one costs several small fsynced (or
  // S3) writes, which queue behind the WAL's large ones and would stall the stream between ops.
  // So tables are opened ahead, before timing starts, and topped up in the background.
  const ready: Promise<{ table: Table; warm: Promise<void> }>[] = [];
  const prepare = () => {
    const p = openTable(db, tableName(), schema, batches[0]);
    p.catch(() => {});
    ready.push(p);
  };
  if (kind === 'stream') {
    for (let i = 0; i < STREAM_TABLES; i++) prepare();
    await Promise.all(ready);
  }
  let streamMark = 0;
  let streamT0 = 0;
  const streamOp = async (): Promise<void> => {
    const cpu0 = process.cpuUsage();
    if (opMs.length === 0 && streamT0 === 0) streamT0 = performance.now();
    if (ready.length < 4) prepare();
    const { table } = await ready.shift()!;
    const latency = new Float64Array(batches.length);
    latencies.push(latency);
    await writer.putAll(table, batches, latency);
    // N more acknowledgements than at the end of the previous op: steady-state progress.
    streamMark += batches.length;
    await writer.whenAcked(Math.max(0, streamMark - WINDOW));
    const now = performance.now();
    opMs.push(now - streamT0);
    streamT0 = now;
    const cpu = process.cpuUsage(cpu0);
    opCpuMs.push((cpu.user + cpu.system) / 1000);
  };

  const op = async (): Promise<void> => {
    if (opError) return;
    try {
      if (targetName === 's3' && (written += bytesPerOp) > S3_MAX_BYTES) {
        throw new Error(`s3 case ${kind} would write more than S3_MAX_BYTES=${S3_MAX_BYTES} (the test server holds objects in RAM); lower MAX_TIME`);
      }
      await (kind === 'closed' ? closedOp() : streamOp());
    } catch (e) {
      opError ??= e;
      console.error(`op failed: ${(e as Error).stack ?? String(e)}`);
    }
  };

  const loadAvg = os.loadavg()[0];
  const summary = await suite(
    `write-${targetName}-${kind}`,
    configure({ minDisplayPrecision: 2 }),
    add(
      `${targetName} ${kind}: ${NUM_BATCHES} x ${BATCH_SIZE} rows, window ${WINDOW}`,
      () => () => {
        // benny calls the returned function once, unawaited, to see whether it returns a
        // promise; skip that call so that no op ever overlaps another.
        if (!probed) {
          probed = true;
          return Promise.resolve();
        }
        return op();
      },
      { minSamples: MIN_SAMPLES, maxTime: MAX_TIME },
    ),
    cycle(),
    complete(),
    save({ file: `write-benny-${targetName}-${kind}`, folder: RESULTS_DIR, format: 'json' }),
  );
  // Drain (untimed): every put of the stream must still be acknowledged.
  if (!opError) await writer.whenAcked(writer.ackedCount + writer.outstanding).catch((e) => (opError ??= e));
  await Promise.all(ready.map((p) => p.then((n) => n.warm))).catch(() => {});
  if (opError) throw opError;

  const r = summary.results[0];
  const opMbs = opMs.map((ms) => bytesPerOp / MB / (ms / 1000));
  const lat = sorted(concat(latencies));
  // The fence sentinel written at writer open is a WAL PUT too, but carries no rows.
  const dataEntries = target.store.walPutBytes.map((b, i) => [b, target.store.walPutMs[i]]).filter(([b]) => b > 4096);
  const walMs = sorted(dataEntries.map(([, ms]) => ms));
  return {
    target: targetName,
    case: kind,
    storage: target.description,
    bytesPerOp,
    benny: { opsPerSec: r.ops, mbPerSec: (r.ops * bytesPerOp) / MB, samples: r.samples, marginPct: r.margin },
    put: {
      ops: opMs.length,
      mbPerSecMedian: percentile(sorted(opMbs), 50),
      mbPerSecAggregate: (bytesPerOp * opMs.length) / MB / (opMs.reduce((a, b) => a + b, 0) / 1000),
      opMsMedian: percentile(sorted(opMs), 50),
      // Process CPU (main thread + libuv pool) per op; about 2 × op ms means both cores busy.
      cpuMsMedian: percentile(sorted(opCpuMs), 50),
    },
    ackMs: { puts: lat.length, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), max: lat[lat.length - 1] },
    wal: {
      entries: dataEntries.length,
      entryMbMean: dataEntries.reduce((n, [b]) => n + b, 0) / Math.max(1, dataEntries.length) / MB,
      putMsP50: percentile(walMs, 50),
      putMsP99: percentile(walMs, 99),
    },
    loadAvg,
  };
}

/**
 * The storage floor: raw `putIfAbsent` of WAL-sized objects (the mean entry size of the stream
 * case, or 10 MiB) with maxWalWritesInFlight in flight, no encoding — what the write path could
 * reach if everything above storage were free.
 */
async function storeCeiling(target: Target, entryBytes: number): Promise<{ mbPerSec: number; putMsP50: number; objectMb: number; inFlight: number }> {
  const size = Math.max(1 << 20, Math.round(entryBytes));
  const count = Math.ceil(300e6 / size); // ~300 MB: long enough to be more than a burst
  const inFlight = writerConfig.maxWalWritesInFlight;
  const body = new Uint8Array(size).fill(0x5a);
  const ms: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) {
        const key = `ceiling/${next++}.bin`;
        const s = performance.now();
        await target.store.inner.putIfAbsent(key, body);
        ms.push(performance.now() - s);
      }
    }),
  );
  const elapsed = performance.now() - t0;
  await Promise.all(Array.from({ length: count }, (_, i) => target.store.delete(`ceiling/${i}.bin`)));
  return { mbPerSec: (count * size) / MB / (elapsed / 1000), putMsP50: percentile(sorted(ms), 50), objectMb: size / MB, inFlight };
}

async function pacedAndClose(
  target: Target,
  db: Database,
  schema: Schema,
  batches: RecordBatch[],
  targetName: string,
  entryBytes: number,
): Promise<TargetExtras> {
  const ceiling = await storeCeiling(target, entryBytes);
  // A light load: entries are cut by the group-commit timer, not by the buffer size.
  const pacedBatches = batches.slice(0, Math.min(PACED_PUTS, batches.length));
  const { table, warm } = await openTable(db, `paced`, schema, batches[0]);
  await warm;
  target.store.reset();
  const latency = new Float64Array(pacedBatches.length);
  await putPaced(table, pacedBatches, PACED_RATE, latency);
  const lat = sorted(latency);
  const walPutMsP50 = percentile(sorted(target.store.walPutMs), 50);
  const c0 = performance.now();
  await table.close();
  const closeMs = performance.now() - c0;
  return {
    target: targetName,
    ceiling,
    paced: {
      ratePutsPerSec: PACED_RATE,
      offeredMbPerSec: (PACED_RATE * BATCH_SIZE * estimatedRowBytes(VECTOR_DIM)) / MB,
      puts: pacedBatches.length,
      ackMsP50: percentile(lat, 50),
      ackMsP99: percentile(lat, 99),
      ackMsMax: lat[lat.length - 1],
      walPutMsP50,
    },
    ackBoundMs: writerConfig.maxWalFlushIntervalMs + walPutMsP50,
    closeMs,
  };
}

// ---- put loops: sequential and a fixed number in flight -----------------------------------

interface LoopResult {
  target: string;
  case: LoopKind;
  storage: string;
  /** Puts outstanding: 1 for `sequential`, INFLIGHT for `inflight32`. */
  inFlight: number;
  puts: number;
  rows: number;
  bytes: number;
  /** First put call to last ack. */
  elapsedMs: number;
  putsPerSec: number;
  rowsPerSec: number;
  mbPerSec: number;
  /** Process CPU (all threads) over the run. */
  cpuMs: number;
  ackMs: { p50: number; p90: number; p99: number; max: number };
  wal: { entries: number; entryKbMean: number; putMsP50: number; putMsP99: number };
  /** sequential: p50(ack) − p50(WAL PUT), the figure the ≤ 2 ms target is about. */
  gapMsP50?: number;
  /**
   * sequential, when every put maps to exactly one WAL entry: p50 of each part of a put —
   * call to PUT start, the PUT, PUT end to ack — and of the per-put overhead (before + after).
   */
  split?: { beforePutMsP50: number; putMsP50: number; afterPutMsP50: number; overheadMsP50: number; overheadMsP99: number };
  loadAvg: number;
}

function loopLabel(kind: LoopKind): string {
  return kind === 'sequential' ? 'sequential' : `inflight${INFLIGHT}`;
}

async function runPutLoop(
  kind: LoopKind,
  targetName: string,
  target: Target,
  db: Database,
  schema: Schema,
  batches: RecordBatch[],
  warmup: RecordBatch[],
): Promise<LoopResult> {
  const inFlight = kind === 'sequential' ? 1 : INFLIGHT;
  // One table for the whole run, opened (region claimed, WAL replayed and fenced) and warmed
  // with puts of other ids before timing, so the first timed puts pay no one-off costs.
  const { table, warm } = await openTable(db, kind, schema, warmup[0] ?? batches[0]);
  await warm;
  for (const b of warmup) await table.put(b);
  target.store.reset();

  const callAt = new Float64Array(batches.length);
  const latency = new Float64Array(batches.length);
  const loadAvg = os.loadavg()[0];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (kind === 'sequential') {
    for (let i = 0; i < batches.length; i++) {
      const start = (callAt[i] = performance.now());
      await table.put(batches[i]);
      latency[i] = performance.now() - start;
    }
  } else {
    // WindowedWriter issues the next put as soon as an ack makes room: always INFLIGHT
    // outstanding until the last batch is issued.
    const writer = new WindowedWriter(inFlight);
    await writer.putAll(table, batches, latency);
    await writer.whenAcked(batches.length);
  }
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);

  const store = target.store;
  // Entries carrying rows (the fence sentinel at open carries none), in completion order.
  const data = store.walPutBytes.flatMap((b, i) => (b > 4096 ? [{ bytes: b, ms: store.walPutMs[i], start: store.walPutStartMs[i] }] : []));
  const walMs = sorted(data.map((d) => d.ms));
  const lat = sorted(latency);
  const rows = batches.reduce((n, b) => n + b.numRows, 0);
  const bytes = estimatedBytes(batches, VECTOR_DIM);
  const result: LoopResult = {
    target: targetName,
    case: kind,
    storage: target.description,
    inFlight,
    puts: batches.length,
    rows,
    bytes,
    elapsedMs,
    putsPerSec: batches.length / (elapsedMs / 1000),
    rowsPerSec: rows / (elapsedMs / 1000),
    mbPerSec: bytes / MB / (elapsedMs / 1000),
    cpuMs: (cpu.user + cpu.system) / 1000,
    ackMs: { p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), max: lat[lat.length - 1] },
    wal: {
      entries: data.length,
      entryKbMean: data.reduce((n, d) => n + d.bytes, 0) / Math.max(1, data.length) / 1e3,
      putMsP50: percentile(walMs, 50),
      putMsP99: percentile(walMs, 99),
    },
    loadAvg,
  };
  if (kind === 'sequential') {
    result.gapMsP50 = result.ackMs.p50 - result.wal.putMsP50;
    // One put at a time and nothing in flight between puts: put i is WAL entry i. If that does
    // not hold (an entry cut differently), the split is left out rather than guessed.
    if (data.length === batches.length) {
      const before = new Float64Array(data.length);
      const after = new Float64Array(data.length);
      for (let i = 0; i < data.length; i++) {
        before[i] = data[i].start - callAt[i];
        after[i] = callAt[i] + latency[i] - (data[i].start + data[i].ms);
      }
      if (before.every((x) => x >= 0) && after.every((x) => x >= 0)) {
        const overhead = sorted(before.map((b, i) => b + after[i]));
        result.split = {
          beforePutMsP50: percentile(sorted(before), 50),
          putMsP50: result.wal.putMsP50,
          afterPutMsP50: percentile(sorted(after), 50),
          overheadMsP50: percentile(overhead, 50),
          overheadMsP99: percentile(overhead, 99),
        };
      }
    }
  }
  return result;
}

// ---- the LanceDB peer ----------------------------------------------------------------------

type PeerOutcome = { status: 'ok'; result: LanceDbWriteResult; loadAvg: number } | { status: 'skipped' | 'failed'; reason: string };

/** Runs `node --import=tsx <script> ...` from the repository root; resolves with its stdout. */
function runNodeChild(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', ...args], { cwd: path.dirname(HERE), env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code, signal) => (code === 0 ? resolve(out) : reject(new Error(`exited with ${signal ?? `code ${code}`}`))));
  });
}

/**
 * LanceDB's sequential add() of the very batches Quiver's put loops write: they go to the child
 * as one Arrow IPC stream (one record batch per add), since the peer has its own apache-arrow.
 * A missing sub-package or a failing peer is reported, never fatal: the Quiver figures stand.
 */
async function runLanceDbPeer(batches: RecordBatch[]): Promise<PeerOutcome> {
  if (!existsSync(path.join(PEERS_DIR, 'node_modules', '@lancedb', 'lancedb', 'package.json'))) {
    const reason = 'bench/peers is not installed; run `npm --prefix bench/peers ci` to compare with LanceDB';
    console.log(`\n== LanceDB peer skipped: ${reason}`);
    return { status: 'skipped', reason };
  }
  console.log(`\n== LanceDB peer: ${batches.length} sequential add() of ${BATCH_SIZE} rows (child process)`);
  const dir = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'quiver-bench-peer-'));
  try {
    const file = path.join(dir, 'batches.arrow');
    await writeFile(file, tableToIPC(new ArrowTable(batches), 'stream'));
    const loadAvg = os.loadavg()[0];
    const out = await runNodeChild([path.join(PEERS_DIR, 'lancedb-write.ts'), file], {
      ...process.env,
      ROW_BYTES: String(estimatedRowBytes(VECTOR_DIM)),
      WARMUP_ADDS: String(WARMUP_PUTS),
    });
    return { status: 'ok', result: JSON.parse(out.trim().split('\n').at(-1) ?? '') as LanceDbWriteResult, loadAvg };
  } catch (e) {
    const reason = `LanceDB peer failed: ${(e as Error).message}`;
    console.error(reason);
    return { status: 'failed', reason };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// ---- per target ----------------------------------------------------------------------------

async function benchTarget(
  name: string,
  schema: Schema,
  batches: RecordBatch[],
  loopBatches: RecordBatch[],
  warmup: RecordBatch[],
): Promise<{ cases: CaseResult[]; loops: LoopResult[]; extras: TargetExtras }> {
  const cases: CaseResult[] = [];
  const loops: LoopResult[] = [];
  let extras: TargetExtras | undefined;
  // A fresh directory / bucket per case, removed right after it.
  for (const kind of [...CASES, 'paced' as const]) {
    const target = await openTarget(name);
    if (kind !== 'paced') console.log(`\n== ${name} ${kind === 'inflight32' ? loopLabel(kind) : kind}: ${target.description}`);
    try {
      const db = await connect('memory://', { store: target.store, writer: writerOverrides });
      // The storage ceiling uses the entry size of the last benny case (the put loops cut far
      // smaller entries, which would say little about the ceiling).
      const entryBytes = (cases.at(-1)?.wal.entryMbMean ?? writerConfig.maxWalBufferSize / MB) * MB;
      if (kind === 'paced') extras = await pacedAndClose(target, db, schema, batches, name, entryBytes);
      else if (kind === 'sequential' || kind === 'inflight32') {
        const r = await runPutLoop(kind, name, target, db, schema, loopBatches, warmup);
        loops.push(r);
        console.log(
          `${r.puts} puts, ${fmt(r.putsPerSec, 0)} puts/s, ${fmt(r.mbPerSec)} MB/s; ack p50 ${fmt(r.ackMs.p50, 2)} ms p99 ${fmt(r.ackMs.p99, 2)} ms; ` +
            `WAL PUT p50 ${fmt(r.wal.putMsP50, 2)} ms over ${r.wal.entries} entries` +
            (r.gapMsP50 === undefined ? '' : `; gap p50 ${fmt(r.gapMsP50, 2)} ms`),
        );
      } else cases.push(await runCase(kind, name, target, db, schema, batches));
    } finally {
      // The throughput tables go with the storage, unclosed (see the header comment).
      await target.cleanup();
    }
  }
  return { cases, loops, extras: extras! };
}

// ---- report ----------------------------------------------------------------------------------

const TARGET_MBPS: Record<string, number> = { local: 300, s3: 100 };

function fmt(x: number, digits = 1): string {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

function caseRows(results: CaseResult[]): Record<string, string>[] {
  return results.map((r) => ({
    target: r.target,
    case: r.case,
    'put MB/s': fmt(r.put.mbPerSecMedian),
    'benny MB/s': `${fmt(r.benny.mbPerSec)} ±${fmt(r.benny.marginPct, 0)}%`,
    'ack p50 ms': fmt(r.ackMs.p50),
    'ack p99 ms': fmt(r.ackMs.p99),
    'op / CPU ms': `${fmt(r.put.opMsMedian, 0)} / ${fmt(r.put.cpuMsMedian, 0)}`,
    'WAL PUT p50 ms': fmt(r.wal.putMsP50),
    'entry MB': fmt(r.wal.entryMbMean, 2),
    ops: String(r.put.ops),
    goal: `${TARGET_MBPS[r.target] ?? '?'} MB/s`,
  }));
}

function extraRows(extras: TargetExtras[]): Record<string, string>[] {
  return extras.map((e) => ({
    target: e.target,
    'raw PUT MB/s': `${fmt(e.ceiling.mbPerSec)} (${fmt(e.ceiling.objectMb)} MB x${e.ceiling.inFlight}, p50 ${fmt(e.ceiling.putMsP50, 0)} ms)`,
    'paced load': `${e.paced.ratePutsPerSec} puts/s (${fmt(e.paced.offeredMbPerSec)} MB/s)`,
    'ack p50 ms': fmt(e.paced.ackMsP50),
    'ack p99 ms': fmt(e.paced.ackMsP99),
    'bound ms (interval + PUT p50)': `${fmt(e.ackBoundMs)} (${writerConfig.maxWalFlushIntervalMs} + ${fmt(e.paced.walPutMsP50)})`,
    'close ms (1 table)': fmt(e.closeMs, 0),
  }));
}

function loopRows(loops: LoopResult[]): Record<string, string>[] {
  return loops.map((r) => ({
    target: r.target,
    case: loopLabel(r.case),
    'in flight': String(r.inFlight),
    puts: String(r.puts),
    'puts/s': fmt(r.putsPerSec, 0),
    'MB/s': fmt(r.mbPerSec),
    'rows/s': fmt(r.rowsPerSec, 0),
    'ack p50 ms': fmt(r.ackMs.p50, 2),
    'ack p99 ms': fmt(r.ackMs.p99, 2),
    'WAL PUT p50 ms': fmt(r.wal.putMsP50, 2),
    'gap p50 ms': r.gapMsP50 === undefined ? '—' : fmt(r.gapMsP50, 2),
    'before / PUT / after ms': r.split ? `${fmt(r.split.beforePutMsP50, 2)} / ${fmt(r.split.putMsP50, 2)} / ${fmt(r.split.afterPutMsP50, 2)}` : '—',
    'entries (KB mean)': `${r.wal.entries} (${fmt(r.wal.entryKbMean, 0)})`,
    'CPU ms': fmt(r.cpuMs, 0),
  }));
}

/** Quiver's put loops and LanceDB's sequential add on the same batches, with the ratio to LanceDB. */
function sideBySideRows(loops: LoopResult[], peer: PeerOutcome | undefined): Record<string, string>[] {
  const lance = peer?.status === 'ok' ? peer.result : undefined;
  const ratio = (mbs: number) => (lance ? `${fmt(mbs / lance.mbPerSec, 1)}×` : 'n/a');
  const rows = loops.map((r) => ({
    engine: 'Quiver',
    case: r.case === 'sequential' ? 'sequential put' : `${r.inFlight} puts in flight`,
    storage: r.target === 'local' ? 'local dir, fsync' : 'radosgw (S3), loopback',
    'ack p50 ms': fmt(r.ackMs.p50, 2),
    'ack p99 ms': fmt(r.ackMs.p99, 2),
    'MB/s': fmt(r.mbPerSec),
    'rows/s': fmt(r.rowsPerSec, 0),
    'vs LanceDB seq.': ratio(r.mbPerSec),
    // The figures move with whatever else the 2 cores run; this says how busy they were.
    'load avg': fmt(r.loadAvg, 2),
  }));
  if (lance) {
    rows.push({
      engine: `LanceDB ${lance.version}`,
      case: 'sequential add()',
      storage: 'local dir, no fsync',
      'ack p50 ms': fmt(lance.addMs.p50, 2),
      'ack p99 ms': fmt(lance.addMs.p99, 2),
      'MB/s': fmt(lance.mbPerSec),
      'rows/s': fmt(lance.rowsPerSec, 0),
      'vs LanceDB seq.': '1.0×',
      'load avg': fmt(peer?.status === 'ok' ? peer.loadAvg : NaN, 2),
    });
  }
  return rows;
}

function loopVerdicts(loops: LoopResult[], peer: PeerOutcome | undefined): string[] {
  const out: string[] = [];
  const lance = peer?.status === 'ok' ? peer.result : undefined;
  for (const r of loops) {
    if (r.case === 'sequential') {
      const gap = r.gapMsP50 ?? NaN;
      const split = r.split
        ? ` Per put (p50): ${fmt(r.split.beforePutMsP50, 2)} ms before the WAL PUT starts (validate, append, encode, index), ${fmt(r.split.putMsP50, 2)} ms PUT, ${fmt(r.split.afterPutMsP50, 2)} ms from PUT end to ack.`
        : '';
      out.push(
        `- ${r.target} sequential: ack p50 ${fmt(r.ackMs.p50, 2)} ms vs WAL PUT p50 ${fmt(r.wal.putMsP50, 2)} ms: gap ${fmt(gap, 2)} ms ` +
          `${gap <= SEQ_GAP_TARGET_MS ? 'meets' : 'misses'} the ≤ ${SEQ_GAP_TARGET_MS} ms target.${split}`,
      );
    } else {
      const verdict = lance
        ? `${fmt(r.mbPerSec / lance.mbPerSec, 1)}× LanceDB's sequential add() (${fmt(lance.mbPerSec)} MB/s): ${r.mbPerSec >= INFLIGHT_VS_LANCEDB_TARGET * lance.mbPerSec ? 'meets' : 'misses'} the ≥ ${INFLIGHT_VS_LANCEDB_TARGET}× target`
        : `not compared (LanceDB peer ${peer?.status ?? 'not run'}: ${peer && peer.status !== 'ok' ? peer.reason : 'PEERS=none'})`;
      out.push(`- ${r.target} ${loopLabel(r.case)}: ${fmt(r.mbPerSec)} MB/s, ${fmt(r.rowsPerSec, 0)} rows/s; ${verdict}.`);
    }
  }
  if (lance) {
    out.push(
      `- LanceDB ${lance.version} sequential add(): p50 ${fmt(lance.addMs.p50, 2)} ms, p99 ${fmt(lance.addMs.p99, 2)} ms, ${fmt(lance.mbPerSec)} MB/s; ` +
        `p50 in the first / last tenth of the run ${fmt(lance.addMsP50ByTenth[0] ?? NaN, 2)} / ${fmt(lance.addMsP50ByTenth.at(-1) ?? NaN, 2)} ms (each add commits a table version listing every fragment so far) — ` +
        'without fsync: its local object store writes and renames files but never syncs them (strace of 0.31.0: no fsync/fdatasync in 120 adds), so its ack is a page-cache write, Quiver\'s local ack an fsynced one.',
    );
  } else if (peer && peer.status !== 'ok') out.push(`- LanceDB peer ${peer.status}: ${peer.reason}`);
  return out;
}

function mdTable(rows: Record<string, string>[]): string[] {
  const headers = Object.keys(rows[0] ?? {});
  return [`| ${headers.join(' | ')} |`, `| ${headers.map(() => '---').join(' | ')} |`, ...rows.map((row) => `| ${headers.map((h) => row[h]).join(' | ')} |`)];
}

function verdicts(cases: CaseResult[], extras: TargetExtras[]): string[] {
  const out: string[] = [];
  for (const r of cases) {
    const goal = TARGET_MBPS[r.target] ?? 0;
    const bound = writerConfig.maxWalFlushIntervalMs + r.wal.putMsP50;
    out.push(
      `- ${r.target} ${r.case}: ${fmt(r.put.mbPerSecMedian)} MB/s ${r.put.mbPerSecMedian >= goal ? 'meets' : 'misses'} the ${goal} MB/s goal; ` +
        `ack p50 ${fmt(r.ackMs.p50)} ms ${r.ackMs.p50 <= bound ? 'within' : 'over'} interval + WAL PUT p50 = ${fmt(bound)} ms (load average at start ${fmt(r.loadAvg, 2)}).`,
    );
  }
  for (const e of extras) {
    out.push(
      `- ${e.target} paced: ack p50 ${fmt(e.paced.ackMsP50)} ms ${e.paced.ackMsP50 <= e.ackBoundMs ? 'within' : 'over'} the bound ${fmt(e.ackBoundMs)} ms (one ${writerConfig.maxWalFlushIntervalMs} ms group-commit interval + one WAL PUT, p50 ${fmt(e.paced.walPutMsP50)} ms).`,
    );
  }
  return out;
}

function markdown(cases: CaseResult[], extras: TargetExtras[], loops: LoopResult[], peer: PeerOutcome | undefined, meta: Record<string, unknown>): string {
  return [
    '# Write benchmark',
    '',
    `\`npm run bench:write\`, ${String(meta.date)}: ${String(meta.cpus)} × ${String(meta.cpuModel)}, Node ${process.version}.`,
    '',
    `Rows: id Int64, vector FixedSizeList<Float32>[${VECTOR_DIM}], text Utf8; counted as ${estimatedRowBytes(VECTOR_DIM)} B a row (Lance's estimate), MB = 10^6 B.`,
    `One op = ${NUM_BATCHES} batches of ${BATCH_SIZE} rows (${fmt((NUM_BATCHES * BATCH_SIZE * estimatedRowBytes(VECTOR_DIM)) / MB)} MB) into a fresh table, durable acks, up to ${WINDOW} puts outstanding.`,
    `Writer: maxWalBufferSize ${writerConfig.maxWalBufferSize} B, maxWalFlushIntervalMs ${writerConfig.maxWalFlushIntervalMs}, maxWalWritesInFlight ${writerConfig.maxWalWritesInFlight}. Local: fsync on. S3: radosgw on loopback, If-None-Match PUTs.`,
    '',
    ...mdTable(caseRows(cases)),
    '',
    '- *closed*: create the table and open its writer (untimed in *put MB/s*, timed by benny), put every batch, wait for every ack; the last partial WAL entry waits for the group-commit timer.',
    '- *stream*: the window carries across ops; an op ends once N more puts are acknowledged (steady state); the fresh tables are opened before timing.',
    '- *ack*: resolve − call time of every put, window full, so queueing behind the window is included.',
    '- *op / CPU ms*: median op time and the process CPU (all threads) it used; 2 cores here.',
    '- *raw PUT MB/s*: `putIfAbsent` of WAL-sized objects with no encoding, maxWalWritesInFlight in flight: the storage ceiling.',
    '',
    ...mdTable(extraRows(extras)),
    '',
    ...verdicts(cases, extras),
    '',
    '## Put loops: one put at a time, and a fixed number in flight',
    '',
    `${SEQ_PUTS} puts of ${BATCH_SIZE} rows (${fmt((SEQ_PUTS * BATCH_SIZE * estimatedRowBytes(VECTOR_DIM)) / MB)} MB) into one fresh table per case, warmed with ${WARMUP_PUTS} puts of other ids; throughput from the first put to the last ack. Writer as above (leader/follower group commit: a put with no WAL write in flight is written at once).`,
    '',
    ...(loops.length ? mdTable(loopRows(loops)) : ['(no put-loop case run)']),
    '',
    '- *gap*: p50 of the ack latency minus p50 of the WAL PUTs of the same case (target ≤ 2 ms for `sequential`).',
    '- *before / PUT / after*: `sequential` only, p50 of each part of a put: from the call until its WAL PUT starts (validation, MemTable append, entry encode, indexing), the PUT itself (local: temp file write + fsync, link, directory fsync), and from the PUT\'s end to the ack.',
    '',
    '## Side by side with LanceDB (same batches, same machine, same run)',
    '',
    ...(loops.length || peer?.status === 'ok' ? mdTable(sideBySideRows(loops, peer)) : ['(nothing to compare)']),
    '',
    ...loopVerdicts(loops, peer),
    '',
  ].join('\n');
}

// ---- main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const schema = benchSchema(VECTOR_DIM);
  const g0 = performance.now();
  const batches = makeBatches(schema, NUM_BATCHES, BATCH_SIZE);
  console.log(`generated ${NUM_BATCHES} batches x ${BATCH_SIZE} rows (${fmt(estimatedBytes(batches, VECTOR_DIM) / MB)} MB) in ${fmt(performance.now() - g0, 0)} ms`);
  console.log(`writer config: ${JSON.stringify(writerConfig)}`);

  // The put loops and the peer write the first SEQ_PUTS batches; the warm-up puts other ids.
  const loopBatches = SEQ_PUTS <= batches.length ? batches.slice(0, SEQ_PUTS) : makeBatches(schema, SEQ_PUTS, BATCH_SIZE);
  const warmup = makeBatches(schema, WARMUP_PUTS, BATCH_SIZE, 100_000_000);

  // The peer goes first, alone on a quiet machine: run after the radosgw cases it would share
  // the cores with ceph's deletes and garbage collection, which would flatter Quiver's ratio.
  const peer = PEERS.includes('lancedb') ? await runLanceDbPeer(loopBatches) : undefined;
  const cases: CaseResult[] = [];
  const loops: LoopResult[] = [];
  const extras: TargetExtras[] = [];
  for (const name of TARGETS) {
    const r = await benchTarget(name, schema, batches, loopBatches, warmup);
    cases.push(...r.cases);
    loops.push(...r.loops);
    extras.push(r.extras);
  }

  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    settings: { BATCH_SIZE, NUM_BATCHES, VECTOR_DIM, WINDOW, MIN_SAMPLES, MAX_TIME, PACED_RATE, PACED_PUTS, SEQ_PUTS, INFLIGHT, WARMUP_PUTS, rowBytes: estimatedRowBytes(VECTOR_DIM) },
    writer: writerConfig,
  };
  console.log("\nWrite benchmark (MB = 10^6 bytes by Lance's row estimate):");
  if (cases.length) console.table(caseRows(cases));
  console.table(extraRows(extras));
  for (const line of verdicts(cases, extras)) console.log(line);
  if (loops.length) console.table(loopRows(loops));
  if (loops.length || peer?.status === 'ok') console.table(sideBySideRows(loops, peer));
  for (const line of loopVerdicts(loops, peer)) console.log(line);
  await mkdir(RESULTS_DIR, { recursive: true });
  const results = { ...meta, cases, extras, putLoops: loops, peers: { lancedb: peer ?? { status: 'skipped', reason: 'PEERS=none' } }, sideBySide: sideBySideRows(loops, peer) };
  await writeFile(path.join(RESULTS_DIR, 'write.json'), JSON.stringify(results, null, 2) + '\n');
  await writeFile(path.join(RESULTS_DIR, 'write.md'), markdown(cases, extras, loops, peer, meta));
  console.log(`\nSaved to: ${path.join(RESULTS_DIR, 'write.json')} and write.md`);
}

await main();
