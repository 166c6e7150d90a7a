/**
 * Vector and full-text SQL against exact oracles, across an active MemTable and several
 * generations, after upserts and deletes: brute-force distances over the live rows (the model),
 * and a plain reference BM25 over the live documents. A superseded or deleted row never appears,
 * even when its newer version fails the filter (then the key is simply absent).
 */
import test from 'ava';
import { Field, FixedSizeList, Float32, Int32, Int64, makeData, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, type Database, MemoryObjectStore } from '../../src/quiver.js';
import { parseFtsQuery } from '../../src/index/fts/query.js';
import { RefIndex, refDocs } from '../index/fts/reference.js';

const DIM = 8;
const WORDS = ['quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'arrow', 'flight', 'stream', 'batch', 'vector', 'index', 'query', 'storage', 'river', 'stone'];

interface Row {
  id: number;
  year: number;
  body: string;
  vec: number[];
}

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeRow(id: number, r: () => number): Row {
  const words = Array.from({ length: 3 + Math.floor(r() * 6) }, () => WORDS[Math.floor(r() * r() * WORDS.length)]);
  return { id, year: 2000 + Math.floor(r() * 25), body: words.join(' '), vec: Array.from({ length: DIM }, () => r() * 2 - 1) };
}

const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('year', new Int32(), true),
  new Field('body', new Utf8(), true),
  new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), true)), true),
]);

function toTable(rows: Row[]): Table {
  const values = new Float32Array(rows.length * DIM);
  rows.forEach((row, i) => values.set(row.vec, i * DIM));
  return new Table({
    id: makeVector(BigInt64Array.from(rows.map((x) => BigInt(x.id)))),
    year: makeVector(Int32Array.from(rows.map((x) => x.year))),
    body: vectorFromArray(rows.map((x) => x.body), new Utf8()),
    vec: makeVector(makeData({ type: schema.fields[3].type as FixedSizeList, length: rows.length, nullCount: 0, child: makeData({ type: new Float32(), length: values.length, data: values }) })),
  });
}

/** A table of 4 generations + an active MemTable, upserts and deletes, and the live-row model. */
async function fixture(seed: number, perRound = 300) {
  const r = rng(seed);
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 2 } });
  await db.sql(`CREATE TABLE docs (id BIGINT PRIMARY KEY, year INT, body TEXT, vec FLOAT4[${DIM}])`);
  await db.sql('CREATE INDEX ON docs USING fts (body)');
  await db.sql('CREATE INDEX ON docs USING btree (year)');
  const table = await db.openTable('docs');
  const model = new Map<number, Row>();
  let next = 0;
  for (let round = 0; round < 5; round++) {
    const rows: Row[] = [];
    for (let i = 0; i < perRound; i++) rows.push(makeRow(next++, r));
    // Upsert some older keys with new values (often a far-away year, so filters reject the new version).
    for (let i = 0; i < perRound / 10 && next > perRound; i++) rows.push(makeRow(Math.floor(r() * (next - perRound)), r));
    const dedup = new Map(rows.map((x) => [x.id, x]));
    await table.put(toTable([...dedup.values()]));
    for (const x of dedup.values()) model.set(x.id, x);
    const victims = Array.from({ length: 5 }, () => Math.floor(r() * next));
    await db.sql(`DELETE FROM docs WHERE id IN (${victims.join(', ')})`);
    for (const v of victims) model.delete(v);
    if (round < 4) await table.flush();
  }
  return { db, model, r };
}

function l2(a: number[], b: number[]) {
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.fround(a[i]) - Math.fround(b[i]);
    s += d * d;
  }
  return s;
}

const ids = (t: Table) => Array.from(t.getChild('id')!, Number);

