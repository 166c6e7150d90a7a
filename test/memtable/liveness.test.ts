/**
 * regionLiveness against a brute-force reference, over random histories of growing MemTables,
 * freezes, flushes, deletes and generations reloaded with a fresh cache — including older
 * snapshots that run after the caches moved on (they must get their own, correct answer and
 * leave the caches intact).
 */
import test from 'ava';
import { Bool, Field, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { rowOffsetsOf } from '../../src/memtable/batch-offsets.js';
import { type LivenessCache, livenessWork, regionLiveness } from '../../src/memtable/liveness.js';
import { TableSchema } from '../../src/schema/table-schema.js';
import { docs, docsSchema } from '../helpers/data.js';
import { mulberry32 } from '../helpers/rng.js';

const schema = new TableSchema(docsSchema, ['id']);
const keyIdx = schema.keyIndexes;
const tomb = schema.tombstoneIndex;

/** A source: its batches so far, each batch's (key, tombstone) rows, and one cache object. */
interface Src {
  batches: RecordBatch[];
  rows: { key: number; dead: boolean }[];
  cache: LivenessCache;
}

function batchOf(ids: number[], deleted: boolean): RecordBatch[] {
  const [b] = schema.normalize(docs(ids, 1));
  if (!deleted) return [b];
  // The same rows as tombstones (_tombstone = true).
  const children = b.data.children.slice();
  children[tomb] = makeData({ type: children[tomb].type, length: ids.length, nullCount: 0, data: new Uint8Array(Math.ceil(ids.length / 8)).fill(0xff) } as never);
  return [new RecordBatch(b.schema, makeData({ type: new Struct(b.schema.fields), length: ids.length, nullCount: 0, children }))];
}

/** Reference: newest first, a row is live iff last of its key in its source, not a tombstone, and no newer source has the key. */
function reference(views: { rows: { key: number; dead: boolean }[] }[]): number[][] {
  const newerKeys = new Set<number>();
  return views.map((v) => {
    const last = new Map<number, number>();
    v.rows.forEach((r, i) => last.set(r.key, i));
    const live = v.rows.map((r, i) => (last.get(r.key) === i && !r.dead && !newerKeys.has(r.key) ? 1 : 0));
    for (const r of v.rows) newerKeys.add(r.key);
    return live;
  });
}

test('incremental liveness equals the reference, also for older snapshots running late', (t) => {
  const rnd = mulberry32(5);
  for (let round = 0; round < 30; round++) {
    // Newest first: an active MemTable, up to two frozen ones, up to three generations.
    const mems: Src[] = [{ batches: [], rows: [], cache: {} }];
    const gens: Src[] = [];
    const slot = {};
    let sigCounter = 0;
    let signature = 'g0';
    for (let step = 0; step < 40; step++) {
      const r = rnd();
      if (r < 0.7) {
        const ids = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => Math.floor(rnd() * 30));
        const deleted = rnd() < 0.2;
        mems[0].batches.push(...batchOf(ids, deleted));
        mems[0].rows.push(...ids.map((key) => ({ key, dead: deleted })));
      } else if (r < 0.85 && mems[0].rows.length > 0 && mems.length < 3) {
        mems.unshift({ batches: [], rows: [], cache: {} }); // freeze: a new active MemTable
      } else if (mems.length > 1) {
        // Flush the oldest MemTable into a generation (deduplicated like a real flush).
        const m = mems.pop()!;
        const last = new Map<number, number>();
        m.rows.forEach((row, i) => last.set(row.key, i));
        const keep = m.rows.filter((_, i) => [...last.values()].includes(i));
        const g: Src = { batches: [], rows: [], cache: {} };
        for (const row of keep) {
          g.batches.push(...batchOf([row.key], row.dead));
          g.rows.push(row);
        }
        gens.unshift(g);
        if (gens.length > 3) gens.pop();
        signature = `g${++sigCounter}`;
      }
      // A generation evicted from the cache and loaded again: a fresh cache object, so its
      // liveness starts over (every MemTable row applied again) while newer sources continue.
      if (gens.length > 1 && rnd() < 0.15) gens[1 + Math.floor(rnd() * (gens.length - 1))]!.cache = {};
      const all = [...mems, ...gens];
      const check = (views: { batches: RecordBatch[]; rowCount: number; cache: LivenessCache; rows: Src['rows'] }[], what: string) => {
        const got = regionLiveness(views.map((v) => ({ ...v, rowOffsets: rowOffsetsOf(v.batches) })), gens.length, keyIdx, tomb, slot, signature);
        const want = reference(views);
        got.forEach((g, i) => {
          t.deepEqual(Array.from(g.live), want[i], `round ${round} step ${step} ${what} source ${i}`);
          t.is(g.liveCount, want[i].reduce((a, b) => a + b, 0));
        });
      };
      // An older snapshot of the active MemTable (fewer rows) after the caches saw all of them.
      check(all.map((s) => ({ batches: s.batches, rowCount: s.rows.length, cache: s.cache, rows: s.rows })), 'current');
      if (mems[0].rows.length > 2) {
        const cut = Math.floor(rnd() * mems[0].rows.length);
        let n = 0;
        const bs: RecordBatch[] = [];
        for (const b of mems[0].batches) {
          if (n + b.numRows > cut) break;
          bs.push(b);
          n += b.numRows;
        }
        const older = [{ batches: bs, rowCount: n, cache: mems[0].cache, rows: mems[0].rows.slice(0, n) }, ...all.slice(1).map((s) => ({ batches: s.batches, rowCount: s.rows.length, cache: s.cache, rows: s.rows }))];
        check(older, 'older snapshot');
        check(all.map((s) => ({ batches: s.batches, rowCount: s.rows.length, cache: s.cache, rows: s.rows })), 'current again');
      }
    }
  }
});

