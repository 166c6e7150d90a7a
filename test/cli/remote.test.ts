/**
 * `--connect grpc://…` (issue 10): the command line against `quiver serve` (spawned on a temp
 * directory, loopback, port 0). One-shot statements in every format, a -f script with DDL, DML and
 * SELECT, --param, an unknown table and an unreachable server, tables/describe, authentication
 * over TLS, `quiver load` of CSV and Parquet through CommandStatementIngest, and the shell.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { DuckDBInstance } from '@duckdb/node-api';
import { quiver, tempDir } from './quiver-process.js';
import { writeCsv } from './load-data.js';
import { hasScript, Pty } from './pty.js';
import { startServe, type ServeProcess } from '../flight/serve-process.js';

const BIG = '9007199254740993'; // 2^53 + 1: a double would print ...992

let server: ServeProcess;
const dir = tempDir('quiver-remote-');

test.before(async () => {
  server = await startServe(['--port', '0', '--data', join(dir.path, 'served')]);
  const script = join(dir.path, 'fixture.sql');
  writeFileSync(
    script,
    `CREATE TABLE t (id BIGINT PRIMARY KEY, s TEXT, f DOUBLE, b BOOLEAN);
     INSERT INTO t VALUES (${BIG}, 'x, "y"', 0.1, true), (-${BIG}, 'two', 1e300, false), (2, NULL, NULL, NULL);
     INSERT INTO t VALUES (2, 'one', NULL, NULL);
     SELECT count(*) AS n FROM t;`,
  );
  const r = await quiver(['sql', '--connect', server.url, '-f', script, '--format', 'csv']);
  if (r.code !== 0) throw new Error(`fixture: ${r.stderr}`);
  if (!r.stdout.endsWith('n\n3\n')) throw new Error(`fixture output: ${r.stdout}`);
});

test.after.always(async () => {
  await server?.stop();
  dir.remove();
});

const sql = (args: string[], input?: string) => quiver(['sql', '--connect', server.url, ...args], { input, timeoutMs: 60_000 });

test('a -f script with DDL, DML and SELECT runs in order through the server', async (t) => {
  const file = join(dir.path, 'script.sql');
  writeFileSync(file, "CREATE TABLE s1 (k INT PRIMARY KEY, v TEXT);\nINSERT INTO s1 VALUES (1, 'a'), (2, 'b');\nDELETE FROM s1 WHERE k = 1;\nSELECT k, v FROM s1;\n");
  const r = await sql(['-f', file, '--format', 'ndjson']);
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, '{"count":1}\n{"count":2}\n{"count":1}\n{"k":2,"v":"b"}\n');
  // Piped standard input too, stopping at the first error (statement number and line named).
  const piped = await sql(['--format', 'csv'], 'SELECT v FROM s1;\nSELECT * FROM missing_table;\nSELECT 1;\n');
  t.is(piped.code, 1);
  t.is(piped.stdout, 'v\nb\n');
  t.regex(piped.stderr, /^quiver: not_found: .*missing_table.*\(statement 2 at line 2\)\n$/);
});

test('one-shot query in every format; json prints 64-bit integers exactly', async (t) => {
  const q = 'SELECT id, s, f, b FROM t ORDER BY id';
  const json = await sql(['--format', 'json', q]);
  t.is(json.code, 0, json.stderr);
  t.is(json.stderr, '');
  t.regex(json.stdout, new RegExp(`"id":-${BIG},`));
  t.regex(json.stdout, new RegExp(`"id":${BIG},`));
  t.deepEqual(JSON.parse(json.stdout)[1], { id: 2, s: 'one', f: null, b: null });

  const ndjson = await sql(['--format', 'ndjson', q]);
  t.is(ndjson.stdout.trim().split('\n').length, 3);
  t.regex(ndjson.stdout, new RegExp(`^\\{"id":${BIG},"s":"x, \\\\"y\\\\"","f":0.1,"b":true\\}$`, 'm'));

  const csv = await sql(['--format', 'csv', q]);
  t.is(csv.stdout, `id,s,f,b\n-${BIG},two,1e+300,false\n2,one,,\n${BIG},"x, ""y""",0.1,true\n`);

  const table = await sql([q]);
  t.regex(table.stdout, new RegExp(`│ +${BIG} │ x, "y" +│`));
  t.regex(table.stdout, /\(3 rows\)\n$/);

  const arrow = await sql(['--format', 'arrow', q]);
  t.is(arrow.code, 0, arrow.stderr);
  const read = tableFromIPC(arrow.bytes);
  t.is(read.numRows, 3);
  t.deepEqual(read.schema.fields.map((f) => f.name), ['id', 's', 'f', 'b']);
  t.is(read.getChild('id')!.get(2), BigInt(BIG));
  t.is(read.getChild('s')!.get(2), 'x, "y"');
  // An empty result still carries its schema (from GetFlightInfo).
  const empty = tableFromIPC((await sql(['--format', 'arrow', 'SELECT id FROM t WHERE false'])).bytes);
  t.is(empty.numRows, 0);
  t.deepEqual(empty.schema.fields.map((f) => f.name), ['id']);
});

test('--param binds $1, $2 through a prepared statement (64-bit exact, text, JSON string)', async (t) => {
  const r = await sql(['--format', 'csv', '--param', BIG, '--param', 'x, "y"', 'SELECT id, s FROM t WHERE id = $1 AND s = $2']);
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, `id,s\n${BIG},"x, ""y"""\n`);
  const n = await sql(['--format', 'csv', '-p', '0', '-p', '"two"', 'SELECT count(*) AS n FROM t WHERE id < $1 OR s = $2']);
  t.is(n.stdout, 'n\n1\n', n.stderr);
  t.is((await sql(['CREATE TABLE p (id BIGINT PRIMARY KEY, s TEXT)'])).code, 0);
  const w = await sql(['--format', 'csv', '-p', '7', '-p', 'seven', 'INSERT INTO p (id, s) VALUES ($1, $2)']);
  t.is(w.stdout, 'count\n1\n', w.stderr);
  t.is((await sql(['--format', 'csv', 'SELECT s FROM p WHERE id = 7'])).stdout, 's\nseven\n');
});

test('errors: unknown table -> not_found, bad SQL -> invalid, unreachable server -> unavailable; exit 1', async (t) => {
  const missing = await sql(['SELECT * FROM nope']);
  t.is(missing.code, 1);
  t.is(missing.stdout, '');
  t.regex(missing.stderr, /^quiver: not_found: table nope does not exist\n$/);
  const bad = await sql(['SELEC 1']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /^quiver: invalid: /);
  const down = await quiver(['sql', '--connect', 'grpc://127.0.0.1:1', 'SELECT 1'], { timeoutMs: 30_000 });
  t.is(down.code, 1);
  // A refused connection is reported when it is refused, not after the connect deadline.
  t.regex(down.stderr, /^quiver: unavailable: cannot reach grpc:\/\/127\.0\.0\.1:1: the connection failed/);
  const usage = await quiver(['sql', '--connect', 'http://x:1', 'SELECT 1']);
  t.is(usage.code, 2);
});

test('tables, describe (columns and primary key only) and scan (a SELECT) over --connect', async (t) => {
  const tables = await quiver(['tables', '--connect', server.url]);
  t.is(tables.code, 0, tables.stderr);
  t.true(tables.stdout.split('\n').includes('t'));
  const desc = await quiver(['describe', 't', '--connect', server.url, '--format', 'json']);
  t.is(desc.code, 0, desc.stderr);
  const info = JSON.parse(desc.stdout);
  t.deepEqual(info.columns, [
    { name: 'id', type: 'BIGINT', nullable: false },
    { name: 's', type: 'TEXT', nullable: true },
    { name: 'f', type: 'DOUBLE PRECISION', nullable: true },
    { name: 'b', type: 'BOOLEAN', nullable: true },
  ]);
  t.deepEqual(info.primaryKey, ['id']);
  t.is(info.regions, undefined);
  const scan = await quiver(['scan', 't', '--connect', server.url, '--columns', 'id,b', '--limit', '2', '--format', 'ndjson']);
  t.is(scan.code, 0, scan.stderr);
  t.is(scan.stdout.trim().split('\n').length, 2);
  t.regex(scan.stdout, /^\{"id":-?\d+,"b":(true|false|null)\}$/m);
  const none = await quiver(['describe', 'nope', '--connect', server.url]);
  t.is(none.code, 1);
  t.regex(none.stderr, /^quiver: not_found: table nope does not exist/);
});

test('quiver load --connect: a CSV (new table, then upserted) and a DuckDB Parquet file', async (t) => {
  const csv = join(dir.path, 'rows.csv');
  await writeCsv(csv, 20_000);
  const r = await quiver(['load', 'loaded', csv, '--connect', server.url, '--primary-key', 'id', '--batch-rows', '3000', '-q']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /^loaded 20000 rows into loaded in/);
  const again = await quiver(['load', 'loaded', csv, '--connect', server.url, '-q']);
  t.is(again.code, 0, again.stderr);
  const counted = await sql(['--format', 'csv', "SELECT count(*) AS n, max(id) AS top, min(name) AS lo FROM loaded WHERE flag"]);
  t.is(counted.stdout, 'n,top,lo\n6667,19998,name 0\n', counted.stderr);
  // A bad row fails the load, naming its line and the durably loaded rows.
  const badCsv = join(dir.path, 'bad.csv');
  await writeCsv(badCsv, 5000, (i, line) => (i === 4000 ? line.replace(/^\d+/, 'oops') : line));
  const bad = await quiver(['load', 'loaded', badCsv, '--connect', server.url, '--batch-rows', '1000', '-q']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /^quiver: invalid: line 4002: .*; 4000 rows were loaded \(durable\) before it/);

  const file = join(dir.path, 'duck.parquet');
  const duck = await DuckDBInstance.create(':memory:');
  const c = await duck.connect();
  await c.run(
    `COPY (SELECT i::BIGINT AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE 'name ' || i END AS name, i / 8.0 AS score,
            i % 2 = 0 AS flag, [i::FLOAT / 4, -1.5]::FLOAT[2] AS v
          FROM range(3000) t(i)) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`,
  );
  c.closeSync();
  const p = await quiver(['load', 'duck', file, '--connect', server.url, '--primary-key', 'id', '--batch-rows', '700', '-q']);
  t.is(p.code, 0, p.stderr);
  t.regex(p.stdout, /^loaded 3000 rows into duck/);
  const rows = (await sql(['--format', 'ndjson', 'SELECT id, name, score, flag, v FROM duck WHERE id IN (7, 2999) ORDER BY id'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
  t.deepEqual(rows, [
    { id: 7, name: null, score: 0.875, flag: false, v: [1.75, -1.5] },
    { id: 2999, name: 'name 2999', score: 374.875, flag: false, v: [749.75, -1.5] },
  ]);
});

test('authentication over TLS: right credentials work, wrong ones and none exit 1 with an auth error', async (t) => {
  const d = tempDir('quiver-remote-auth-');
  try {
    const cert = join(d.path, 'cert.pem');
    const key = join(d.path, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    const secure = await startServe(['--port', '0', '--data', join(d.path, 'data'), '--tls-cert', cert, '--tls-key', key, '--user', 'ana', '--password', 's3cret']);
    try {
      t.regex(secure.url, /^grpc\+tls:\/\//);
      const base = ['sql', '--connect', secure.url, '--tls-ca', cert, '--format', 'csv'];
      const ok = await quiver([...base, '--user', 'ana', '--password', 's3cret', 'SELECT 41 + 1 AS answer']);
      t.is(ok.code, 0, ok.stderr);
      t.is(ok.stdout, 'answer\n42\n');
      const env = await quiver([...base, '--user', 'ana', 'SELECT 1 AS one'], { env: { QUIVER_PASSWORD: 's3cret' } });
      t.is(env.stdout, 'one\n1\n', env.stderr);
      const wrong = await quiver([...base, '--user', 'ana', '--password', 'nope', 'SELECT 1']);
      t.is(wrong.code, 1);
      t.regex(wrong.stderr, /^quiver: unauthenticated: authentication failed at grpc\+tls:\/\/[^:]+:\d+: /);
      const none = await quiver([...base, 'SELECT 1']);
      t.is(none.code, 1);
      t.regex(none.stderr, /^quiver: unauthenticated: authentication failed/);
      // Without the CA the self-signed certificate is refused.
      const untrusted = await quiver(['sql', '--connect', secure.url, '--user', 'ana', '--password', 's3cret', 'SELECT 1'], { timeoutMs: 30_000 });
      t.is(untrusted.code, 1);
      t.regex(untrusted.stderr, /^quiver: unavailable: /);
    } finally {
      await secure.stop();
    }
  } finally {
    d.remove();
  }
});


test('the shell over --connect: a statement, .tables, .schema, Ctrl-C cancels a streaming query', async (t) => {
  if (!hasScript) return t.pass('util-linux script is not installed');
  const csv = join(dir.path, 'big.csv');
  await writeCsv(csv, 200_000);
  const l = await quiver(['load', 'big', csv, '--connect', server.url, '--primary-key', 'id', '-q']);
  t.is(l.code, 0, l.stderr);

  const sh = new Pty(['sql', '--connect', server.url], { QUIVER_HISTORY: join(dir.path, 'history') });
  t.regex(await sh.expect(/quiver> $/), new RegExp(`Quiver shell on ${server.url.replace(/[.+]/g, '\\$&')}`));
  sh.send('SELECT count(*) AS n,\r');
  await sh.expect(/ -> $/);
  sh.send('  max(id) AS top FROM big;\r');
  t.regex(await sh.expect(/\(1 row\)\nquiver> $/), /│ +200000 │ +199999 │/);
  sh.send('.tables\r');
  t.regex(await sh.expect(/quiver> $/), /\nbig\n/);
  sh.send('.schema big\r');
  t.regex(await sh.expect(/quiver> $/), /table big[\s\S]*primary key: \(id\)/);
  sh.send('SELECT * FROM nope;\r');
  t.regex(await sh.expect(/quiver> $/), /not_found: table nope does not exist/);

  sh.send('.format ndjson\r');
  await sh.expect(/quiver> $/);
  const mark = sh.mark();
  sh.send('SELECT * FROM big;\r');
  await new Promise((r) => setTimeout(r, 300));
  sh.send('\x03');
  await sh.expect(/cancelled\nquiver> $/);
  const printed = sh.count(mark, /"id":/g);
  t.log(`${printed} of 200000 rows printed before Ctrl-C took effect`);
  t.true(printed < 200_000, 'the stream stopped before its end');
  sh.send('.format table\r');
  await sh.expect(/quiver> $/);
  sh.send('SELECT 41 + 1 AS answer;\r');
  t.regex(await sh.expect(/quiver> $/), /│ +42 │/);
  sh.send('.quit\r');
  t.is(await sh.exit(), 0);
});
