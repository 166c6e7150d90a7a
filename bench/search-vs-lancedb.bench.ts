/**
 * Search suite (`npm run bench:search-vs-lancedb [-- --quick]`, issue 11): `table.search` at
 * 10 000, 100 000 and 1 000 000 rows (10 000 only in quick mode) against LanceDB 0.31.0 with the
 * equivalent indexes and parameters, recall@10 against exact search for both; and the scaling
 * curves (scan, KNN through IVF-PQ and brute force, BM25 against rows), drawn as a second chart.
 *
 * Data (bench/search-data.ts, seeded, as bench:search): id, year (2000–2024), body (8–40 words,
 * Zipf vocabulary of 50 000), vector FLOAT4[128] (256 overlapping clusters). Quiver: a tenth of
 * the rows put, IVF-PQ / FTS / scalar indexes created (the IVF-PQ model trains on that tenth),
 * the rest put in three parts each flushed into a generation, then 5 % of the keys upserted and
 * left in the active MemTable. LanceDB: the same base rows in one table, IVF-PQ (256 partitions,
 * 16 sub-vectors, L2), FTS on body, btree on year, then the same upserts by mergeInsert — left
 * unindexed (LanceDB searches them flat) and measured so ("LanceDB"), and again after
 * `optimize()` ("LanceDB after optimize()", which indexes them), both states of the one table
 * open side by side (a checkout of the version before optimize) so they interleave too.
 *
 * Same parameters for both: k = 10, nprobes 20, refine 40 (Quiver's defaults; LanceDB's
 * refineFactor 40), L2; filter `year >= 2021` (16 %) as a prefilter. Brute force: cosine
 * distance asked of an L2 index, which both engines answer exactly (Quiver's exact path,
 * LanceDB's bypassVectorIndex()). Scan: `id, year` of every live row.
 */
import type { Table } from '../src/table/table.js';
import { clusterModel, distinctKeys, LiveRows, makeRows, Rng, type RowGenerator, rowsBatch, searchSchema, ZipfVocabulary } from './lib/data.js';
import { LancePeer, lanceIds, type LanceTable } from './lib/lancedb.js';
import { log } from './lib/machine.js';
import { byMode, MODE } from './lib/mode.js';
import { skipPeer } from './lib/peers.js';
import { HOLD_IN_MEMTABLE, openQuiverTemp, putAll, quiverIds } from './lib/quiver.js';
import type { ChartSpec } from './lib/chart.js';
import { newReport, writeReport, type Measurement } from './lib/report.js';
import { runInterleaved, type Contender } from './lib/rounds.js';
import { mean, recall } from './lib/stats.js';

const SIZES = (process.env.SEARCH_SIZES ?? byMode('10000', '10000,100000,1000000')).split(',').map(Number);
const DIM = 128;
const K = 10;
const NPROBES = 20;
const REFINE = 40;
const FILTER = 'year >= 2021';
const FILTER_MIN_YEAR = 2021;
const UPSERT_FRACTION = 0.05;
const QUERIES = 40;
const ROUNDS = byMode(1, 3);
const MAX_TIME = byMode(0.3, 1);
const QUIVER = 'Quiver';
const LANCE = 'LanceDB (upserts unindexed)';
const LANCE_OPT = 'LanceDB after optimize()';

const report = newReport('search', 'Search at the table level: Quiver vs LanceDB', { sizes: SIZES, k: K, nprobes: NPROBES, refine: REFINE, filter: FILTER, upsertFraction: UPSERT_FRACTION, queries: QUERIES, rounds: ROUNDS, maxTimePerRound: MAX_TIME });
const scaling: Measurement[] = [];
/** The groups of the targets and of the first chart; brute force and scan only feed the scaling curves. */
const MAIN_GROUPS = ['vector top-10 (IVF-PQ)', `vector top-10 + ${FILTER}`, 'BM25 top-10'];
const peer = LancePeer.load();
if (typeof peer === 'string') skipPeer(report, 'LanceDB', peer);
else report.settings.lancedb = peer.version;

interface Engine {
  name: string;
  vector(q: Float32Array, filter: boolean): Promise<number[]>;
  text(q: string): Promise<number>;
  brute(q: Float32Array): Promise<number[]>;
  scan(): Promise<number>;
}

function quiverEngine(table: Table): Engine {
  return {
    name: QUIVER,
    vector: async (q, filter) => quiverIds(await table.search({ vector: { column: 'vector', query: q }, k: K, nprobes: NPROBES, refine: REFINE, ...(filter ? { filter: FILTER } : {}) })),
    text: async (q) => (await table.search({ text: { column: 'body', query: q }, k: K })).numRows,
    brute: async (q) => quiverIds(await table.search({ vector: { column: 'vector', query: q, metric: 'cosine' }, k: K, columns: ['id'] })),
    scan: async () => {
      let n = 0;
      for await (const b of table.scan({ columns: ['id', 'year'] })) n += b.numRows;
      return n;
    },
  };
}

