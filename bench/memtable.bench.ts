/**
 * MemTable read suite (`npm run bench:memtable [-- --quick]`, issue 11), the seed benchmark's
 * design: 10 000 rows (id, three-word text, 128-dim unit vector) written in batches of 100, read
 * back through the query plan.
 *
 * Contenders, interleaved round by round (bench/lib/rounds.ts):
 * - Quiver: every row in the active MemTable (never flushed), with IVF-PQ on vector, FTS on
 *   text and a scalar index on id, queried through `db.sql` (parse cached, plan, execute,
 *   collect an Arrow table);
 * - LanceDB, one fragment: the rows in one `createTable`;
 * - LanceDB, one fragment per batch: `createTable` with the first batch, then one `add()` per
 *   batch (100 fragments) — what a streaming writer leaves before compaction.
 * Both LanceDB tables get IVF-PQ (√n partitions, dim/8 sub-vectors, L2, like Quiver's), FTS and
 * btree on id after loading, so every fragment is indexed.
 *
 * Groups: full scan (`SELECT *`), point lookup (`id IN` 100 random ids), full-text search (one
 * of 5 single terms of mid frequency, top 10), vector search (k = 10, nprobes 8; each engine's
 * default refinement, recall@10 against exact search reported).
 */
import { byMode } from './lib/mode.js';
import { exactTopK, makeTextVectorRows, Rng, textVectorBatch, textVectorSchema, unitQuery } from './lib/data.js';
import { LancePeer, lanceIds, type LanceTable } from './lib/lancedb.js';
import { log } from './lib/machine.js';
import { HOLD_IN_MEMTABLE, openQuiverTemp, putAll, quiverIds } from './lib/quiver.js';
import { newReport, writeReport, type Measurement } from './lib/report.js';
import { runInterleaved, type Contender } from './lib/rounds.js';
import { skipPeer } from './lib/peers.js';
import { mean, recall } from './lib/stats.js';

const ROWS = 10_000;
const BATCH = 100;
const DIM = 128;
const K = 10;
const NPROBES = 8;
const ROUNDS = byMode(1, 5);
const MAX_TIME = byMode(0.3, 1.5);
const QUIVER = 'Quiver MemTable';
const LANCE_ONE = 'LanceDB, 1 fragment';
const LANCE_MANY = `LanceDB, ${ROWS / BATCH} fragments`;

const report = newReport('memtable', 'MemTable reads: Quiver vs LanceDB (10 000 rows)', { rows: ROWS, batch: BATCH, dim: DIM, k: K, nprobes: NPROBES, rounds: ROUNDS, maxTimePerRound: MAX_TIME });

// ---- data and queries ----------------------------------------------------------------------

const data = makeTextVectorRows(ROWS, DIM);
const schema = textVectorSchema(DIM);
const batches = Array.from({ length: ROWS / BATCH }, (_, b) => textVectorBatch(schema, data, b * BATCH, (b + 1) * BATCH));
const qrng = new Rng(31);
const idSets = Array.from({ length: 20 }, () => Array.from({ length: 100 }, () => qrng.int(ROWS)));
/** Five single terms of middle rank in the vocabulary, so each matches some tens of rows. */
const terms = [50, 120, 300, 700, 1500].map((rank) => data.vocab.words[rank]);
const queries = Array.from({ length: 50 }, () => unitQuery(data.model, qrng));
const truth = queries.map((q) => exactTopK(data.vectors, DIM, q, K));
const inList = (ids: number[]) => ids.join(', ');

// ---- contenders ------------------------------------------------------------------------------

interface Engine {
  name: string;
  scan(): Promise<number>;
  point(i: number): Promise<number>;
  text(i: number): Promise<number>;
  vector(i: number): Promise<number[]>;
  dispose(): Promise<void>;
}

async function quiverEngine(): Promise<Engine> {
  const q = await openQuiverTemp('memtable', { fsync: false, writer: HOLD_IN_MEMTABLE });
  const table = await q.db.createTable('mt', schema, { primaryKey: 'id' });
  await putAll(table, batches, 4);
  await table.createIndex('vector', { type: 'ivf_pq' });
  await table.createIndex('text', { type: 'fts' });
  await table.createIndex('id', { type: 'scalar' });
  const plan = (await q.db.sql('SELECT id FROM mt ORDER BY l2_distance(vector, $1) LIMIT 10', [queries[0]], { nprobes: NPROBES })).schema.metadata.get('quiver.search.plan');
  if (plan) report.notes.push(`Quiver's vector plan: ${plan}`);
  return {
    name: QUIVER,
    scan: async () => (await q.db.sql('SELECT * FROM mt')).numRows,
    point: async (i) => (await q.db.sql(`SELECT * FROM mt WHERE id IN (${inList(idSets[i % idSets.length])})`)).numRows,
    text: async (i) => (await q.db.sql(`SELECT *, _score FROM mt WHERE match(text, '${terms[i % terms.length]}') ORDER BY _score DESC LIMIT ${K}`)).numRows,
    vector: async (i) => quiverIds(await q.db.sql(`SELECT *, _distance FROM mt ORDER BY l2_distance(vector, $1) LIMIT ${K}`, [queries[i % queries.length]], { nprobes: NPROBES })),
    dispose: q.dispose,
  };
}

