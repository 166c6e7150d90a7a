/**
 * A flush reuses the MemTable's indexes (issue 7): the generation's IVF-PQ, FTS and scalar
 * indexes are the MemTable's, remapped from MemTable row positions to generation positions
 * (`remapped(newPosition)`), instead of being rebuilt from the flushed rows. These tests check
 * that a remapped index answers — and, for FTS and scalar, writes its sidecar — exactly like one
 * built from the surviving rows, with rows dropped by the flush's dedup (upserts and deletes of
 * the same key inside the MemTable), null and NaN vectors, null and empty texts, NaN and null
 * scalar values; and that at table level a flush keeps search results and does not re-index. A
 * flush that keeps every row in place gives the generation the MemTable's full-text index itself.
 */
import test from 'ava';
import {
  Bool,
  Field,
  FixedSizeList,
  Float32,
  Float64,
  Int32,
  Int64,
  makeData,
  makeVector,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import type { IndexDef } from '../../src/index/index-def.js';
import { IndexingContext } from '../../src/index/indexing.js';
import { InvertedIndex } from '../../src/index/fts/inverted-index.js';
import { ScalarIndex, type ScalarPredicate } from '../../src/index/scalar/scalar-index.js';
import { SourceIndexes } from '../../src/index/source-indexes.js';
import { METRICS, type Metric } from '../../src/index/vector/distance.js';
import { IvfPqIndex } from '../../src/index/vector/ivf-pq-index.js';
import { trainIvfPq } from '../../src/index/vector/ivf-pq-model.js';
import { VectorSource } from '../../src/index/vector/vector-source.js';
import { takeData } from '../../exec/kernels/take.js';
import { estimateBytes } from '../../src/util/memory-estimate.js';
import { dedupForFlush, flushIndexCounters, indexSidecarFile, readGeneration, takeBatch, writeGeneration } from '../../src/region/generation.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { systemRuntime } from '../../src/util/runtime.js';
import { RegionLayout } from '../../src/wal/region-layout.js';
import { clusteredVectors } from './vector/fixtures.js';
import { mulberry32 } from '../helpers/rng.js';

const DIM = 16;
const vecType = new FixedSizeList(DIM, new Field('item', new Float32(), true));
const userSchema = new Schema([
  new Field('id', new Int64(), false),
  new Field('body', new Utf8(), true),
  new Field('year', new Int32(), true),
  new Field('tag', new Utf8(), true),
  new Field('score', new Float64(), true),
  new Field('vec', vecType, true),
]);
const ts = new TableSchema(userSchema, ['id']);
const col = (name: string) => ts.stored.fields.findIndex((f) => f.name === name);

const WORDS = ['quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'arrow', 'flight', 'stream', 'batch', 'vector', 'index', 'query', 'storage', 'running', 'runner', 'runs', 'the', 'and', 'café', 'naïve', 'straße'];
const TAGS = ['alpha', 'beta', 'gamma', 'delta', 'épsilon', 'zeta', '', 'eta', 'theta', 'ωmega'];

interface Row {
  id: number;
  tomb: boolean;
  body: string | null;
  year: number | null;
  tag: string | null;
  score: number | null;
  vec: Float32Array | null;
}

/**
 * A MemTable's worth of writes: `batches` batches over `keys` keys (so keys repeat within and
 * across batches), ~8 % deletes, null and empty texts, words that occur once (some only in rows
 * dedup drops), null / NaN vectors, null / NaN scalar values.
 */
function memtableRows(seed: number, batches: number, perBatch: number, keys: number): Row[][] {
  const rnd = mulberry32(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pool = clusteredVectors({ n: 600, dim: DIM, clusters: 8, seed, normSpread: 0.3 });
  let rare = 0;
  const out: Row[][] = [];
  for (let b = 0; b < batches; b++) {
    const rows: Row[] = [];
    for (let i = 0; i < perBatch; i++) {
      const id = int(keys);
      if (rnd() < 0.08) {
        rows.push({ id, tomb: true, body: null, year: null, tag: null, score: null, vec: null });
        continue;
      }
      let body: string | null = null;
      const u = rnd();
      if (u < 0.05) body = null;
      else if (u < 0.07) body = '';
      else {
        const words = Array.from({ length: 1 + int(12) }, () => WORDS[int(WORDS.length)]);
        if (rnd() < 0.2) words.splice(int(words.length), 0, `rare${rare++}`);
        if (rnd() < 0.1) words.push(words[0], words[0]); // repeated terms: tf > 1
        body = words.join(rnd() < 0.5 ? ' ' : ', ');
      }
      let vec: Float32Array | null = null;
      const v = rnd();
      if (v >= 0.04) {
        const r = int(600);
        vec = pool.slice(r * DIM, (r + 1) * DIM);
        for (let d = 0; d < DIM; d++) vec[d] += (rnd() - 0.5) * 0.1;
        if (v < 0.07) vec[int(DIM)] = NaN;
      }
      const s = rnd();
      rows.push({
        id,
        tomb: false,
        body,
        year: rnd() < 0.1 ? null : 1990 + int(30),
        tag: rnd() < 0.1 ? null : TAGS[int(TAGS.length)],
        score: s < 0.05 ? null : s < 0.1 ? NaN : Math.round(rnd() * 1000) / 10,
        vec,
      });
    }
    out.push(rows);
  }
  return out;
}

function storedBatch(rows: Row[]): RecordBatch {
  const n = rows.length;
  const vecValues = new Float32Array(n * DIM);
  const vecValid = new Uint8Array((n + 7) >> 3);
  let vecNulls = 0;
  rows.forEach((r, i) => {
    if (r.vec) {
      vecValues.set(r.vec, i * DIM);
      vecValid[i >> 3] |= 1 << (i & 7);
    } else vecNulls++;
  });
  const tomb = new Uint8Array((n + 7) >> 3);
  rows.forEach((r, i) => {
    if (r.tomb) tomb[i >> 3] |= 1 << (i & 7);
  });
  const children = [
    makeData({ type: new Int64(), length: n, nullCount: 0, data: BigInt64Array.from(rows, (r) => BigInt(r.id)) }),
    vectorFromArray(rows.map((r) => r.body), new Utf8()).data[0],
    vectorFromArray(rows.map((r) => r.year), new Int32()).data[0],
    vectorFromArray(rows.map((r) => r.tag), new Utf8()).data[0],
    vectorFromArray(rows.map((r) => r.score), new Float64()).data[0],
    makeData({ type: vecType, length: n, nullCount: vecNulls, nullBitmap: vecValid, child: makeData({ type: new Float32(), length: n * DIM, nullCount: 0, data: vecValues }) }),
    makeData({ type: new Bool(), length: n, nullCount: 0, data: tomb }),
  ];
  return new RecordBatch(ts.stored, makeData({ type: new Struct(ts.stored.fields), length: n, nullCount: 0, children }));
}

const FTS_DEF: IndexDef = { name: 'body_fts', column: 'body', type: 'fts', stem: true, stopWords: true };
const SCALAR_DEFS: IndexDef[] = ['id', 'year', 'tag', 'score'].map((c) => ({ name: `${c}_scalar`, column: c, type: 'scalar' }));

/** Indexing with every index kind; the IVF-PQ model is trained on the rows' vectors. */
function indexingFor(batches: RecordBatch[], metric: Metric): { indexing: IndexingContext; ivfDef: IndexDef } {
  const indexing = new IndexingContext(ts);
  const ivfDef: IndexDef = { name: 'vec_ivf_pq', column: 'vec', type: 'ivf_pq', metric, partitions: 12, subVectors: 4, model: `_indices/m-${metric}.arrow` };
  indexing.setDefs([ivfDef, FTS_DEF, ...SCALAR_DEFS]);
  indexing.setModel(ivfDef, trainIvfPq(VectorSource.fromArrow(batches, col('vec')), { metric, partitions: 12, subVectors: 4, seed: 7 }));
  return { indexing, ivfDef };
}

/** The MemTable's indexes: built as the MemTable does, one batch at a time. */
function memtableIndexes(indexing: IndexingContext, batches: RecordBatch[]): SourceIndexes {
  const set = indexing.build([]);
  for (const b of batches) set.insert([b]);
  return set;
}

const ipc = (t: Table) => Buffer.from(tableToIPC(t, 'file'));

async function fixture(seed: number, metric: Metric = 'l2') {
  const rows = memtableRows(seed, 12, 230, 900);
  const batches = rows.map(storedBatch);
  const { indexing, ivfDef } = indexingFor(batches, metric);
  const mem = memtableIndexes(indexing, batches);
  const flushed = await dedupForFlush(ts, batches);
  const rebuilt = indexing.build(flushed.batches);
  return { rows: rows.flat(), batches, indexing, ivfDef, mem, flushed, rebuilt };
}

test('dedupForFlush maps every MemTable row to its generation position, or -1 when dropped', async (t) => {
  const { rows, flushed } = await fixture(1);
  const { batches, newPosition } = flushed;
  t.is(newPosition.length, rows.length);
  // Newest version of each key survives (tombstones too); all older versions are dropped.
  const newest = new Map<number, number>();
  rows.forEach((r, p) => newest.set(r.id, p));
  const ids = batches.flatMap((b) => Array.from(b.getChildAt(0)!, Number));
  let next = 0;
  rows.forEach((r, p) => {
    if (newest.get(r.id) === p) {
      t.is(newPosition[p], next, `row ${p}`);
      t.is(ids[next], r.id);
      next++;
    } else t.is(newPosition[p], -1, `row ${p}`);
  });
  t.is(next, ids.length);
  t.true(next < rows.length * 0.6, 'the fixture drops many rows');
});

test('takeBatch copies runs of rows like takeData copies them row by row, sliced batches and nulls included', (t) => {
  const rows = memtableRows(8, 1, 700, 100000)[0];
  const whole = storedBatch(rows);
  for (const batch of [whole, whole.slice(37, 650), whole.slice(1, 9)]) {
    const n = batch.numRows;
    const rnd = mulberry32(n);
    const lists = [
      Uint32Array.from({ length: n }, (_, i) => i),
      Uint32Array.from({ length: n }, (_, i) => i).filter(() => rnd() < 0.97), // long runs
      Uint32Array.from({ length: n }, (_, i) => i).filter((i) => i % 50 > 3),
      Uint32Array.from({ length: n }, (_, i) => i).filter(() => rnd() < 0.5), // short runs: row by row
      new Uint32Array(0),
    ];
    for (const idx of lists) {
      const want = new RecordBatch(ts.stored, makeData({ type: new Struct(ts.stored.fields), length: idx.length, nullCount: 0, children: batch.data.children.map((c) => takeData(c, idx)) }));
      t.true(ipc(new Table([takeBatch(batch, idx)])).equals(ipc(new Table([want]))), `${n} rows, ${idx.length} taken`);
    }
  }
});

test('a remapped inverted index equals one built from the surviving rows: sidecar bytes, stats, search', async (t) => {
  for (const seed of [1, 2, 3]) {
    const { mem, rebuilt, flushed } = await fixture(seed);
    const a = mem.index<InvertedIndex>('body_fts')!.remapped(flushed.newPosition);
    const b = rebuilt.index<InvertedIndex>('body_fts')!;
    t.true(a.termCount < mem.index<InvertedIndex>('body_fts')!.termCount, 'some terms only occur in dropped rows');
    t.is(a.termCount, b.termCount);
    t.is(a.documentCount, b.documentCount);
    t.is(a.endPosition, b.endPosition);
    for (let p = -1; p <= b.endPosition + 1; p++) t.is(a.documentLength(p), b.documentLength(p));
    const terms = [...WORDS.map((w) => b.parseQuery(w).should.map((c) => (c.kind === 'term' ? c.term : ''))).flat(), 'rare3', 'rare40', 'missing'];
    for (const cut of [undefined, 0, 1, 57, 400, b.endPosition, b.endPosition + 10]) t.deepEqual(a.stats(terms, cut), b.stats(terms, cut));
    const queries = ['fox', 'quick brown', '"lazy dog"', '"brown fox"~2', 'runner~1', 'cafe~1 arrow', '+index -query', '+stream +batch vector', 'rare5 rare17 rare31', 'straße naïve', '-fox', 'the'];
    for (const q of queries) {
      const query = b.parseQuery(q);
      t.deepEqual(a.queryTerms(query), b.queryTerms(query), q);
      for (const opts of [{ k: 10 }, { k: 1000 }, { k: 5, maxPosition: 300 }, { k: 7, allowed: (p: number) => p % 3 !== 0 }]) {
        t.deepEqual(a.search(query, opts), b.search(query, opts), `${q} ${JSON.stringify(opts)}`);
      }
    }
    t.true(ipc(a.toArrow()).equals(ipc(b.toArrow())), 'same sidecar bytes');
    // In steps (pausing every ~64 postings and token positions): the same index.
    const steps = mem.index<InvertedIndex>('body_fts')!.remapSteps(flushed.newPosition, 64);
    let pauses = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) pauses++;
    t.true(pauses > 10);
    t.true(ipc(r.value.toArrow()).equals(ipc(b.toArrow())), 'same sidecar bytes, remapped in steps');
    // And the sidecar reads back into an index that answers the same.
    const back = InvertedIndex.fromArrow(tableFromIPC(tableToIPC(a.toArrow(), 'file')), { stem: true, stopWords: true });
    t.deepEqual(back.search(b.parseQuery('quick fox'), { k: 20 }), b.search(b.parseQuery('quick fox'), { k: 20 }));
  }
});

test('a remapped inverted index: edge cases (nothing kept, everything kept, rows the index never held, order check)', async (t) => {
  const idx = new InvertedIndex();
  idx.add(0, ['a b', null, '', 'b c c']);
  const none = idx.remapped(new Int32Array([-1, -1, -1, -1]));
  t.is(none.endPosition, -1);
  t.is(none.termCount, 0);
  t.deepEqual(none.stats(['a'], undefined), new InvertedIndex().stats(['a'], undefined));
  const same = idx.remapped(new Int32Array([0, 1, 2, 3]));
  t.true(ipc(same.toArrow()).equals(ipc(idx.toArrow())));
  // A map longer than the index: positions it never held are not documents.
  const longer = idx.remapped(new Int32Array([-1, 0, 1, 2, 3, 4]));
  const expected = new InvertedIndex();
  expected.add(0, [null, '', 'b c c', null, null]);
  t.true(ipc(longer.toArrow()).equals(ipc(expected.toArrow())));
  t.throws(() => idx.remapped(new Int32Array([1, 0, -1, -1])), { instanceOf: RangeError });
  // Long posting lists (copied in bulk): nothing dropped, and only the last row dropped.
  const { mem, rows } = await fixture(7);
  const fts = mem.index<InvertedIndex>('body_fts')!;
  const n = rows.length;
  const opts = { stem: true, stopWords: true };
  t.true(ipc(fts.remapped(Int32Array.from({ length: n }, (_, i) => i)).toArrow()).equals(ipc(fts.toArrow())));
  const butLast = new InvertedIndex(opts);
  butLast.add(0, rows.slice(0, n - 1).map((r) => r.body));
  t.true(ipc(fts.remapped(Int32Array.from({ length: n }, (_, i) => (i === n - 1 ? -1 : i))).toArrow()).equals(ipc(butLast.toArrow())));
  const shifted = new InvertedIndex(opts);
  shifted.add(0, rows.slice(1).map((r) => r.body));
  const r1 = fts.remapped(Int32Array.from({ length: n }, (_, i) => i - 1));
  t.true(ipc(r1.toArrow()).equals(ipc(shifted.toArrow())));
  // A remapped index remapped again, and one that goes on growing, stay equal to a rebuild.
  const r2 = r1.remapped(Int32Array.from({ length: n - 1 }, (_, i) => (i % 2 === 0 ? -1 : i >> 1)));
  const odd = new InvertedIndex(opts);
  odd.add(0, rows.slice(1).filter((_, i) => i % 2 === 1).map((r) => r.body));
  t.true(ipc(r2.toArrow()).equals(ipc(odd.toArrow())));
  const more = ['brand new words', null, 'quick fox fox', ''];
  r1.add(n - 1, more);
  shifted.add(n - 1, more);
  t.true(ipc(r1.toArrow()).equals(ipc(shifted.toArrow())));
  for (const q of ['brand', 'fox', 'quick "fox fox"', 'new~1']) t.deepEqual(r1.search(r1.parseQuery(q), { k: 20 }), shifted.search(shifted.parseQuery(q), { k: 20 }));
});

test('a remapped scalar index equals one built from the surviving rows: lookups and sidecar bytes', async (t) => {
  const { mem, rebuilt, flushed, rows } = await fixture(4);
  const preds: Record<string, ScalarPredicate[]> = {
    id: [{ op: 'eq', value: 17 }, { op: 'range', lower: { value: 100, inclusive: true }, upper: { value: 400, inclusive: false } }, { op: 'in', values: [1, 2, 3, 500, 899] }],
    year: [{ op: 'eq', value: 2001 }, { op: 'range', lower: { value: 1995, inclusive: false } }, { op: 'range', upper: { value: 2000.5, inclusive: true } }, { op: 'in', values: [1990, 2019, 2005] }],
    tag: [{ op: 'eq', value: 'épsilon' }, { op: 'eq', value: '' }, { op: 'range', lower: { value: 'b', inclusive: true }, upper: { value: 'eta', inclusive: true } }, { op: 'in', values: ['ωmega', 'alpha'] }],
    score: [{ op: 'eq', value: 50 }, { op: 'range', lower: { value: 10, inclusive: true }, upper: { value: 60, inclusive: false } }, { op: 'range', upper: { value: 5, inclusive: false } }],
  };
  for (const [column, ps] of Object.entries(preds)) {
    const old = mem.index<ScalarIndex>(`${column}_scalar`)!;
    t.true(old.runCount > 1, 'the MemTable index has several runs');
    const a = old.remapped(flushed.newPosition);
    const b = rebuilt.index<ScalarIndex>(`${column}_scalar`)!;
    t.is(a.size, b.size, column);
    for (const p of ps) {
      for (const max of [Infinity, 0, 250, 1000]) t.deepEqual(Array.from(a.lookup(p, max)), Array.from(b.lookup(p, max)), `${column} ${JSON.stringify(p)} < ${max}`);
    }
    t.true(ipc(a.toArrow()).equals(ipc(b.toArrow())), `${column}: same sidecar bytes`);
  }
  t.true(rows.length > 2000);
  t.throws(() => new ScalarIndex(new Int32()).remapped(new Int32Array([3, 1])));
});

test('a remapped IVF-PQ index equals one built from the surviving rows: codes, partitions, search', async (t) => {
  for (const metric of METRICS) {
    const { mem, rebuilt, flushed, ivfDef } = await fixture(5, metric);
    const old = mem.index<IvfPqIndex>(ivfDef.name)!;
    const a = old.remapped(flushed.newPosition);
    const b = rebuilt.index<IvfPqIndex>(ivfDef.name)!;
    t.true(b.skippedRows > 0, 'NaN vectors among the kept rows');
    t.true(a.rowCount < old.rowCount);
    t.is(a.rowCount, b.rowCount, metric);
    t.deepEqual(a.partitionSizes(), b.partitionSizes());
    const [ta, tb] = [a.toArrow(), b.toArrow()];
    for (const c of ['partition', 'position', 'code']) t.deepEqual(ta.getChild(c)!.toArray(), tb.getChild(c)!.toArray(), `${metric} ${c}`);
    const source = rebuilt.vectorSource('vec')!;
    const queries = clusteredVectors({ n: 12, dim: DIM, clusters: 8, seed: 5, normSpread: 0.3 });
    for (let q = 0; q < 12; q++) {
      const query = queries.subarray(q * DIM, (q + 1) * DIM);
      for (const opts of [{ k: 10 }, { k: 10, refineFactor: 0 }, { k: 25, nprobes: 2 }, { k: 5, maxPosition: 200, allowed: (p: number) => p % 2 === 0 }]) {
        t.deepEqual(a.search(query, { ...opts, source }), b.search(query, { ...opts, source }), `${metric} query ${q} ${JSON.stringify(opts)}`);
      }
    }
  }
});

test('writeGeneration remaps the MemTable indexes it holds over all its rows and builds the others; the sidecars match a rebuild', async (t) => {
  const { batches, indexing, ivfDef, mem, flushed } = await fixture(6);
  const store = new MemoryObjectStore();
  const layout = new RegionLayout('t', 'r');
  // (No other test of this file writes generations while this one runs: the counters see only these calls.)
  const counted = async (run: () => Promise<Awaited<ReturnType<typeof writeGeneration>>>) => {
    const before = { ...flushIndexCounters };
    const g = await run();
    return { g, remapped: flushIndexCounters.remapped - before.remapped, rebuilt: flushIndexCounters.rebuilt - before.rebuilt };
  };
  const defs = indexing.defs.length;
  const base = await counted(() => writeGeneration(store, layout, ts, 1, flushed.batches, indexing, systemRuntime));
  t.like(base, { remapped: 0, rebuilt: defs });
  const reused = await counted(() => writeGeneration(store, layout, ts, 2, flushed.batches, indexing, systemRuntime, { indexes: mem, newPosition: flushed.newPosition }));
  t.like(reused, { remapped: defs, rebuilt: 0 });
  // The MemTable's indexes miss its last batch: everything is built from rows.
  const partial = memtableIndexes(indexing, batches.slice(0, -1));
  const fallback = await counted(() => writeGeneration(store, layout, ts, 3, flushed.batches, indexing, systemRuntime, { indexes: partial, newPosition: flushed.newPosition }));
  t.like(fallback, { remapped: 0, rebuilt: defs });
  // A MemTable without the FTS index (e.g. created since and not completed on it): only that one is built.
  const lacking = new SourceIndexes(ts);
  lacking.insert(batches);
  for (const def of indexing.defs) if (def.type !== 'fts') lacking.addIndex(def, indexing.model, batches, mem.index(def.name));
  const mixed = await counted(() => writeGeneration(store, layout, ts, 4, flushed.batches, indexing, systemRuntime, { indexes: lacking, newPosition: flushed.newPosition }));
  t.like(mixed, { remapped: defs - 1, rebuilt: 1 });

  const gens = [base.g, reused.g, fallback.g, mixed.g];
  const sidecar = async (folder: string, def: IndexDef) => Buffer.from(await store.get(layout.generationKey(folder, indexSidecarFile(def))));
  for (const g of gens.slice(1)) {
    for (const def of indexing.defs) {
      const [x, y] = [await sidecar(gens[0].folder, def), await sidecar(g.folder, def)];
      if (def.type !== 'ivf_pq') t.true(x.equals(y), `${def.name} sidecar of generation ${g.generation}`);
      else {
        // Same codes; the per-partition error bounds in the metadata may be the MemTable's (larger or equal).
        const [tx, ty] = [tableFromIPC(x), tableFromIPC(y)];
        for (const c of ['partition', 'position', 'code']) t.deepEqual(tx.getChild(c)!.toArray(), ty.getChild(c)!.toArray());
      }
    }
    // Read back from storage, the generation answers like the rebuilt one.
    const loaded = await readGeneration(store, layout, indexing, g.generation, g.folder);
    const query = loaded.indexes.index<InvertedIndex>('body_fts')!.parseQuery('quick "lazy dog" rare9');
    t.deepEqual(loaded.indexes.index<InvertedIndex>('body_fts')!.search(query, { k: 50 }), gens[0].indexes.index<InvertedIndex>('body_fts')!.search(query, { k: 50 }));
    const v = new Float32Array(DIM).fill(0.1);
    const source = gens[0].indexes.vectorSource('vec')!;
    t.deepEqual(loaded.indexes.index<IvfPqIndex>(ivfDef.name)!.search(v, { k: 10, source }), gens[0].indexes.index<IvfPqIndex>(ivfDef.name)!.search(v, { k: 10, source }));
  }
});

// ---- table level -------------------------------------------------------------------------------

const tableSchema = new Schema([
  new Field('id', new Int64(), false),
  new Field('year', new Int32(), true),
  new Field('body', new Utf8(), true),
  new Field('vec', vecType, true),
]);

function tableRows(ids: number[], seed: number): Table {
  const rnd = mulberry32(seed);
  const pool = clusteredVectors({ n: 400, dim: DIM, clusters: 6, seed: 9 });
  const n = ids.length;
  const values = new Float32Array(n * DIM);
  const valid = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  const bodies: (string | null)[] = [];
  ids.forEach((id, i) => {
    const r = Math.floor(rnd() * 400);
    values.set(pool.subarray(r * DIM, (r + 1) * DIM), i * DIM);
    for (let d = 0; d < DIM; d++) values[i * DIM + d] += (rnd() - 0.5) * 0.2;
    const u = rnd();
    if (u < 0.03) nulls++;
    else {
      valid[i >> 3] |= 1 << (i & 7);
      if (u < 0.05) values[i * DIM + 3] = NaN;
    }
    bodies.push(rnd() < 0.05 ? null : Array.from({ length: 2 + Math.floor(rnd() * 8) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ') + ` w${id % 50}`);
  });
  return new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    year: vectorFromArray(ids.map((id) => (id % 11 === 0 ? null : 2000 + ((id * 7 + seed) % 25))), new Int32()),
    body: vectorFromArray(bodies, new Utf8()),
    vec: makeVector(makeData({ type: vecType, length: n, nullCount: nulls, nullBitmap: valid, child: makeData({ type: new Float32(), length: n * DIM, data: values }) })),
  });
}
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

/** What a search returns, without the plan: ids with distances or scores, or the key search's rows. */
function answer(t: Table): unknown {
  const ids = Array.from(t.getChild('id')!, Number);
  const d = t.getChild('_distance') ?? t.getChild('_score');
  if (!d) return ids.sort((a, b) => a - b);
  return ids.map((id, i) => [id, d.get(i)]);
}

test.serial('table: a flush after upserts and deletes keeps every search answer and reuses the MemTable indexes', async (t) => {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 2 } });
  const table = await db.createTable('docs', tableSchema, { primaryKey: 'id' });
  for (let s = 0; s < 2600; s += 400) await table.put(tableRows(range(s, Math.min(2600, s + 400)), 1));
  const ivf = await table.createIndex('vec', { type: 'ivf_pq', partitions: 8, subVectors: 4 });
  t.truthy(ivf.model, 'the IVF-PQ model trained');
  await table.createIndex('body', { type: 'fts' });
  await table.createIndex('year', { type: 'scalar' });
  // Upserts (some keys twice) and deletes inside the same MemTable.
  await table.put(tableRows(range(0, 2600).filter((i) => i % 5 === 0), 2));
  await table.put(tableRows(range(0, 2600).filter((i) => i % 15 === 0), 3));
  await table.delete(range(0, 2600).filter((i) => i % 13 === 0));
  await table.put(tableRows(range(2600, 2700), 4));
  await table.delete([2601n, 2650n]);

  const qv = clusteredVectors({ n: 6, dim: DIM, clusters: 6, seed: 9 });
  const requests = [
    ...range(0, 6).flatMap((q) => [
      { vector: { column: 'vec', query: Array.from(qv.subarray(q * DIM, (q + 1) * DIM)) }, k: 10 },
      { vector: { column: 'vec', query: Array.from(qv.subarray(q * DIM, (q + 1) * DIM)) }, k: 15, nprobes: 2, filter: 'year >= 2010' },
    ]),
    { text: { column: 'body', query: 'quick brown' }, k: 20 },
    { text: { column: 'body', query: '"lazy dog" w7' }, k: 10 },
    { text: { column: 'body', query: 'runner~1 storage' }, k: 30, filter: 'year < 2015' },
    { key: { column: 'year', eq: 2004 }, k: 10_000 },
    { key: { column: 'year', lower: 2010, upper: 2012 }, k: 10_000 },
  ];
  const before = [];
  for (const r of requests) before.push(answer(await table.search(r as never)));

  const counters = { ...flushIndexCounters };
  await table.flush();
  t.is(flushIndexCounters.remapped - counters.remapped, 3, 'the three indexes were remapped from the MemTable');
  t.is(flushIndexCounters.rebuilt - counters.rebuilt, 0, 'no index was rebuilt from the flushed rows');
  const [state] = (await table.readStates()).map((s) => s.state);
  t.is(state.manifest.flushedGenerations.length, 1);

  for (let i = 0; i < requests.length; i++) t.deepEqual(answer(await table.search(requests[i] as never)), before[i], `after flush: ${JSON.stringify(requests[i]).slice(0, 80)}`);
  await db.close();

  // Reopened, the generation's indexes come from the sidecars the flush wrote.
  const db2 = await connect('memory://', { store: mem });
  const reopened = await db2.openTable('docs');
  for (let i = 0; i < requests.length; i++) t.deepEqual(answer(await reopened.search(requests[i] as never)), before[i], `reopened: ${JSON.stringify(requests[i]).slice(0, 80)}`);
  await db2.close();
});

