/**
 * Index build benchmark (`npm run bench:index-build`, issue 7): how long `table.createIndex` of
 * an IVF-PQ index takes on a table that already holds rows, and how long the event loop stalls
 * meanwhile — the work (training the model, indexing every source's rows) must not block a
 * server that keeps answering while the index builds.
 *
 * Data: N rows (default 100 000) of `id Int64` (primary key) and `vector FLOAT4[128]` drawn from
 * bench/search-data.ts's clustered model (256 overlapping Gaussian clusters), put in 5 000-row
 * puts (4 in flight) into a local directory (fsync off: the bench measures CPU work, not disks),
 * spread over GENERATIONS flushed generations (default 3) plus the active MemTable (the last
 * share of the rows, not flushed). The writer never freezes a MemTable on its own.
 *
 * Timed, each with a 1 ms setInterval probe (the longest gap between its ticks, the p99 gap) and
 * perf_hooks' monitorEventLoopDelay:
 *  1. `createIndex('vector', { type: 'ivf_pq', partitions: 256 })`;
 *  2. the first vector search afterwards (before issue 7 it built the generations' indexes,
 *     which createIndex left for "when next loaded");
 *  3. a second search (steady state, for reference).
 * On a shared machine a gap also grows when other processes hold the cores; so the probe reads
 * the main thread's own on-CPU time (Linux schedstat) at every tick and reports, besides the
 * longest gap, how much of it the thread was running and the most CPU it used between two
 * ticks — the stall this process's code causes. Compare runs at a similar load average.
 * Results: stdout and bench/results/index-build.json (keyed by the commit measured; a run of an
 * older checkout, e.g. `git worktree add /tmp/build-base <commit>` with this file copied in and
 * BENCH_COMMIT set, adds its own entry). Knobs: N=100000 GENERATIONS=3 PARTITIONS=256.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { connect, type Table } from '../src/quiver.js';
import { envNumber } from './env.js';
import { ClusterModel, Rng } from './lib/data.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';

const N = envNumber('N', 100_000);
const GENERATIONS = envNumber('GENERATIONS', 3);
const PARTITIONS = envNumber('PARTITIONS', 256);
const DIM = 128;
const PUT_ROWS = 5000;
const INFLIGHT = 4;
const GiB = 1024 ** 3;
const HERE = path.dirname(new URL(import.meta.url).pathname);
const RESULTS = path.join(HERE, 'results', 'index-build.json');

const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('vector', new FixedSizeList(DIM, new Field('item', new Float32(), true)), true),
]);

function batch(vectors: Float32Array, start: number, end: number): RecordBatch {
  const n = end - start;
  const [idF, vecF] = schema.fields;
  const children = [
    makeData({ type: idF.type as Int64, length: n, nullCount: 0, data: BigInt64Array.from({ length: n }, (_, i) => BigInt(start + i)) }),
    makeData({
      type: vecF.type as FixedSizeList,
      length: n,
      nullCount: 0,
      child: makeData({ type: new Float32(), length: n * DIM, nullCount: 0, data: vectors.subarray(start * DIM, end * DIM) }),
    }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }));
}

async function putRange(table: Table, vectors: Float32Array, start: number, end: number): Promise<void> {
  const pending = new Set<Promise<void>>();
  for (let s = start; s < end; s += PUT_ROWS) {
    const p: Promise<void> = table.put(batch(vectors, s, Math.min(end, s + PUT_ROWS))).then(() => void pending.delete(p));
    pending.add(p);
    if (pending.size >= INFLIGHT) await Promise.race(pending);
  }
  await Promise.all(pending);
}

/**
 * The longest gap between ticks of a 1 ms interval, and monitorEventLoopDelay's max. On Linux
 * also how much of each gap the main thread spent running (its on-CPU time from
 * /proc/self/task/{pid}/schedstat, ns resolution): on a shared machine a gap can be long because
 * other processes had the cores, not because this thread was busy, and `maxCpuGapMs` — the most
 * main-thread CPU time between two ticks — tells the two apart.
 */
class StallProbe {
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  private lastCpu = 0;
  private gaps: number[] = [];
  private maxGap = 0;
  private maxGapCpu = 0;
  private maxCpuGap = 0;
  private readonly hist = monitorEventLoopDelay({ resolution: 1 });
  private readonly schedstat = `/proc/self/task/${process.pid}/schedstat`;
  private readonly hasSchedstat = existsSync(this.schedstat);

  private cpuMs(): number {
    return this.hasSchedstat ? Number(readFileSync(this.schedstat, 'utf8').split(' ')[0]) / 1e6 : NaN;
  }

  start(): void {
    this.last = performance.now();
    this.lastCpu = this.cpuMs();
    this.gaps = [];
    this.maxGap = this.maxGapCpu = this.maxCpuGap = 0;
    this.hist.reset();
    this.hist.enable();
    this.timer = setInterval(() => this.tick(), 1);
  }

