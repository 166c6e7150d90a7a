/**
 * `npm run bench [-- --quick]`: every peer suite, one child process each (no suite's heap, native
 * thread pools or garbage leak into the next), then one summary of their targets and charts in
 * bench/results/peers/summary[.quick].md. A suite that fails is reported and the rest still run;
 * the exit code says whether all passed. `-- --only memtable,sql` runs a subset.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { log } from './lib/machine.js';
import { MODE } from './lib/mode.js';
import { RESULTS_DIR, type SuiteReport } from './lib/report.js';

const HERE = path.dirname(new URL(import.meta.url).pathname);

/** Suite name (its results file) → script. Order: cheapest first, so a quick run fails fast. */
const SUITES: [string, string][] = [
  ['memtable', 'memtable.bench.ts'],
  ['sql', 'sql-vs-duckdb.bench.ts'],
  ['write', 'write-vs-lancedb.bench.ts'],
  ['flight', 'flight.bench.ts'],
  ['search', 'search-vs-lancedb.bench.ts'],
];

const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set(process.argv[onlyArg + 1].split(',')) : undefined;
const passThrough = process.argv.slice(2).filter((a, i, all) => a !== '--only' && all[i - 1] !== '--only');

const failed: string[] = [];
const t0 = performance.now();
for (const [name, file] of SUITES) {
  if (only && !only.has(name)) continue;
  log(`suite ${name}: ${file} ${passThrough.join(' ')}`);
  const r = spawnSync(process.execPath, ['--max-old-space-size=16384', '--import=tsx', path.join(HERE, file), ...passThrough], { stdio: 'inherit', cwd: path.join(HERE, '..') });
  if (r.status !== 0) failed.push(`${name} (exit ${r.status ?? r.signal})`);
}
log(`all suites done in ${((performance.now() - t0) / 1000).toFixed(0)} s${failed.length ? `; FAILED: ${failed.join(', ')}` : ''}`);

// ---- summary ---------------------------------------------------------------------------------

const suffix = MODE === 'quick' ? '.quick' : '';
const L: string[] = [`# Benchmarks against peers — ${MODE} mode`, ''];
L.push('| suite | target (issue 11) | measured | verdict |', '| --- | --- | --- | --- |');
const charts: string[] = [];
for (const [name] of SUITES) {
  const file = path.join(RESULTS_DIR, `${name}${suffix}.json`);
  if (!existsSync(file)) continue;
  const r = JSON.parse(readFileSync(file, 'utf8')) as SuiteReport;
  for (const v of r.targets) L.push(`| ${name} | ${v.target} | ${v.measured} | ${v.met ? 'met' : '**not met**'} |`);
  for (const s of r.skipped) L.push(`| ${name} | — | skipped: ${s} | |`);
  charts.push(`- [${r.title}](${name}${suffix}.md), ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, code ${r.machine.commit}, load ${r.machine.loadavg[0]}: ![${name}](${name}${suffix}.svg)`);
}
L.push('', ...charts, '');
writeFileSync(path.join(RESULTS_DIR, `summary${suffix}.md`), L.join('\n'));
log(`wrote ${path.join(RESULTS_DIR, `summary${suffix}.md`)}`);
process.exit(failed.length ? 1 : 0);
