/**
 * The SQL engine end to end through `db.sql` / `db.query`: DDL and DML, freshness (a durable
 * write is in the very next query), streaming and cancellation, EXPLAIN, and bad input — a clear
 * error, nothing changed.
 */
import test from 'ava';
import { Int32, Int64, makeData, RecordBatch, type Schema, Struct } from 'apache-arrow';
import { connect, isQuiverError, MemoryObjectStore } from '../../src/quiver.js';

async function fresh() {
  return connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 1 } });
}

const rowsOf = (t: { toArray(): unknown[] }) => t.toArray().map((r) => ({ ...(r as object) }));
const num = (v: unknown) => (typeof v === 'bigint' ? Number(v) : v);
const plain = (t: { toArray(): unknown[] }) => rowsOf(t).map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, num(v)])));

test('CREATE TABLE, INSERT (upsert by key, parameters, INSERT … SELECT), DELETE, DROP TABLE', async (t) => {
  const db = await fresh();
  t.deepEqual(plain(await db.sql('CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT NOT NULL, price DOUBLE, day DATE)')), [{ count: 1 }]);
  t.deepEqual(await db.tableNames(), ['items']);
  t.deepEqual(plain(await db.sql("INSERT INTO items VALUES (1, 'a', 1.5, '2024-01-02'), (2, 'b', NULL, NULL), ($1, $2, $3, $4)", [3, 'c', 2, new Date('2024-03-04T00:00:00Z')])), [{ count: 3 }]);
  t.deepEqual(plain(await db.sql('INSERT INTO items (id, name) VALUES (2, $1)', ['b2'])), [{ count: 1 }]);
  t.deepEqual(plain(await db.sql('SELECT id, name, price FROM items ORDER BY id')), [
    { id: 1, name: 'a', price: 1.5 },
    { id: 2, name: 'b2', price: null },
    { id: 3, name: 'c', price: 2 },
  ]);
  const day = await db.sql('SELECT day FROM items WHERE id = 3');
  t.is(new Date(day.getChild('day')!.get(0) as number).toISOString().slice(0, 10), '2024-03-04');
  await db.sql('CREATE TABLE copy (id BIGINT PRIMARY KEY, label TEXT)');
  t.deepEqual(plain(await db.sql("INSERT INTO copy SELECT id * 10, upper(name) || '!' FROM items WHERE price IS NOT NULL")), [{ count: 2 }]);
  t.deepEqual(plain(await db.sql('SELECT * FROM copy ORDER BY id')), [
    { id: 10, label: 'A!' },
    { id: 30, label: 'C!' },
  ]);
  t.deepEqual(plain(await db.sql('DELETE FROM items WHERE price > 1.6 OR name = $1', ['b2'])), [{ count: 2 }]);
  t.deepEqual(plain(await db.sql('SELECT id FROM items')), [{ id: 1 }]);
  t.deepEqual(plain(await db.sql('DELETE FROM items WHERE id = 99')), [{ count: 0 }]);
  t.deepEqual(plain(await db.sql('DROP TABLE copy')), [{ count: 1 }]);
  t.deepEqual(plain(await db.sql('DROP TABLE IF EXISTS copy')), [{ count: 0 }]);
  t.deepEqual(plain(await db.sql('CREATE TABLE IF NOT EXISTS items (id BIGINT PRIMARY KEY)')), [{ count: 0 }]);
  await db.close();
});

test('composite primary keys: upsert and delete by both columns', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE kv (a INT, b TEXT, v INT, PRIMARY KEY (a, b))');
  await db.sql("INSERT INTO kv VALUES (1, 'x', 1), (1, 'y', 2), (2, 'x', 3)");
  await db.sql("INSERT INTO kv VALUES (1, 'x', 10)");
  await db.sql("DELETE FROM kv WHERE a = 1 AND b = 'y'");
  t.deepEqual(plain(await db.sql('SELECT a, b, v FROM kv ORDER BY a, b')), [
    { a: 1, b: 'x', v: 10 },
    { a: 2, b: 'x', v: 3 },
  ]);
  await db.close();
});

