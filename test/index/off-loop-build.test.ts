/**
 * Long index work does not block the event loop (issue 7): IVF-PQ training runs in a worker
 * thread and indexes are built over existing rows in slices that yield between them. These
 * tests check it by behaviour — timers tick and searches run while `createIndex` is pending —
 * and check that the result is what the synchronous code gives: the same model, the same codes
 * in every source's index, the same answers.
 */
import test from 'ava';
import { tableToIPC, type RecordBatch } from 'apache-arrow';
import { connect, MemoryObjectStore, type Table } from '../../src/quiver.js';
import type { IndexDef } from '../../src/index/index-def.js';
import { SourceIndexes } from '../../src/index/source-indexes.js';
import { IvfPqIndex } from '../../src/index/vector/ivf-pq-index.js';
import { type IvfPqModel, trainIvfPq } from '../../src/index/vector/ivf-pq-model.js';
import { trainIvfPqOffThread } from '../../src/index/vector/train-worker.js';
import { VectorSource } from '../../src/index/vector/vector-source.js';
import type { GenerationCache } from '../../src/region/generation-cache.js';
import { SEARCH_PLAN_KEY, type SourcePlan } from '../../src/table/search.js';
import { DIM, queries, rows, vecSchema } from '../helpers/clustered-vectors.js';
import { TableSchema } from '../../src/schema/table-schema.js';

const INDEX = 'vec_ivf_pq';
const planOf = (r: { schema: { metadata: Map<string, string> } }): SourcePlan[] => JSON.parse(r.schema.metadata.get(SEARCH_PLAN_KEY)!).sources;
const ids = (r: { getChild(name: string): { toArray(): ArrayLike<unknown> } | null }): number[] => Array.from(r.getChild('id')!.toArray() as ArrayLike<bigint>, Number);
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Two generations of 3 000 rows and 3 000 rows in the active MemTable. */
async function threeSources() {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('vecs', vecSchema, { primaryKey: 'id' });
  for (let g = 0; g < 3; g++) {
    await table.put(rows(g * 3000, g * 3000 + 3000));
    if (g < 2) await table.flush();
  }
  return { db, table };
}

/** Every source of the table's snapshot: its index set and its rows (position order). */
async function sourcesOf(table: Table): Promise<{ indexes: SourceIndexes; batches: readonly RecordBatch[] }[]> {
  const generations = (table as unknown as { ctx: { generations: GenerationCache } }).ctx.generations;
  const out: { indexes: SourceIndexes; batches: readonly RecordBatch[] }[] = [];
  for (const { layout, state } of await table.readStates()) {
    for (const { memtable } of state.memtables) out.push({ indexes: memtable.indexes!, batches: memtable.store.range(0, memtable.indexed) });
    for (const g of state.manifest.flushedGenerations) {
      const loaded = await generations.get(layout, g.generation, g.path);
      out.push({ indexes: loaded.indexes, batches: loaded.batches });
    }
  }
  return out;
}

/** Squared-L2 top-k ids over the given rows, by brute force (ties by id). */
function exactTopK(batches: readonly RecordBatch[], query: Float32Array, k: number): number[] {
  const scored: { id: number; d: number }[] = [];
  for (const b of batches) {
    const idCol = b.getChild('id')!;
    const vec = b.getChild('vec')!;
    for (let r = 0; r < b.numRows; r++) {
      const v = vec.get(r) as { toArray(): Float32Array };
      const x = v.toArray();
      let d = 0;
      for (let i = 0; i < DIM; i++) d += (x[i] - query[i]) ** 2;
      scored.push({ id: Number(idCol.get(r)), d });
    }
  }
  scored.sort((a, b) => a.d - b.d || a.id - b.id);
  return scored.slice(0, k).map((s) => s.id);
}

function sameModel(t: { true(v: boolean, m?: string): void; is(a: unknown, b: unknown): void }, a: IvfPqModel, b: IvfPqModel): void {
  t.is(a.metric, b.metric);
  t.is(a.partitions, b.partitions);
  t.is(a.subVectors, b.subVectors);
  t.true(Buffer.from(a.centroids.buffer, a.centroids.byteOffset, a.centroids.byteLength).equals(Buffer.from(b.centroids.buffer, b.centroids.byteOffset, b.centroids.byteLength)), 'centroids bit for bit');
  t.true(Buffer.from(a.codebooks.buffer, a.codebooks.byteOffset, a.codebooks.byteLength).equals(Buffer.from(b.codebooks.buffer, b.codebooks.byteOffset, b.codebooks.byteLength)), 'codebooks bit for bit');
}

