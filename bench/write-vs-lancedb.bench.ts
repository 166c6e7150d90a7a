/**
 * Write suite (`npm run bench:write-vs-lancedb [-- --quick]`, issue 11), the seed benchmark's
 * design: batches of 20 rows (id, 512-dim vector, text; Lance's write-bench rows, bench/data.ts),
 * PUTS puts (1 000 in full mode) into a fresh table per run, with the indexes the table maintains
 * as it is written: none / scalar (id) / full-text (text) / vector (IVF-PQ) / all three.
 *
 * Contenders, interleaved round by round (one run each per round, order rotated):
 * - Quiver region writer on a local directory, fsync on and off, one put at a time and 32 in
 *   flight (a client streaming rows keeps several puts outstanding; group commit batches them);
 * - Quiver on the project's radosgw over loopback (If-None-Match PUTs), same two loads;
 * - LanceDB 0.31.0 `add()` per batch, sequential, on a local directory. LanceDB does not fsync,
 *   so "same durability" means Quiver with fsync off. `add()` leaves the new rows unindexed:
 *   the row "LanceDB add() + optimize()" charges the `optimize()` that indexes them to the same
 *   run (throughput over adds plus optimize).
 * Every table starts from the same 2 560 seed rows (untimed), put before the indexes are
 * created, so IVF-PQ trains on them (√n partitions, dim/8 sub-vectors, both engines).
 *
 * Reported per run: MB/s (Lance's row size, 8 + 4·dim + 70 bytes; MB = 10^6), ack latency of
 * every put / add (p50, p90, p99 over all rounds).
 */
import type { RecordBatch } from 'apache-arrow';
import { connect, type Database } from '../src/database.js';
import type { Table } from '../src/table/table.js';
import { makeTestBucketStore } from '../test/helpers/s3-env.js';
import { benchSchema, estimatedRowBytes, makeBatches } from './lib/data.js';
import { LancePeer, type LanceTable } from './lib/lancedb.js';
import { log } from './lib/machine.js';
import { byMode, MODE } from './lib/mode.js';
import { skipPeer } from './lib/peers.js';
import { openQuiverTemp } from './lib/quiver.js';
import { collectRadosgwGarbage, radosgwReady } from './lib/radosgw.js';
import { newReport, writeReport, type Measurement } from './lib/report.js';
import { runInterleaved, type Contender } from './lib/rounds.js';
import { summarize } from './lib/stats.js';

const DIM = 512;
const BATCH = 20;
const PUTS = byMode(60, 1000);
const ROUNDS = byMode(1, 2);
const SEED_ROWS = 2560;
const INFLIGHT = 32;
const MB = 1e6;
type IndexSet = 'none' | 'scalar' | 'fts' | 'vector' | 'all';
const INDEX_SETS: IndexSet[] = byMode(['none', 'all'], ['none', 'scalar', 'fts', 'vector', 'all']);
const LANCE = 'LanceDB add() per batch (no fsync)';
const LANCE_OPT = 'LanceDB add() + optimize()';
const QUIVER_NOFSYNC_32 = `Quiver local, fsync off, ${INFLIGHT} in flight`;

const report = newReport('write', `Writes: Quiver vs LanceDB (${PUTS} × ${BATCH}-row batches, ${DIM}-dim)`, { puts: PUTS, batch: BATCH, dim: DIM, rounds: ROUNDS, seedRows: SEED_ROWS, inflight: INFLIGHT, indexSets: INDEX_SETS });
report.ratioBy = 'throughput';

const schema = benchSchema(DIM);
const seed = makeBatches(schema, 1, SEED_ROWS, 10_000_000);
const batches = makeBatches(schema, PUTS, BATCH, 0);
const bytes = PUTS * BATCH * estimatedRowBytes(DIM);

/** One run's outcome: every ack's latency and the time from the first put to the last ack. */
interface Run {
  acks: number[];
  elapsedMs: number;
  /** LanceDB only: optimize() after the adds. */
  optimizeMs?: number;
}

async function quiverIndexes(table: Table, set: IndexSet): Promise<void> {
  if (set === 'scalar' || set === 'all') await table.createIndex('id', { type: 'scalar' });
  if (set === 'fts' || set === 'all') await table.createIndex('text', { type: 'fts' });
  if (set === 'vector' || set === 'all') await table.createIndex('vector', { type: 'ivf_pq' });
}

async function putRun(table: Table, inflight: number): Promise<Run> {
  const acks = new Array<number>(batches.length);
  const pending = new Set<Promise<void>>();
  const t0 = performance.now();
  for (let i = 0; i < batches.length; i++) {
    const start = performance.now();
    const p: Promise<void> = table.put(batches[i]).then(() => {
      acks[i] = performance.now() - start;
      pending.delete(p);
    });
    pending.add(p);
    if (pending.size >= inflight) await Promise.race(pending);
  }
  await Promise.all(pending);
  return { acks, elapsedMs: performance.now() - t0 };
}

async function quiverRun(target: 'local' | 's3', fsync: boolean, inflight: number, set: IndexSet): Promise<Run> {
  let db: Database;
  let dispose: () => Promise<void>;
  if (target === 'local') ({ db, dispose } = await openQuiverTemp('write', { fsync }));
  else {
    const bucket = await makeTestBucketStore();
    db = await connect('s3://bench', { store: bucket.store });
    dispose = async () => {
      await bucket.cleanup();
      collectRadosgwGarbage();
    };
  }
  try {
    const table = await db.createTable('w', schema, { primaryKey: 'id' });
    await table.put(seed[0]);
    await quiverIndexes(table, set);
    return await putRun(table, inflight);
  } finally {
    // Closing would flush the MemTable into a generation, work this suite does not time.
    await dispose();
  }
}