test('freshness: a row acknowledged by a durable write is returned by the very next query', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE ev (id BIGINT PRIMARY KEY, v INT)');
  const table = await db.openTable('ev');
  const schema = table.schema;
  for (let i = 0; i < 40; i++) {
    if (i % 2 === 0) await db.sql('INSERT INTO ev VALUES ($1, $2)', [i, i * 2]);
    else await table.put(new RecordBatch(schema, batchData(schema, i)));
    if (i % 13 === 12) await table.flush();
    const got = await db.sql('SELECT count(*) AS n, max(id) AS top, sum(v) AS s FROM ev');
    t.deepEqual(plain(got), [{ n: i + 1, top: i, s: i * (i + 1) }]);
  }
  await db.close();
});

function batchData(schema: Schema, i: number) {
  const id = makeData({ type: new Int64(), length: 1, nullCount: 0, data: BigInt64Array.of(BigInt(i)) });
  const v = makeData({ type: new Int32(), length: 1, nullCount: 0, data: Int32Array.of(i * 2) });
  return makeData({ type: new Struct(schema.fields), length: 1, nullCount: 0, children: [id, v] });
}

test('db.query streams batch by batch, and stopping early or aborting stops the scan', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE big (id BIGINT PRIMARY KEY, s TEXT)');
  const table = await db.openTable('big');
  for (let g = 0; g < 4; g++) {
    const values = Array.from({ length: 1000 }, (_, i) => `(${g * 1000 + i}, 'r${i}')`).join(', ');
    await db.sql(`INSERT INTO big VALUES ${values}`);
    await table.flush();
  }
  let batches = 0;
  for await (const b of db.query('SELECT id FROM big')) {
    t.true(b.numRows > 0);
    batches++;
    if (batches === 2) break;
  }
  t.is(batches, 2);
  const controller = new AbortController();
  const err = await t.throwsAsync(async () => {
    for await (const _ of db.query('SELECT id, s FROM big', [], { signal: controller.signal })) controller.abort();
  });
  t.true(isQuiverError(err, 'cancelled'), String(err));
  // The table is unharmed and the next query answers.
  t.deepEqual(plain(await db.sql('SELECT count(*) AS n FROM big')), [{ n: 4000 }]);
  await db.close();
});

test('EXPLAIN prints the exec tree with sources and index choices; ANALYZE adds rows and time', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE t (id BIGINT PRIMARY KEY, year INT, body TEXT)');
  await db.sql('CREATE INDEX ON t USING btree (year)');
  await db.sql("INSERT INTO t VALUES (1, 2020, 'a'), (2, 2021, 'b'), (3, 2020, 'c')");
  await (await db.openTable('t')).flush();
  await db.sql("INSERT INTO t VALUES (4, 2020, 'd')");
  const plan = Array.from((await db.sql('EXPLAIN SELECT body FROM t WHERE year = 2020 ORDER BY id DESC LIMIT 2')).getChild('plan')!, String);
  const text = plan.join('\n');
  t.regex(text, /TopK: k=2/);
  t.regex(text, /KeyDedup: region 1, newest version per key, tombstones removed, then filter year = 2020/);
  t.regex(text, /ScalarIndexScan: active memtable, index on year/);
  t.regex(text, /ScalarIndexScan: generation 1, index on year/);
  const analyzed = Array.from((await db.sql('EXPLAIN ANALYZE SELECT body FROM t WHERE year = 2020 ORDER BY id DESC LIMIT 2')).getChild('plan')!, String).join('\n');
  t.regex(analyzed, /TopK: k=2 .*\(rows=2 batches=1/);
  t.regex(analyzed, /Execution time: [\d.]+ ms/);
  // EXPLAIN of a write does not write; EXPLAIN ANALYZE does (as in PostgreSQL).
  await db.sql("EXPLAIN INSERT INTO t VALUES (9, 1999, 'x')");
  t.deepEqual(plain(await db.sql('SELECT count(*) AS n FROM t WHERE id = 9')), [{ n: 0 }]);
  await db.close();
});

