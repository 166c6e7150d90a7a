/**
 * An IVF-PQ model grows with the table (issue 7, src/table/model-growth.ts): once the table
 * holds GROWTH_FACTOR × the rows the model was trained from (and `modelGrowthSettings.minRows`), a model with
 * more partitions replaces it, new MemTables encode with it, and older generations are
 * re-encoded in the background with their sidecars rewritten. Checked by counters and metadata
 * (never timings): the partition count, the sidecars' model names, the plan of every search,
 * recall against brute force before, during and after the transition, a second process that
 * adopts the new model, and a process stopped mid-transition whose successor finds every row
 * and finishes the work.
 */
import test from 'ava';
import { type RecordBatch, tableFromIPC } from 'apache-arrow';
import { connect, FaultInjectingObjectStore, MemoryObjectStore, type ObjectStore, type Table } from '../../src/quiver.js';
import { SIDECAR_MODEL_KEY } from '../../src/index/sidecar.js';
import { GROWTH_FACTOR, growthDue, grownPartitions, modelGrowthSettings } from '../../src/table/model-growth.js';
import type { IvfPqModel } from '../../src/index/vector/ivf-pq-model.js';
import { SEARCH_PLAN_KEY, type SourcePlan } from '../../src/table/search.js';
import { ivfPqSearchStats } from '../../src/index/vector/ivf-pq-index.js';
import { DIM, queries, rows, vecSchema } from '../helpers/clustered-vectors.js';
import { readSpy } from '../helpers/read-spy.js';

// Small tables grow here (each test file runs in its own process): the default minimum is 200 000 rows.
modelGrowthSettings.minRows = 50_000;
const MIN_GROWTH_ROWS = modelGrowthSettings.minRows;
const FIRST = 3000;
const TOTAL = MIN_GROWTH_ROWS + 6000;
const GEN_ROWS = 8000;
const writer = { maxWalFlushIntervalMs: 0 };

const planOf = (r: { schema: { metadata: Map<string, string> } }): SourcePlan[] => JSON.parse(r.schema.metadata.get(SEARCH_PLAN_KEY)!).sources;
const idsOf = (r: { getChild(name: string): { toArray(): ArrayLike<unknown> } | null }): number[] => Array.from(r.getChild('id')!.toArray() as ArrayLike<bigint>, Number);

/** Exact squared-L2 top-10 ids over rows [0, n) (ties by id). */
function exactTop10(all: RecordBatch, n: number, q: Float32Array): number[] {
  const vec = all.getChild('vec')!.data[0].children[0].values as Float32Array;
  const scored: { id: number; d: number }[] = [];
  for (let i = 0; i < n; i++) {
    let d = 0;
    for (let j = 0; j < DIM; j++) d += (vec[i * DIM + j] - q[j]) ** 2;
    scored.push({ id: i, d });
  }
  scored.sort((a, b) => a.d - b.d || a.id - b.id);
  return scored.slice(0, 10).map((s) => s.id);
}

const ALL = rows(0, TOTAL);
const QUERIES = queries(24);
const TRUTH = QUERIES.map((q) => exactTop10(ALL, TOTAL, q));

async function recallOf(table: Table): Promise<{ recall: number; partitions: Set<number> }> {
  let hit = 0;
  const partitions = new Set<number>();
  for (let i = 0; i < QUERIES.length; i++) {
    const r = await table.search({ vector: { column: 'vec', query: QUERIES[i] }, k: 10, columns: ['id'] });
    for (const s of planOf(r)) if (s.partitions) partitions.add(s.partitions);
    const got = new Set(idsOf(r));
    hit += TRUTH[i].filter((id) => got.has(id)).length;
  }
  return { recall: hit / (10 * QUERIES.length), partitions };
}

/** A table indexed at FIRST rows, then filled to TOTAL in generations of GEN_ROWS (the last rows stay in the MemTable). */
async function growingTable(mem: ObjectStore) {
  const db = await connect('memory://', { store: mem, writer });
  const table = await db.createTable('vecs', vecSchema, { primaryKey: 'id' });
  await table.put(rows(0, FIRST));
  const def = await table.createIndex('vec', { type: 'ivf_pq' });
  await table.flush();
  for (let at = FIRST; at < TOTAL; at += GEN_ROWS) {
    await table.put(rows(at, Math.min(TOTAL, at + GEN_ROWS)));
    if (at + GEN_ROWS < TOTAL) await table.flush();
  }
  return { db, table, first: def };
}

