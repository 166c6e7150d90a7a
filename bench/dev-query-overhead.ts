/**
 * Dev harness (issue 7): the fixed cost of a `table.search` around the index — snapshot, ownership
 * check, liveness, materializing — on a table small enough that the index costs next to nothing.
 * Knobs: ROWS=1000 Q=3000 KIND=key|text|vector GENS=10|1 (generations the rows are flushed into)
 * PROF=1 (CPU profile of the timed queries to /tmp/q/overhead.cpuprofile)
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { connect } from '../src/database.js';
import { envNumber } from './env.js';
import { buildSearchTable, Rng, searchRowGenerator, searchSchema } from './lib/data.js';
import { HOLD_IN_MEMTABLE } from './lib/quiver.js';

const ROWS = envNumber('ROWS', 1000);
const Q = envNumber('Q', 3000);
const KIND = process.env.KIND ?? 'key';
const DIM = 128;

const dir = await mkdtemp(path.join(os.tmpdir(), 'q-qo-'));
const db = await connect(dir, {});
const table = await db.createTable('t', searchSchema(DIM), { primaryKey: 'id', writer: HOLD_IN_MEMTABLE });
const gen = searchRowGenerator(DIM);
await buildSearchTable(table, gen, ROWS, undefined, envNumber('GENS', 10) === 1 ? 1 : 10);
await table.settleIndexes();
const rng = new Rng(5);
const req = () => {
  if (KIND === 'text') return { text: { column: 'body', query: gen.vocab.sample(rng) }, k: 10 };
  if (KIND === 'vector') {
    const v = new Float32Array(DIM);
    gen.model.sample(rng, v, 0);
    return { vector: { column: 'vector', query: v }, k: 10 };
  }
  return { key: { eq: rng.int(ROWS) }, k: 10 };
};
for (let i = 0; i < 500; i++) await table.search(req());
const ms: number[] = [];
const session = process.env.PROF === '1' ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 50 });
  await session.post('Profiler.start');
}
const cpu0 = process.cpuUsage();
for (let i = 0; i < Q; i++) {
  const r = req();
  const t = performance.now();
  await table.search(r);
  ms.push(performance.now() - t);
}
const cpu = process.cpuUsage(cpu0);
if (session) {
  const { profile } = await session.post('Profiler.stop');
  await mkdir('/tmp/q', { recursive: true });
  await writeFile('/tmp/q/overhead.cpuprofile', JSON.stringify(profile));
}
ms.sort((a, b) => a - b);
console.log(`${KIND} ROWS=${ROWS}: p50 ${(ms[Q >> 1] * 1000).toFixed(0)} µs, p10 ${(ms[Math.floor(Q / 10)] * 1000).toFixed(0)} µs, cpu ${((cpu.user + cpu.system) / Q).toFixed(0)} µs/query`);
await db.close();