test("EXPLAIN shows the planner's internal columns as the expressions they stand for", async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE t (id BIGINT PRIMARY KEY, year INT, score DOUBLE, body TEXT)');
  await db.sql("INSERT INTO t VALUES (1, 2020, 1.5, 'a'), (2, 2021, 2.5, 'b'), (3, 2022, NULL, 'c')");
  const explain = async (sql: string, analyze = false) =>
    Array.from((await db.sql(`EXPLAIN ${analyze ? 'ANALYZE ' : ''}${sql}`)).getChild('plan')!, (l) => String(l).trim().replace(/^-> /, ''));
  const internal = /\b__[a-z]+\d+\b/;

  const agg = await explain('SELECT year % 2 AS parity, count(*) AS n, sum(score * 2) FROM t GROUP BY year % 2 HAVING sum(score) / count(*) > 1 ORDER BY n DESC, parity LIMIT 5');
  t.false(agg.some((l) => internal.test(l)), agg.join('\n'));
  t.is(agg[0], 'Project: year % 2 AS parity, count(*) AS n, sum(score * 2) AS sum');
  t.true(agg.includes('TopK: k=5 offset=0 by count(*) DESC NULLS FIRST, year % 2 ASC NULLS LAST'), agg.join('\n'));
  t.true(agg.includes('Filter: sum(score) / count(*) > 1'), agg.join('\n'));
  t.true(agg.includes('HashAggregate: group by [year % 2] aggregates [count(*), sum(score * 2), sum(score)]'), agg.join('\n'));

  // An expression inlined into another keeps its meaning (parenthesised where precedence needs it).
  const nested = await explain('SELECT (year + 1) * 2 AS x, id FROM t ORDER BY x DESC, id + 0');
  t.is(nested[0], 'Project: (year + 1) * 2 AS x, id');
  t.is(nested[1], 'Sort: (year + 1) * 2 DESC NULLS FIRST, id + 0 ASC NULLS LAST');

  // Output names are the user's, even one that looks internal; swapped names stay exact.
  t.is((await explain('SELECT id AS __c7 FROM t'))[0], 'Project: id AS __c7');
  const swapped = await explain('SELECT year AS id, id AS year FROM t ORDER BY id');
  t.is(swapped[0], 'Project: year AS id, id AS year');
  t.is(swapped[1], 'Sort: year ASC NULLS LAST');

  // ANALYZE prints the same names, and the query still answers on the internal ones.
  const analyzed = await explain('SELECT year % 2 AS parity, count(*) AS n FROM t GROUP BY year % 2 ORDER BY parity', true);
  t.false(analyzed.some((l) => internal.test(l)), analyzed.join('\n'));
  t.regex(analyzed.join('\n'), /HashAggregate: group by \[year % 2\] aggregates \[count\(\*\)\]  \(rows=2 /);
  t.deepEqual(plain(await db.sql('SELECT year % 2 AS parity, count(*) AS n FROM t GROUP BY year % 2 ORDER BY parity')), [
    { parity: 0, n: 2 },
    { parity: 1, n: 1 },
  ]);
  await db.close();
});