async function sidecarModels(mem: MemoryObjectStore): Promise<string[]> {
  const keys = (await mem.list('vecs/_mem_wal/')).filter((o) => o.key.endsWith('index_vec_ivf_pq.arrow'));
  return Promise.all(keys.map(async (o) => tableFromIPC(await mem.get(o.key)).schema.metadata.get(SIDECAR_MODEL_KEY)!));
}

// Serial: it holds growth back through the shared settings while the other tests would grow.
test.serial('a table past GROWTH_FACTOR × its training rows gets a model with more partitions; every generation is re-encoded and recall holds', async (t) => {
  const mem = new MemoryObjectStore();
  // Filled with growth held back, to count the codes a query reads under the first model.
  modelGrowthSettings.minRows = Infinity;
  const { db, table, first } = await growingTable(mem);
  t.is(first.trainedRows, FIRST);
  t.true(TOTAL >= GROWTH_FACTOR * FIRST);
  await table.flush();
  t.is((await table.settleIndexes()).grown, 0);
  let codes = ivfPqSearchStats.codes;
  const before = await recallOf(table);
  const codesBefore = ivfPqSearchStats.codes - codes;
  modelGrowthSettings.minRows = MIN_GROWTH_ROWS;
  await table.flush(); // the next check grows the model
  const stats = await table.settleIndexes();
  t.is(stats.lastError, undefined);
  t.is(stats.grown, 1, 'one growth');
  const def = table.indexes.find((d) => d.type === 'ivf_pq')!;
  t.not(def.model, first.model);
  t.deepEqual(def.previousModels, [first.model]);
  t.true(def.trainedRows! >= MIN_GROWTH_ROWS);
  // The generations flushed under the first model (all but none) were re-encoded, sidecar and memory.
  t.true(stats.reencoded >= 5, `re-encoded ${stats.reencoded}`);
  t.deepEqual([...new Set(await sidecarModels(mem))], [def.model]);
  const after = await recallOf(table);
  t.deepEqual([...after.partitions], [grownPartitions(def.trainedRows!)], 'every source searched under the grown model');
  t.true(after.partitions.values().next().value! > Math.round(Math.sqrt(FIRST)));
  t.true(after.recall >= 0.95, `recall ${after.recall}`);
  t.true(after.recall >= before.recall - 0.02, `recall ${before.recall} → ${after.recall}`);
  // The point of it: at the same nprobes a query reads far fewer codes.
  codes = ivfPqSearchStats.codes;
  await recallOf(table);
  const codesAfter = ivfPqSearchStats.codes - codes;
  t.true(codesAfter * 3 < codesBefore, `codes read per query ${codesBefore / QUERIES.length} → ${codesAfter / QUERIES.length}`);
  // Nothing more to do: a second check grows nothing and re-encodes nothing.
  await table.flush();
  const again = await table.settleIndexes();
  t.is(again.grown, 1);
  t.is(again.reencoded, stats.reencoded);
  await db.close();
});

