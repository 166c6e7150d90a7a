/**
 * Liveness oracle for search: after a random history of puts (upserts), deletes and flushes, a
 * search that asks for every row (vector with k = all, key IN all ids, text matching every row)
 * returns exactly the live rows a scan returns, with the newest version — checked after every
 * step, so cached and incrementally extended liveness state is compared with the truth again and
 * again while MemTables grow, freeze and flush. Tests that read the module-wide work counters run
 * serially (a concurrent test would add to them).
 */
import test from 'ava';
import { Field, FixedSizeList, Float32, Int64, makeData, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { mulberry32 } from '../helpers/rng.js';

const DIM = 4;
const schema = new Schema([
  new Field('id', new Int64(), false),
  new Field('v', new Int64(), false),
  new Field('body', new Utf8(), true),
  new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true),
]);

function rows(ids: number[], version: number): Table {
  const values = new Float32Array(ids.length * DIM);
  ids.forEach((id, i) => values.set([id % 7, version % 5, 1, 0.5], i * DIM));
  return new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    v: makeVector(BigInt64Array.from(ids.map(() => BigInt(version)))),
    body: vectorFromArray(ids.map((id) => `common w${id % 13} v${version}`), new Utf8()),
    vec: makeVector(makeData({ type: schema.fields[3].type as FixedSizeList, length: ids.length, nullCount: 0, child: makeData({ type: new Float32(), length: values.length, data: values }) })),
  });
}

const idsOf = (t: { getChild(n: string): unknown }) => {
  const ids = [...((t.getChild('id') as Iterable<bigint>) ?? [])].map(Number);
  const vs = [...((t.getChild('v') as Iterable<bigint>) ?? [])].map(Number);
  return new Map(ids.map((id, i) => [id, vs[i]]));
};

test('search sees exactly the live rows after every put, delete and flush', async (t) => {
  const rnd = mulberry32(31);
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0, maxMemtableRows: 120 } });
  const table = await db.createTable('docs', schema, { primaryKey: 'id' });
  await table.createIndex('body', { type: 'fts' });
  await table.createIndex('id', { type: 'scalar' });
  const model = new Map<number, number>();
  const KEYS = 300;
  for (let step = 1; step <= 120; step++) {
    const r = rnd();
    if (r < 0.65) {
      const ids = Array.from({ length: 1 + Math.floor(rnd() * 25) }, () => Math.floor(rnd() * KEYS));
      const unique = [...new Set(ids)];
      await table.put(rows(unique, step));
      for (const id of unique) model.set(id, step);
    } else if (r < 0.85) {
      const ids = [...new Set(Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => Math.floor(rnd() * KEYS)))];
      await table.delete(ids.map(BigInt));
      for (const id of ids) model.delete(id);
    } else {
      await table.flush();
    }
    const all = Math.max(1, model.size);
    const vector = idsOf(await table.search({ vector: { column: 'vec', query: [1, 1, 1, 1] }, k: all + 5, columns: ['id', 'v'] }));
    const text = idsOf(await table.search({ text: { column: 'body', query: 'common' }, k: all + 5, columns: ['id', 'v'] }));
    const keys = idsOf(await table.search({ key: { in: Array.from({ length: KEYS }, (_, i) => BigInt(i)) }, k: all + 5, columns: ['id', 'v'] }));
    const filtered = idsOf(await table.search({ vector: { column: 'vec', query: [0, 0, 0, 0] }, k: all + 5, filter: 'id < 150', columns: ['id', 'v'] }));
    const want = new Map([...model].sort((a, b) => a[0] - b[0]));
    const sorted = (m: Map<number, number>) => new Map([...m].sort((a, b) => a[0] - b[0]));
    t.deepEqual(sorted(vector), want, `step ${step}: vector`);
    t.deepEqual(sorted(text), want, `step ${step}: text`);
    t.deepEqual(sorted(keys), want, `step ${step}: key`);
    t.deepEqual(sorted(filtered), new Map([...want].filter(([id]) => id < 150)), `step ${step}: filtered`);
    // Filters a scalar index narrows (candidates, then the evaluator on them only).
    for (const [f, keep] of [
      ['id < 40', (id: number) => id < 40],
      ['id BETWEEN 10 AND 30 AND v > 0', (id: number) => id >= 10 && id <= 30],
      ['id IN (3, 5, 8, 13, 21, 34, 55) OR id = 299', (id: number) => [3, 5, 8, 13, 21, 34, 55, 299].includes(id)],
      ['7 > id', (id: number) => id < 7],
    ] as const) {
      const got = idsOf(await table.search({ vector: { column: 'vec', query: [0, 0, 0, 0] }, k: all + 5, filter: f, columns: ['id', 'v'] }));
      t.deepEqual(sorted(got), new Map([...want].filter(([id]) => keep(id))), `step ${step}: ${f}`);
    }
    if (step % 10 === 0) {
      // BM25 statistics kept incrementally give the same scores as a fresh reader computing them.
      const scored = async (tb: typeof table) => {
        const r = await tb.search({ text: { column: 'body', query: 'w3 common v7' }, k: all + 5, columns: ['id'] });
        // Scores per id (the order of equal scores follows how rows are split over sources,
        // which differs between the writer and a fresh reader).
        return [...r.getChild('id')!].map((id, i) => [Number(id), r.getChild('_score')!.get(i)]).sort((a, b) => a[0] - b[0]);
      };
      const other = await connect('memory://', { store: mem });
      t.deepEqual(await scored(table), await scored(await other.openTable('docs')), `step ${step}: BM25 scores`);
      await other.store.close();
    }
  }
  await db.close();
});