test('bad input: a clear error naming the problem, and nothing changed', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE t (id BIGINT PRIMARY KEY, n INT, s TEXT, v FLOAT4[3])');
  await db.sql("INSERT INTO t VALUES (1, 10, 'a', '[1,2,3]'), (2, 20, 'b', NULL)");
  const before = plain(await db.sql('SELECT id, n, s FROM t ORDER BY id'));
  const cases: [string, unknown[], RegExp][] = [
    ['SELEC id FROM t', [], /syntax error in SQL at line 1, column 7: unexpected "i"/],
    ['SELECT id FROM t WHERE', [], /syntax error in SQL at line 1, column 23: unexpected end of SQL/],
    ['SELECT nope FROM t', [], /unknown column "nope"; available columns: id, n, s, v/],
    ['SELECT id FROM missing', [], /table missing does not exist/],
    ["SELECT id FROM t WHERE s = 5", [], /./],
    ['SELECT n / 0 FROM t', [], /division by zero/],
    ['SELECT 2147483647::int + n FROM t', [], /out of range/],
    ["INSERT INTO t VALUES (3, 30, 'c', '[1,2]')", [], /dimension 2.*dimension 3|dimension/],
    ["INSERT INTO t VALUES (3, 'thirty', 'c', NULL)", [], /invalid input syntax for type integer/],
    ['INSERT INTO t VALUES (3, 1 / 0, NULL, NULL), (4, 1, NULL, NULL)', [], /division by zero/],
    ['INSERT INTO t (n) VALUES (1)', [], /primary key column id/],
    ['INSERT INTO t VALUES (NULL, 1, NULL, NULL)', [], /./],
    ['DELETE FROM t WHERE n / 0 = 1', [], /division by zero/],
    ['SELECT id FROM t ORDER BY l2_distance(v, $1) LIMIT 1', [[1, 2]], /has 3, parameter \$1 has 2/],
    ['SELECT id FROM t LIMIT $1', [-1], /LIMIT must be a non-negative integer/],
    ['SELECT id FROM t WHERE n > $1', [{}], /parameter \$1 must be/],
    ["SELECT id FROM t WHERE match(s, 'x')", [], /no full-text index on column s/],
    ['CREATE TABLE t2 (a INT)', [], /needs a PRIMARY KEY/],
    ['CREATE TABLE t (id BIGINT PRIMARY KEY)', [], /exists/],
    ['CREATE INDEX ON t USING hnsw (v)', [], /unknown index method hnsw/],
    ['UPDATE t SET n = 1', [], /UPDATE is not supported/],
    ['SELECT id FROM t; SELECT 1', [], /one SQL statement at a time/],
    ['SELECT count(*) FROM t WHERE count(*) > 1', [], /aggregate functions are not allowed in WHERE/],
    ['SELECT n, count(*) FROM t', [], /must appear in the GROUP BY clause/],
  ];
  for (const [sql, params, message] of cases) {
    const err = await t.throwsAsync(db.sql(sql, params), undefined, sql);
    t.true(isQuiverError(err), `${sql}: ${String(err)}`);
    t.regex(String((err as Error).message), message, sql);
  }
  t.deepEqual(plain(await db.sql('SELECT id, n, s FROM t ORDER BY id')), before);
  t.deepEqual(await db.tableNames(), ['t']);
  await db.close();
});

test('SELECT without FROM, DISTINCT, GROUP BY with HAVING, ORDER BY alias and ordinal, OFFSET', async (t) => {
  const db = await fresh();
  t.deepEqual(plain(await db.sql("SELECT 1 + 1 AS two, 'x' || 'y' AS s")), [{ two: 2, s: 'xy' }]);
  await db.sql('CREATE TABLE g (id BIGINT PRIMARY KEY, k TEXT, v INT)');
  await db.sql("INSERT INTO g VALUES (1, 'a', 1), (2, 'a', 2), (3, 'b', 3), (4, NULL, 4), (5, 'b', NULL)");
  t.deepEqual(plain(await db.sql('SELECT DISTINCT k FROM g ORDER BY k')), [{ k: 'a' }, { k: 'b' }, { k: null }]);
  t.deepEqual(plain(await db.sql('SELECT k, count(*) AS n, sum(v) AS total FROM g GROUP BY k HAVING count(*) > 1 ORDER BY total DESC')), [
    { k: 'a', n: 2, total: 3 },
    { k: 'b', n: 2, total: 3 },
  ]);
  t.deepEqual(plain(await db.sql('SELECT id, v * 2 AS dbl FROM g ORDER BY 2 DESC NULLS LAST, id LIMIT 2 OFFSET 1')), [
    { id: 3, dbl: 6 },
    { id: 2, dbl: 4 },
  ]);
  await db.close();
});

