/**
 * SQL suite (`npm run bench:sql-vs-duckdb [-- --quick]`, issue 11): Quiver's `db.sql` against
 * DuckDB (@duckdb/node-api from bench/peers, in-memory) on the same generated rows, interleaved.
 *
 * - `t`: ROWS rows (1 000 000 in full mode) of id BIGINT (PK), a INT, b DOUBLE, c SMALLINT,
 *   g INT (1 000 groups) — bench/sql-data.ts. Quiver holds them in four flushed generations plus
 *   1 % in the active MemTable, as a table that takes writes looks; DuckDB in one table.
 * - `v`: KNN_ROWS rows (100 000 in full mode) of id, cat INT (10 values), emb FLOAT4[128] from
 *   the clustered model. Quiver: one generation with an IVF-PQ index (`vi`) and one without
 *   (`v`, the exact path); DuckDB: brute force `array_distance`.
 *
 * Queries, each engine timing the awaited statement with its result materialised (Quiver: an
 * Arrow table; DuckDB: `runAndReadAll` of a prepared statement): filter + project (~1 % of rows,
 * fresh constants every run so Quiver's per-source filter memo never answers from memory),
 * group-by aggregate, top-10 by a column, KNN top-10 with `cat = 3`. DuckDB runs twice, on one
 * thread (per core: Quiver runs a query on one JS thread) and on its default threads.
 */
import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { connect } from '../src/database.js';
import { clusterModel, makeNumericRows, makeVectorRows, numericBatch, numericSchema, Rng, vectorBatch, vectorSchema } from './lib/data.js';
import { duckLoadNumeric, duckLoadVectors, loadDuckDbPeer, type DuckDbModule } from './lib/duckdb.js';
import { log } from './lib/machine.js';
import { byMode } from './lib/mode.js';
import { skipPeer } from './lib/peers.js';
import { HOLD_IN_MEMTABLE, quiverIds } from './lib/quiver.js';
import { newReport, writeReport, type Measurement } from './lib/report.js';
import { runInterleaved, type Contender } from './lib/rounds.js';
import { mean, recall } from './lib/stats.js';

const ROWS = byMode(200_000, 1_000_000);
const KNN_ROWS = byMode(20_000, 100_000);
const DIM = 128;
const GENERATIONS = 4;
const PUT_ROWS = 50_000;
const ROUNDS = byMode(1, 5);
const MAX_TIME = byMode(0.3, 1.5);
const QUIVER = 'Quiver';
const DUCK_1 = 'DuckDB, 1 thread';
const DUCK_N = 'DuckDB, default threads';

const report = newReport('sql', `SQL: Quiver vs DuckDB (${ROWS.toLocaleString('en-US')} rows; KNN ${KNN_ROWS.toLocaleString('en-US')} × ${DIM})`, { rows: ROWS, knnRows: KNN_ROWS, generations: GENERATIONS, rounds: ROUNDS, maxTimePerRound: MAX_TIME });

// ---- Quiver ----------------------------------------------------------------------------------

const numeric = makeNumericRows(ROWS);
const model = clusterModel(DIM);
const vectors = makeVectorRows(KNN_ROWS, DIM, model);
const qrng = new Rng(77);
const knnQueries = Array.from({ length: 40 }, () => {
  const v = new Float32Array(DIM);
  model.sample(qrng, v, 0);
  return v;
});

const db = await connect('memory://', { generationCacheBytes: 16 * 1024 ** 3 });
{
  const schema = numericSchema();
  const t = await db.createTable('t', schema, { primaryKey: 'id', writer: HOLD_IN_MEMTABLE });
  // Generation boundaries, then the last 1 % left in the active MemTable.
  const flushed = ROWS - Math.round(ROWS * 0.01);
  const ends = [...Array.from({ length: GENERATIONS }, (_, g) => Math.round((flushed * (g + 1)) / GENERATIONS)), ROWS];
  let put = 0;
  for (const [g, end] of ends.entries()) {
    for (; put < end; put = Math.min(end, put + PUT_ROWS)) await t.put(numericBatch(schema, numeric, put, Math.min(end, put + PUT_ROWS)));
    if (g < GENERATIONS) await t.flush();
  }
  const vs = vectorSchema(DIM);
  for (const name of ['v', 'vi']) {
    const table = await db.createTable(name, vs, { primaryKey: 'id', writer: HOLD_IN_MEMTABLE });
    for (let s = 0; s < KNN_ROWS; s += PUT_ROWS) await table.put(vectorBatch(vs, vectors, s, Math.min(KNN_ROWS, s + PUT_ROWS)));
    if (name === 'vi') await db.sql('CREATE INDEX ON vi USING ivf_pq (emb)');
    await table.flush();
  }
  await db.sql('SELECT count(*) FROM t');
  log('Quiver tables built');
}

