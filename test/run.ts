/**
 * `npm test`: the whole suite, as CI runs it.
 *
 * 1. type-checks the project (`tsc --noEmit`);
 * 2. starts the project's own S3 server (Debian radosgw, installed on first use by
 *    test/s3/radosgw.sh) unless one is already running, because the S3 acceptance tests must
 *    run against a real server;
 * 3. runs every ava test with TAP output, echoing it;
 * 4. stops the S3 server if it started it, and prints the closing line `N passed, N failed`.
 * Exits non-zero when anything failed. Extra arguments are passed to ava (e.g. a file glob).
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;

function step(name: string, cmd: string, args: string[]): boolean {
  process.stdout.write(`# ${name}\n`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  return r.status === 0;
}

async function runAva(args: string[]): Promise<{ passed: number; failed: number; code: number }> {
  const child = spawn(bin('ava'), ['--tap', ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let passed = 0;
  let failed = 0;
  let pending = '';
  const onLine = (line: string) => {
    if (/^ok \d+/.test(line)) passed++;
    else if (/^not ok \d+/.test(line)) failed++;
  };
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    lines.forEach(onLine);
  });
  const code: number = await new Promise((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  if (pending) onLine(pending);
  return { passed, failed, code };
}

let passed = 0;
let failed = 0;
if (step('typecheck', bin('tsc'), ['-p', '.', '--noEmit'])) passed++;
else failed++;

const alreadyRunning = spawnSync('bash', ['test/s3/radosgw.sh', 'status'], { cwd: root, stdio: 'ignore' }).status === 0;
let s3Ready = alreadyRunning;
if (!alreadyRunning) s3Ready = step('start radosgw', 'bash', ['test/s3/radosgw.sh', 'start']);
if (!s3Ready) process.stdout.write('# radosgw did not start: the S3 tests will fail\n');

try {
  const ava = await runAva(process.argv.slice(2));
  passed += ava.passed;
  failed += ava.failed;
  if (ava.code !== 0 && ava.failed === 0) failed++; // ava itself failed (e.g. a file crashed)
} finally {
  if (!alreadyRunning && s3Ready) step('stop radosgw', 'bash', ['test/s3/radosgw.sh', 'stop']);
}

process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(failed > 0 ? 1 : 0);
