/**
 * pyarrow.flight (the Arrow C++ Flight client) against Quiver's Flight SQL server over loopback:
 * handshake, every metadata command with the exact FlightSql.proto result schemas, queries,
 * prepared statements with parameters, updates, ingest, a vector KNN with the vector bound as a
 * parameter, errors with their codes, authentication, and the steps of the official flight_sql,
 * flight_sql:extension and flight_sql:ingestion integration scenarios
 * (test/flight/python/test_flight_sql.py holds the client side; one ava test per Python test).
 *
 * The Python venv (.venv-flight) is created on first use by test/flight/python/setup-venv.sh from
 * the machine's pip index; if it cannot be created this file fails, loudly.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { connect, type Database } from '../../src/quiver.js';
import { FlightSqlServer } from '../../src/flight/server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const pyDir = join(root, 'test/flight/python');
const python = join(root, '.venv-flight/bin/python');

const setup = spawnSync('bash', [join(pyDir, 'setup-venv.sh')], { cwd: root, encoding: 'utf8' });
if (setup.status !== 0) {
  throw new Error(`test/flight/python/setup-venv.sh failed (exit ${setup.status}): cannot run the pyarrow Flight tests\n${setup.stdout}\n${setup.stderr}`);
}
const listed = spawnSync(python, ['test_flight_sql.py', '--list'], { cwd: pyDir, encoding: 'utf8' });
if (listed.status !== 0) throw new Error(`test_flight_sql.py --list failed:\n${listed.stderr}`);
const names: string[] = JSON.parse(listed.stdout);

interface PyResult {
  ok: boolean;
  error?: string;
  seconds: number;
}

const dirs: string[] = [];
const open: { db: Database; server: FlightSqlServer }[] = [];

async function startServer(options: ConstructorParameters<typeof FlightSqlServer>[1] = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-flight-'));
  dirs.push(dir);
  const db = await connect(dir);
  const server = new FlightSqlServer(db, { port: 0, log: () => {}, ...options });
  open.push({ db, server });
  return (await server.listen()).url;
}

let results: Promise<Record<string, PyResult>> | null = null;

function runPython(): Promise<Record<string, PyResult>> {
  results ??= (async () => {
    const url = await startServer();
    const authUrl = await startServer({ auth: { users: { alice: 'alice-pw', bob: 'bob-pw' }, tokenTtlMs: 3000 } });
    const child = spawn(python, ['test_flight_sql.py', '--url', url, '--auth-url', authUrl], { cwd: pyDir });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    const line = out.trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(line) as Record<string, PyResult>;
    } catch {
      throw new Error(`test_flight_sql.py exited ${code} without results:\n${out}\n${err}`);
    }
  })();
  return results;
}

test.after.always(async () => {
  for (const { db, server } of open) {
    await server.close(1000);
    await db.close();
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

for (const name of names) {
  test.serial(`pyarrow: ${name}`, async (t) => {
    const all = await runPython();
    const r = all[name];
    t.truthy(r, `no result for ${name}`);
    if (!r.ok) t.fail(r.error);
    else t.pass();
  });
}