// ---- DuckDB ----------------------------------------------------------------------------------

interface DuckSide {
  name: string;
  conn: DuckDBConnection;
  prepared: Map<string, DuckDBPreparedStatement>;
}

const SQL = {
  filter: 'SELECT id, b FROM t WHERE a < $1 AND b > $2',
  groupBy: 'SELECT g, count(*) AS n, sum(b) AS sum_b, avg(a) AS avg_a FROM t GROUP BY g',
  topK: 'SELECT id, b FROM t ORDER BY b DESC LIMIT 10',
  knn: (table: string) => `SELECT id FROM ${table} WHERE cat = 3 ORDER BY l2_distance(emb, $1) LIMIT 10`,
  knnDuck: `SELECT id FROM v WHERE cat = 3 ORDER BY array_distance(emb, $1::FLOAT[${DIM}]) LIMIT 10`,
};

const ducks: DuckSide[] = [];
let duckdb: DuckDbModule | undefined;
const peer = loadDuckDbPeer();
if (typeof peer === 'string') skipPeer(report, 'DuckDB', peer);
else {
  duckdb = peer.duckdb;
  report.settings.duckdb = peer.version;
  for (const [name, threads] of [[DUCK_1, 1], [DUCK_N, 0]] as const) {
    const instance = await duckdb.DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    if (threads) await conn.run(`SET threads = ${threads}`);
    await duckLoadNumeric(duckdb, conn, 't', numeric);
    await duckLoadVectors(duckdb, conn, 'v', vectors);
    const prepared = new Map<string, DuckDBPreparedStatement>();
    for (const text of [SQL.filter, SQL.groupBy, SQL.topK, SQL.knnDuck]) prepared.set(text, await conn.prepare(text));
    ducks.push({ name, conn, prepared });
  }
  log('DuckDB tables loaded');
}

// ---- groups ----------------------------------------------------------------------------------

type Params = (i: number) => unknown[];
const filterParams: Params = (i) => [10_000 + i, 900 + i / 1000];
const knnParams: Params = (i) => [knnQueries[i % knnQueries.length]];

function duckOp(d: DuckSide, text: string, params?: Params, types?: () => DuckDBType[]) {
  const stmt = d.prepared.get(text)!;
  return async (i: number) => {
    if (params) stmt.bind((params(i) as unknown[]).map((p) => (p instanceof Float32Array ? duckdb!.arrayValue(Array.from(p)) : p)) as DuckDBValue[], types?.());
    return (await stmt.runAndReadAll()).currentRowCount;
  };
}

const groups: { group: string; quiver: Contender[]; duck: (d: DuckSide) => Contender; rows: number }[] = [
  {
    group: 'filter + project (~1 %)',
    rows: ROWS,
    quiver: [{ name: QUIVER, op: (i) => db.sql(SQL.filter, filterParams(i)) }],
    duck: (d) => ({ name: d.name, op: duckOp(d, SQL.filter, filterParams, () => [duckdb!.INTEGER, duckdb!.DOUBLE]) }),
  },
  { group: 'group-by aggregate (1 000 groups)', rows: ROWS, quiver: [{ name: QUIVER, op: () => db.sql(SQL.groupBy) }], duck: (d) => ({ name: d.name, op: duckOp(d, SQL.groupBy) }) },
  { group: 'top-10 by b', rows: ROWS, quiver: [{ name: QUIVER, op: () => db.sql(SQL.topK) }], duck: (d) => ({ name: d.name, op: duckOp(d, SQL.topK) }) },
  {
    group: `KNN top-10 with a filter (${KNN_ROWS.toLocaleString('en-US')} × ${DIM})`,
    rows: KNN_ROWS,
    quiver: [
      { name: `${QUIVER} IVF-PQ`, op: (i) => db.sql(SQL.knn('vi'), knnParams(i)) },
      { name: `${QUIVER} exact`, op: (i) => db.sql(SQL.knn('v'), knnParams(i)) },
    ],
    duck: (d) => ({ name: `${d.name} (array_distance)`, op: duckOp(d, SQL.knnDuck, knnParams, () => [duckdb!.ARRAY(duckdb!.FLOAT, DIM)]) }),
  },
];