test('64-bit keys across the whole range supersede exactly their own key (numbers inside ±2^53, bigints outside)', (t) => {
  const keys = [-(2n ** 63n), -(2n ** 53n) - 1n, -(2n ** 53n), -(2n ** 53n) + 1n, -(2n ** 32n), -1n, 0n, 1n, 2n ** 31n, 2n ** 32n + 5n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n];
  const schema64 = new Schema([new Field('id', new Int64(), false), new Field('_tombstone', new Bool(), false)]);
  const batch = (ids: bigint[]) =>
    new RecordBatch(
      schema64,
      makeData({
        type: new Struct(schema64.fields),
        length: ids.length,
        nullCount: 0,
        children: [makeData({ type: new Int64(), length: ids.length, nullCount: 0, data: BigInt64Array.from(ids) }), makeData({ type: new Bool(), length: ids.length, nullCount: 0, data: new Uint8Array(Math.ceil(ids.length / 8)) })],
      }),
    );
  // Older source: every key; newer source: every other key. Exactly the others stay live.
  const older = { batches: [batch(keys)], rowOffsets: [0], rowCount: keys.length, cache: {} as LivenessCache };
  const newerKeys = keys.filter((_, i) => i % 2 === 0);
  const newer = { batches: [batch(newerKeys)], rowOffsets: [0], rowCount: newerKeys.length, cache: {} as LivenessCache };
  const [n, o] = regionLiveness([newer, older], 0, [0], 1, {}, '');
  t.deepEqual(Array.from(n.live), newerKeys.map(() => 1));
  t.deepEqual(Array.from(o.live), keys.map((_, i) => (i % 2 === 0 ? 0 : 1)));
  // Within one source, a later row of the same key supersedes the earlier one, for every key.
  const twice = { batches: [batch(keys), batch(keys)], rowOffsets: [0, keys.length], rowCount: 2 * keys.length, cache: {} as LivenessCache };
  const [w] = regionLiveness([twice], 0, [0], 1, {}, '');
  t.deepEqual(Array.from(w.live), [...keys.map(() => 0), ...keys.map(() => 1)]);
});

test("a MemTable's new keys are looked up only down to the newest older source holding them", (t) => {
  // Ten generations of ten keys each (newest first: generation g holds 10g .. 10g + 9), a MemTable.
  const gens: Src[] = Array.from({ length: 10 }, (_, g) => {
    const ids = Array.from({ length: 10 }, (_, i) => 10 * g + i);
    return { batches: batchOf(ids, false), rows: ids.map((key) => ({ key, dead: false })), cache: {} };
  });
  const mem: Src = { batches: [], rows: [], cache: {} };
  const slot = {};
  const lookups = (ids: number[], what: string): number => {
    mem.batches.push(...batchOf(ids, false));
    mem.rows.push(...ids.map((key) => ({ key, dead: false })));
    const views = [mem, ...gens].filter((s) => s.rows.length > 0);
    const before = livenessWork.memtableKeyLookups;
    const got = regionLiveness(
      views.map((v) => ({ batches: v.batches, rowOffsets: rowOffsetsOf(v.batches), rowCount: v.rows.length, cache: v.cache })),
      gens.length,
      keyIdx,
      tomb,
      slot,
      'ten',
    );
    const want = reference(views);
    got.forEach((g, i) => t.deepEqual(Array.from(g.live), want[i], `${what}: source ${i}`));
    return livenessWork.memtableKeyLookups - before;
  };
  lookups([1000], 'first MemTable row'); // the caches are built (every older source looks the key up)
  t.is(lookups([0, 1, 2, 3, 4], 'keys of the newest generation'), 5);
  t.is(lookups([95, 96], 'keys of the oldest generation'), 2 * 10);
  t.is(lookups([55], 'a key of the sixth generation'), 6);
  t.is(lookups([2000, 2001], 'new keys'), 2 * 10);
});