async function lanceRun(peer: LancePeer, set: IndexSet): Promise<Run> {
  const l = await peer.connectTemp('write');
  try {
    const table: LanceTable = await l.db.createTable('w', peer.table(seed));
    if (set === 'scalar' || set === 'all') await table.createIndex('id', { config: peer.index.btree() });
    if (set === 'fts' || set === 'all') await table.createIndex('text', { config: peer.index.fts({ withPosition: false }) });
    if (set === 'vector' || set === 'all') await table.createIndex('vector', { config: peer.ivfPq(Math.round(Math.sqrt(SEED_ROWS)), DIM / 8) });
    const tables = peer.tables(batches);
    const acks: number[] = [];
    const t0 = performance.now();
    for (const t of tables) {
      const s = performance.now();
      await table.add(t);
      acks.push(performance.now() - s);
    }
    const elapsedMs = performance.now() - t0;
    const o0 = performance.now();
    await table.optimize();
    const optimizeMs = performance.now() - o0;
    table.close();
    return { acks, elapsedMs, optimizeMs };
  } finally {
    await l.dispose();
  }
}

// ---- contenders ------------------------------------------------------------------------------

const s3 = radosgwReady(MODE === 'full');
if (!s3) report.skipped.push(`Quiver on radosgw: not running${MODE === 'quick' ? ' (quick mode does not start it; `npm run s3:start`)' : ' and could not be started'}`);
const peer = LancePeer.load();
if (typeof peer === 'string') skipPeer(report, 'LanceDB', peer);
else report.settings.lancedb = peer.version;

const runs = new Map<string, Run[]>();
function recorded(name: string, run: () => Promise<Run>): Contender {
  return {
    name,
    op: async () => {
      const r = await run();
      runs.set(name, [...(runs.get(name) ?? []), r]);
    },
  };
}

for (const set of INDEX_SETS) {
  const group = `indexes: ${set}`;
  const contenders: Contender[] = [];
  for (const fsync of [true, false]) for (const inflight of [1, INFLIGHT]) contenders.push(recorded(`Quiver local, fsync ${fsync ? 'on' : 'off'}, ${inflight === 1 ? 'one put at a time' : `${inflight} in flight`}`, () => quiverRun('local', fsync, inflight, set)));
  if (s3) for (const inflight of [1, INFLIGHT]) contenders.push(recorded(`Quiver radosgw, ${inflight === 1 ? 'one put at a time' : `${inflight} in flight`}`, () => quiverRun('s3', true, inflight, set)));
  if (typeof peer !== 'string') contenders.push(recorded(LANCE, () => lanceRun(peer, set)));
  runs.clear();
  log(group);
  await runInterleaved(group, contenders, { rounds: ROUNDS, warmup: 0, fixedOps: 1 });
  for (const [name, rs] of runs) {
    const elapsed = rs.reduce((a, r) => a + r.elapsedMs, 0);
    const acks = summarize(rs.flatMap((r) => r.acks));
    report.measurements.push({ group, contender: name, peer: name.startsWith('Quiver') && typeof peer !== 'string' ? LANCE : undefined, latency: acks, throughput: { value: (bytes * rs.length) / MB / (elapsed / 1000), unit: 'MB/s' } });
    if (name === LANCE) {
      const withOpt = rs.reduce((a, r) => a + r.elapsedMs + (r.optimizeMs ?? 0), 0);
      report.measurements.push({ group, contender: LANCE_OPT, latency: acks, throughput: { value: (bytes * rs.length) / MB / (withOpt / 1000), unit: 'MB/s' }, extra: { 'optimize() s': rs.reduce((a, r) => a + (r.optimizeMs ?? 0), 0) / rs.length / 1000 } });
    }
  }
}

// ---- targets: ≥ 10× LanceDB's per-batch add() throughput at the same durability --------------

if (typeof peer !== 'string') {
  for (const set of INDEX_SETS) {
    const group = `indexes: ${set}`;
    const mbs = (name: string) => report.measurements.find((m) => m.group === group && m.contender === name)!.throughput!.value;
    const ratio = mbs(QUIVER_NOFSYNC_32) / mbs(LANCE);
    const seqRatio = mbs('Quiver local, fsync off, one put at a time') / mbs(LANCE);
    const fsyncRatio = mbs(`Quiver local, fsync on, ${INFLIGHT} in flight`) / mbs(LANCE);
    report.targets.push({
      target: `${group}: ≥ 10× LanceDB's per-batch add() throughput, same durability (no fsync)`,
      measured: `${mbs(QUIVER_NOFSYNC_32).toFixed(1)} vs ${mbs(LANCE).toFixed(1)} MB/s = ${ratio.toFixed(1)}× (${INFLIGHT} in flight; one put at a time ${seqRatio.toFixed(1)}×; fsync on, ${INFLIGHT} in flight ${fsyncRatio.toFixed(1)}×)`,
      ratio,
      met: ratio >= 10,
    });
  }
}
report.notes.push('Speedup = throughput over LanceDB add() per batch. Ack latency of LanceDB = one add(). LanceDB add() + optimize(): same adds, throughput charged with optimize().');
await writeReport(report, [
  { kind: 'bars', metric: 'throughput', title: `${report.title}: throughput`, measurements: report.measurements },
  { kind: 'bars', title: `${report.title}: ack latency`, measurements: report.measurements.filter((m) => m.contender !== LANCE_OPT) },
]);
