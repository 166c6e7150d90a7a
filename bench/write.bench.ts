/**
 * Write benchmark (`npm run bench:write`): durable put throughput and ack latency, modelled on
 * Lance's `mem_wal_write` bench (lance-memwal.md §9.1).
 *
 * Rows: `id Int64` (PK), `vector FixedSizeList<Float32>[512]`, `text Utf8` (~60 chars), counted
 * as `8 + 4·dim + 70` ≈ 2.1 KB a row like Lance does. Batches of 20 rows; one benny op writes
 * NUM_BATCHES batches (default 1 000 ≈ 42 MB) into a *fresh table* (so a fresh region, as
 * Lance's bench creates a new region per iteration) with WINDOW puts outstanding at any time:
 * every `table.put` resolves only once its WAL entry is durable, so a single client must keep
 * many puts in flight for group commit to batch them.
 *
 * Per target (a temp directory with fsync, and the radosgw on loopback) it reports:
 * - benny's ops/s for the whole op (create table + open the region writer + all puts), and
 *   MB/s derived from it;
 * - put-phase MB/s (first put call to last ack, timed here), median over ops and aggregate;
 * - per-put ack latency (resolve time − call time) p50/p99/max over every put of every op;
 * - WAL PUT time and entry size (timed by bench/timing-store.ts), for the ack-latency bound
 *   "one group-commit interval plus one PUT";
 * - ack latency at a light, paced load (PACED_RATE puts/s), where group commit is timer-driven;
 * - the time to close one table (flushing its MemTable into a generation), which the put
 *   numbers do not include (Lance also times close separately).
 *
 * Tables written by the throughput ops are not closed: closing would flush each one into a
 * generation, work this benchmark does not measure, and the directory / bucket is removed
 * right after. Results: bench/results/write.json, bench/results/write.md, and benny's own
 * bench/results/write-benny-<target>.json.
 *
 * Knobs (environment): BENCH_TARGETS=local,s3  BATCH_SIZE=20  NUM_BATCHES=1000  VECTOR_DIM=512
 * WINDOW=512  MIN_SAMPLES=5  MAX_TIME=3 (seconds, per target)  PACED_RATE=500  PACED_PUTS=1000
 * MAX_WAL_BUFFER_SIZE, MAX_FLUSH_INTERVAL_MS, MAX_WAL_WRITES_IN_FLIGHT (writer overrides)
 * BENCH_DIR (parent of the local temp directory; default the OS temp dir).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { add, complete, configure, cycle, save, suite } from 'benny';
import type { RecordBatch } from 'apache-arrow';
import { connect, type Database } from '../src/database.js';
import { DEFAULT_WRITER_CONFIG, type RegionWriterConfig } from '../src/region/writer-config.js';
import { LocalObjectStore } from '../src/storage/local-store.js';
import type { ObjectStore } from '../src/storage/object-store.js';
import { RetryingObjectStore } from '../src/storage/retrying-store.js';
import type { Table } from '../src/table/table.js';
import { loadS3Env, makeTestBucketStore } from '../test/helpers/s3-env.js';
import { benchSchema, estimatedBytes, estimatedRowBytes, makeBatches } from './data.js';
import { TimingStore } from './timing-store.js';

// ---- settings --------------------------------------------------------------------------------

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0, got ${raw}`);
  return v;
}

const BATCH_SIZE = envInt('BATCH_SIZE', 20);
const NUM_BATCHES = envInt('NUM_BATCHES', 1000);
const VECTOR_DIM = envInt('VECTOR_DIM', 512);
const WINDOW = envInt('WINDOW', 512);
const MIN_SAMPLES = envInt('MIN_SAMPLES', 5);
const MAX_TIME = envInt('MAX_TIME', 3);
const PACED_RATE = envInt('PACED_RATE', 500);
const PACED_PUTS = envInt('PACED_PUTS', 1000);
const TARGETS = (process.env.BENCH_TARGETS ?? 'local,s3').split(',').map((s) => s.trim()).filter(Boolean);
const RESULTS_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'results');

const writerOverrides: Partial<RegionWriterConfig> = {};
if (process.env.MAX_WAL_BUFFER_SIZE) writerOverrides.maxWalBufferSize = envInt('MAX_WAL_BUFFER_SIZE', 0);
if (process.env.MAX_FLUSH_INTERVAL_MS) writerOverrides.maxWalFlushIntervalMs = envInt('MAX_FLUSH_INTERVAL_MS', 0);
if (process.env.MAX_WAL_WRITES_IN_FLIGHT) writerOverrides.maxWalWritesInFlight = envInt('MAX_WAL_WRITES_IN_FLIGHT', 0);
const writerConfig = { ...DEFAULT_WRITER_CONFIG, ...writerOverrides };

const MB = 1e6;

// ---- measurement helpers ---------------------------------------------------------------------

function percentile(sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function sortedCopy(values: Float64Array | number[]): Float64Array {
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

/**
 * Calls `table.put` for every batch, keeping at most `window` puts unacknowledged; records each
 * put's ack latency (resolve time − call time, ms) in `latency`. Returns the elapsed ms from
 * the first call to the last ack.
 */
