// Dev harness for issue 7's vector goal: the bench:search table (ten generations + 5 % upserts;
// the index created after the first tenth), built in-process, then `settleIndexes()` (the IVF-PQ
// model grows with the table), then vector top-10 with and without the 16 % filter: p50 wall and
// CPU, recall@10 against exact search over the live rows, ADC codes read and candidates refined
// per query (counters), the plan. ROUNDS alternates the two cases; PROF=file writes a CPU profile
// of the query phase.
// N=1000000 Q=100 node --max-old-space-size=16384 --import=tsx bench/dev-growth.ts
import { rmSync } from 'node:fs';
import { connect } from '../src/database.js';
import { ivfPqSearchStats } from '../src/index/vector/ivf-pq-index.js';
import { livenessWork } from '../src/memtable/liveness.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';
import { distinctKeys, LiveRows, makeRows, Rng, rowsBatch, searchRowGenerator, searchSchema } from './search-data.js';

const N = Number(process.env.N ?? 200_000);
const Q = Number(process.env.Q ?? 100);
const DIR = process.env.DIR ?? `/tmp/qg/t${N}`;
const DIM = 128;
const GiB = 1024 ** 3;
const gen = searchRowGenerator(DIM);
const schema = searchSchema(DIM);
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);

const keys = Int32Array.from({ length: N }, (_, i) => i);
const base = makeRows(gen as never, new Rng(1000 + N), keys);
const up = makeRows(gen as never, new Rng(3000 + N), distinctKeys(new Rng(2000 + N), N, Math.round(N * 0.05)));
const live = new LiveRows(N, DIM);
live.apply(base);
live.apply(up);
const qrng = new Rng(4000 + N);
const queries = Array.from({ length: 20 + Q }, () => {
  const v = new Float32Array(DIM);
  gen.model.sample(qrng, v, 0);
  return v;
});
const truth = queries.map((q) => live.exactTopK(q, 10, 2021));

rmSync(DIR, { recursive: true, force: true });
const db = await connect(DIR, { fsync: process.env.FSYNC === '1', generationCacheBytes: 16 * GiB });
const table = await db.createTable('docs', schema, { primaryKey: 'id', writer: HOLD_IN_MEMTABLE as never });
async function putRange(rows: typeof base, start: number, end: number) {
  const pending = new Set<Promise<void>>();
  for (let s = start; s < end; s += 5000) {
    const p: Promise<void> = table.put(rowsBatch(schema, rows, s, Math.min(end, s + 5000))).then(() => void pending.delete(p));
    pending.add(p);
    if (pending.size >= 4) await Promise.race(pending);
  }
  await Promise.all(pending);
}
const t0 = performance.now();
const tenth = Math.ceil(N / 10);
for (let part = 0; part < 10; part++) {
  await putRange(base, part * tenth, Math.min(N, (part + 1) * tenth));
  if (part === 0) for (const [c, type] of [['vector', 'ivf_pq'], ['body', 'fts'], ['year', 'scalar']] as const) await table.createIndex(c, { type });
  await table.flush();
}
await putRange(up, 0, up.ids.length);
log(`built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const settle = (table as unknown as { settleIndexes?: () => Promise<void> }).settleIndexes;
if (settle) {
  const t1 = performance.now();
  await settle.call(table);
  log(`indexes settled in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
}

import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
const prof = process.env.PROF ? new Session() : undefined;
if (prof) {
  prof.connect();
  await prof.post('Profiler.enable');
  await prof.post('Profiler.setSamplingInterval', { interval: 100 });
  await prof.post('Profiler.start');
}
const recallOf = (got: number[], want: number[]) => want.filter((w) => got.includes(w)).length / Math.max(1, want.length);
const p50 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const nprobes = process.env.NPROBES ? Number(process.env.NPROBES) : undefined;
const ROUNDS = Number(process.env.ROUNDS ?? 1);
for (const filter of Array.from({ length: 2 * ROUNDS }, (_, i) => i % 2 === 1)) {
  const wall: number[] = [];
  const cpu: number[] = [];
  let recall = 0;
  let plan = '';
  const s0 = { ...ivfPqSearchStats };
  const l0 = { ...livenessWork };
  for (let i = 0; i < queries.length; i++) {
    const c0 = process.cpuUsage();
    const t = performance.now();
    const r = await table.search({ vector: { column: 'vector', query: queries[i] }, k: 10, nprobes, ...(filter ? { filter: 'year >= 2021' } : {}) });
    const ms = performance.now() - t;
    const c = process.cpuUsage(c0);
    if (i < 20) continue;
    wall.push(ms);
    cpu.push((c.user + c.system) / 1000);
    const ids = Array.from(r.getChild('id')!.toArray() as BigInt64Array, Number);
    recall += recallOf(ids, filter ? truth[i].filtered : truth[i].all);
    if (i === 20) {
      const p = JSON.parse(r.schema.metadata.get('quiver.search.plan')!).sources as { path: string; partitions?: number; partitionsProbed?: number; rows: number }[];
      plan = p.map((s) => `${s.path}:${s.rows}${s.partitions ? `/${s.partitionsProbed}of${s.partitions}` : ''}`).join(' ');
    }
  }
  const per = (k: 'codes' | 'refined') => ((ivfPqSearchStats[k] - s0[k]) / queries.length / 1000).toFixed(1);
  log(`codes ${per('codes')}k refined ${per('refined')}k per query; liveness rows ${((livenessWork.rowsScanned - l0.rowsScanned) / queries.length / 1000).toFixed(1)}k, generation keys ${((livenessWork.generationKeysApplied - l0.generationKeysApplied) / queries.length / 1000).toFixed(1)}k per query`);
  log(`${filter ? 'vector+filter' : 'vector'} wall p50 ${p50(wall).toFixed(2)} ms cpu p50 ${p50(cpu).toFixed(2)} ms recall ${(recall / Q).toFixed(4)}  ${plan}`);
}
if (prof) {
  const { profile } = await prof.post('Profiler.stop');
  writeFileSync(process.env.PROF!, JSON.stringify(profile));
}
await db.close();