function lanceEngine(name: string, table: LanceTable): Engine {
  return {
    name,
    vector: async (q, filter) => {
      const query = table.vectorSearch(q).nprobes(NPROBES).refineFactor(REFINE).limit(K);
      return lanceIds(await (filter ? query.where(FILTER) : query).toArrow());
    },
    text: async (q) => (await table.search(q, 'fts', 'body').limit(K).toArrow()).numRows,
    brute: async (q) => lanceIds(await table.vectorSearch(q).distanceType('cosine').bypassVectorIndex().select(['id', '_distance']).limit(K).toArrow()),
    scan: async () => (await table.query().select(['id', 'year']).toArrow()).numRows,
  };
}

for (const n of SIZES) {
  const at = `${n.toLocaleString('en-US')} rows`;
  log(`${at}: generating`);
  const gen: RowGenerator = { vocab: new ZipfVocabulary(50_000, 1.0, 11), model: clusterModel(DIM), minWords: 8, maxWords: 40 };
  const base = makeRows(gen, new Rng(1000 + n), Int32Array.from({ length: n }, (_, i) => i));
  const upserts = makeRows(gen, new Rng(3000 + n), distinctKeys(new Rng(2000 + n), n, Math.round(n * UPSERT_FRACTION)));
  const qrng = new Rng(4000 + n);
  const vq = Array.from({ length: QUERIES }, () => {
    const v = new Float32Array(DIM);
    gen.model.sample(qrng, v, 0);
    return v;
  });
  const tq = Array.from({ length: QUERIES }, () => Array.from({ length: 1 + qrng.int(3) }, () => gen.vocab.sample(qrng)).join(' '));
  const live = new LiveRows(n, DIM);
  live.apply(base);
  live.apply(upserts);
  const truth = vq.map((q) => live.exactTopK(q, K, FILTER_MIN_YEAR));

  // -- Quiver --
  const schema = searchSchema(DIM);
  const batchesOf = (rows: typeof base, from: number, to: number) => {
    const out = [];
    for (let s = from; s < to; s += 5000) out.push(rowsBatch(schema, rows, s, Math.min(to, s + 5000)));
    return out;
  };
  const q = await openQuiverTemp('search', { fsync: false, writer: HOLD_IN_MEMTABLE, generationCacheBytes: 16 * 1024 ** 3 });
  const table = await q.db.createTable('docs', schema, { primaryKey: 'id' });
  let t0 = performance.now();
  const tenth = Math.round(n / 10);
  await putAll(table, batchesOf(base, 0, tenth), 4);
  await table.createIndex('vector', { type: 'ivf_pq' });
  await table.createIndex('body', { type: 'fts' });
  await table.createIndex('year', { type: 'scalar' });
  for (const [from, to] of [[tenth, Math.round(n * 0.4)], [Math.round(n * 0.4), Math.round(n * 0.7)], [Math.round(n * 0.7), n]]) {
    await putAll(table, batchesOf(base, from, to), 4);
    await table.flush();
  }
  await putAll(table, batchesOf(upserts, 0, upserts.ids.length), 4);
  report.notes.push(`${at}: Quiver built in ${((performance.now() - t0) / 1000).toFixed(1)} s (3 generations + ${upserts.ids.length.toLocaleString('en-US')} upserted rows in the MemTable).`);
  const engines: Engine[] = [quiverEngine(table)];

  // -- LanceDB --
  let lanceDispose: (() => Promise<void>) | undefined;
  if (typeof peer !== 'string') {
    t0 = performance.now();
    const l = await peer.connectTemp('search');
    const lt = await l.db.createTable('docs', peer.table(batchesOf(base, 0, n)));
    await lt.createIndex('vector', { config: peer.ivfPq(256, DIM / 8) });
    await lt.createIndex('body', { config: peer.index.fts({ withPosition: false }) });
    await lt.createIndex('year', { config: peer.index.btree() });
    await lt.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(peer.table(batchesOf(upserts, 0, upserts.ids.length)));
    const beforeOptimize = await lt.version();
    const buildMs = performance.now() - t0;
    t0 = performance.now();
    await lt.optimize();
    const optimizeMs = performance.now() - t0;
    const pinned = await l.db.openTable('docs');
    await pinned.checkout(beforeOptimize);
    report.notes.push(`${at}: LanceDB built in ${(buildMs / 1000).toFixed(1)} s (LANCE_CPU_THREADS=${process.env.LANCE_CPU_THREADS}); optimize() ${(optimizeMs / 1000).toFixed(1)} s.`);
    engines.push(lanceEngine(LANCE, pinned), lanceEngine(LANCE_OPT, lt));
    lanceDispose = async () => (pinned.close(), lt.close(), l.dispose());
  }
  log(`${at}: built ${engines.map((e) => e.name).join(', ')}`);

  // -- measure --
  const groups: { group: string; op: (e: Engine) => (i: number) => Promise<unknown>; recall?: (e: Engine, i: number) => Promise<number>; scaling?: boolean }[] = [
    { group: MAIN_GROUPS[0], scaling: true, op: (e) => (i) => e.vector(vq[i % QUERIES], false), recall: async (e, i) => recall(await e.vector(vq[i], false), truth[i].all) },
    { group: MAIN_GROUPS[1], op: (e) => (i) => e.vector(vq[i % QUERIES], true), recall: async (e, i) => recall(await e.vector(vq[i], true), truth[i].filtered) },
    { group: MAIN_GROUPS[2], scaling: true, op: (e) => (i) => e.text(tq[i % QUERIES]) },
    ...(MODE === 'full' || SIZES.length > 1
      ? [
          { group: 'KNN brute force (cosine, exact)', scaling: true, op: (e: Engine) => (i: number) => e.brute(vq[i % QUERIES]) },
          { group: 'scan (id, year)', scaling: true, op: (e: Engine) => () => e.scan() },
        ]
      : []),
  ];
  for (const g of groups) {
    log(`${at}: ${g.group}`);
    const timings = await runInterleaved(`${g.group}, ${at}`, engines.map((e) => ({ name: e.name, op: g.op(e) }) as Contender), { rounds: ROUNDS, warmup: 2, maxTime: MAX_TIME, minSamples: 5 });
    for (const t of timings) {
      const m: Measurement = { group: g.group, rows: n, contender: t.name, peer: t.name === QUIVER && engines.length > 1 ? LANCE : undefined, latency: t.latency, throughput: { value: t.opsPerSec, unit: 'queries/s' } };
      if (g.recall) {
        const e = engines.find((x) => x.name === t.name)!;
        const rs: number[] = [];
        for (let i = 0; i < QUERIES; i++) rs.push(await g.recall(e, i));
        m.extra = { 'recall@10': mean(rs) };
      }
      report.measurements.push(m);
      if (g.scaling) scaling.push(m);
    }
  }
  await lanceDispose?.();
  await q.dispose();
}