// Cross-check before timing: same row counts (exact KNN: same ids) from every engine.
for (const g of groups) {
  const counts = new Set<number>();
  for (const c of g.quiver) counts.add(((await c.op(0)) as { numRows: number }).numRows);
  for (const d of ducks) counts.add((await g.duck(d).op(0)) as number);
  if (counts.size !== 1) throw new Error(`${g.group}: engines disagree on the row count (${[...counts].join(', ')})`);
}

for (const g of groups) {
  log(g.group);
  const contenders = [...g.quiver, ...ducks.map((d) => g.duck(d))];
  const timings = await runInterleaved(g.group, contenders, { rounds: ROUNDS, warmup: 2, maxTime: MAX_TIME, minSamples: 5 });
  for (const t of timings) {
    const isQuiver = t.name.startsWith(QUIVER);
    const m: Measurement = { group: g.group, contender: t.name, peer: isQuiver && ducks.length ? contenders.find((c) => c.name.startsWith(DUCK_1))!.name : undefined, latency: t.latency, throughput: { value: g.rows / (t.latency.p50 / 1000) / 1e6, unit: 'M rows/s' } };
    report.measurements.push(m);
  }
}

// Recall of the IVF-PQ path against the exact answer (Quiver's exact path).
{
  const recalls: number[] = [];
  for (let i = 0; i < knnQueries.length; i++) recalls.push(recall(quiverIds(await db.sql(SQL.knn('vi'), knnParams(i))), quiverIds(await db.sql(SQL.knn('v'), knnParams(i)))));
  const m = report.measurements.find((x) => x.contender === `${QUIVER} IVF-PQ`)!;
  m.extra = { 'recall@10': mean(recalls) };
}

// ---- targets ---------------------------------------------------------------------------------

if (ducks.length) {
  const p50 = (group: string, name: string) => report.measurements.find((m) => m.group === group && m.contender.startsWith(name))!.latency!.p50;
  for (const g of groups.slice(0, 2)) {
    const ratio = p50(g.group, QUIVER) / p50(g.group, DUCK_1);
    report.targets.push({ target: `${g.group}: within 3× of DuckDB (per core)`, measured: `Quiver ${p50(g.group, QUIVER).toFixed(2)} ms / DuckDB 1 thread ${p50(g.group, DUCK_1).toFixed(2)} ms = ${ratio.toFixed(2)}× (default threads: ${(p50(g.group, QUIVER) / p50(g.group, DUCK_N)).toFixed(2)}×)`, ratio, met: ratio <= 3 });
  }
  const knn = groups[3].group;
  for (const path of ['IVF-PQ', 'exact']) {
    const q = p50(knn, `${QUIVER} ${path}`);
    const best = Math.min(p50(knn, DUCK_1), p50(knn, DUCK_N));
    report.targets.push({ target: `KNN with a filter, Quiver ${path}: faster than DuckDB's brute force at ${KNN_ROWS.toLocaleString('en-US')} rows`, measured: `${q.toFixed(2)} ms vs ${best.toFixed(2)} ms (DuckDB's faster pass) = ${(best / q).toFixed(2)}× faster`, ratio: best / q, met: q < best });
  }
}
report.notes.push('Throughput = rows stored in the table / p50. Speedup = DuckDB (1 thread) p50 / this p50: below 1 means DuckDB is faster.');

await writeReport(report, [{ kind: 'bars', title: report.title, measurements: report.measurements }]);
for (const d of ducks) d.conn.closeSync();
await db.close();
