/**
 * Puts indexed in slices (writer setting `indexSliceRows`, issue 7): a WAL entry larger than the
 * slice is indexed a slice at a time with event-loop turns between, full-text tokens held back
 * until the last slice. Seeded histories of concurrent puts of random sizes (upserts included)
 * with tiny slice sizes, searches issued while puts are in flight: every acknowledged put is
 * found through the full-text index at once (its rows, newest version), nothing unacknowledged
 * is half-visible, and at the end every BM25 score equals a reference over the live rows.
 * Bad settings are refused before anything is written.
 */
import test from 'ava';
import { Field, Int64, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, isQuiverError, MemoryObjectStore } from '../../src/quiver.js';
import { parseFtsQuery } from '../../src/index/fts/query.js';
import { mulberry32 } from '../helpers/rng.js';
import { RefIndex, refDocs } from '../index/fts/reference.js';

const schema = new Schema([new Field('id', new Int64(), false), new Field('body', new Utf8(), true)]);
const WORDS = Array.from({ length: 20 }, (_, i) => `w${i}`);
const opts = { stem: false, stopWords: false } as const;

test('puts indexed in slices are searchable as soon as acknowledged, and score like the reference', async (t) => {
  for (const [seed, slice] of [[1, 1], [2, 7], [3, 64]] as const) {
    const rng = mulberry32(seed);
    const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 1, indexSliceRows: slice } });
    const table = await db.createTable('d', schema, { primaryKey: 'id' });
    await table.createIndex('body', { type: 'fts', stem: false, stopWords: false });
    /** id → [put number, text] of the newest acknowledged version. */
    const live = new Map<number, [number, string]>();
    const acked: number[] = [];
    const inFlight = new Set<Promise<void>>();
    let bad = 0;
    for (let n = 0; n < 40; n++) {
      const size = rng() < 0.3 ? 200 + Math.floor(rng() * 500) : 1 + Math.floor(rng() * 20);
      const ids = [...new Set(Array.from({ length: size }, () => Math.floor(rng() * 1500)))];
      const bodies = ids.map(() => [`m${n}`, ...Array.from({ length: Math.floor(rng() * 5) }, () => WORDS[Math.floor(rng() * rng() * WORDS.length)])].join(' '));
      const p = table.put(new Table({ id: makeVector(BigInt64Array.from(ids.map(BigInt))), body: vectorFromArray(bodies, new Utf8()) })).then(() => {
        ids.forEach((id, i) => live.set(id, [n, bodies[i]!]));
        acked.push(n);
        inFlight.delete(p);
      });
      inFlight.add(p);
      if (inFlight.size >= 4 || rng() < 0.3) await Promise.race(inFlight);
      if (rng() < 0.5 && acked.length > 0) {
        // An acknowledged put, searched while others are in flight: exactly its live rows.
        const k = acked[Math.floor(rng() * acked.length)]!;
        const snapshot = [...live].filter(([, [m]]) => m === k).map(([id]) => id).sort((a, b) => a - b);
        const got = await table.search({ text: { column: 'body', query: `m${k}` }, k: 2000 });
        const ids = Array.from(got.getChild('id')!.toArray() as BigInt64Array, Number).sort((a, b) => a - b);
        // Puts acknowledged while the search ran may have replaced some rows since the snapshot.
        const now = new Set([...live].filter(([, [m]]) => m === k).map(([id]) => id));
        if (ids.some((id) => !snapshot.includes(id) && !now.has(id)) || snapshot.some((id) => now.has(id) && !ids.includes(id))) bad++;
      }
    }
    await Promise.all(inFlight);
    t.is(bad, 0, `seed ${seed}: searches that missed or over-reported an acknowledged put`);
    // Every score, against BM25 over the live rows.
    const ids = [...live.keys()].sort((a, b) => a - b);
    const ref = new RefIndex(refDocs(0, ids.map((id) => live.get(id)![1]), opts));
    for (const q of ['w0', 'w3 w1', 'w7 m5', 'w19']) {
      const want = ref.search(parseFtsQuery(q, opts));
      const got = await table.search({ text: { column: 'body', query: q }, k: ids.length });
      const scores = new Map<number, number>();
      for (let i = 0; i < got.numRows; i++) scores.set(Number(got.getChild('id')!.get(i)), got.getChild('_score')!.get(i) as number);
      t.is(scores.size, want.length, `seed ${seed}, ${q}: matches`);
      t.deepEqual(want.filter((h) => !(Math.abs((scores.get(ids[h.pos]!) ?? -1) - h.score) <= 1e-4 * Math.max(1, h.score))).slice(0, 3), [], `seed ${seed}, ${q}: scores`);
    }
    await db.close();
  }
});

test('indexSliceRows must be a positive number: refused before anything is written', async (t) => {
  for (const bad of [0, -5, Number.NaN, Infinity]) {
    const store = new MemoryObjectStore();
    const err = await connect('memory://', { store, writer: { indexSliceRows: bad } }).then(
      async (db) => {
        const table = await db.createTable('d', schema, { primaryKey: 'id' });
        await table.put(new Table({ id: makeVector(BigInt64Array.from([1n])), body: vectorFromArray(['a'], new Utf8()) }));
        return undefined;
      },
      (e: unknown) => e,
    );
    t.true(isQuiverError(err, 'invalid'), `indexSliceRows ${bad}: ${String(err)}`);
    t.true(/indexSliceRows/.test(String((err as Error)?.message)), 'the message names the setting');
    t.deepEqual((await store.list('')).filter((o) => o.key.includes('_wal') || o.key.includes('gen')), [], 'nothing written');
  }
});