test('CREATE INDEX with a name and options, DROP INDEX, and creating it again with other options', async (t) => {
  const store = new MemoryObjectStore();
  let db = await connect('memory://', { store, writer: { maxWalFlushIntervalMs: 1 } });
  await db.sql('CREATE TABLE d (id BIGINT PRIMARY KEY, body TEXT, year INT)');
  await db.sql("INSERT INTO d VALUES (1, 'running foxes', 2020), (2, 'the runner', 2021)");
  const table = await db.openTable('d');
  await db.sql('CREATE INDEX body_idx ON d USING fts (body) WITH (stem = true)');
  await table.flush();
  await db.sql("INSERT INTO d VALUES (3, 'runs', 2022)");
  const ids = async (sql: string) => plain(await db.sql(sql)).map((r) => r.id).sort();
  // Stemmed: 'run' matches running, runner? (porter: running → run, runs → run; runner stays runner).
  t.deepEqual(await ids("SELECT id FROM d WHERE match(body, 'run')"), [1, 3]);
  t.deepEqual(plain(await db.sql('CREATE INDEX IF NOT EXISTS body_idx ON d USING fts (body)')), [{ count: 0 }]);
  const dup = await t.throwsAsync(db.sql('CREATE INDEX other ON d USING fts (body)'));
  t.regex(String(dup?.message), /already has a fts index \(body_idx\)/);
  t.deepEqual(plain(await db.sql('DROP INDEX body_idx')), [{ count: 1 }]);
  t.deepEqual(table.indexes.map((d) => d.name), []);
  const gone = await t.throwsAsync(db.sql("SELECT id FROM d WHERE match(body, 'run')"));
  t.regex(String(gone?.message), /no full-text index on column body/);
  t.deepEqual(plain(await db.sql('DROP INDEX IF EXISTS body_idx')), [{ count: 0 }]);
  const missing = await t.throwsAsync(db.sql('DROP INDEX body_idx'));
  t.true(isQuiverError(missing, 'not_found'));
  // The same name, other options: the old (stemmed) postings in memory and in the generation's
  // sidecar must not be used.
  await db.sql('CREATE INDEX body_idx ON d USING fts (body) WITH (stem = false)');
  t.deepEqual(await ids("SELECT id FROM d WHERE match(body, 'run')"), []);
  t.deepEqual(await ids("SELECT id FROM d WHERE match(body, 'runs')"), [3]);
  // A fresh process reads the generation's sidecars (the stemmed one written before the drop is
  // refused by its options, the index rebuilt from rows): still unstemmed.
  await db.close();
  db = await connect('memory://', { store });
  t.deepEqual(await ids("SELECT id FROM d WHERE match(body, 'run')"), []);
  t.deepEqual(await ids("SELECT id FROM d WHERE match(body, 'running')"), [1]);
  await db.close();
});

test('CREATE TABLE … WITH (region_spec …): rows spread over regions, every query sees all of them once', async (t) => {
  const db = await fresh();
  await db.sql("CREATE TABLE r (id BIGINT PRIMARY KEY, v INT) WITH (region_spec = 'bucket', buckets = 4)");
  const table = await db.openTable('r');
  t.deepEqual(table.regionSpec, { kind: 'bucket', column: 'id', buckets: 4 });
  await db.sql(`INSERT INTO r VALUES ${Array.from({ length: 200 }, (_, i) => `(${i}, ${i % 7})`).join(', ')}`);
  await table.flush();
  await db.sql('INSERT INTO r VALUES (5, 100), (250, 1)');
  await db.sql('DELETE FROM r WHERE id IN (6, 7)');
  t.deepEqual(plain(await db.sql('SELECT count(*) AS n, sum(v) AS s FROM r')), [{ n: 199, s: [...Array(200).keys()].filter((i) => i !== 6 && i !== 7 && i !== 5).reduce((a, i) => a + (i % 7), 0) + 100 + 1 }]);
  const plan = Array.from((await db.sql('EXPLAIN SELECT id FROM r WHERE v = 3')).getChild('plan')!, String).join('\n');
  t.regex(plan, /Union: 4 inputs/);
  await db.sql("CREATE TABLE tenants (tenant TEXT, id INT, PRIMARY KEY (tenant, id)) WITH (region_spec = 'identity', region_column = 'tenant')");
  await db.sql("INSERT INTO tenants VALUES ('a', 1), ('a', 2), ('b', 1)");
  t.deepEqual(plain(await db.sql('SELECT tenant, count(*) AS n FROM tenants GROUP BY tenant ORDER BY tenant')), [{ tenant: 'a', n: 2 }, { tenant: 'b', n: 1 }]);
  const bad = await t.throwsAsync(db.sql("CREATE TABLE x (id INT PRIMARY KEY) WITH (region_spec = 'hash')"));
  t.regex(String(bad?.message), /region_spec must be 'unsharded', 'bucket' or 'identity'/);
  const badKey = await t.throwsAsync(db.sql("CREATE TABLE x (id INT PRIMARY KEY, v INT) WITH (region_spec = 'identity', region_column = 'v')"));
  t.regex(String(badKey?.message), /must be a primary-key column/);
  t.deepEqual((await db.tableNames()).sort(), ['r', 'tenants']);
  await db.close();
});

