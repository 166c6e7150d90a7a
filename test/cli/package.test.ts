/**
 * Packaging: `npm pack` (which builds dist/ through `prepare`), installed into a fresh project
 * outside the repository, gives `import { connect } from 'quiver'` (ESM, with types that
 * TypeScript resolves) and a working `npx quiver`.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { tempDir } from './quiver-process.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(repo, 'node_modules', '.bin', 'tsc');

test('npm pack installs into a fresh project: import { connect } from "quiver" with types, npx quiver', async (t) => {
  const dir = tempDir('quiver-pack-');
  try {
    const packed = await run('npm', ['pack', '--pack-destination', dir.path, '--json'], { cwd: repo, timeout: 180_000, maxBuffer: 1 << 26 });
    const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    const paths = files.map((f) => f.path);
    t.true(paths.includes('dist/src/quiver.js') && paths.includes('dist/src/quiver.d.ts') && paths.includes('bin/quiver.js'));
    t.true(paths.includes('dist/src/flight/proto/Flight.proto'), 'the Flight protos the server loads at run time');
    t.false(paths.some((p) => p.startsWith('src/') || p.startsWith('test/') || p.startsWith('dist/test/')), 'no sources or tests shipped');

    const app = join(dir.path, 'app');
    await run('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', type: 'module', private: true }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir.path, filename)], { cwd: app, timeout: 240_000 });

    const data = join(dir.path, 'db');
    writeFileSync(
      join(app, 'main.ts'),
      `import { connect, isQuiverError, type Database } from 'quiver';
const db: Database = await connect(${JSON.stringify(data)});
await db.sql('CREATE TABLE t (id BIGINT PRIMARY KEY, s TEXT)');
await db.sql("INSERT INTO t VALUES (1, 'one')");
const rows = (await db.sql('SELECT s FROM t')).toArray().map((r) => String(r.s));
console.log(JSON.stringify({ rows, kind: isQuiverError(new Error('x')) }));
await db.close();
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, skipLibCheck: true, types: [], outDir: 'out' }, files: ['main.ts'] }),
    );
    await run(tsc, ['-p', '.'], { cwd: app, timeout: 120_000 }); // types resolve through exports
    const out = await run(process.execPath, ['out/main.js'], { cwd: app, timeout: 60_000 });
    t.deepEqual(JSON.parse(out.stdout), { rows: ['one'], kind: false });

    const help = await run('npx', ['quiver', '--help'], { cwd: app, timeout: 60_000 });
    t.regex(help.stdout, /Usage: quiver/);
    // The installed package runs from dist/: its version is found there too (SqlInfo uses the same lookup).
    const version = await run('npx', ['quiver', '--version'], { cwd: app, timeout: 60_000 });
    t.is(version.stdout.trim(), JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
    const sql = await run('npx', ['quiver', 'sql', '--data', data, '--format', 'csv', 'SELECT id, s FROM t'], { cwd: app, timeout: 60_000 });
    t.is(sql.stdout, 'id,s\n1,one\n');
  } finally {
    dir.remove();
  }
});
