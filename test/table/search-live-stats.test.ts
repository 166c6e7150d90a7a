/**
 * BM25 statistics over live rows after upserts (issue 7): each source keeps, per term, its live
 * document frequency and brings it up to date from the rows cleared since the term was last
 * asked for — so a term asked for rarely catches up over many cleared rows at once. Seeded
 * histories of upserts (into the MemTable, superseding rows of every generation) and flushes,
 * with queries whose terms come and go, checked against a reference BM25 over the live
 * documents: every score equal, at every step. The second test adds what moves the counts onto
 * other paths: puts larger than the live counts follow row by row (counted afresh), null texts,
 * and reopening (generations loaded from their sidecars build their forward index on first use).
 */
import test, { type ExecutionContext } from 'ava';
import { Field, Int64, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, MemoryObjectStore, type Table as QuiverTable } from '../../src/quiver.js';
import { parseFtsQuery } from '../../src/index/fts/query.js';
import { ftsSearchWork } from '../../src/index/fts/inverted-index.js';
import { mulberry32 } from '../helpers/rng.js';
import { RefIndex, refDocs } from '../index/fts/reference.js';

const schema = new Schema([new Field('id', new Int64(), false), new Field('body', new Utf8(), true)]);
const WORDS = Array.from({ length: 30 }, (_, i) => `w${i}`);
const opts = { stem: false, stopWords: false } as const;

/** Every match of `q` and its score, against a reference BM25 over the live documents (null texts are no documents). */
async function checkScores(t: ExecutionContext, table: QuiverTable, live: ReadonlyMap<number, string | null>, q: string, label: string): Promise<void> {
  const ids = [...live.keys()].filter((id) => live.get(id) !== null).sort((a, b) => a - b);
  const ref = new RefIndex(refDocs(0, ids.map((id) => live.get(id)!), opts));
  const want = ref.search(parseFtsQuery(q, opts)).map((h) => ({ id: ids[h.pos], score: h.score }));
  const got = await table.search({ text: { column: 'body', query: q }, k: Math.max(10, live.size) });
  const gotScores = new Map<number, number>();
  const gi = got.getChild('id')!;
  const gs = got.getChild('_score')!;
  for (let i = 0; i < got.numRows; i++) gotScores.set(Number(gi.get(i)), gs.get(i) as number);
  t.is(gotScores.size, want.length, `${label}: matches`);
  const bad = want.filter((w) => !(Math.abs((gotScores.get(w.id) ?? -1) - w.score) <= 1e-4 * Math.max(1, w.score)));
  t.deepEqual(bad.slice(0, 3), [], `${label}: scores`);
}

test('live BM25 statistics stay exact while upserts clear rows between queries of changing terms', async (t) => {
  for (let seed = 1; seed <= 4; seed++) {
    const rng = mulberry32(seed);
    const text = () => Array.from({ length: 1 + Math.floor(rng() * 6) }, () => WORDS[Math.floor(rng() * rng() * WORDS.length)]).join(' ');
    const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
    const table = await db.createTable('d', schema, { primaryKey: 'id' });
    await table.createIndex('body', { type: 'fts', stem: false, stopWords: false });
    const live = new Map<number, string>();
    const put = async (ids: number[]) => {
      const bodies = ids.map(() => text());
      await table.put(new Table({ id: makeVector(BigInt64Array.from(ids.map(BigInt))), body: vectorFromArray(bodies, new Utf8()) }));
      ids.forEach((id, i) => live.set(id, bodies[i]));
    };
    for (let g = 0; g < 3; g++) {
      await put(Array.from({ length: 300 }, (_, i) => g * 300 + i));
      await table.flush();
    }
    let checked = 0;
    for (let step = 0; step < 60; step++) {
      const r = rng();
      if (r < 0.55) await put(Array.from({ length: 1 + Math.floor(rng() * 25) }, () => Math.floor(rng() * 1000)));
      else if (r < 0.6) await table.flush();
      // Terms drawn from a skewed distribution: some asked for often, some after many puts.
      const q = Array.from({ length: 1 + Math.floor(rng() * 3) }, () => WORDS[Math.floor(rng() * rng() * WORDS.length)]).join(' ');
      await checkScores(t, table, live, q, `seed ${seed} step ${step} '${q}'`);
      checked++;
    }
    t.is(checked, 60);
    await db.close();
  }
});

