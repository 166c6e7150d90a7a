/**
 * `quiver serve` as users run it: the address line, a clean stop on SIGTERM (MemTables flushed),
 * TLS from cert/key files, usage errors; and a server killed with SIGKILL during DoPut ingest
 * loses no acknowledged batch after a restart.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { credentials } from '@grpc/grpc-js';
import { TestFlightClient } from './client.js';
import { startServe, vectorBatch } from './serve-process.js';

const QUIVER_BIN = fileURLToPath(new URL('../../bin/quiver.js', import.meta.url));

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'quiver-serve-'));
}

function findGenerations(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      if (/_gen_\d+$/.test(e.name)) out.push(join(d, e.name));
      else walk(join(d, e.name));
    }
  };
  walk(dir);
  return out;
}

test('serve prints its address, serves, and stops cleanly on SIGTERM with MemTables flushed', async (t) => {
  const dir = tempDir();
  try {
    const server = await startServe(['--port', '0', '--data', dir]);
    t.regex(server.output(), /^Quiver Flight SQL server listening on grpc:\/\/127\.0\.0\.1:\d+$/m);
    const client = new TestFlightClient(server.url);
    t.is(await client.update('CREATE TABLE t (id BIGINT PRIMARY KEY, s TEXT)'), 1);
    t.is(await client.update("INSERT INTO t VALUES (1, 'one'), (2, 'two')"), 2);
    client.close();
    t.deepEqual(findGenerations(dir), [], 'rows only in the WAL and MemTable while running');
    const code = await server.stop('SIGTERM');
    t.is(code, 0, server.output());
    t.regex(server.output(), /stopped; MemTables flushed/);
    t.true(findGenerations(dir).length > 0, 'a clean stop flushed the MemTable into a generation');
    const again = await startServe(['--port', '0', '--data', dir]);
    const c2 = new TestFlightClient(again.url);
    const rows = await c2.query('SELECT id, s FROM t ORDER BY id');
    t.deepEqual(
      rows.toArray().map((r) => [Number(r.id), r.s]),
      [
        [1, 'one'],
        [2, 'two'],
      ],
    );
    c2.close();
    t.is(await again.stop('SIGINT'), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('serve --help and usage errors', (t) => {
  const help = execFileSync(process.execPath, [QUIVER_BIN, 'serve', '--help'], { encoding: 'utf8' });
  t.regex(help, /--tls-cert/);
  const bad = (() => {
    try {
      execFileSync(process.execPath, [QUIVER_BIN, 'serve', '--port', 'x'], { encoding: 'utf8', stdio: 'pipe' });
      return null;
    } catch (e) {
      return e as { status: number; stderr: string };
    }
  })();
  t.is(bad?.status, 2);
  t.regex(bad?.stderr ?? '', /--port must be/);
});

test('serve with --user/--password and TLS from cert/key files', async (t) => {
  const dir = tempDir();
  try {
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
    const server = await startServe(['--port', '0', '--data', join(dir, 'data'), '--tls-cert', cert, '--tls-key', key, '--user', 'u', '--password', 'p']);
    t.regex(server.url, /^grpc\+tls:\/\/127\.0\.0\.1:\d+$/);
    const client = new TestFlightClient(server.url, { credentials: credentials.createSsl(readFileSync(cert)) });
    await t.throwsAsync(client.query('SELECT 1 AS x'), { message: /UNAUTHENTICATED/ });
    const { headerToken } = await client.handshake('u', 'p');
    t.truthy(headerToken);
    t.is(Number((await client.query('SELECT 1 AS x')).getChild('x')!.get(0)), 1);
    client.close();
    const plain = new TestFlightClient(server.url.replace('grpc+tls', 'grpc'));
    await t.throwsAsync(plain.query('SELECT 1 AS x'));
    plain.close();
    t.is(await server.stop(), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SIGKILL during DoPut ingest loses no acknowledged batch', async (t) => {
  const dir = tempDir();
  const rows = 2000;
  const dim = 64;
  try {
    const server = await startServe(['--port', '0', '--data', dir]);
    const client = new TestFlightClient(server.url);
    const acked = new Set<number>();
    let sent = 0;
    let killed = false;
    // Writers keep ingesting one batch per DoPut; after 12 acknowledgements the server is killed
    // while the next DoPuts are in flight.
    const writer = async () => {
      while (!killed) {
        const i = sent++;
        try {
          const n = await client.ingest('events', [vectorBatch(i * rows, rows, dim)], { ifNotExist: 1, ifExists: 2 });
          if (n === rows && !killed) acked.add(i);
          if (acked.size >= 12 && !killed) {
            killed = true;
            // Let the other writers' DoPuts get under way, then kill.
            setTimeout(() => server.child.kill('SIGKILL'), 15);
          }
        } catch {
          return; // the server died under this DoPut: not acknowledged
        }
      }
    };
    // The first DoPut creates the table; the rest run three at a time.
    await client.ingest('events', [vectorBatch(-rows, rows, dim)], { ifNotExist: 1, ifExists: 2 });
    await Promise.all([writer(), writer(), writer()]);
    client.close();
    await new Promise((r) => server.child.once('close', r));
    t.true(acked.size >= 12);

    const again = await startServe(['--port', '0', '--data', dir]);
    const c2 = new TestFlightClient(again.url, { maxReceiveBytes: -1 });
    const ids = await c2.query('SELECT id FROM events');
    const perBatch = new Map<number, number>();
    for (const id of ids.getChild('id')!) {
      const b = Math.floor(Number(id) / rows);
      perBatch.set(b, (perBatch.get(b) ?? 0) + 1);
    }
    for (const b of acked) t.is(perBatch.get(b), rows, `acknowledged batch ${b} is complete after the restart`);
    for (const [b, n] of perBatch) t.is(n, rows, `batch ${b} is all or nothing`);
    t.log(`${acked.size} batches acknowledged before SIGKILL, ${perBatch.size - 1} found after restart (${sent} sent)`);
    c2.close();
    t.is(await again.stop(), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

