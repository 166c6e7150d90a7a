/**
 * Dev helper for the SQL benchmark (issue 8): where Quiver's time goes on queries 1–4 of
 * bench/sql.bench.ts. Builds the same table `t` (PROFILE_ROWS rows, default 1 000 000, same
 * layout: 4 generations + 1 % in the MemTable), then runs each query PROFILE_ITER times.
 *
 * Run under the V8 profiler, one query at a time, and summarize:
 *   PROFILE_QUERY=1 node --cpu-prof --cpu-prof-dir=/tmp/sqlprof --import=tsx bench/sql-profile.ts
 *   node --import=tsx bench/sql-profile.ts summarize /tmp/sqlprof/<file>.cpuprofile
 * The summary lists self time per function (name, file:line) as a share of the samples taken
 * while the queries ran (the build is excluded by a marker: only samples after the
 * `profileStart` call count) and the inclusive time of the exec-node `execute` generators.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { connect } from '../src/database.js';
import { envNumber } from './env.js';
import { makeNumericRows, numericBatch, numericSchema } from './lib/data.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';

/** As in sql.bench.ts: fresh constants per run for 1 and 2 (a repeated filter is memoized). */
const QUERIES: Record<string, { sql: string; params: (i: number) => unknown[] }> = {
  1: { sql: 'SELECT id, b FROM t WHERE a < $1 AND b > $2', params: (i) => [100_000 + i, 900 + i / 1000] },
  2: { sql: 'SELECT count(*) AS n FROM t WHERE a < $1', params: (i) => [500_000 + i] },
  3: { sql: 'SELECT g, count(*) AS n, sum(b) AS sum_b, avg(a) AS avg_a FROM t GROUP BY g', params: () => [] },
  4: { sql: 'SELECT id, b FROM t ORDER BY b DESC LIMIT 10', params: () => [] },
};

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Marks the start of the measured part in the profile (a function that shows up in samples). */
function profileStart(): number {
  let x = 0;
  const end = performance.now() + 20;
  while (performance.now() < end) x++;
  return x;
}

async function run(): Promise<void> {
  const n = envNumber('PROFILE_ROWS', 1_000_000);
  const iter = envNumber('PROFILE_ITER', 20);
  const which = (process.env.PROFILE_QUERY ?? '1,2,3,4').split(',');
  const GiB = 1024 ** 3;
  const rows = makeNumericRows(n);
  const db = await connect('memory://', { generationCacheBytes: 16 * GiB });
  const schema = numericSchema();
  const table = await db.createTable('t', schema, {
    primaryKey: 'id',
    writer: HOLD_IN_MEMTABLE,
  });
  const mem = Math.round(n * 0.01);
  const perGen = Math.ceil((n - mem) / 4);
  let put = 0;
  for (let g = 0; g < 4; g++) {
    const end = Math.min(n - mem, (g + 1) * perGen);
    for (; put < end; put = Math.min(end, put + 100_000)) await table.put(numericBatch(schema, rows, put, Math.min(end, put + 100_000)));
    await table.flush();
  }
  for (; put < n; put = Math.min(n, put + 100_000)) await table.put(numericBatch(schema, rows, put, Math.min(n, put + 100_000)));
  let run = 0;
  for (const q of which) await db.sql(QUERIES[q].sql, QUERIES[q].params(run++));
  profileStart();
  for (const q of which) {
    const t = performance.now();
    for (let i = 0; i < iter; i++) await db.sql(QUERIES[q].sql, QUERIES[q].params(run++));
    console.log(`query ${q}: ${((performance.now() - t) / iter).toFixed(2)} ms/run over ${n} rows`);
  }
  for (const q of which) console.log((await db.sql('EXPLAIN ANALYZE ' + QUERIES[q].sql, QUERIES[q].params(run++))).toArray().map((r) => String(r.toJSON().plan)).join('\n'));
  await db.close();
}

function summarize(file: string): void {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: CpuProfileNode) => {
    const f = n.callFrame;
    const url = f.url ? path.relative(process.cwd(), f.url.replace(/^file:\/\//, '')) : '';
    return `${f.functionName || '(anonymous)'} ${url ? `${url}:${f.lineNumber + 1}` : ''}`.trim();
  };
  // Skip samples until the marker function first appears.
  const stackHas = (id: number, name: string) => {
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) if (byId.get(x)!.callFrame.functionName === name) return true;
    return false;
  };
  let start = prof.samples.findIndex((id) => stackHas(id, 'profileStart'));
  if (start < 0) start = 0;
  while (start < prof.samples.length && stackHas(prof.samples[start], 'profileStart')) start++;
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  for (let i = start; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i] ?? 0;
    total += dt;
    const leaf = byId.get(prof.samples[i])!;
    self.set(label(leaf), (self.get(label(leaf)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let x: number | undefined = leaf.id; x !== undefined; x = parent.get(x)) {
      const l = label(byId.get(x)!);
      if (seen.has(l)) continue;
      seen.add(l);
      incl.set(l, (incl.get(l) ?? 0) + dt);
    }
  }
  const top = (m: Map<string, number>, k: number, filter: (l: string) => boolean = () => true) =>
    [...m.entries()]
      .filter(([l]) => filter(l))
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([l, t]) => `${((100 * t) / total).toFixed(1).padStart(5)} %  ${(t / 1000).toFixed(0).padStart(6)} ms  ${l}`);
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms sampled after the marker`);
  console.log('self time:');
  for (const l of top(self, 25)) console.log('  ' + l);
  console.log('inclusive, engine files:');
  for (const l of top(incl, 30, (l) => /(exec|planner|src)\//.test(l))) console.log('  ' + l);
}

if (process.argv[2] === 'summarize') summarize(process.argv[3]);
else await run();
