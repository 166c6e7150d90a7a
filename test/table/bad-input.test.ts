/**
 * Bad input gets a clear error naming the problem, and the store is byte-for-byte unchanged.
 */
import test from 'ava';
import { Field, FixedSizeList, Float32, Float64, Int32, Int64, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, isQuiverError, MemoryObjectStore } from '../../src/quiver.js';
import { docs, docsSchema, vectors } from '../helpers/data.js';
import { storeContents } from '../helpers/store-snapshot.js';

async function withTable() {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 5 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.put(docs([1, 2, 3], 1));
  return { mem, db, table };
}

const ids = (xs: number[]) => makeVector(BigInt64Array.from(xs.map(BigInt)));

const cases: [string, () => unknown, RegExp][] = [
  ['missing column', () => new Table({ id: ids([9]), version: ids([1]), text: vectorFromArray(['x'], new Utf8()) }), /missing column\(s\) vec/],
  ['unknown column', () => { const d = docs([9], 1); return new Table({ ...Object.fromEntries(d.schema.fields.map((f) => [f.name, d.getChild(f.name)!])), extra: ids([1]) }); }, /unknown column\(s\) extra/],
  ['wrong type', () => new Table({ id: ids([9]), version: vectorFromArray([1], new Float64()), text: vectorFromArray(['x'], new Utf8()), vec: vectors(1) }), /column version has type Float64, expected Int64/],
  ['wrong vector size', () => new Table({ id: ids([9]), version: ids([1]), text: vectorFromArray(['x'], new Utf8()), vec: vectors(1, 3) }), /expects vectors of dimension 4, got dimension 3/],
  ['null primary key', () => new Table({ id: vectorFromArray([9n, null], new Int64()), version: ids([1, 1]), text: vectorFromArray(['x', 'y'], new Utf8()), vec: vectors(2) }), /primary key column id contains 1 null/],
  ['NOT NULL column with a null', () => new Table({ id: ids([9]), version: vectorFromArray([null], new Int64()), text: vectorFromArray(['x'], new Utf8()), vec: vectors(1) }), /column version is NOT NULL/],
  ['empty batch', () => docs([], 1), /empty batch/],
  ['no batches', () => [], /empty batch/],
  ['not Arrow at all', () => [{ id: 1 }], /RecordBatch/],
];

for (const [name, make, message] of cases) {
  test(`put rejects ${name} with a clear error and writes nothing`, async (t) => {
    const { mem, db, table } = await withTable();
    const before = await storeContents(mem);
    const err = await t.throwsAsync(table.put(make() as Table));
    t.true(isQuiverError(err, 'invalid'), String(err));
    t.regex(err!.message, message);
    t.deepEqual(await storeContents(mem), before);
    await db.close();
  });
}

test('a put mixing a good and a bad batch writes neither', async (t) => {
  const { mem, db, table } = await withTable();
  const before = await storeContents(mem);
  const bad = new Table({ id: ids([9]), version: ids([1]), text: vectorFromArray(['x'], new Utf8()), vec: vectors(1, 5) });
  await t.throwsAsync(table.put([...docs([7], 1).batches, ...bad.batches]));
  t.deepEqual(await storeContents(mem), before);
  await db.close();
});

test('delete rejects bad keys; createTable rejects bad schemas and names; unknown tables are not_found', async (t) => {
  const { mem, db, table } = await withTable();
  const before = await storeContents(mem);
  t.true(isQuiverError(await t.throwsAsync(table.delete([])), 'invalid'));
  t.regex((await t.throwsAsync(table.delete([null])))!.message, /null/);
  t.regex((await t.throwsAsync(table.delete(['x'])))!.message, /must be a number or bigint/);
  t.regex((await t.throwsAsync(table.delete([1.5])))!.message, /integer/);
  const s = (fields: Field[]) => new Schema(fields);
  const vec = new Field('v', new FixedSizeList(2, new Field('item', new Float32())));
  t.regex((await t.throwsAsync(db.createTable('a', s([new Field('id', new Int64())]), { primaryKey: 'nope' })))!.message, /primary key column nope is not in the schema/);
  t.regex((await t.throwsAsync(db.createTable('a', s([vec]), { primaryKey: 'v' })))!.message, /keys must be integer, string/);
  t.regex((await t.throwsAsync(db.createTable('a', s([new Field('id', new Int32()), new Field('_score', new Int32())]), { primaryKey: 'id' })))!.message, /reserved/);
  t.regex((await t.throwsAsync(db.createTable('bad name', s([new Field('id', new Int32())]), { primaryKey: 'id' })))!.message, /invalid table name/);
  t.regex((await t.throwsAsync(db.createTable('a', s([new Field('id', new Int32())]), {} as never)))!.message, /primaryKey is required/);
  t.regex((await t.throwsAsync(db.createTable('docs', docsSchema, { primaryKey: 'id' })))!.message, /table docs already exists/);
  t.true(isQuiverError(await t.throwsAsync(db.openTable('nope')), 'not_found'));
  t.true(isQuiverError(await t.throwsAsync(db.dropTable('nope')), 'not_found'));
  t.deepEqual(await storeContents(mem), before);
  await db.close();
});

test('dropTable removes the table and its data; the name can be reused', async (t) => {
  const { mem, db } = await withTable();
  await db.dropTable('docs');
  t.deepEqual(await db.tableNames(), []);
  t.deepEqual(await mem.list('docs/'), []);
  const again = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  t.is((await (async () => { let n = 0; for await (const b of again.scan()) n += b.numRows; return n; })()), 0);
  await db.close();
  t.true(isQuiverError(await t.throwsAsync(async () => db.tableNames()), 'closed'));
});

test('dictionary-encoded strings are accepted for a Utf8 column', async (t) => {
  const { db, table } = await withTable();
  const { tableFromArrays } = await import('apache-arrow');
  const dict = tableFromArrays({ text: ['p', 'q'] }).getChild('text')!;
  await table.put(new Table({ id: ids([10, 11]), version: ids([1, 1]), text: dict, vec: vectors(2) }));
  const out: string[] = [];
  for await (const b of table.scan({ columns: ['text', 'id'] })) for (const r of b) if (Number(r.id) >= 10) out.push(r.text);
  t.deepEqual(out.sort(), ['p', 'q']);
  await db.close();
});