test('primary-key point lookups use each source key map, and bound parameters reach scalar indexes', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE p (id BIGINT PRIMARY KEY, a INT, s TEXT)');
  const table = await db.openTable('p');
  for (let g = 0; g < 3; g++) {
    await db.sql(`INSERT INTO p VALUES ${Array.from({ length: 300 }, (_, i) => `(${g * 300 + i}, ${i}, 's${i}')`).join(', ')}`);
    await table.flush();
  }
  await db.sql("INSERT INTO p VALUES (5, -1, 'new'), (9000000000000, 7, 'big')");
  await db.sql('DELETE FROM p WHERE id = 6');
  const analyze = async (sql: string, params: unknown[]) => Array.from((await db.sql(`EXPLAIN ANALYZE ${sql}`, params)).getChild('plan')!, String).join('\n');
  // The newest version of key 5, from the MemTable; the generation's old version is not even read.
  t.deepEqual(plain(await db.sql('SELECT id, a, s FROM p WHERE id = $1', [5])), [{ id: 5, a: -1, s: 'new' }]);
  t.deepEqual(plain(await db.sql('SELECT id FROM p WHERE id = 6')), []);
  t.deepEqual(plain(await db.sql('SELECT id, s FROM p WHERE id = $1', [9000000000000n])), [{ id: 9000000000000, s: 'big' }]);
  t.deepEqual(plain(await db.sql('SELECT id FROM p WHERE id IN (1, 301, 601, 5, 6, 123456) AND a >= 0 ORDER BY id')), [{ id: 1 }, { id: 301 }, { id: 601 }]);
  const plan = await analyze('SELECT id FROM p WHERE id = $1 AND a > 0', [301]);
  t.regex(plan, /ScalarIndexScan: generation 2, primary-key lookup on id/);
  // Filters are evaluated on the looked-up rows only (none of the others).
  for (const m of plan.matchAll(/filterRows=(\d+)/g)) t.true(Number(m[1]) <= 1, plan);
  await db.sql('CREATE INDEX ON p USING btree (a)');
  const byIndex = await analyze('SELECT id FROM p WHERE a = $1', [17]);
  t.regex(byIndex, /index on a/);
  t.deepEqual(plain(await db.sql('SELECT id FROM p WHERE a = $1 ORDER BY id', [17])), [{ id: 17 }, { id: 317 }, { id: 617 }]);
  await db.close();
});

test('key lookups over a MemTable of many small batches gather every column of the rows from all of them', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE g (id BIGINT PRIMARY KEY, s TEXT, v FLOAT4[3], n INT)');
  // 40 batches of 5 rows, then upserts of a few keys (their newest versions sit in later batches).
  for (let b = 0; b < 40; b++) {
    await db.sql(`INSERT INTO g VALUES ${Array.from({ length: 5 }, (_, i) => { const id = b * 5 + i; return `(${id}, ${id % 3 === 0 ? 'NULL' : `'s${id}'`}, '[${id}, ${-id}, 0.5]', ${id % 4 === 0 ? 'NULL' : id})`; }).join(', ')}`);
  }
  await db.sql("INSERT INTO g VALUES (7, 'seven', '[7, 7, 7]', 70), (150, 'x', '[1, 2, 3]', NULL)");
  const ids = [0, 1, 7, 12, 33, 99, 150, 151, 198, 199, 500];
  const got = plain(await db.sql(`SELECT id, s, v, n FROM g WHERE id IN (${ids.join(', ')}) ORDER BY id`)).map((r) => ({ ...r, v: r.v === null ? null : Array.from(r.v as Iterable<number>) }));
  const expected = ids.filter((id) => id < 200).map((id) =>
    id === 7 ? { id, s: 'seven', v: [7, 7, 7], n: 70 } : id === 150 ? { id, s: 'x', v: [1, 2, 3], n: null } : { id, s: id % 3 === 0 ? null : `s${id}`, v: [id, 0 - id, 0.5], n: id % 4 === 0 ? null : id },
  );
  t.deepEqual(got, expected);
  await db.close();
});