test.serial('a query pays for the rows that changed since the last one, not for every stored row', async (t) => {
  const { livenessWork } = await import('../../src/memtable/liveness.js');
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', schema, { primaryKey: 'id' });
  for (let g = 0; g < 3; g++) {
    await table.put(rows(Array.from({ length: 2000 }, (_, i) => g * 2000 + i), g + 1));
    await table.flush();
  }
  await table.put(rows(Array.from({ length: 500 }, (_, i) => i * 7), 10)); // a MemTable over them
  const search = () => table.search({ vector: { column: 'vec', query: [1, 1, 1, 1] }, k: 10 });
  await search(); // builds the liveness state once
  livenessWork.rowsScanned = 0;
  await search();
  t.is(livenessWork.rowsScanned, 0, 'nothing changed: no liveness work');
  await table.put(rows(Array.from({ length: 20 }, (_, i) => 3000 + i), 11));
  livenessWork.rowsScanned = 0;
  const hits = await search();
  t.is(hits.numRows, 10);
  // The 20 new rows, applied to the MemTable's own keys and to each of the 3 generations.
  t.true(livenessWork.rowsScanned <= 20 * 4, `scanned ${livenessWork.rowsScanned} rows (6 520 stored)`);
  await db.close();
});

test.serial('after a flush, older generations apply only the new generation\'s keys', async (t) => {
  const { livenessWork } = await import('../../src/memtable/liveness.js');
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', schema, { primaryKey: 'id' });
  for (let g = 0; g < 4; g++) {
    await table.put(rows(Array.from({ length: 1000 }, (_, i) => g * 1000 + i), g + 1));
    await table.flush();
  }
  const search = () => table.search({ key: { in: [5n, 1005n, 2005n, 3005n, 4005n] }, k: 10, columns: ['id', 'v'] });
  await search();
  // A new generation of 20 keys, half of them upserts of generation 0's keys.
  await table.put(rows([...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: 10 }, (_, i) => 4000 + i)], 9));
  await table.flush();
  livenessWork.generationKeysApplied = 0;
  const r = idsOf(await search());
  t.deepEqual(new Map([...r].sort((a, b) => a[0] - b[0])), new Map([[5, 9], [1005, 2], [2005, 3], [3005, 4], [4005, 9]]));
  // The new generation's 20 keys against each of the 4 older ones — not 4 000 keys again.
  t.is(livenessWork.generationKeysApplied, 20 * 4);
  await db.close();
});
