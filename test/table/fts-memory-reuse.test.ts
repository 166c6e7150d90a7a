/**
 * Full-text memory that goes round at the table level (slab-allocator.ts, `sealSteps`): rounds
 * of 15 000 documents (new keys, then upserts of old ones), each flushed — a flush packs a
 * MemTable's index into pooled chunks and gives its old chunks back — into a generation cache of
 * 1 MiB (generations are evicted, their indexes collected and their chunks reused by the next
 * MemTable). Every match and score equals a table that never flushed.
 */
import test from 'ava';
import { Field, Int32, Schema, tableFromArrays, Utf8 } from 'apache-arrow';
import v8 from 'node:v8';
import vm from 'node:vm';
import { connect } from '../../src/database.js';
import { ftsSealCounts } from '../../src/index/fts/inverted-index.js';
import { slabChunkStats } from '../../src/index/fts/slab-allocator.js';
import { mulberry32, syntheticDocs, zipf } from '../index/fts/synthetic.js';

const schema = new Schema([new Field('id', new Int32(), false), new Field('body', new Utf8(), true)]);

test('flushed generations in reused, packed chunks answer like a table that never flushed', async (t) => {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const Z = zipf(5000, 1.0, mulberry32(3));
  const open = async (flush: boolean) => {
    const db = await connect('memory://', { ...(flush ? { generationCacheBytes: 1024 * 1024 } : {}), writer: { maxWalFlushIntervalMs: 2 } });
    const table = await db.createTable('docs', schema, { primaryKey: 'id' });
    await table.createIndex('body', { type: 'fts' });
    return { db, table, flush };
  };
  const tables = [await open(true), await open(false)];
  const all = async (table: (typeof tables)[0]['table'], q: string) => {
    const r = await table.search({ text: { column: 'body', query: q }, k: 100_000 });
    const ids = Array.from(r.getChild('id')!, Number);
    const s = Array.from(r.getChild('_score')!, Number);
    return ids.map((id, i) => [id, Math.round(s[i]! * 1e6) / 1e6]).sort((a, b) => a[0]! - b[0]!);
  };
  const packed0 = ftsSealCounts.packed;
  const reused0 = slabChunkStats.reused;
  for (let round = 0; round < 3; round++) {
    const docs = syntheticDocs(15_000, Z, mulberry32(100 + round), 20, 60);
    // Even rounds: new keys; odd rounds: upserts of keys of earlier rounds.
    const ids = Int32Array.from({ length: docs.length }, (_, i) => (round % 2 === 0 ? round * 15_000 + i : i * 2));
    for (const { table, flush } of tables) {
      for (let s = 0; s < docs.length; s += 5000) await table.put(tableFromArrays({ id: ids.slice(s, s + 5000), body: docs.slice(s, s + 5000) }));
      if (flush) await table.flush();
    }
    gc();
    await new Promise((r) => setTimeout(r, 20));
    // Terms and phrases (token positions) of many terms: any left in a chunk that went back would show.
    const phrases = docs.slice(0, 12).map((d) => `"${d.split(' ').slice(3, 5).join(' ')}"`);
    for (const q of [Z.vocab[0]!, `${Z.vocab[3]} ${Z.vocab[40]}`, `${Z.vocab[900]} ${Z.vocab[2500]}`, ...phrases]) {
      const [a, b] = [await all(tables[0]!.table, q), await all(tables[1]!.table, q)];
      t.true(a.length > 0, q);
      t.deepEqual(a, b, `round ${round}: ${q}`);
    }
  }
  t.is(ftsSealCounts.packed - packed0, 3, 'every flush packed its index into chunks');
  t.true(slabChunkStats.reused > reused0, 'MemTables took chunks other indexes gave back');
  for (const { db } of tables) await db.close();
});
