/**
 * `quiver sql` embedded: one-shot statements in every format, scripts from -f and standard input,
 * parameters, exit codes and where messages go.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { quiver, tempDir } from './quiver-process.js';

const BIG = '9007199254740993'; // 2^53 + 1: a double would print ...992

async function fixture(): Promise<{ path: string; remove(): void }> {
  const dir = tempDir();
  const script = `
    CREATE TABLE t (id BIGINT PRIMARY KEY, ts TIMESTAMP, d DATE, v FLOAT4[6], b BOOLEAN, s TEXT, i INT, f REAL, x DOUBLE);
    INSERT INTO t VALUES (${BIG}, '2024-01-02 03:04:05.123456', '2024-01-02', ARRAY[0.1,0.2,0.3,0.4,0.5,0.6], true, 'x, "y"', 3, 0.1, 0.1),
                         (-${BIG}, '1969-12-31 23:59:59.5', '1900-03-01', ARRAY[1,2,3,4,5,6], false, 'line1
line2', -7, 1e-7, 1e300),
                         (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);`;
  const r = await quiver(['sql', '--data', dir.path], { input: script });
  if (r.code !== 0) throw new Error(r.stderr);
  return dir;
}

test('json and ndjson print 64-bit integers, floats and timestamps exactly', async (t) => {
  const dir = await fixture();
  try {
    const json = await quiver(['sql', '--data', dir.path, '--format', 'json', 'SELECT * FROM t ORDER BY id']);
    t.is(json.code, 0, json.stderr);
    t.is(json.stderr, '');
    // The digits themselves, not a rounded double and not a string.
    t.regex(json.stdout, new RegExp(`"id":-${BIG},`));
    t.regex(json.stdout, new RegExp(`"id":${BIG},`));
    const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
    t.is(rows.length, 3);
    t.deepEqual(rows[1], { id: 2, ts: null, d: null, v: null, b: null, s: null, i: null, f: null, x: null });
    t.like(rows[2], { ts: '2024-01-02T03:04:05.123456', d: '2024-01-02', v: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], b: true, s: 'x, "y"', i: 3, f: 0.1, x: 0.1 });
    t.like(rows[0], { ts: '1969-12-31T23:59:59.5', d: '1900-03-01', b: false, s: 'line1\nline2', f: 1e-7, x: 1e300 });

    const nd = await quiver(['sql', '--data', dir.path, '--format', 'ndjson', 'SELECT id, s FROM t ORDER BY id DESC']);
    t.is(nd.code, 0, nd.stderr);
    t.is(nd.stdout, `{"id":${BIG},"s":"x, \\"y\\""}\n{"id":2,"s":null}\n{"id":-${BIG},"s":"line1\\nline2"}\n`);

    const empty = await quiver(['sql', '--data', dir.path, '--format', 'json', 'SELECT id FROM t WHERE id = 12345']);
    t.is(empty.stdout, '[]\n');
  } finally {
    dir.remove();
  }
});

test('csv quotes what needs quoting and leaves NULL empty', async (t) => {
  const dir = await fixture();
  try {
    const csv = await quiver(['sql', '--data', dir.path, '--format', 'csv', 'SELECT id, s, v, ts FROM t ORDER BY id']);
    t.is(csv.code, 0, csv.stderr);
    t.is(
      csv.stdout,
      `id,s,v,ts\n-${BIG},"line1\nline2","[1, 2, 3, 4, 5, 6]",1969-12-31T23:59:59.5\n2,,,\n${BIG},"x, ""y""","[0.1, 0.2, 0.3, 0.4, 0.5, 0.6]",2024-01-02T03:04:05.123456\n`,
    );
  } finally {
    dir.remove();
  }
});

test('arrow writes an IPC stream that apache-arrow reads back with the same values', async (t) => {
  const dir = await fixture();
  try {
    const r = await quiver(['sql', '--data', dir.path, '--format', 'arrow', 'SELECT id, ts, v, s FROM t ORDER BY id']);
    t.is(r.code, 0, r.stderr);
    const table = tableFromIPC(r.bytes);
    t.is(table.numRows, 3);
    t.deepEqual(table.schema.fields.map((f) => `${f.name}:${f.type}`), ['id:Int64', 'ts:Timestamp<MICROSECOND>', 'v:FixedSizeList[6]<Float32>', 's:Utf8']);
    t.deepEqual([...table.getChild('id')!], [-BigInt(BIG), 2n, BigInt(BIG)]);
    t.is(table.getChild('ts')!.data[0].values[2], 1704164645123456n);
    t.deepEqual([...(table.getChild('v')!.get(2) as Iterable<number>)], [...Float32Array.from([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])]);
    const empty = tableFromIPC((await quiver(['sql', '--data', dir.path, '--format', 'arrow', 'SELECT id FROM t WHERE false'])).bytes);
    t.is(empty.numRows, 0);
    t.deepEqual(empty.schema.fields.map((f) => f.name), ['id']);
  } finally {
    dir.remove();
  }
});

test('table: aligned, NULL shown, long vectors abbreviated, fitted to the width, row count', async (t) => {
  const dir = await fixture();
  try {
    const r = await quiver(['sql', '--data', dir.path, 'SELECT id, v, s, b FROM t ORDER BY id']);
    t.is(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    t.is(lines.at(-1), '(3 rows)');
    const body = lines.slice(0, -1);
    t.true(body.every((l) => l.length === body[0].length), 'every line equally wide');
    t.regex(r.stdout, /│ +2 │ NULL +│ NULL +│ NULL +│/);
    t.regex(r.stdout, /\[0\.1, 0\.2, … 6 values\]/);
    t.regex(r.stdout, /line1↵line2/);
    t.regex(r.stdout, new RegExp(`│  ${BIG} │`)); // numbers right-aligned, exact

    const narrow = await quiver(['sql', '--data', dir.path, 'SELECT id, s, ts, d FROM t ORDER BY id'], { env: { COLUMNS: '60' } });
    const widths = narrow.stdout.trimEnd().split('\n').slice(0, -1).map((l) => [...l].length);
    t.true(widths.every((w) => w <= 60), `fits 60 columns: ${widths}`);
    t.regex(narrow.stdout, /…/);
  } finally {
    dir.remove();
  }
});

test('scripts from -f and standard input; an error names the statement and stops there', async (t) => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'setup.sql');
    writeFileSync(file, "CREATE TABLE k (id BIGINT PRIMARY KEY, s TEXT);\n-- a comment; not a statement\nINSERT INTO k VALUES (1, 'a;b'), (2, 'c');\n");
    const setup = await quiver(['sql', '--data', join(dir.path, 'db'), '-f', file, '--format', 'csv']);
    t.is(setup.code, 0, setup.stderr);
    t.is(setup.stdout, 'count\n1\ncount\n2\n');
    const piped = await quiver(['sql', '--data', join(dir.path, 'db'), '--format', 'csv'], {
      input: "INSERT INTO k VALUES (3, 'd');\nSELECT count(*) AS n FROM k;\nSELECT nope FROM k;\nINSERT INTO k VALUES (4, 'e');\n",
    });
    t.is(piped.code, 1);
    t.is(piped.stdout, 'count\n1\nn\n3\n');
    t.regex(piped.stderr, /^quiver: (invalid|not_found): .*nope.*\(statement 3 at line 3\)/m);
    const after = await quiver(['sql', '--data', join(dir.path, 'db'), '--format', 'csv', 'SELECT count(*) AS n FROM k']);
    t.is(after.stdout, 'n\n3\n', 'statements after the failing one did not run');
  } finally {
    dir.remove();
  }
});

test('--param binds numbers, exact bigints, text and vectors', async (t) => {
  const dir = await fixture();
  try {
    const r = await quiver(['sql', '--data', dir.path, '--format', 'ndjson', 'SELECT id FROM t WHERE id = $1 OR s = $2 ORDER BY id', '--param', BIG, '--param', 'x, "y"']);
    t.is(r.code, 0, r.stderr);
    t.is(r.stdout, `{"id":${BIG}}\n`);
    const v = await quiver(['sql', '--data', dir.path, '--format', 'csv', 'SELECT id FROM t WHERE id <> 2 ORDER BY l2_distance(v, $1) LIMIT 1', '-p', '[1,2,3,4,5,6]']);
    t.is(v.stdout, `id\n-${BIG}\n`, v.stderr);
    const text = await quiver(['sql', '--data', dir.path, '--format', 'csv', 'SELECT $1 || $2 AS s', '-p', '"42"', '-p', 'abc']);
    t.is(text.stdout, 's\n42abc\n', text.stderr);
  } finally {
    dir.remove();
  }
});

test('exit codes: 1 for an error naming its kind, 2 for bad usage, 0 for --help and --version', async (t) => {
  const dir = tempDir();
  try {
    const bad = await quiver(['sql', '--data', dir.path, 'SELEC 1']);
    t.is(bad.code, 1);
    t.is(bad.stdout, '');
    t.regex(bad.stderr, /^quiver: invalid: syntax error/);
    const missing = await quiver(['sql', '--data', dir.path, 'SELECT * FROM nope']);
    t.is(missing.code, 1);
    t.regex(missing.stderr, /^quiver: not_found: table nope does not exist/);
    t.is((await quiver(['sql', '--data', dir.path, '--format', 'xml', 'SELECT 1'])).code, 2);
    t.is((await quiver(['sql', '--data', dir.path, '--bogus', 'SELECT 1'])).code, 2);
    t.is((await quiver(['sql', '--data', dir.path])).code, 2, 'no statement on a non-terminal stdin');
    t.is((await quiver([])).code, 2);
    for (const verb of ['sql', 'load', 'tables', 'describe', 'scan', 'demo', 'serve']) {
      const help = await quiver([verb, '--help']);
      t.is(help.code, 0, verb);
      t.regex(help.stdout, new RegExp(`usage: quiver ${verb}`, 'i'), verb);
    }
    const version = await quiver(['--version']);
    t.is(version.code, 0);
    t.regex(version.stdout, /^\d+\.\d+\.\d+/);
  } finally {
    dir.remove();
  }
});

test('colour only when asked for by a terminal or FORCE_COLOR, never with NO_COLOR', async (t) => {
  const dir = tempDir();
  try {
    const plain = await quiver(['sql', '--data', dir.path, 'SELECT NULL AS n']);
    t.notRegex(plain.stdout, /\x1b\[/);
    const forced = await quiver(['sql', '--data', dir.path, 'SELECT NULL AS n'], { env: { NO_COLOR: '', FORCE_COLOR: '1' } });
    t.regex(forced.stdout, /\x1b\[2mNULL/);
    const both = await quiver(['sql', '--data', dir.path, 'SELECT NULL AS n'], { env: { NO_COLOR: '1', FORCE_COLOR: '1' } });
    t.notRegex(both.stdout, /\x1b\[/);
  } finally {
    dir.remove();
  }
});
