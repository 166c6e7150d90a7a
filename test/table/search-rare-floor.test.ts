/**
 * BM25 over many sources with a first pass over the rarest term's documents (issue 7,
 * `rareTermFloor` in src/table/search.ts): a rare term split over generations leaves each
 * source a few of its documents, so without the pass every source after the first scans the
 * frequent terms' postings. Seeded tables of several generations and a MemTable with upserts,
 * queries mixing a rare word with frequent ones (with and without a filter and an excluded
 * word), checked against a reference BM25 over the live documents; the same queries with the
 * pass switched off give the same results and scan more postings.
 */
import test from 'ava';
import { Field, Int32, Int64, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { parseFtsQuery } from '../../src/index/fts/query.js';
import { ftsSearchWork } from '../../src/index/fts/inverted-index.js';
import { rareTermWork, setRareTermFloor } from '../../src/table/search.js';
import { mulberry32 } from '../helpers/rng.js';
import { RefIndex, refDocs, topK } from '../index/fts/reference.js';

const schema = new Schema([new Field('id', new Int64(), false), new Field('body', new Utf8(), true), new Field('year', new Int32(), false)]);
const opts = { stem: false, stopWords: false } as const;
const FREQUENT = ['alpha', 'beta', 'gamma'];
const RARE = ['rarex', 'rarey', 'rarez'];
const FILLER = Array.from({ length: 40 }, (_, i) => `f${i}`);
const K = 10;

test('a first pass over the rarest term sets a floor: same top-k as a reference BM25, fewer postings scanned', async (t) => {
  t.teardown(() => void setRareTermFloor(true));
  let scannedOn = 0;
  let scannedOff = 0;
  let floors = 0;
  let compared = 0;
  for (let seed = 1; seed <= 3; seed++) {
    const rng = mulberry32(seed);
    const pick = (xs: readonly string[]) => xs[Math.floor(rng() * xs.length)]!;
    // Most documents hold a frequent word; a rare word is in ~1 % (a few per generation).
    const text = () => {
      const words = Array.from({ length: 3 + Math.floor(rng() * 8) }, () => (rng() < 0.45 ? pick(FREQUENT) : pick(FILLER)));
      if (rng() < 0.012) words.splice(Math.floor(rng() * words.length), 0, pick(RARE));
      return words.join(' ');
    };
    const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
    const table = await db.createTable('d', schema, { primaryKey: 'id' });
    await table.createIndex('body', { type: 'fts', stem: false, stopWords: false });
    const live = new Map<number, { body: string; year: number }>();
    const put = async (ids: number[]) => {
      const rows = ids.map(() => ({ body: text(), year: 2000 + Math.floor(rng() * 25) }));
      await table.put(new Table({ id: makeVector(BigInt64Array.from(ids.map(BigInt))), body: vectorFromArray(rows.map((r) => r.body), new Utf8()), year: makeVector(Int32Array.from(rows.map((r) => r.year))) }));
      ids.forEach((id, i) => live.set(id, rows[i]!));
    };
    for (let g = 0; g < 6; g++) {
      await put(Array.from({ length: 500 }, (_, i) => g * 500 + i));
      await table.flush();
    }
    // Upserts in the MemTable supersede rows of every generation.
    await put(Array.from({ length: 200 }, () => Math.floor(rng() * 3000)));
    const ids = [...live.keys()].sort((a, b) => a - b);
    const ref = new RefIndex(refDocs(0, ids.map((id) => live.get(id)!.body), opts));
    for (let q = 0; q < 12; q++) {
      const words = [pick(RARE), ...Array.from({ length: 1 + Math.floor(rng() * 2) }, () => pick(FREQUENT))];
      const exclude = q % 4 === 3 ? ` -${pick(FILLER)}` : '';
      const query = words.join(' ') + exclude;
      const filtered = q % 3 === 2;
      const allowed = filtered ? (pos: number) => live.get(ids[pos]!)!.year >= 2010 : undefined;
      const want = topK(ref.search(parseFtsQuery(query, opts)), K, allowed).map((h) => ({ id: ids[h.pos]!, score: h.score }));
      const run = async (on: boolean) => {
        setRareTermFloor(on);
        const scanned0 = ftsSearchWork.touchScanned + ftsSearchWork.prunedScored;
        const floors0 = rareTermWork.floors;
        const r = await table.search({ text: { column: 'body', query }, k: K, ...(filtered ? { filter: 'year >= 2010' } : {}) });
        const scanned = ftsSearchWork.touchScanned + ftsSearchWork.prunedScored - scanned0;
        const idCol = r.getChild('id')!;
        const scoreCol = r.getChild('_score')!;
        const got = Array.from({ length: r.numRows }, (_, i) => ({ id: Number(idCol.get(i)), score: scoreCol.get(i) as number }));
        return { got, scanned, floored: rareTermWork.floors - floors0 };
      };
      const on = await run(true);
      const off = await run(false);
      const label = `seed ${seed} '${query}'${filtered ? ' + year >= 2010' : ''}`;
      for (const [name, res] of [['with the pass', on], ['without', off]] as const) {
        t.is(res.got.length, want.length, `${label} ${name}: hits`);
        t.true(
          res.got.every((h, i) => Math.abs(h.score - want[i]!.score) <= 1e-4 * Math.max(1, want[i]!.score)),
          `${label} ${name}: scores ${JSON.stringify(res.got.map((h) => h.score))} vs ${JSON.stringify(want.map((h) => h.score))}`,
        );
        // Ids where no tie with the k-th score makes the choice arbitrary.
        const kth = want[want.length - 1]?.score ?? 0;
        const sure = (hs: { id: number; score: number }[]) => hs.filter((h) => h.score > kth * (1 + 1e-4)).map((h) => h.id).sort((a, b) => a - b);
        t.deepEqual(sure(res.got), sure(want), `${label} ${name}: ids`);
      }
      floors += on.floored;
      scannedOn += on.scanned;
      scannedOff += off.scanned;
      compared++;
    }
    await db.close();
  }
  t.log(`floors ${floors} of ${compared}; postings scanned ${scannedOn} with the pass, ${scannedOff} without`);
  t.is(compared, 36);
  t.true(floors >= 18, `the pass set a floor for most queries (${floors} of ${compared})`);
  t.true(scannedOn < scannedOff, `postings scanned: ${scannedOn} with the pass, ${scannedOff} without`);
});