test.serial('a flush that keeps every row in place shares the MemTable full-text index; its sidecar and answers match a rebuild', async (t) => {
  // Keys drawn from a billion: none repeats, so the flush drops and moves nothing.
  const batches = memtableRows(21, 8, 230, 1_000_000_000).map(storedBatch);
  const { indexing } = indexingFor(batches, 'l2');
  const mem = memtableIndexes(indexing, batches);
  const flushed = await dedupForFlush(ts, batches);
  t.deepEqual(Array.from(flushed.newPosition), range(0, flushed.newPosition.length), 'every row keeps its position');
  const store = new MemoryObjectStore();
  const layout = new RegionLayout('t', 'r');
  const rebuilt = await writeGeneration(store, layout, ts, 1, flushed.batches, indexing, systemRuntime);
  const before = flushIndexCounters.shared;
  const shared = await writeGeneration(store, layout, ts, 2, flushed.batches, indexing, systemRuntime, { indexes: mem, newPosition: flushed.newPosition });
  t.is(flushIndexCounters.shared - before, 1, 'one full-text index shared');
  const def = indexing.defs.find((d) => d.type === 'fts')!;
  t.is(shared.indexes.index(def.name), mem.index(def.name), "the generation reads the MemTable's index itself");
  const sidecar = async (folder: string) => Buffer.from(await store.get(layout.generationKey(folder, indexSidecarFile(def))));
  t.true((await sidecar(rebuilt.folder)).equals(await sidecar(shared.folder)), 'the sidecar is byte for byte a rebuild');
  const loaded = await readGeneration(store, layout, indexing, shared.generation, shared.folder);
  const fts = (g: { indexes: SourceIndexes }) => g.indexes.index<InvertedIndex>(def.name)!;
  // The MemTable's room to grow is gone: about the memory of the index read from the sidecar.
  const [sharedBytes, loadedBytes] = [estimateBytes(fts(shared)), estimateBytes(fts(loaded))];
  t.true(sharedBytes < 1.25 * loadedBytes, `shared ${sharedBytes} bytes vs loaded ${loadedBytes}`);
  for (const q of ['quick', 'quick "lazy dog" rare9', 'brown -fox', 'storage~1']) {
    const query = fts(rebuilt).parseQuery(q);
    const expected = fts(rebuilt).search(query, { k: 100 });
    t.deepEqual(fts(shared).search(query, { k: 100 }), expected, q);
    t.deepEqual(fts(loaded).search(query, { k: 100 }), expected, `${q}, loaded`);
  }
});

