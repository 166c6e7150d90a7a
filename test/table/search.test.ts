/**
 * table.search across MemTables, generations and restarts: the same rows, distances and BM25
 * scores wherever the rows sit; filters as true prefilters; only live versions; visible rows
 * always indexed.
 */
import test from 'ava';
import { Field, FixedSizeList, Float32, Int64, makeData, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, isQuiverError, MemoryObjectStore } from '../../src/quiver.js';

const DIM = 8;
const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('year', new Int64(), false),
  new Field('body', new Utf8(), true),
  new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true),
]);
const WORDS = ['quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'arrow', 'flight', 'stream', 'batch', 'vector', 'index', 'query', 'storage'];

function vec(id: number): number[] {
  return Array.from({ length: DIM }, (_, j) => Math.sin(id * 0.37 + j * 1.3) + (id % 7) * 0.1);
}
function body(id: number): string {
  return Array.from({ length: 3 + (id % 5) }, (_, j) => WORDS[(id * 7 + j * 3 + (id >> 3)) % WORDS.length]).join(' ') + ` tok${id}`;
}
function rows(ids: number[], yearOf = (id: number) => 2000 + (id % 25)): Table {
  const values = new Float32Array(ids.length * DIM);
  ids.forEach((id, i) => values.set(vec(id), i * DIM));
  return new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    year: makeVector(BigInt64Array.from(ids.map((id) => BigInt(yearOf(id))))),
    body: vectorFromArray(ids.map(body), new Utf8()),
    vec: makeVector(makeData({ type: schema.fields[3].type as FixedSizeList, length: ids.length, nullCount: 0, child: makeData({ type: new Float32(), length: values.length, data: values }) })),
  });
}
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

async function open(mem: MemoryObjectStore, create: boolean) {
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const table = create ? await db.createTable('docs', schema, { primaryKey: 'id' }) : await db.openTable('docs');
  return { db, table };
}

const ids = (t: Table) => Array.from(t.getChild('id')!, Number);
const col = (t: Table, name: string) => Array.from(t.getChild(name)!, Number);

test('vector, text and key search give identical answers from a MemTable, a generation, both, and after a restart', async (t) => {
  const mem = new MemoryObjectStore();
  let { db, table } = await open(mem, true);
  await table.createIndex('body', { type: 'fts' });
  await table.createIndex('year', { type: 'scalar' });
  await table.put(rows(range(0, 300)));
  const q = { vector: { column: 'vec', query: vec(1234) }, k: 7 };
  const tq = { text: { column: 'body', query: 'quick fox "lazy dog"' }, k: 9 };
  const kq = { key: { column: 'year', lower: 2003, upper: 2005 }, k: 1000 };
  const inMem = { v: await table.search(q), t: await table.search(tq), k: await table.search(kq) };
  const all = await table.search({ ...tq, k: 300 });
  t.is(inMem.v.numRows, 7);
  t.is(inMem.t.numRows, 9);
  t.deepEqual([...new Set(col(inMem.k, 'year'))].sort(), [2003, 2004]);
  t.is(inMem.k.numRows, 24);
  await table.flush(); // all rows now in a generation
  const inGen = { v: await table.search(q), t: await table.search(tq), k: await table.search(kq) };
  await table.put(rows(range(150, 300))); // the newer half re-written: half MemTable, half generation
  const split = { v: await table.search(q), t: await table.search(tq), k: await table.search(kq) };
  await db.close();
  ({ db, table } = await open(mem, false));
  const restarted = { v: await table.search(q), t: await table.search(tq), k: await table.search(kq) };
  for (const [name, other] of [['generation', inGen], ['split', split], ['restart', restarted]] as const) {
    t.deepEqual(ids(other.v), ids(inMem.v), `vector ids, ${name}`);
    t.deepEqual(col(other.v, '_distance'), col(inMem.v, '_distance'), `distances, ${name}`);
    t.deepEqual(ids(other.k).sort((a, b) => a - b), ids(inMem.k).sort((a, b) => a - b), `key rows, ${name}`);
  }
  // BM25: every returned row has the score it has with all rows in one MemTable, and the
  // score lists are equal (rows with tied scores may come in another order across sources).
  const scoreOf = new Map(ids(all).map((id, i) => [id, col(all, '_score')[i]]));
  const refScores = col(inMem.t, '_score');
  for (const other of [inGen, split, restarted]) {
    const scores = col(other.t, '_score');
    scores.forEach((s, i) => t.true(Math.abs(s - refScores[i]) < 1e-5, `score ${i}: ${s} vs ${refScores[i]}`));
    ids(other.t).forEach((id, i) => t.true(Math.abs(scoreOf.get(id)! - scores[i]) < 1e-5, `row ${id}`));
  }
  t.deepEqual(ids(inGen.t), ids(inMem.t), 'one source: same order');
  await db.close();
});

test('vector search ranks by exact distance and matches brute force', async (t) => {
  const mem = new MemoryObjectStore();
  const { db, table } = await open(mem, true);
  await table.put(rows(range(0, 500)));
  const query = vec(77.5);
  const got = await table.search({ vector: { column: 'vec', query }, k: 10 });
  const ref = range(0, 500)
    .map((id) => ({ id, d: vec(id).reduce((s, v, j) => s + (Math.fround(v) - Math.fround(query[j])) ** 2, 0) }))
    .sort((a, b) => a.d - b.d)
    .slice(0, 10);
  t.deepEqual(ids(got), ref.map((r) => r.id));
  col(got, '_distance').forEach((d, i) => t.true(Math.abs(d - ref[i].d) < 1e-4));
  const cos = await table.search({ vector: { column: 'vec', query, metric: 'cosine' }, k: 3, columns: ['id'] });
  t.deepEqual(cos.schema.fields.map((f) => f.name), ['id', '_distance']);
  await db.close();
});

