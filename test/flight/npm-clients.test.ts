/**
 * Independent npm Flight clients against the server:
 * - @influxdata/influxdb3-client: plain Flight DoGet with its JSON ticket, Bearer token, grpc-js
 *   with the default 4 MiB receive limit (so results must arrive in messages under 4 MiB);
 * - @lakehouse-rs/flight-sql-client: arrow-rs's Flight SQL client (Rust, via napi): Handshake with
 *   user/password, CommandStatementQuery, GetCatalogs, GetDbSchemas, GetTables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { InfluxDBClient } from '@influxdata/influxdb3-client';
import { createFlightSqlClient } from '@lakehouse-rs/flight-sql-client';
import { Field, FixedSizeList, Float32, Int64, makeData, makeVector, RecordBatch, Schema, Struct, tableFromIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, type Database } from '../../src/quiver.js';
import { FlightSqlServer } from '../../src/flight/server.js';
import { TestFlightClient } from './client.js';

let dir: string;
let db: Database;
let server: FlightSqlServer;
let authServer: FlightSqlServer;
let port: number;
let authPort: number;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quiver-flight-npm-'));
  db = await connect(dir);
  server = new FlightSqlServer(db, { port: 0, log: () => {} });
  port = (await server.listen()).port;
  authServer = new FlightSqlServer(db, { port: 0, log: () => {}, auth: { users: { ana: 'secret' } } });
  authPort = (await authServer.listen()).port;
  await db.sql('CREATE TABLE people (id BIGINT PRIMARY KEY, name TEXT, score DOUBLE)');
  await db.sql("INSERT INTO people VALUES (1, 'ann', 1.5), (2, NULL, 2.5), (3, 'cy', NULL)");
  // 20k rows x 64 dims: ~5.3 MB of result, more than one 4 MiB gRPC message.
  const n = 20_000;
  const dim = 64;
  const values = new Float32Array(n * dim);
  for (let i = 0; i < values.length; i++) values[i] = (i % 997) / 997;
  const schema = new Schema([new Field('id', new Int64(), false), new Field('label', new Utf8(), true), new Field('emb', new FixedSizeList(dim, new Field('item', new Float32(), true)), true)]);
  await db.createTable('wide', schema, { primaryKey: 'id' });
  const ids = makeVector(BigInt64Array.from({ length: n }, (_, i) => BigInt(i)));
  const labels = vectorFromArray(Array.from({ length: n }, (_, i) => `label-${i}`), new Utf8());
  const emb = makeData({ type: schema.fields[2].type, length: n, nullCount: 0, child: makeData({ type: new Float32(), length: n * dim, data: values }) });
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children: [ids.data[0], labels.data[0], emb] }));
  await (await db.openTable('wide')).put(batch);
});

test.after.always(async () => {
  await server?.close(1000);
  await authServer?.close(1000);
  await db?.close();
  rmSync(dir, { recursive: true, force: true });
});

test.serial('influxdb3-client: JSON ticket query, rows with nulls', async (t) => {
  const client = new InfluxDBClient({ host: `http://127.0.0.1:${port}`, token: 'unused', database: 'anything', queryTimeout: 30_000 });
  try {
    const rows: Record<string, unknown>[] = [];
    for await (const row of client.query('SELECT id, name, score FROM people ORDER BY id', 'mydb')) rows.push(row);
    t.deepEqual(
      rows.map((r) => [Number(r.id), r.name, r.score]),
      [
        [1, 'ann', 1.5],
        [2, null, 2.5],
        [3, 'cy', null],
      ],
    );
  } finally {
    await client.close();
  }
});

test.serial('influxdb3-client: a 5 MB result arrives under the default 4 MiB message limit', async (t) => {
  const client = new InfluxDBClient({ host: `http://127.0.0.1:${port}`, token: 'unused', database: 'db', queryTimeout: 60_000 });
  try {
    let count = 0;
    let last: Record<string, unknown> | null = null;
    for await (const row of client.query('SELECT id, label, emb FROM wide ORDER BY id', 'db')) {
      count++;
      last = row;
    }
    t.is(count, 20_000);
    t.is(last?.label, 'label-19999');
  } finally {
    await client.close();
  }
});

test.serial('influxdb3-client: wrong token is UNAUTHENTICATED, a Handshake token works', async (t) => {
  const bad = new InfluxDBClient({ host: `http://127.0.0.1:${authPort}`, token: 'wrong', database: 'db', authScheme: 'Bearer', queryTimeout: 10_000 });
  try {
    const err = await t.throwsAsync(async () => {
      for await (const _ of bad.query('SELECT id FROM people', 'db')); // eslint-disable-line @typescript-eslint/no-unused-vars
    });
    t.regex(String(err?.message), /UNAUTHENTICATED|invalid bearer token/i);
  } finally {
    await bad.close();
  }
  const flight = new TestFlightClient(`grpc://127.0.0.1:${authPort}`);
  const { headerToken, payloadToken } = await flight.handshake('ana', 'secret');
  flight.close();
  t.is(headerToken, payloadToken, 'the token is in the response header and the payload');
  const good = new InfluxDBClient({ host: `http://127.0.0.1:${authPort}`, token: payloadToken, database: 'db', authScheme: 'Bearer', queryTimeout: 10_000 });
  try {
    const ids: number[] = [];
    for await (const row of good.query('SELECT id FROM people ORDER BY id', 'db')) ids.push(Number(row.id));
    t.deepEqual(ids, [1, 2, 3]);
  } finally {
    await good.close();
  }
});

test.serial('influxdb3-client: named parameters', async (t) => {
  const client = new InfluxDBClient({ host: `http://127.0.0.1:${port}`, token: 'unused', database: 'db', queryTimeout: 10_000 });
  try {
    const rows: Record<string, unknown>[] = [];
    for await (const row of client.query('SELECT name FROM people WHERE id = $wanted', 'db', { params: { wanted: 3 } })) rows.push(row);
    t.deepEqual(rows, [{ name: 'cy' }]);
  } finally {
    await client.close();
  }
});

test.serial('@lakehouse-rs/flight-sql-client (arrow-rs): handshake, query and metadata', async (t) => {
  const client = await createFlightSqlClient({ host: '127.0.0.1', port: authPort, tls: false, headers: [], username: 'ana', password: 'secret' });
  const table = tableFromIPC(await client.query('SELECT id, name FROM people ORDER BY id'));
  t.deepEqual(
    table.toArray().map((r) => [Number(r.id), r.name]),
    [
      [1, 'ann'],
      [2, null],
      [3, 'cy'],
    ],
  );
  t.deepEqual(
    tableFromIPC(await client.getCatalogs())
      .toArray()
      .map((r) => r.catalog_name),
    ['quiver'],
  );
  t.deepEqual(
    tableFromIPC(await client.getDbSchemas({}))
      .toArray()
      .map((r) => r.db_schema_name),
    ['public'],
  );
  const tables = tableFromIPC(await client.getTables({ includeSchema: true }));
  t.deepEqual(
    tables
      .toArray()
      .map((r) => r.table_name)
      .sort(),
    ['people', 'wide'],
  );
  const big = tableFromIPC(await client.query('SELECT id, emb FROM wide'));
  t.is(big.numRows, 20_000);
  // (Not tested here: a wrong password. This client panics in its Rust runtime on a failed
  // handshake, which takes the test process down; the rejection itself is tested with pyarrow.)
});
