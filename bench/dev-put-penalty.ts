/**
 * Dev harness (issue 7): what a 20-row put before each query adds to it. Builds N rows in ten
 * generations + 5 % upserts in the MemTable (like bench:search), then times queries without and
 * with a put before each; PROF=phase writes a CPU profile of that phase only (/tmp/q/<phase>.cpuprofile).
 * Knobs: N=10000 Q=200 KIND=vector|text PROF=none|plain|put|idle|both (plain,put)|all, or a comma list FSYNC=1 ROUNDS=1 (plain, then put, per round)
 * SAMPLE_US=100 SETTLE=gc (with --expose-gc: a full GC and 2 s pause after the build); with PROF the timed queries' windows go to /tmp/q/<phase>.windows.json
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { connect } from '../src/database.js';
import { livenessWork } from '../src/memtable/liveness.js';
import { liveCorpusWork } from '../src/index/fts/live-corpus-stats.js';
import { ivfPqSearchStats } from '../src/index/vector/ivf-pq-index.js';
import { envNumber } from './env.js';
import { buildSearchTable, makeRows, Rng, rowsBatch, searchRowGenerator, searchSchema } from './lib/data.js';
import type { Table } from '../src/table/table.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';

const N = envNumber('N', 10_000);
const Q = envNumber('Q', 200);
const KIND = process.env.KIND ?? 'vector';
const PROF = process.env.PROF ?? 'none';
const DIM = 128;
const gen = searchRowGenerator(DIM);


const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'q-pp-'));
  const db = await connect(dir, { fsync: envNumber('FSYNC', 1) > 0, generationCacheBytes: 2 ** 34 });
  const table = await db.createTable('t', searchSchema(DIM), { primaryKey: 'id', writer: HOLD_IN_MEMTABLE });
  await buildSearchTable(table, gen, N);
  // SETTLE=gc (run with --expose-gc): a full collection and a pause after the build, before any query.
  if (process.env.SETTLE === 'gc') {
    const t0 = performance.now();
    (globalThis as { gc?: () => void }).gc?.();
    console.log(`settle: full GC ${(performance.now() - t0).toFixed(0)} ms`);
    await new Promise((r) => setTimeout(r, 2000));
  }
  const rng = new Rng(77);
  const vq = () => { const v = new Float32Array(DIM); gen.model.sample(rng, v, 0); return v; };
  const tq = () => Array.from({ length: 1 + rng.int(3) }, () => gen.vocab.sample(rng)).join(' ');
  const req = () => (KIND === 'vector' ? { vector: { column: 'vector', query: vq() }, k: 10 } : { text: { column: 'body', query: tq() }, k: 10 });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: envNumber('SAMPLE_US', 100) });
  // Garbage collections, to count those that fall inside a timed query.
  const gcs: { start: number; end: number; kind: number }[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration, kind: (e as unknown as { detail: { kind: number } }).detail?.kind ?? 0 });
  });
  obs.observe({ entryTypes: ['gc'] });
  type Phase = { ms: number[]; windows: [number, number][]; hr: [number, number][]; work: number; followers: number; read: number };
  const phases: Record<string, Phase> = { plain: { ms: [], windows: [], hr: [], work: 0, followers: 0, read: 0 }, put: { ms: [], windows: [], hr: [], work: 0, followers: 0, read: 0 }, idle: { ms: [], windows: [], hr: [], work: 0, followers: 0, read: 0 } };
  const putMs: number[] = [];
  const hrNow = () => Number(process.hrtime.bigint() / 1000n);
  const timed = async (ph: Phase) => {
    const w0 = livenessWork.rowsScanned;
    const f0 = { ...liveCorpusWork };
    const h = hrNow();
    const t = performance.now();
    await table.search(req());
    const e = performance.now();
    ph.hr.push([h, hrNow()]);
    ph.ms.push(e - t);
    ph.windows.push([t, e]);
    ph.work += livenessWork.rowsScanned - w0;
    ph.followers += liveCorpusWork.followers - f0.followers;
    ph.read += liveCorpusWork.rowsRead - f0.rowsRead;
  };
  const prof = async (phase: string, fn: () => Promise<void>) => {
    const on = PROF === 'all' || PROF === 'both' ? PROF === 'all' || phase !== 'idle' : PROF.split(',').includes(phase);
    if (on) await session.post('Profiler.start');
    await fn();
    if (on) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(`/tmp/q/${phase}.cpuprofile`, JSON.stringify(profile));
      await writeFile(`/tmp/q/${phase}.windows.json`, JSON.stringify(phases[phase].hr));
    }
  };
  console.log('settle:', JSON.stringify(await table.settleIndexes()));
  for (let i = 0; i < 20; i++) await table.search(req());
  { const c0 = ivfPqSearchStats.codes, s0 = ivfPqSearchStats.searches; for (let i = 0; i < 20; i++) await table.search(req()); console.log(`codes per search ${((ivfPqSearchStats.codes - c0) / (ivfPqSearchStats.searches - s0)).toFixed(0)}, searches per query ${((ivfPqSearchStats.searches - s0) / 20).toFixed(1)}`); }
  const ROUNDS = envNumber('ROUNDS', 1);
  const per = Math.ceil(Q / ROUNDS);
  const rounds: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const p0 = phases.plain.ms.length;
    const u0 = phases.put.ms.length;
    await prof('plain', async () => {
      for (let i = 0; i < per; i++) await timed(phases.plain);
    });
    await prof('put', async () => {
      for (let i = 0; i < per; i++) {
        const keys = new Set<number>();
        while (keys.size < 20) keys.add(rng.int(N));
        const b = rowsBatch(table.schema, makeRows(gen, rng, [...keys]), 0, 20);
        const t = performance.now();
        await table.put(b);
        putMs.push(performance.now() - t);
        await timed(phases.put);
      }
    });
    // The same wait as a put's, without the put: what idling (a descheduled, cache-cold CPU) costs.
    const i0 = phases.idle.ms.length;
    const waitMs = p50(putMs);
    await prof('idle', async () => {
      for (let i = 0; i < per; i++) {
        await new Promise((r) => setTimeout(r, waitMs));
        await timed(phases.idle);
      }
    });
    const a = p50(phases.plain.ms.slice(p0));
    const b = p50(phases.put.ms.slice(u0));
    const c = p50(phases.idle.ms.slice(i0));
    rounds.push(`${a.toFixed(2)}/${b.toFixed(2)}/${c.toFixed(2)} (+${(b - a).toFixed(2)} / +${(c - a).toFixed(2)})`);
  }
  await new Promise((r) => setTimeout(r, 50));
  obs.disconnect();
  const gcIn = (ph: Phase) => {
    let count = 0;
    let ms = 0;
    let major = 0;
    for (const g of gcs) {
      for (const [s, e] of ph.windows) {
        if (g.end > s && g.start < e) {
          count++;
          ms += Math.min(g.end, e) - Math.max(g.start, s);
          if (g.kind !== 1) major++;
          break;
        }
      }
    }
    const n = ph.windows.length;
    return `${(count / n).toFixed(2)} GCs/query (${major} not scavenges), ${(ms / n).toFixed(3)} ms/query in GC`;
  };
  const { plain, put, idle } = phases;
  console.log(`N=${N} ${KIND}: plain p50 ${p50(plain.ms).toFixed(3)} ms, after put p50 ${p50(put.ms).toFixed(3)} ms (+${(p50(put.ms) - p50(plain.ms)).toFixed(3)}), after an idle wait as long as a put p50 ${p50(idle.ms).toFixed(3)} ms (+${(p50(idle.ms) - p50(plain.ms)).toFixed(3)}), put p50 ${p50(putMs).toFixed(2)} ms; rounds plain/put/idle: ${rounds.join(', ')}`);
  console.log(`  plain: ${gcIn(plain)}, liveness rows ${(plain.work / plain.ms.length).toFixed(0)}/query; put: ${gcIn(put)}, liveness rows ${(put.work / put.ms.length).toFixed(0)}/query`);
  for (const [name, ph] of Object.entries(phases)) if (ph.ms.length) console.log(`  ${name} live corpus stats per query: followers made ${(ph.followers / ph.ms.length).toFixed(2)}, rows read ${(ph.read / ph.ms.length).toFixed(1)}`);
  await db.close();
}
await main();