// ---- targets: faster than LanceDB at equal or better recall, at every size ------------------

if (typeof peer !== 'string') {
  for (const n of SIZES) {
    for (const group of MAIN_GROUPS) {
      const get = (name: string) => report.measurements.find((m) => m.rows === n && m.group === group && m.contender === name)!;
      const qv = get(QUIVER);
      // The LanceDB state with the better latency at no worse recall is the one to beat.
      const peers = [get(LANCE), get(LANCE_OPT)];
      const rq = qv.extra?.['recall@10'] as number | undefined;
      const best = peers.reduce((a, b) => (b.latency!.p50 < a.latency!.p50 ? b : a));
      const ratio = best.latency!.p50 / qv.latency!.p50;
      const rb = best.extra?.['recall@10'] as number | undefined;
      const recallOk = rq === undefined || rb === undefined || rq >= rb - 0.005;
      report.targets.push({
        target: `${group}, ${n.toLocaleString('en-US')} rows: faster than LanceDB at equal or better recall`,
        measured: `Quiver ${qv.latency!.p50.toFixed(2)} ms${rq !== undefined ? ` (recall ${rq.toFixed(3)})` : ''} vs ${best.contender} ${best.latency!.p50.toFixed(2)} ms${rb !== undefined ? ` (recall ${rb.toFixed(3)})` : ''} = ${ratio.toFixed(2)}×`,
        ratio,
        met: ratio > 1 && recallOk,
      });
    }
  }
}
report.notes.push('Speedup = LanceDB (upserts unindexed) p50 / this p50. Targets compare with the faster of the two LanceDB states.');
const charts: ChartSpec[] = [{ kind: 'bars', title: report.title, measurements: report.measurements.filter((m) => MAIN_GROUPS.includes(m.group)).map((m) => ({ ...m, group: `${m.group}, ${m.rows!.toLocaleString('en-US')} rows` })) }];
if (SIZES.length > 1) {
  charts.push({ kind: 'lines', title: 'Scaling: p50 latency against rows (log–log)', measurements: scaling });
  report.notes.push('Scaling curves: the second chart (p50 of vector, BM25, brute force and scan against rows); the brute-force and scan rows of the table are its only figures.');
}
await writeReport(report, charts);
