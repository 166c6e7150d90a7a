import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/quiver.js', import.meta.url));

async function quiver(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('node', [bin, ...args], { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

test('demo writes, reopens and scans a table; scan prints it in every format', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-cli-'));
  try {
    const demo = await quiver(['demo', '--data', dir]);
    t.is(demo.code, 0, demo.stderr);
    t.regex(demo.stdout, /created table demo/);
    t.regex(demo.stdout, /\(18 rows\)/);
    const again = await quiver(['demo', '--data', dir]);
    t.regex(again.stdout, /opened table demo/);
    t.is((await quiver(['tables', '--data', dir])).stdout, 'demo\n');
    const json = JSON.parse((await quiver(['scan', 'demo', '--data', dir, '--format', 'json', '--columns', 'id'])).stdout);
    t.deepEqual(json.map((r: { id: number }) => r.id).sort((a: number, b: number) => a - b), [0, 1, 2, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    const nd = (await quiver(['scan', 'demo', '--data', dir, '--format', 'ndjson', '--limit', '3'])).stdout.trim().split('\n');
    t.is(nd.length, 3);
    t.is(JSON.parse(nd[0]).embedding.length, 8);
    const csv = (await quiver(['scan', 'demo', '--data', dir, '--format', 'csv', '--columns', 'id,body', '--limit', '1'])).stdout.trim().split('\n');
    t.is(csv[0], 'id,body');
    t.is(csv.length, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('errors: unknown table exits 1 with a clear message; bad usage exits 2', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quiver-cli-'));
  try {
    const missing = await quiver(['scan', 'nope', '--data', dir]);
    t.is(missing.code, 1);
    t.regex(missing.stderr, /^quiver: not_found: table nope does not exist/m);
    const bad = await quiver(['frobnicate']);
    t.is(bad.code, 2);
    t.regex(bad.stderr, /unknown command 'frobnicate'/);
    t.is((await quiver(['scan', 'x', '--format', 'xml', '--data', dir])).code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