test('a streaming query keeps its snapshot while writes and other queries update the shared liveness and filter caches', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE s (id BIGINT PRIMARY KEY, v INT)');
  const table = await db.openTable('s');
  const put = (ids: number[], v: (id: number) => number) =>
    table.put(
      new RecordBatch(table.schema, makeData({
        type: new Struct(table.schema.fields),
        length: ids.length,
        nullCount: 0,
        children: [
          makeData({ type: new Int64(), length: ids.length, nullCount: 0, data: BigInt64Array.from(ids, BigInt) }),
          makeData({ type: new Int32(), length: ids.length, nullCount: 0, data: Int32Array.from(ids, v) }),
        ],
      })),
    );
  const all = Array.from({ length: 100_000 }, (_, i) => i);
  await put(all, (id) => id % 2);
  await table.flush();
  await put([200_000, 200_001], () => 0);
  // Some stored keys already have a newer version, so the generation is not wholly live (its
  // cached masks are then updated in place by later queries).
  await put(all.slice(0, 10), (id) => id % 2);
  for (const filter of ['v = 0', 'v >= 0 AND id % 5 = 0']) {
    const stream = db.query(`SELECT id FROM s WHERE ${filter}`)[Symbol.asyncIterator]();
    const seen = new Set<number>();
    const first = await stream.next();
    for (const id of first.value!.getChild('id')!) seen.add(Number(id));
    // New versions of every stored key, then a query that brings the caches up to date in place.
    await put(all, (id) => 1000 + id);
    await db.sql(`SELECT count(*) AS n FROM s WHERE ${filter}`);
    for (let r = await stream.next(); !r.done; r = await stream.next()) for (const id of r.value.getChild('id')!) seen.add(Number(id));
    const want = filter === 'v = 0' ? all.filter((id) => id % 2 === 0) : all.filter((id) => id % 5 === 0);
    t.is(seen.size, want.length + (filter === 'v = 0' ? 2 : 1), filter);
    t.true(want.every((id) => seen.has(id)), filter);
    await put(all, (id) => id % 2); // back to the first values for the next round
  }
  await db.close();
});

test('remembered filters evicted and their buffers reused give the same answers as a model', async (t) => {
  const db = await fresh();
  await db.sql('CREATE TABLE m (id BIGINT PRIMARY KEY, a INT)');
  const table = await db.openTable('m');
  const model = new Map<number, number>();
  const insert = async (ids: number[], a: (id: number) => number) => {
    await db.sql(`INSERT INTO m VALUES ${ids.map((id) => `(${id}, ${a(id)})`).join(', ')}`);
    for (const id of ids) model.set(id, a(id));
  };
  await insert(Array.from({ length: 3000 }, (_, i) => i), (id) => (id * 7919) % 1000);
  await table.flush();
  const check = async (label: string) => {
    // More distinct filters than a source remembers (4), revisited, on both the scan and the
    // scalar-index path: every answer equals the model.
    for (let round = 0; round < 3; round++) {
      for (const bound of [5, 50, 500, 900, 995, 10, 250]) {
        const got = plain(await db.sql('SELECT count(*) AS n, sum(a) AS s FROM m WHERE a < $1', [bound]))[0];
        const rows = [...model.values()].filter((a) => a < bound);
        t.deepEqual(got, { n: rows.length, s: rows.length ? rows.reduce((x, y) => x + y, 0) : null }, `${label} a < ${bound}`);
        const ids = plain(await db.sql('SELECT id FROM m WHERE a < $1 ORDER BY id', [bound])).map((r) => r.id);
        t.deepEqual(ids, [...model.entries()].filter(([, a]) => a < bound).map(([id]) => id).sort((x, y) => x - y), `${label} ids a < ${bound}`);
      }
    }
  };
  await check('all live');
  await insert(Array.from({ length: 500 }, (_, i) => i * 3), (id) => (id * 31) % 1000); // upserts: generation rows superseded
  await db.sql('DELETE FROM m WHERE id % 11 = 0');
  for (const id of [...model.keys()]) if (id % 11 === 0) model.delete(id);
  await check('after upserts and deletes');
  await db.sql('CREATE INDEX ON m USING btree (a)');
  await check('with a scalar index');
  await db.close();
});