test('createIndex lets the event loop run while it trains and builds, and searches meanwhile are exact and say why', async (t) => {
  const { db, table } = await threeSources();
  const sets = (await sourcesOf(table)).map((s) => s.indexes);
  t.is(sets.length, 3);
  let ticks = 0;
  let ticksWhileBuilding = 0;
  const timer = setInterval(() => {
    ticks++;
    if (sets.some((s) => s.building(INDEX))) ticksWhileBuilding++;
  }, 1);
  let done = false;
  const creating = table.createIndex('vec', { type: 'ivf_pq', partitions: 16 }).finally(() => (done = true));
  // Wait until some source's build is under way (training is over), then search.
  while (!done && !sets.some((s) => s.building(INDEX))) await turn();
  t.false(done, 'the builds took more than one turn of the event loop');
  const query = queries(1)[0];
  const during = await table.search({ vector: { column: 'vec', query }, k: 10 });
  const duringPlan = planOf(during);
  t.is(duringPlan.length, 3);
  for (const p of duringPlan) t.like(p, { path: 'exact', reason: 'no IVF-PQ index on the column' });
  t.deepEqual(ids(during), exactTopK([rows(0, 9000)], query, 10), 'the exact answer');
  // Rows written while the builds run are indexed too.
  await table.put(rows(9000, 9500));
  t.false(done, 'still building after a search and a put');
  const def = await creating;
  clearInterval(timer);
  t.true(ticks >= 10, `timers ran while createIndex was pending (${ticks} ticks)`);
  t.true(ticksWhileBuilding >= 3, `timers ran between build slices (${ticksWhileBuilding} ticks)`);
  t.truthy(def.model);
  for (const s of sets) t.false(s.building(INDEX));
  // Every source now searches its index, the MemTable included, covering its late rows.
  const after = planOf(await table.search({ vector: { column: 'vec', query }, k: 10, nprobes: 16 }));
  t.deepEqual(after.map((p) => p.path), ['ivf_pq', 'ivf_pq', 'ivf_pq']);
  const active = (await sourcesOf(table))[0];
  t.is(active.indexes.rowCount, 3500);
  t.is(active.indexes.index<IvfPqIndex>(INDEX)!.rowCount, 3500);
  await db.close();
});

test('an index built in slices is the synchronous build: same model, same codes in every source, same answers', async (t) => {
  const { db, table } = await threeSources();
  const live: RecordBatch[] = [];
  for await (const b of table.scan({ columns: ['vec'] })) live.push(b);
  const def = await table.createIndex('vec', { type: 'ivf_pq', partitions: 16 });
  const sources = await sourcesOf(table);
  const index0 = sources[0].indexes.index<IvfPqIndex>(INDEX)!;
  // The model: what trainIvfPq gives in-process on the rows a scan returns.
  sameModel(t, index0.model, trainIvfPq(VectorSource.fromArrow(live, 0), { metric: 'l2', partitions: 16 }));
  // Every source's codes: those of a synchronous IvfPqIndex.add over its rows.
  const col = vecSchema.fields.findIndex((f) => f.name === 'vec');
  for (const { indexes, batches } of sources) {
    const built = indexes.index<IvfPqIndex>(INDEX)!;
    t.is(built.model, index0.model, 'one model for every source');
    const sync = new IvfPqIndex(index0.model);
    for (const c of VectorSource.fromArrow([...batches], col).chunks) sync.add(c);
    t.deepEqual(tableToIPC(built.toArrow()), tableToIPC(sync.toArrow()));
  }
  // Answers: the same as a reader that loads everything afresh (its generations, flushed
  // without the index, build it from their rows when loaded).
  const again = await connect('memory://', { store: (db as unknown as { store: MemoryObjectStore }).store });
  const reopened = await again.openTable('vecs');
  t.is(reopened.indexes[0].model, def.model);
  for (const query of queries(8)) {
    const a = await table.search({ vector: { column: 'vec', query }, k: 10, nprobes: 3, refine: 0 });
    const b = await reopened.search({ vector: { column: 'vec', query }, k: 10, nprobes: 3, refine: 0 });
    t.deepEqual(ids(a), ids(b));
    t.deepEqual(planOf(a).map((p) => p.path), ['ivf_pq', 'ivf_pq', 'ivf_pq']);
  }
  await again.close();
  await db.close();
});