test('live BM25 statistics stay exact across large puts, null texts and a reopen', async (t) => {
  for (let seed = 1; seed <= 2; seed++) {
    const rng = mulberry32(100 + seed);
    const text = () => (rng() < 0.05 ? null : Array.from({ length: 1 + Math.floor(rng() * 6) }, () => WORDS[Math.floor(rng() * rng() * WORDS.length)]).join(' '));
    const store = new MemoryObjectStore();
    const open = () => connect('memory://', { store, writer: { maxWalFlushIntervalMs: 0 } });
    let db = await open();
    let table = await db.createTable('d', schema, { primaryKey: 'id' });
    await table.createIndex('body', { type: 'fts', stem: false, stopWords: false });
    const live = new Map<number, string | null>();
    const put = async (ids: number[]) => {
      const bodies = ids.map(() => text());
      await table.put(new Table({ id: makeVector(BigInt64Array.from(ids.map(BigInt))), body: vectorFromArray(bodies, new Utf8()) }));
      ids.forEach((id, i) => live.set(id, bodies[i]));
    };
    await put(Array.from({ length: 2000 }, (_, i) => i));
    await table.flush();
    for (let step = 0; step < 24; step++) {
      const r = rng();
      if (r < 0.15) await put(Array.from({ length: 5000 }, () => Math.floor(rng() * 12_000))); // > the row-by-row limit
      else if (r < 0.65) await put(Array.from({ length: 1 + Math.floor(rng() * 30) }, () => Math.floor(rng() * 12_000)));
      else if (r < 0.75) await table.flush();
      if (step === 12) {
        await table.flush();
        await db.close();
        db = await open();
        table = await db.openTable('d');
      }
      const q = Array.from({ length: 1 + Math.floor(rng() * 3) }, () => WORDS[Math.floor(rng() * rng() * WORDS.length)]).join(' ');
      await checkScores(t, table, live, q, `seed ${seed} step ${step} '${q}'`);
    }
    await db.close();
  }
});

// Serial: the search counter is process-wide, and serial tests run before the concurrent ones.
test.serial('a text search searches only the sources whose live rows hold a query term, and finds every match', async (t) => {
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('d', schema, { primaryKey: 'id' });
  await table.createIndex('body', { type: 'fts', stem: false, stopWords: false });
  const live = new Map<number, string>();
  const put = async (ids: number[], body: (id: number) => string) => {
    await table.put(new Table({ id: makeVector(BigInt64Array.from(ids.map(BigInt))), body: vectorFromArray(ids.map(body), new Utf8()) }));
    for (const id of ids) live.set(id, body(id));
  };
  // Four generations, each with a word of its own (g0 … g3) beside a word they all share.
  for (let g = 0; g < 4; g++) {
    await put(Array.from({ length: 50 }, (_, i) => g * 50 + i), (id) => `common g${g} n${id % 7}`);
    await table.flush();
  }
  // Every row holding g1 is upserted into the MemTable without it: generation 1 keeps the word
  // only in dead rows.
  await put(Array.from({ length: 50 }, (_, i) => 50 + i), (id) => `common moved n${id % 7}`);
  const searches = async (q: string) => {
    const before = ftsSearchWork.searches;
    await checkScores(t, table, live, q, `'${q}'`);
    return ftsSearchWork.searches - before;
  };
  t.is(await searches('g2'), 1, 'only the generation holding g2');
  t.is(await searches('g0 g3'), 2);
  t.is(await searches('g1'), 0, 'no live row holds g1');
  t.is(await searches('g1 moved'), 1, 'only the MemTable');
  t.is(await searches('common'), 4, 'generations 0, 2, 3 and the MemTable: generation 1 holds no live row');
  t.is(await searches('"common g2"'), 4, 'a phrase: the sources holding any of its words');
  t.is(await searches('absent'), 0);
  await db.close();
});