test('searches during the transition stay exact and keep their recall; a second process adopts the grown model; a successor of a stopped process finishes the work and loses nothing', async (t) => {
  const mem = new MemoryObjectStore();
  // Sidecar writes take a while, so searches run between the generations' re-encodings.
  const slow = new FaultInjectingObjectStore(mem).addRule({ ops: ['put'], key: /index_vec_ivf_pq\.arrow$/, action: 'delay', delayMs: 30, repeat: true });
  const { db, table, first } = await growingTable(slow);
  // A second process that opened the table before the growth (it knows the first model only).
  const dbB = await connect('memory://', { store: mem, writer });
  const b = await dbB.openTable('vecs');
  t.is(b.indexes[0].model, first.model);
  const before = await recallOf(b);

  // Searches while the growth runs, until a snapshot mixes the two models.
  const growth = (table as unknown as { growth: { close(): Promise<void>; stats: { reencoded: number; grown: number } } }).growth;
  let mixed = 0;
  let worst = 1;
  for (let round = 0; round < 5000 && growth.stats.reencoded < 2; round++) {
    const r = await recallOf(table);
    if (r.partitions.size > 1) mixed++;
    worst = Math.min(worst, r.recall);
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.true(mixed > 0, 'a search ran while sources were under both models');
  t.true(worst >= Math.min(0.95, before.recall), `recall during the transition ${worst}, before ${before.recall}`);
  // The process stops mid-transition (as if it died): some generations are still under the first model.
  await growth.close();
  t.is(growth.stats.grown, 1);
  const models = await sidecarModels(mem);
  const grownDef = table.indexes[0];
  t.true(models.includes(first.model!) && models.includes(grownDef.model!), 'sidecars of both models on storage');
  await db.close().catch(() => {});

  // B meets a generation whose sidecar names the grown model: it re-reads the metadata once and adopts it.
  const dbW = await connect('memory://', { store: mem, writer });
  const w = await dbW.openTable('vecs');
  t.is(w.indexes[0].model, grownDef.model, 'a process opened after the growth starts with the grown model');
  await w.put(rows(TOTAL, TOTAL + 10));
  await w.flush();
  const mid = await recallOf(b);
  t.is(b.indexes[0].model, grownDef.model, 'the older process adopted the grown model');
  t.deepEqual(b.indexes[0].previousModels, [first.model]);
  t.true(mid.recall >= Math.min(0.95, before.recall), `recall ${mid.recall}`);

  // The successor re-encodes what was left; every row is still there.
  const stats = await w.settleIndexes();
  t.is(stats.grown, 0);
  t.true(stats.reencoded >= 1);
  t.deepEqual([...new Set(await sidecarModels(mem))], [grownDef.model]);
  let count = 0;
  for await (const batch of w.scan({ columns: ['id'] })) count += batch.numRows;
  t.is(count, TOTAL + 10);
  const end = await recallOf(w);
  t.is(end.partitions.size, 1);
  t.true(end.recall >= 0.95, `recall ${end.recall}`);
  // A fresh reader answers as the writer does.
  const dbC = await connect('memory://', { store: mem });
  const c = await dbC.openTable('vecs');
  for (const q of QUERIES.slice(0, 8)) {
    const [x, y] = await Promise.all([w, c].map((tb) => tb.search({ vector: { column: 'vec', query: q }, k: 10, columns: ['id'] })));
    t.deepEqual(idsOf(y), idsOf(x));
  }
  for (const d of [dbB, dbW, dbC]) await d.close();
});

test('two processes growing the same model at once commit one model; the other adopts it', async (t) => {
  const mem = new MemoryObjectStore();
  const { db, table } = await growingTable(mem);
  const dbB = await connect('memory://', { store: mem, writer });
  const b = await dbB.openTable('vecs');
  await b.put(rows(TOTAL, TOTAL + 10));
  await b.flush();
  const [sa, sb] = await Promise.all([table.settleIndexes(), b.settleIndexes()]);
  t.is(sa.grown + sb.grown, 1, 'one growth landed');
  t.is(table.indexes[0].model, b.indexes[0].model);
  t.is(table.indexes[0].previousModels!.length, 1);
  // B holds the region now (A's writer is fenced): its flush writes what it replayed from A's
  // log, under the model it had then, and its check re-encodes that too.
  await b.flush();
  await b.settleIndexes();
  t.deepEqual([...new Set(await sidecarModels(mem))], [table.indexes[0].model]);
  await dbB.close();
  await db.close().catch(() => {});
});

test('growthDue: at GROWTH_FACTOR × the training rows and MIN_GROWTH_ROWS, to more partitions; never for a fixed partition count', (t) => {
  const model = { partitions: 100 } as IvfPqModel;
  const def = { name: 'v', column: 'v', type: 'ivf_pq' as const, model: 'm', trainedRows: 20_000 };
  t.is(growthDue(def, model, GROWTH_FACTOR * 20_000 - 1), undefined);
  t.is(growthDue(def, model, GROWTH_FACTOR * 20_000), grownPartitions(GROWTH_FACTOR * 20_000));
  t.true(grownPartitions(GROWTH_FACTOR * 20_000) > 100);
  t.is(growthDue({ ...def, trainedRows: 1000 }, model, MIN_GROWTH_ROWS - 1), undefined, 'below the minimum');
  t.is(growthDue({ ...def, partitions: 100 }, model, 10_000_000), undefined, 'the user fixed the partitions');
  const older = { partitions: 200 } as IvfPqModel;
  t.is(growthDue({ ...def, trainedRows: undefined }, older, GROWTH_FACTOR * 200 * 200 - 1), undefined);
  t.is(growthDue({ ...def, trainedRows: undefined }, older, GROWTH_FACTOR * 200 * 200), grownPartitions(GROWTH_FACTOR * 200 * 200), 'older definitions: trained rows estimated as partitions²');
  // Partitions grow like √rows, so the codes a query scans stay about flat.
  t.is(grownPartitions(400_000), Math.round(Math.sqrt(800_000)));
  t.true(grownPartitions(1e12) <= 4096);
});

test('a sidecar write that fails mid-transition leaves that generation under its old model, searchable and exact; the next check re-encodes it', async (t) => {
  const mem = new MemoryObjectStore();
  // Model files are written slowly, so the grown model is not committed (and nothing re-encoded)
  // before the sidecar writes start failing below.
  const faulty = new FaultInjectingObjectStore(mem).addRule({ ops: ['putIfAbsent'], key: /\/_indices\//, action: 'delay', delayMs: 2000, repeat: true });
  const { db, table, first } = await growingTable(faulty);
  await table.flush();
  t.is(table.indexes[0].model, first.model, 'not grown yet');
  let puts = 0;
  // Every re-encoded sidecar write now fails for good (a non-retryable error: no retry).
  faulty.addRule({
    ops: ['put'],
    key: /index_vec_ivf_pq\.arrow$/,
    action: 'fail',
    repeat: true,
    error: () => Object.assign(new Error('injected: sidecar write refused'), { kind: 'storage', retryable: false }),
  });
  const stats = await table.settleIndexes();
  puts = faulty.faultsFired;
  t.true(puts >= 1, 'a sidecar write was refused');
  t.truthy(stats.lastError);
  const grown = table.indexes[0];
  t.not(grown.model, first.model);
  // Nothing was swapped without its sidecar: storage and memory agree, every row is found.
  const models = await sidecarModels(mem);
  t.true(models.includes(first.model!));
  const mid = await recallOf(table);
  t.true(mid.recall >= 0.95, `recall ${mid.recall}`);
  faulty.clearRules();
  await table.flush();
  const after = await table.settleIndexes();
  t.is(after.lastError, undefined);
  t.deepEqual([...new Set(await sidecarModels(mem))], [grown.model]);
  const end = await recallOf(table);
  t.is(end.partitions.size, 1);
  await db.close();
});

test('a model that never grew: after a reopen the background check loads no generation', async (t) => {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer });
  const table = await db.createTable('vecs', vecSchema, { primaryKey: 'id' });
  await table.put(rows(0, FIRST));
  await table.createIndex('vec', { type: 'ivf_pq' });
  await table.flush();
  await table.put(rows(FIRST, 2 * FIRST));
  await table.flush();
  await db.close();
  const { store: spy, reads } = readSpy(mem);
  const db2 = await connect('memory://', { store: spy, writer });
  const t2 = await db2.openTable('vecs');
  await t2.put(rows(2 * FIRST, 2 * FIRST + 100));
  await t2.flush(); // a flush runs the growth check
  const stats = await t2.settleIndexes();
  t.is(stats.lastError, undefined);
  t.is(stats.grown, 0);
  const loaded = reads.filter((k) => /_gen_\d+\/(data\.arrow|index_)/.test(k));
  t.deepEqual(loaded, [], 'no generation rows or sidecars read');
  // Searches still load them, as before.
  await t2.search({ vector: { column: 'vec', query: QUERIES[0] }, k: 10 });
  t.true(reads.some((k) => /_gen_\d+\/data\.arrow/.test(k)), 'a search reads the generations');
  await db2.close();
});
