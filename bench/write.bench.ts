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
 * Tables written by the throughput ops are not closed: closing would flush each into a
 * generation, work this benchmark does not measure, and the directory / bucket is removed right
 * after. Results: bench/results/write.json, write.md, and benny's write-benny-<target>-<case>.json.
 *
 * Knobs (environment): BENCH_TARGETS=local,s3  BENCH_CASES=closed,stream  BATCH_SIZE=20
 * NUM_BATCHES=1000  VECTOR_DIM=512  WINDOW=512  MIN_SAMPLES=5  MAX_TIME=3 (s, per case)
 * PACED_RATE=250  PACED_PUTS=500  MAX_WAL_BUFFER_SIZE, MAX_FLUSH_INTERVAL_MS,
 * MAX_WAL_WRITES_IN_FLIGHT (writer overrides)  BENCH_DIR (parent of the local temp directory)
 * STREAM_TABLES=40 (tables opened ahead for the stream case).
 * The radosgw test server keeps objects in 2 GiB of RAM: a case stops with an error rather than
 * write more than S3_MAX_BYTES (default 1.2 GB) before its bucket is emptied, and the server's
 * garbage collector is run after each case (see collectRadosgwGarbage).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { add, complete, configure, cycle, save, suite } from 'benny';
import type { RecordBatch, Schema } from 'apache-arrow';
import { connect, type Database } from '../src/database.js';
import { DEFAULT_WRITER_CONFIG, type RegionWriterConfig } from '../src/region/writer-config.js';
import { LocalObjectStore } from '../src/storage/local-store.js';
import { RetryingObjectStore } from '../src/storage/retrying-store.js';
import type { Table } from '../src/table/table.js';
import { loadS3Env, makeTestBucketStore, s3EnvPath } from '../test/helpers/s3-env.js';
import { benchSchema, estimatedBytes, estimatedRowBytes, makeBatches } from './data.js';
import { TimingStore } from './timing-store.js';
import { envNumber, envList } from './env.js';

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
const TARGETS = envList('BENCH_TARGETS', 'local,s3');
const CASES = envList('BENCH_CASES', 'closed,stream') as CaseKind[];
const RESULTS_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');

const writerOverrides: Partial<RegionWriterConfig> = {};
if (process.env.MAX_WAL_BUFFER_SIZE) writerOverrides.maxWalBufferSize = envNumber('MAX_WAL_BUFFER_SIZE', 0);
if (process.env.MAX_FLUSH_INTERVAL_MS) writerOverrides.maxWalFlushIntervalMs = envNumber('MAX_FLUSH_INTERVAL_MS', 0);
if (process.env.MAX_WAL_WRITES_IN_FLIGHT) writerOverrides.maxWalWritesInFlight = envNumber('MAX_WAL_WRITES_IN_FLIGHT', 0);
const writerConfig = { ...DEFAULT_WRITER_CONFIG, ...writerOverrides };

const MB = 1e6;
type CaseKind = 'closed' | 'stream';

// ---- statistics ------------------------------------------------------------------------------

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
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

/**
 * radosgw frees the tail stripes of deleted objects only in its garbage collector, two hours
 * later by default, and the test server keeps objects in 2 GiB of RAM: a few benchmark runs in a
 * row would fill it and stall every later write. When the test server's config is at hand
 * (test/s3/radosgw.sh), collect the garbage now. Best effort: a missing tool changes nothing.
 */
function collectRadosgwGarbage(): void {
  const conf = path.join(path.dirname(s3EnvPath()), 'ceph.conf');
  if (!existsSync(conf)) return;
  const r = spawnSync('radosgw-admin', ['-c', conf, 'gc', 'process', '--include-all'], { timeout: 60_000, stdio: 'ignore' });
  if (r.error || r.status !== 0) console.warn(`note: radosgw-admin gc process did not run (${r.error?.message ?? `exit ${r.status}`}); deleted objects stay in the server's memory until its own GC`);
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

async function benchTarget(name: string, schema: Schema, batches: RecordBatch[]): Promise<{ cases: CaseResult[]; extras: TargetExtras }> {
  const cases: CaseResult[] = [];
  let extras: TargetExtras | undefined;
  // A fresh directory / bucket per case, removed right after it.
  for (const kind of [...CASES, 'paced' as const]) {
    const target = await openTarget(name);
    if (kind !== 'paced') console.log(`\n== ${name} ${kind}: ${target.description}`);
    try {
      const db = await connect('memory://', { store: target.store, writer: writerOverrides });
      const entryBytes = (cases.at(-1)?.wal.entryMbMean ?? writerConfig.maxWalBufferSize / MB) * MB;
      if (kind === 'paced') extras = await pacedAndClose(target, db, schema, batches, name, entryBytes);
      else cases.push(await runCase(kind, name, target, db, schema, batches));
    } finally {
      // The throughput tables go with the storage, unclosed (see the header comment).
      await target.cleanup();
    }
  }
  return { cases, extras: extras! };
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

function markdown(cases: CaseResult[], extras: TargetExtras[], meta: Record<string, unknown>): string {
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
  ].join('\n');
}

// ---- main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const schema = benchSchema(VECTOR_DIM);
  const g0 = performance.now();
  const batches = makeBatches(schema, NUM_BATCHES, BATCH_SIZE);
  console.log(`generated ${NUM_BATCHES} batches x ${BATCH_SIZE} rows (${fmt(estimatedBytes(batches, VECTOR_DIM) / MB)} MB) in ${fmt(performance.now() - g0, 0)} ms`);
  console.log(`writer config: ${JSON.stringify(writerConfig)}`);

  const cases: CaseResult[] = [];
  const extras: TargetExtras[] = [];
  for (const name of TARGETS) {
    const r = await benchTarget(name, schema, batches);
    cases.push(...r.cases);
    extras.push(r.extras);
  }

  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    settings: { BATCH_SIZE, NUM_BATCHES, VECTOR_DIM, WINDOW, MIN_SAMPLES, MAX_TIME, PACED_RATE, PACED_PUTS, rowBytes: estimatedRowBytes(VECTOR_DIM) },
    writer: writerConfig,
  };
  console.log("\nWrite benchmark (MB = 10^6 bytes by Lance's row estimate):");
  console.table(caseRows(cases));
  console.table(extraRows(extras));
  for (const line of verdicts(cases, extras)) console.log(line);
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'write.json'), JSON.stringify({ ...meta, cases, extras }, null, 2) + '\n');
  await writeFile(path.join(RESULTS_DIR, 'write.md'), markdown(cases, extras, meta));
  console.log(`\nSaved to: ${path.join(RESULTS_DIR, 'write.json')} and write.md`);
}

await main();