test('vector KNN with and without a filter equals brute force over the live rows, across MemTable + generations', async (t) => {
  const { db, model, r } = await fixture(7);
  for (let q = 0; q < 8; q++) {
    const query = Array.from({ length: DIM }, () => r() * 2 - 1);
    for (const filter of [null, 'year >= 2012', 'year < 2005 OR body LIKE \'%fox%\'']) {
      const sql = `SELECT id, _distance FROM docs ${filter ? `WHERE ${filter}` : ''} ORDER BY l2_distance(vec, $1) LIMIT 10`;
      const got = await db.sql(sql, [Float32Array.from(query)]);
      const pass = (x: Row) => (filter === null ? true : filter.startsWith('year >=') ? x.year >= 2012 : x.year < 2005 || /fox/.test(x.body));
      const want = [...model.values()].filter(pass).map((x) => ({ id: x.id, d: l2(x.vec, query) })).sort((a, b) => a.d - b.d || a.id - b.id).slice(0, 10);
      t.deepEqual(ids(got), want.map((w) => w.id), sql);
      Array.from(got.getChild('_distance')!, Number).forEach((d, i) => t.true(Math.abs(d - want[i].d) < 1e-4));
    }
  }
  // The exact path (no LIMIT: the distance is an ordinary expression, the rows sorted) agrees too.
  const query = Float32Array.from({ length: DIM }, () => r() * 2 - 1);
  const all = await db.sql('SELECT id, l2_distance(vec, $1) AS d FROM docs WHERE year = 2010 ORDER BY d', [query]);
  const want = [...model.values()].filter((x) => x.year === 2010).sort((a, b) => l2(a.vec, [...query]) - l2(b.vec, [...query]) || a.id - b.id);
  t.deepEqual(ids(all), want.map((w) => w.id));
  await db.close();
});

test('a superseded version never appears, even when the newer version fails the filter', async (t) => {
  const db = await connect('memory://', { store: new MemoryObjectStore() });
  await db.sql(`CREATE TABLE docs (id BIGINT PRIMARY KEY, year INT, body TEXT, vec FLOAT4[${DIM}])`);
  await db.sql('CREATE INDEX ON docs USING fts (body)');
  const table = await db.openTable('docs');
  const near = Array.from({ length: DIM }, () => 0.01);
  await table.put(toTable([{ id: 1, year: 2020, body: 'quick fox', vec: near }, { id: 2, year: 2020, body: 'slow dog', vec: near.map((x) => x + 1) }]));
  await table.flush();
  // Key 1's new version: a year the filter rejects, far away, other words.
  await table.put(toTable([{ id: 1, year: 1990, body: 'lazy dog', vec: near.map(() => 5) }]));
  const q = [Float32Array.from(near)];
  t.deepEqual(ids(await db.sql('SELECT id FROM docs WHERE year > 2000 ORDER BY l2_distance(vec, $1) LIMIT 5', q)), [2]);
  t.deepEqual(ids(await db.sql("SELECT id FROM docs WHERE match(body, 'fox')")), []);
  t.deepEqual(ids(await db.sql("SELECT id FROM docs WHERE year > 2000 AND match(body, 'dog')")), [2]);
  t.deepEqual(ids(await db.sql('SELECT id FROM docs WHERE year = 2020')), [2]);
  t.deepEqual(ids(await db.sql('SELECT id FROM docs WHERE year = 1990')), [1]);
  await db.sql('DELETE FROM docs WHERE id = 1');
  t.deepEqual(ids(await db.sql('SELECT id FROM docs ORDER BY id')), [2]);
  t.deepEqual(ids(await db.sql("SELECT id FROM docs WHERE match(body, 'dog')")), [2]);
  await db.close();
});

test('full-text match() ranks like a reference BM25 over the live documents, with and without a filter', async (t) => {
  const { db, model } = await fixture(11);
  const live = [...model.values()].sort((a, b) => a.id - b.id);
  const ref = new RefIndex(refDocs(0, live.map((x) => x.body), { stem: true, stopWords: false }));
  for (const text of ['fox', 'quick dog', 'stone river arrow', 'lazy']) {
    const hits = ref.search(parseFtsQuery(text, { stem: true, stopWords: false }));
    for (const filter of [null, 'year BETWEEN 2005 AND 2015']) {
      const pass = (pos: number) => filter === null || (live[pos].year >= 2005 && live[pos].year <= 2015);
      const want = hits.filter((h) => pass(h.pos)).sort((a, b) => b.score - a.score || a.pos - b.pos);
      const got = await db.sql(`SELECT id, _score FROM docs WHERE match(body, $1) ${filter ? `AND ${filter}` : ''} ORDER BY _score DESC LIMIT 10`, [text]);
      const top = want.slice(0, 10);
      t.is(got.numRows, top.length, text);
      const gotScores = Array.from(got.getChild('_score')!, Number);
      gotScores.forEach((s, i) => t.true(Math.abs(s - top[i].score) < 1e-3 * Math.max(1, top[i].score), `${text} rank ${i}`));
      // Ids agree wherever scores are not tied.
      const byId = new Map(want.map((h) => [live[h.pos].id, h.score]));
      ids(got).forEach((id, i) => t.true(Math.abs((byId.get(id) ?? -1) - gotScores[i]) < 1e-3 * Math.max(1, gotScores[i]), `${text}: id ${id}`));
      // Every match, unordered: the same set.
      const every = await db.sql(`SELECT id FROM docs WHERE match(body, $1) ${filter ? `AND ${filter}` : ''}`, [text]);
      t.deepEqual(ids(every).sort((a, b) => a - b), want.map((h) => live[h.pos].id).sort((a, b) => a - b));
    }
  }
  // count(*) over a match: aggregates compose with search.
  const n = await db.sql("SELECT count(*) AS n FROM docs WHERE match(body, 'fox')");
  t.is(Number(n.getChild('n')!.get(0)), ref.search(parseFtsQuery('fox', { stem: true, stopWords: false })).length);
  await db.close();
});