test.serial('table: text scores after a flush that shares the MemTable index, and upserts over it, equal those of a table never flushed', async (t) => {
  type Opened = { db: Awaited<ReturnType<typeof connect>>; table: Awaited<ReturnType<Awaited<ReturnType<typeof connect>>['createTable']>> };
  const tables: Opened[] = [];
  for (const flushAt of [true, false]) {
    const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 2 } });
    const table = await db.createTable('docs', tableSchema, { primaryKey: 'id' });
    await table.createIndex('body', { type: 'fts' });
    for (let s = 0; s < 2000; s += 500) await table.put(tableRows(range(s, s + 500), 1));
    const counters = { ...flushIndexCounters };
    if (flushAt) {
      await table.flush();
      t.is(flushIndexCounters.shared - counters.shared, 1, 'the flush shared the full-text index');
    }
    // Upserts and deletes over the flushed rows, in the new MemTable (or the same one).
    await table.put(tableRows(range(0, 2000).filter((i) => i % 7 === 0), 2));
    await table.delete(range(0, 2000).filter((i) => i % 11 === 0));
    tables.push({ db, table });
  }
  const scores = async (table: Opened['table'], q: string) => {
    const r = await table.search({ text: { column: 'body', query: q }, k: 5000 } as never);
    const ids = Array.from(r.getChild('id')!, Number);
    const s = Array.from(r.getChild('_score')!, Number);
    return ids.map((id, i) => [id, Math.round(s[i] * 1e9) / 1e9]).sort((a, b) => a[0] - b[0]);
  };
  for (const q of ['quick brown', '"lazy dog" w7', 'w3', 'runner~1 storage']) {
    const [a, b] = [await scores(tables[0].table, q), await scores(tables[1].table, q)];
    t.true(a.length > 0, q);
    t.deepEqual(a, b, q);
  }
  for (const { db } of tables) await db.close();
});