test('SourceIndexes.addIndexAsync: invisible until it covers every row, one build per index, rows appended meanwhile included', async (t) => {
  const schema = new TableSchema(vecSchema, ['id']);
  const source = VectorSource.fromArrow([rows(0, 3000)], 1);
  const model = trainIvfPq(source, { metric: 'l2', partitions: 8 });
  const def: IndexDef = { name: INDEX, column: 'vec', type: 'ivf_pq', metric: 'l2', partitions: 8, model: 'm' };
  const models = () => model;
  const stored = (from: number, to: number) => schema.normalize(rows(from, to));
  const existing = [...stored(0, 1000), ...stored(1000, 2000)];
  const set = new SourceIndexes(schema);
  set.insert(existing);
  const first = set.addIndexAsync(def, models, existing, { sliceRows: 100 });
  const second = set.addIndexAsync(def, models, existing, { sliceRows: 100 });
  t.is(first, second, 'a second caller shares the build');
  t.true(set.building(INDEX));
  t.is(set.index(INDEX), undefined);
  t.false(set.hasIndex(INDEX));
  let turns = 0;
  let inserted = false;
  while (set.building(INDEX)) {
    await turn();
    turns++;
    if (turns === 5 && !inserted) {
      set.insert(stored(2000, 2500)); // appended mid-build
      inserted = true;
    }
    if (set.building(INDEX)) t.is(set.index(INDEX), undefined, 'no half-built index is visible');
  }
  await first;
  t.true(turns >= 20, `${turns} turns for 25 slices`);
  const built = set.index<IvfPqIndex>(INDEX)!;
  t.is(built.rowCount, 2500);
  const sync = new SourceIndexes(schema);
  sync.insert([...existing, ...stored(2000, 2500)]);
  sync.addIndex(def, models, [...existing, ...stored(2000, 2500)]);
  t.deepEqual(tableToIPC(built.toArrow()), tableToIPC(sync.index<IvfPqIndex>(INDEX)!.toArrow()));
  // After publishing, inserts go straight into the index.
  set.insert(stored(2500, 2600));
  t.is(built.rowCount, 2600);

  // A held build is fed but not visible until attached; a synchronous addIndex finishes a build.
  const held = new SourceIndexes(schema);
  held.insert(existing);
  await held.addIndexAsync(def, models, existing, { hold: true, sliceRows: 500 });
  held.insert(stored(2000, 2100));
  t.is(held.index(INDEX), undefined);
  held.attach(INDEX);
  t.is(held.index<IvfPqIndex>(INDEX)!.rowCount, 2100);
  const finished = new SourceIndexes(schema);
  finished.insert(existing);
  const pending = finished.addIndexAsync(def, models, existing, { sliceRows: 100 });
  finished.addIndex(def, models, existing);
  t.is(finished.index<IvfPqIndex>(INDEX)!.rowCount, 2000);
  await pending;
  t.is(finished.index<IvfPqIndex>(INDEX)!.rowCount, 2000, 'the finished build is not added twice');
});

test('training in a worker thread gives the in-process model, bit for bit', async (t) => {
  // Nulls and a non-finite vector in the input: the worker gets only the non-null rows.
  const batch = rows(0, 4000);
  const vec = batch.data.children[1];
  const validity = new Uint8Array(Math.ceil(4000 / 8)).fill(0xff);
  for (const r of [3, 17, 1999, 3998]) validity[r >> 3] &= ~(1 << (r & 7));
  const values = vec.children[0].values as Float32Array;
  values[100 * DIM] = Number.NaN;
  const source = new VectorSource(DIM, [{ start: 0, count: 4000, data: values, validity, bitOffset: 0 }]);
  for (const params of [{ metric: 'l2' as const, partitions: 16 }, { metric: 'cosine' as const, partitions: 8, subVectors: 4, seed: 7 }]) {
    const off = await trainIvfPqOffThread(source, params);
    t.true(off.offThread, off.reason);
    sameModel(t, off.model, trainIvfPq(source, params));
  }
  // A training error comes back as the in-process call's error.
  const tiny = new VectorSource(DIM, [{ start: 0, count: 10, data: values.subarray(0, 10 * DIM), validity: null, bitOffset: 0 }]);
  const err = await t.throwsAsync(trainIvfPqOffThread(tiny, { metric: 'l2' }));
  t.regex(err!.message, /not enough vectors/);
});
