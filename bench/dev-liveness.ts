/**
 * Dev harness (issue 7): `regionLiveness` alone over ten 100 000-row generations and a MemTable
 * of 50 000 upserted keys, per call p50/mean with nothing changed (none), after a 20-row put
 * (put), after a 3 ms idle wait (sleep), and both. MODES=none,put,sleep,put+sleep Q=400
 */
import { Bool, Field, Int32, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { regionLiveness, type LivenessCache } from '../src/memtable/liveness.js';
import { rowOffsetsOf } from '../src/memtable/batch-offsets.js';
const schema = new Schema([new Field('id', new Int32(), false), new Field('_tombstone', new Bool(), false)]);
const batch = (ids: Int32Array) => new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: ids.length, nullCount: 0, children: [makeData({ type: new Int32(), length: ids.length, nullCount: 0, data: ids }), makeData({ type: new Bool(), length: ids.length, nullCount: 0, data: new Uint8Array(Math.ceil(ids.length / 8)) })] }));
const G = 10, PER = 100_000;
const gens = Array.from({ length: G }, (_, g) => { const ids = Int32Array.from({ length: PER }, (_, i) => g * PER + i); const batches = [] as RecordBatch[]; for (let s = 0; s < PER; s += 5000) batches.push(batch(ids.subarray(s, s + 5000))); return { batches, rowOffsets: rowOffsetsOf(batches), rowCount: PER, cache: {} as LivenessCache }; }).reverse();
const mem = { batches: [] as RecordBatch[], rowOffsets: [] as number[], rowCount: 0, cache: {} as LivenessCache };
const addMem = (ids: Int32Array) => { mem.rowOffsets.push(mem.rowCount); mem.batches.push(batch(ids)); mem.rowCount += ids.length; };
for (let s = 0; s < 50_000; s += 5000) addMem(Int32Array.from({ length: 5000 }, () => Math.floor(Math.random() * G * PER)));
const slot = {};
const run = () => regionLiveness([{ ...mem, batches: mem.batches.slice() }, ...gens], G, [0], 1, slot, 'sig');
run();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
for (const mode of (process.env.MODES ?? 'none,put,sleep,put+sleep').split(',')) {
  const ts: number[] = [];
  for (let q = 0; q < Number(process.env.Q ?? 400); q++) {
    if (mode.includes('sleep')) await sleep(3);
    if (mode.includes('put')) addMem(Int32Array.from({ length: 20 }, () => Math.floor(Math.random() * G * PER)));
    const t = process.hrtime.bigint();
    run();
    ts.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  ts.sort((a, b) => a - b);
  console.log(`${mode}: p50 ${ts[200].toFixed(1)} us, mean ${(ts.reduce((a, b) => a + b) / ts.length).toFixed(1)} us`);
}