function putWindowed(table: Table, batches: readonly RecordBatch[], window: number, latency: Float64Array): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let next = 0;
    let acked = 0;
    let failed = false;
    const launch = (): void => {
      while (!failed && next - acked < window && next < batches.length) {
        const i = next++;
        const start = performance.now();
        table.put(batches[i]).then(
          () => {
            const now = performance.now();
            latency[i] = now - start;
            if (++acked === batches.length) resolve(now - t0);
            else launch();
          },
          (e) => {
            failed = true;
            reject(e);
          },
        );
      }
    };
    launch();
  });
}

/** Calls `table.put` at a fixed rate (open loop), whatever the acks do. */
async function putPaced(table: Table, batches: readonly RecordBatch[], ratePerSec: number, latency: Float64Array): Promise<number> {
  const t0 = performance.now();
  const acks: Promise<void>[] = [];
  for (let i = 0; i < batches.length; i++) {
    const due = t0 + (i * 1000) / ratePerSec;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const start = performance.now();
    acks.push(table.put(batches[i]).then(() => void (latency[i] = performance.now() - start)));
  }
  await Promise.all(acks);
  return performance.now() - t0;
}

// ---- one target ------------------------------------------------------------------------------

interface Target {
  name: string;
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
      name,
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
      name,
      description: `radosgw ${env.endpoint} bucket ${bucket.bucket} (If-None-Match PUTs)`,
      store,
      cleanup: async () => {
        await store.close();
        await bucket.cleanup();
      },
    };
  }
  throw new Error(`unknown target ${name} (use local or s3)`);
}

interface TargetResult {
  target: string;
  storage: string;
  bytesPerOp: number;
  benny: { opsPerSec: number; mbPerSec: number; samples: number; marginPct: number; meanOpMs: number };
  putPhase: { ops: number; mbPerSecMedian: number; mbPerSecAggregate: number; mbPerSecBest: number; opMsMedian: number; cpuMsMedian: number };
  ackMs: { puts: number; p50: number; p90: number; p99: number; max: number; mean: number };
  wal: { entries: number; entriesPerOp: number; entryMbMean: number; putMsP50: number; putMsP99: number };
  paced: { ratePutsPerSec: number; offeredMbPerSec: number; puts: number; ackMsP50: number; ackMsP99: number; ackMsMax: number };
  closeMs: number;
  ackBoundMs: number;
}