test('hybrid search fuses the vector and text legs by reciprocal rank', async (t) => {
  const { db } = await fixture(5, 100);
  const q = Float32Array.from({ length: DIM }, (_, i) => (i % 2 ? 0.5 : -0.5));
  const vectorLeg = ids(await db.sql('SELECT id FROM docs WHERE year > 2003 ORDER BY l2_distance(vec, $1) LIMIT 10', [q]));
  const textLeg = ids(await db.sql("SELECT id FROM docs WHERE year > 2003 AND match(body, 'fox dog') ORDER BY _score DESC LIMIT 10"));
  const fused = await db.sql("SELECT id, _distance, _score, _relevance_score FROM docs WHERE year > 2003 ORDER BY rrf(l2_distance(vec, $1), match(body, 'fox dog')) DESC LIMIT 10", [q]);
  const score = new Map<number, number>();
  vectorLeg.forEach((id, r) => score.set(id, (score.get(id) ?? 0) + 1 / (61 + r)));
  textLeg.forEach((id, r) => score.set(id, (score.get(id) ?? 0) + 1 / (61 + r)));
  const want = [...score.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
  t.deepEqual(Array.from(fused.getChild('_relevance_score')!, Number).map((x) => x.toFixed(5)), want.map((w) => Math.fround(w[1]).toFixed(5)));
  t.deepEqual(new Set(ids(fused)), new Set(want.map((w) => w[0])));
  await db.close();
});

test('the IVF-PQ path runs on large sources (EXPLAIN ANALYZE says so) and keeps recall', async (t) => {
  const r = rng(3);
  const db = await connect('memory://', { store: new MemoryObjectStore() });
  await db.sql(`CREATE TABLE docs (id BIGINT PRIMARY KEY, year INT, body TEXT, vec FLOAT4[${DIM}])`);
  const table = await db.openTable('docs');
  const rows = Array.from({ length: 6000 }, (_, i) => makeRow(i, r));
  await table.put(toTable(rows.slice(0, 3000)));
  await table.flush();
  await table.put(toTable(rows.slice(3000)));
  await db.sql('CREATE INDEX ON docs USING ivf_pq (vec) WITH (partitions = 16, sub_vectors = 4)');
  let recall = 0;
  const queries = 10;
  for (let q = 0; q < queries; q++) {
    const query = Array.from({ length: DIM }, () => r() * 2 - 1);
    const got = ids(await db.sql('SELECT id FROM docs ORDER BY l2_distance(vec, $1) LIMIT 10', [Float32Array.from(query)], { nprobes: 8 }));
    const want = rows.map((x) => ({ id: x.id, d: l2(x.vec, query) })).sort((a, b) => a.d - b.d).slice(0, 10).map((w) => w.id);
    recall += got.filter((id) => want.includes(id)).length / 10;
  }
  t.true(recall / queries >= 0.9, `recall ${recall / queries}`);
  const plan = await db.sql('EXPLAIN ANALYZE SELECT id FROM docs ORDER BY l2_distance(vec, $1) LIMIT 10', [new Float32Array(DIM)]);
  const text = Array.from(plan.getChild('plan')!, String).join('\n');
  t.regex(text, /VectorKnn: l2_distance\(vec, \$1\) k=10 via index vec_ivf_pq/);
  t.regex(text, /sources=2× ivf_pq/);
  t.regex(text, /partitionsProbed=\d+\/16/);
  // Another metric than the index's is answered exactly, and says why.
  const cos = Array.from((await db.sql('EXPLAIN SELECT id FROM docs ORDER BY cosine_distance(vec, $1) LIMIT 3', [new Float32Array(DIM).fill(1)])).getChild('plan')!, String).join('\n');
  t.regex(cos, /exact \(the index vec_ivf_pq uses metric l2, the query cosine\)/);
  await db.close();
});