async function lanceEngine(peer: LancePeer, name: string, fragments: 'one' | 'per-batch'): Promise<Engine> {
  const l = await peer.connectTemp('memtable');
  let table: LanceTable;
  if (fragments === 'one') table = await l.db.createTable('mt', peer.table(batches));
  else {
    const parts = peer.tables(batches);
    table = await l.db.createTable('mt', parts[0]);
    for (const p of parts.slice(1)) await table.add(p);
  }
  await table.createIndex('vector', { config: peer.ivfPq(Math.round(Math.sqrt(ROWS)), DIM / 8) });
  await table.createIndex('text', { config: peer.index.fts({ withPosition: false }) });
  await table.createIndex('id', { config: peer.index.btree() });
  const stats = await table.stats();
  report.notes.push(`${name}: ${stats.fragmentStats?.numFragments ?? '?'} fragments, indexes built after loading.`);
  return {
    name,
    scan: async () => (await table.query().toArrow()).numRows,
    point: async (i) => (await table.query().where(`id IN (${inList(idSets[i % idSets.length])})`).toArrow()).numRows,
    text: async (i) => (await table.search(terms[i % terms.length], 'fts', 'text').limit(K).toArrow()).numRows,
    vector: async (i) => lanceIds(await table.vectorSearch(queries[i % queries.length]).nprobes(NPROBES).limit(K).toArrow()),
    dispose: async () => (table.close(), l.dispose()),
  };
}

// ---- run -------------------------------------------------------------------------------------

async function built(make: () => Promise<Engine>): Promise<Engine> {
  const t0 = performance.now();
  const e = await make();
  log(`${e.name}: loaded and indexed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return e;
}

const engines: Engine[] = [await built(quiverEngine)];
const peer = LancePeer.load();
if (typeof peer === 'string') skipPeer(report, 'LanceDB', peer);
else {
  engines.push(await built(() => lanceEngine(peer, LANCE_ONE, 'one')), await built(() => lanceEngine(peer, LANCE_MANY, 'per-batch')));
  report.settings.lancedb = peer.version;
}

// Every engine must answer alike before anything is timed.
for (const e of engines) {
  const scanned = await e.scan();
  const found = await e.point(0);
  if (scanned !== ROWS || found !== new Set(idSets[0]).size) throw new Error(`${e.name}: scan returned ${scanned} rows, point lookup ${found}`);
}

const groups: { group: string; op: (e: Engine) => (i: number) => Promise<unknown> }[] = [
  { group: 'full scan', op: (e) => () => e.scan() },
  { group: 'point lookup (id IN 100 ids)', op: (e) => (i) => e.point(i) },
  { group: 'full-text search (1 term, top 10)', op: (e) => (i) => e.text(i) },
  { group: `vector search (k = 10, nprobes ${NPROBES})`, op: (e) => (i) => e.vector(i) },
];
for (const g of groups) {
  log(g.group);
  const contenders: Contender[] = engines.map((e) => ({ name: e.name, op: g.op(e) }));
  const timings = await runInterleaved(g.group, contenders, { rounds: ROUNDS, warmup: 3, maxTime: MAX_TIME, minSamples: 5 });
  for (const t of timings) {
    const m: Measurement = { group: g.group, contender: t.name, peer: t.name === QUIVER && engines.length > 1 ? LANCE_ONE : undefined, latency: t.latency, throughput: { value: t.opsPerSec, unit: 'ops/s' } };
    if (t.name === QUIVER && engines.length > 1) m.extra = { [`speedup vs ${LANCE_MANY}`]: `${(timingsP50(timings, LANCE_MANY) / t.latency.p50).toFixed(2)}×` };
    if (g.group.startsWith('vector')) {
      const e = engines.find((x) => x.name === t.name)!;
      const recalls: number[] = [];
      for (let i = 0; i < queries.length; i++) recalls.push(recall(await e.vector(i), truth[i]));
      m.extra = { ...m.extra, 'recall@10': mean(recalls) };
    }
    report.measurements.push(m);
  }
}

function timingsP50(timings: { name: string; latency: { p50: number } }[], name: string): number {
  return timings.find((t) => t.name === name)?.latency.p50 ?? NaN;
}

// ---- targets ---------------------------------------------------------------------------------

if (engines.length > 1) {
  for (const g of groups) {
    const p50 = (name: string) => report.measurements.find((m) => m.group === g.group && m.contender === name)!.latency!.p50;
    const one = p50(LANCE_ONE) / p50(QUIVER);
    const many = p50(LANCE_MANY) / p50(QUIVER);
    report.targets.push({ target: `${g.group}: at least as fast as ${LANCE_ONE}`, measured: `p50 ${p50(QUIVER).toFixed(3)} vs ${p50(LANCE_ONE).toFixed(3)} ms = ${one.toFixed(2)}×`, ratio: one, met: one >= 1 });
    report.targets.push({ target: `${g.group}: ≥ 5× faster than ${LANCE_MANY}`, measured: `p50 ${p50(QUIVER).toFixed(3)} vs ${p50(LANCE_MANY).toFixed(3)} ms = ${many.toFixed(2)}×`, ratio: many, met: many >= 5 });
  }
}
report.notes.push('Latency: each awaited query, materialised as an Arrow table by each engine (`db.sql` / `toArrow()`), all columns. Ops/s: benny, mean over rounds.');
for (const e of engines) await e.dispose();
await writeReport(report, [{ kind: 'bars', title: report.title, measurements: report.measurements }]);