async function benchTarget(name: string, schema: ReturnType<typeof benchSchema>, batches: RecordBatch[]): Promise<TargetResult> {
  const target = await openTarget(name);
  console.log(`\n== ${name}: ${target.description}`);
  let db: Database | undefined;
  try {
    db = await connect('memory://', { store: target.store, writer: writerOverrides });
    const bytesPerOp = estimatedBytes(batches, VECTOR_DIM);
    let seq = 0;
    const opMs: number[] = [];
    const opCpuMs: number[] = [];
    const latencies: Float64Array[] = [];
    let opError: unknown;
    let probed = false;
    target.store.reset();

    const op = async (): Promise<void> => {
      if (opError) return;
      try {
        const table = await db!.createTable(`${name}_${seq++}`, schema, { primaryKey: 'id' });
        const latency = new Float64Array(batches.length);
        const cpu0 = process.cpuUsage();
        opMs.push(await putWindowed(table, batches, WINDOW, latency));
        const cpu = process.cpuUsage(cpu0);
        opCpuMs.push((cpu.user + cpu.system) / 1000);
        latencies.push(latency);
      } catch (e) {
        opError ??= e;
        console.error(`op failed: ${(e as Error).stack ?? String(e)}`);
      }
    };

    const summary = await suite(
      `write-${name}`,
      configure({ minDisplayPrecision: 2 }),
      add(
        `${name}: ${NUM_BATCHES} x ${BATCH_SIZE} rows, window ${WINDOW}`,
        () => () => {
          // benny calls the returned function once while probing whether it returns a promise,
          // without awaiting it; skip that call so no op ever overlaps another.
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
      save({ file: `write-benny-${name}`, folder: RESULTS_DIR, format: 'json' }),
    );
    if (opError) throw opError;
    const r = summary.results[0];

    // Throughput / latency of every timed op (benny's calibration runs included: same work).
    const opMbs = opMs.map((ms) => bytesPerOp / MB / (ms / 1000));
    const lat = sortedCopy(concat(latencies));
    const walMs = sortedCopy(target.store.walPutMs);
    const walEntries = target.store.walPutBytes.length;
    const walBytes = target.store.walPutBytes.reduce((n, x) => n + x, 0);
    let latSum = 0;
    for (const x of lat) latSum += x;

    // Light, paced load: group commit is driven by the timer, not by buffer size.
    const pacedBatches = batches.slice(0, Math.min(PACED_PUTS, batches.length));
    const pacedTable = await db.createTable(`${name}_paced`, schema, { primaryKey: 'id' });
    const pacedLat = new Float64Array(pacedBatches.length);
    await putPaced(pacedTable, pacedBatches, PACED_RATE, pacedLat);
    const pacedSorted = sortedCopy(pacedLat);
    const c0 = performance.now();
    await pacedTable.close();
    const closeMs = performance.now() - c0;

    const walPutP50 = percentile(walMs, 50);
    const result: TargetResult = {
      target: name,
      storage: target.description,
      bytesPerOp,
      benny: {
        opsPerSec: r.ops,
        mbPerSec: (r.ops * bytesPerOp) / MB,
        samples: r.samples,
        marginPct: r.margin,
        meanOpMs: r.details.mean * 1000,
      },
      putPhase: {
        ops: opMs.length,
        mbPerSecMedian: percentile(sortedCopy(opMbs), 50),
        mbPerSecAggregate: (bytesPerOp * opMs.length) / MB / (opMs.reduce((a, b) => a + b, 0) / 1000),
        mbPerSecBest: Math.max(...opMbs),
        opMsMedian: percentile(sortedCopy(opMs), 50),
        // Process CPU (all threads: main + libuv pool) during an op's put phase; near
        // 2 × opMs means both cores are busy.
        cpuMsMedian: percentile(sortedCopy(opCpuMs), 50),
      },
      ackMs: { puts: lat.length, p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), max: lat[lat.length - 1], mean: latSum / lat.length },
      wal: {
        entries: walEntries,
        entriesPerOp: walEntries / Math.max(1, opMs.length),
        entryMbMean: walBytes / Math.max(1, walEntries) / MB,
        putMsP50: walPutP50,
        putMsP99: percentile(walMs, 99),
      },
      paced: {
        ratePutsPerSec: PACED_RATE,
        offeredMbPerSec: (PACED_RATE * BATCH_SIZE * estimatedRowBytes(VECTOR_DIM)) / MB,
        puts: pacedBatches.length,
        ackMsP50: percentile(pacedSorted, 50),
        ackMsP99: percentile(pacedSorted, 99),
        ackMsMax: pacedSorted[pacedSorted.length - 1],
      },
      closeMs,
      ackBoundMs: writerConfig.maxWalFlushIntervalMs + walPutP50,
    };
    return result;
  } finally {
    // The throughput tables are dropped with the storage, unclosed (see the header comment).
    await target.cleanup();
  }
}

// ---- report ----------------------------------------------------------------------------------

const TARGET_MBPS: Record<string, number> = { local: 300, s3: 100 };

function fmt(x: number, digits = 1): string {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

function reportRows(results: TargetResult[]): Record<string, string>[] {
  return results.map((r) => ({
    target: r.target,
    'put MB/s (median op)': fmt(r.putPhase.mbPerSecMedian),
    'put MB/s (aggregate)': fmt(r.putPhase.mbPerSecAggregate),
    'op ms / CPU ms': `${fmt(r.putPhase.opMsMedian, 0)} / ${fmt(r.putPhase.cpuMsMedian, 0)}`,
    'benny ops/s': fmt(r.benny.opsPerSec, 2),
    'benny MB/s': fmt(r.benny.mbPerSec),
    'ack p50 ms': fmt(r.ackMs.p50),
    'ack p99 ms': fmt(r.ackMs.p99),
    'WAL PUT p50 ms': fmt(r.wal.putMsP50),
    'entry MB': fmt(r.wal.entryMbMean, 2),
    'paced ack p50/p99 ms': `${fmt(r.paced.ackMsP50)} / ${fmt(r.paced.ackMsP99)}`,
    'close ms': fmt(r.closeMs, 0),
    target_MBps: String(TARGET_MBPS[r.target] ?? ''),
  }));
}

function markdown(results: TargetResult[], meta: Record<string, unknown>): string {
  const rows = reportRows(results);
  const headers = Object.keys(rows[0] ?? {});
  const lines = [
    '# Write benchmark',
    '',
    `Generated by \`npm run bench:write\` on ${String(meta.date)} (${String(meta.cpus)} × ${String(meta.cpuModel)}, Node ${process.version}).`,
    '',
    `Rows: id Int64, vector FixedSizeList<Float32>[${VECTOR_DIM}], text Utf8; ${estimatedRowBytes(VECTOR_DIM)} B a row (Lance's estimate).`,
    `Batches of ${BATCH_SIZE} rows; one op = ${NUM_BATCHES} batches (${fmt((NUM_BATCHES * BATCH_SIZE * estimatedRowBytes(VECTOR_DIM)) / MB)} MB) into a fresh table, ${WINDOW} puts outstanding, durable acks.`,
    `Writer: maxWalBufferSize ${writerConfig.maxWalBufferSize} B, maxWalFlushIntervalMs ${writerConfig.maxWalFlushIntervalMs}, maxWalWritesInFlight ${writerConfig.maxWalWritesInFlight}.`,
    '',
    `| ${headers.join(' | ')} |`,
    `| ${headers.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${headers.map((h) => row[h]).join(' | ')} |`),
    '',
    '- *put MB/s*: first put call to last ack of an op (includes opening the region writer); *benny*: the whole op including creating the table.',
    '- *ack*: resolve time − call time of each put, over every put of every op, with the window full (queueing included).',
    `- *paced*: ${PACED_RATE} puts/s (${fmt((PACED_RATE * BATCH_SIZE * estimatedRowBytes(VECTOR_DIM)) / MB)} MB/s offered), where entries are cut by the group-commit timer; the bound is maxWalFlushIntervalMs + one WAL PUT.`,
    '- *close*: closing one table holding the paced rows (flushes its MemTable into a generation).',
    '',
    ...results.map(
      (r) =>
        `- ${r.target}: ${r.putPhase.mbPerSecMedian >= (TARGET_MBPS[r.target] ?? 0) ? 'meets' : 'misses'} the ${TARGET_MBPS[r.target]} MB/s target; ` +
        `ack p50 ${fmt(r.ackMs.p50)} ms (saturated) / ${fmt(r.paced.ackMsP50)} ms (paced) vs bound ${fmt(r.ackBoundMs)} ms ` +
        `(${writerConfig.maxWalFlushIntervalMs} ms interval + ${fmt(r.wal.putMsP50)} ms WAL PUT p50).`,
    ),
    '',
  ];
  return lines.join('\n');
}

// ---- main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const schema = benchSchema(VECTOR_DIM);
  const g0 = performance.now();
  const batches = makeBatches(schema, NUM_BATCHES, BATCH_SIZE);
  console.log(
    `generated ${NUM_BATCHES} batches x ${BATCH_SIZE} rows (${fmt(estimatedBytes(batches, VECTOR_DIM) / MB)} MB by Lance's estimate) in ${fmt(performance.now() - g0, 0)} ms`,
  );
  console.log(`writer config: ${JSON.stringify(writerConfig)}`);

  const results: TargetResult[] = [];
  for (const name of TARGETS) results.push(await benchTarget(name, schema, batches));

  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    settings: { BATCH_SIZE, NUM_BATCHES, VECTOR_DIM, WINDOW, MIN_SAMPLES, MAX_TIME, PACED_RATE, PACED_PUTS, rowBytes: estimatedRowBytes(VECTOR_DIM) },
    writer: writerConfig,
  };
  console.log('\nWrite benchmark (MB = 10^6 bytes by Lance\'s row estimate):');
  console.table(reportRows(results));
  for (const line of markdown(results, meta).split('\n').filter((l) => l.startsWith('- local') || l.startsWith('- s3'))) console.log(line);
  await mkdir(RESULTS_DIR, { recursive: true });
  await writeFile(path.join(RESULTS_DIR, 'write.json'), JSON.stringify({ ...meta, results }, null, 2) + '\n');
  await writeFile(path.join(RESULTS_DIR, 'write.md'), markdown(results, meta));
  console.log(`\nSaved to: ${path.join(RESULTS_DIR, 'write.json')} and write.md`);
}

await main();