test('the filter is a true prefilter: a 1% filter still returns k rows, all passing', async (t) => {
  const mem = new MemoryObjectStore();
  const { db, table } = await open(mem, true);
  await table.put(rows(range(0, 5000), (id) => (id % 100 === 42 ? 1999 : 2020)));
  const hits = await table.search({ vector: { column: 'vec', query: vec(3) }, k: 10, filter: 'year < 2000' });
  t.is(hits.numRows, 10);
  t.true(ids(hits).every((id) => id % 100 === 42));
  const text = await table.search({ text: { column: 'body', query: 'quick' }, k: 5, filter: 'year = $1', params: [1999] }).catch((e) => e);
  t.true(isQuiverError(text, 'invalid'), 'text search needs an fts index');
  await table.createIndex('body', { type: 'fts' });
  const th = await table.search({ text: { column: 'body', query: 'quick brown' }, k: 5, filter: 'year = $1', params: [1999] });
  t.is(th.numRows, 5);
  t.true(ids(th).every((id) => id % 100 === 42));
  await db.close();
});

test('only the newest live version of a key is found', async (t) => {
  const mem = new MemoryObjectStore();
  const { db, table } = await open(mem, true);
  await table.createIndex('body', { type: 'fts' });
  await table.put(rows(range(0, 100)));
  await table.flush();
  await table.put(rows([5], () => 1900)); // updated in the MemTable
  await table.delete([6]);
  const k5 = await table.search({ key: { eq: 5 } });
  t.deepEqual(col(k5, 'year'), [1900]);
  t.is((await table.search({ key: { eq: 6 } })).numRows, 0);
  const v = await table.search({ vector: { column: 'vec', query: vec(6) }, k: 3 });
  t.false(ids(v).includes(6));
  const tx = await table.search({ text: { column: 'body', query: 'tok5 tok6' }, k: 10 });
  t.deepEqual(ids(tx), [5]);
  t.deepEqual(col(tx, 'year'), [1900]);
  await db.close();
});

test('a concurrent reader never sees a visible row that its index search misses', async (t) => {
  const mem = new MemoryObjectStore();
  const { db, table } = await open(mem, true);
  await table.createIndex('body', { type: 'fts' });
  await table.createIndex('year', { type: 'scalar' });
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing && i < 200; i++) await Promise.all([table.put(rows([i * 2])), table.put(rows([i * 2 + 1]))]);
  })();
  let checks = 0;
  while (checks < 30) {
    const seen: number[] = [];
    for await (const b of table.scan({ columns: ['id'] })) for (const v of b.getChild('id')!) seen.push(Number(v));
    const found = new Set(ids(await table.search({ key: { column: 'year', lower: 0 }, k: 1e6 })));
    const text = new Set(ids(await table.search({ text: { column: 'body', query: seen.map((id) => `tok${id}`).join(' ') || 'none' }, k: 1e6 })));
    for (const id of seen) {
      if (!found.has(id) || !text.has(id)) t.fail(`row ${id} visible to a scan but not found by an index`);
    }
    checks++;
    await new Promise((r) => setTimeout(r, 3));
  }
  writing = false;
  await writer;
  t.pass();
  await db.close();
});

test('search rejects bad requests clearly', async (t) => {
  const mem = new MemoryObjectStore();
  const { db, table } = await open(mem, true);
  await table.put(rows(range(0, 10)));
  const bad = async (req: unknown, re: RegExp) => {
    const e = await t.throwsAsync(table.search(req as never));
    t.true(isQuiverError(e, 'invalid'), String(e));
    t.regex(e!.message, re);
  };
  await bad({ vector: { column: 'vec', query: [1, 2] } }, /dimension 2, column vec has dimension 8/);
  await bad({ vector: { column: 'body', query: vec(1) } }, /not a FLOAT4/);
  await bad({ vector: { column: 'vec', query: vec(1) }, text: { column: 'body', query: 'x' } }, /exactly one/);
  await bad({ vector: { column: 'vec', query: vec(1) }, k: 0 }, /k must be a positive integer/);
  await bad({ vector: { column: 'vec', query: vec(1) }, filter: 'nope > 3' }, /nope/);
  await bad({ vector: { column: 'vec', query: vec(1) }, filter: 'year >' }, /.+/);
  await bad({ key: { eq: 1, in: [2] } }, /exactly one of eq, in/);
  await bad({ vector: { column: 'vec', query: vec(1) }, columns: ['zzz'] }, /unknown column zzz/);
  await table.createIndex('body', { type: 'fts' });
  await bad({ text: { column: 'body', query: '"unbalanced' } }, /.+/);
  const dup = await t.throwsAsync(table.createIndex('body', { type: 'fts' }));
  t.true(isQuiverError(dup, 'already_exists'));
  await t.throwsAsync(table.createIndex('year', { type: 'fts' }), { message: /fts needs a TEXT column/ });
  await t.throwsAsync(table.createIndex('vec', { type: 'ivf_pq', metric: 'manhattan' as never }), { message: /metric must be one of/ });
  await db.close();
});