  private tick(): void {
    const now = performance.now();
    const cpu = this.cpuMs();
    const gap = now - this.last;
    const gapCpu = cpu - this.lastCpu;
    this.gaps.push(gap);
    if (gap > this.maxGap) {
      this.maxGap = gap;
      this.maxGapCpu = gapCpu;
    }
    if (gapCpu > this.maxCpuGap) this.maxCpuGap = gapCpu;
    this.last = now;
    this.lastCpu = cpu;
  }

  stop(): { maxGapMs: number; maxGapCpuMs: number; maxCpuGapMs: number; p99GapMs: number; eldMaxMs: number; ticks: number } {
    clearInterval(this.timer);
    this.tick();
    this.hist.disable();
    const sorted = Float64Array.from(this.gaps).sort();
    const p99 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] : 0;
    return {
      maxGapMs: round(this.maxGap),
      maxGapCpuMs: round(this.maxGapCpu),
      maxCpuGapMs: round(this.maxCpuGap),
      p99GapMs: round(p99),
      eldMaxMs: round(this.hist.max / 1e6),
      ticks: this.gaps.length,
    };
  }
}

const round = (x: number) => Math.round(x * 10) / 10;

async function timed<T>(what: string, fn: () => Promise<T>): Promise<{ ms: number } & ReturnType<StallProbe['stop']>> {
  const probe = new StallProbe();
  probe.start();
  const t = performance.now();
  await fn();
  const ms = round(performance.now() - t);
  const stall = probe.stop();
  console.log(
    `${what}: ${ms.toFixed(0)} ms; longest event-loop stall ${stall.maxGapMs.toFixed(1)} ms (main thread on CPU ${stall.maxGapCpuMs.toFixed(1)} ms of it), ` +
      `most main-thread CPU between two ticks ${stall.maxCpuGapMs.toFixed(1)} ms, p99 gap ${stall.p99GapMs.toFixed(1)} ms, monitorEventLoopDelay max ${stall.eldMaxMs.toFixed(1)} ms, ${stall.ticks} ticks`,
  );
  return { ms, ...stall };
}

function commit(): string {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  const git = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: path.join(HERE, '..'), encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: path.join(HERE, '..'), encoding: 'utf8' }).stdout?.trim();
  return `${git.stdout?.trim() || 'unknown'}${dirty ? '+uncommitted' : ''}`;
}

async function main(): Promise<void> {
  const root = mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), 'quiver-index-build-'));
  try {
    const model = new ClusterModel({ dim: DIM, clusters: 256, seed: 12, centreStd: 0.3, spread: 1.0, noise: 0.3, latentDim: 16, weightSigma: 1.0 });
    const rng = new Rng(7);
    const vectors = new Float32Array(N * DIM);
    for (let i = 0; i < N; i++) model.sample(rng, vectors, i * DIM);
    const db = await connect(path.join(root, 'db'), {
      fsync: false,
      generationCacheBytes: 16 * GiB,
      writer: HOLD_IN_MEMTABLE,
    });
    const table = await db.createTable('vecs', schema, { primaryKey: 'id' });
    const share = Math.ceil(N / (GENERATIONS + 1));
    for (let g = 0; g <= GENERATIONS; g++) {
      await putRange(table, vectors, g * share, Math.min(N, (g + 1) * share));
      if (g < GENERATIONS) await table.flush();
    }
    console.log(`${N} rows × ${DIM} dims: ${GENERATIONS} generations + ${N - GENERATIONS * share} rows in the MemTable (node ${process.version}, ${os.cpus().length} cpus)`);
    const query = new Float32Array(DIM);
    model.sample(new Rng(99), query, 0);
    const createIndex = await timed(`createIndex ivf_pq (${PARTITIONS} partitions)`, () => table.createIndex('vector', { type: 'ivf_pq', partitions: PARTITIONS }));
    let plan = '';
    const firstSearch = await timed('first search', async () => {
      const r = await table.search({ vector: { column: 'vector', query }, k: 10 });
      plan = r.schema.metadata.get('quiver.search.plan') ?? '';
    });
    const secondSearch = await timed('second search', () => table.search({ vector: { column: 'vector', query }, k: 10 }));
    console.log(`first search plan: ${plan}`);
    const total = {
      ms: round(createIndex.ms + firstSearch.ms),
      maxGapMs: Math.max(createIndex.maxGapMs, firstSearch.maxGapMs),
      maxCpuGapMs: Math.max(createIndex.maxCpuGapMs, firstSearch.maxCpuGapMs),
    };
    console.log(`createIndex + first search: ${total.ms.toFixed(0)} ms, longest stall ${total.maxGapMs.toFixed(1)} ms, most main-thread CPU between ticks ${total.maxCpuGapMs.toFixed(1)} ms (load average ${os.loadavg()[0].toFixed(2)})`);
    await db.close();
    let results: Record<string, unknown> = {};
    try {
      results = JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>;
    } catch {
      // first run
    }
    results[commit()] = { date: new Date().toISOString(), node: process.version, cpus: os.cpus().length, loadAverage: round(os.loadavg()[0]), n: N, dim: DIM, generations: GENERATIONS, partitions: PARTITIONS, createIndex, firstSearch, secondSearch, total };
    writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
