/**
 * A generation is loaded with the indexes its first reader needs: after reopening, a scan or a
 * SQL query without a vector or text search reads no full-text or IVF-PQ sidecar (a quarter of a
 * generation's bytes and most of its load time); the first search reads each once, and answers
 * as a process that searched first does. A scan reads generations ahead of the one it streams.
 */
import test from 'ava';
import { connect, isQuiverError, MemoryObjectStore } from '../../src/quiver.js';
import { docs, docsSchema, liveRows, range } from '../helpers/data.js';
import { readSpy } from '../helpers/read-spy.js';

async function stored() {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.createIndex('text', { type: 'fts' });
  await table.createIndex('version', { type: 'scalar' });
  for (let g = 0; g < 3; g++) {
    await table.put(docs(range(g * 1000, g * 1000 + 1000), 1, `gen${g}`));
    await table.flush();
  }
  // Upserts in the MemTable supersede rows of every generation.
  await table.put(docs(range(0, 3000).filter((i) => i % 10 === 0), 2, 'newer'));
  await db.close();
  return mem;
}

const TEXT_QUERY = "SELECT id, version FROM docs WHERE match(text, 'gen1 newer') ORDER BY _score DESC, id LIMIT 20";

test('a scan and a plain SQL query read no full-text sidecar; the first search reads each once and answers as a search-first process does', async (t) => {
  const mem = await stored();
  const sidecars = (reads: string[]) => reads.map((k) => k.split('/').pop()!).filter((f) => f.startsWith('index_')).sort();

  // The answer of a process that searches first.
  const first = await connect('memory://', { store: mem });
  const expected = (await first.sql(TEXT_QUERY)).toArray().map((r) => [Number(r.id), Number(r.version)]);
  t.is(expected.length, 20);
  await first.close();

  const { store, reads } = readSpy(mem);
  const db = await connect('memory://', { store });
  const table = await db.openTable('docs');
  let rows = 0;
  for await (const b of table.scan({ columns: ['id'] })) rows += b.numRows;
  t.is(rows, 3000);
  // db.close flushed the upserts too: four generations.
  const generations = reads.filter((k) => k.endsWith('data.arrow')).length;
  t.is(generations, 4, 'the scan read the generations');
  t.deepEqual(sidecars(reads), [], 'a scan reads no index');
  const each = (file: string) => Array.from({ length: generations }, () => file);

  reads.length = 0;
  const count = await db.sql('SELECT count(*) AS n FROM docs WHERE version = 1');
  t.is(Number(count.toArray()[0].n), 2700);
  t.deepEqual(sidecars(reads), each('index_version_scalar.arrow'), 'a filtered query reads the scalar sidecars only');

  reads.length = 0;
  const got = (await db.sql(TEXT_QUERY)).toArray().map((r) => [Number(r.id), Number(r.version)]);
  t.deepEqual(got, expected);
  t.deepEqual(sidecars(reads), each('index_text_fts.arrow'), 'the search read each generation\'s full-text sidecar once');

  // Everything loaded now: nothing more is read, by any reader.
  reads.length = 0;
  const hits = await table.search({ text: { column: 'text', query: 'gen2' }, k: 5 });
  t.is(hits.numRows, 5);
  t.is(JSON.parse(hits.schema.metadata.get('quiver.search.plan')!).sources.filter((s: { path: string }) => s.path === 'bm25').length, generations, 'every source searched through its index');
  for await (const b of table.scan()) void b;
  t.deepEqual(sidecars(reads), []);
  await db.close();
});

test('a search and a scan started together on a cold table both answer, and each generation file is read once', async (t) => {
  const mem = await stored();
  const { store, reads } = readSpy(mem);
  const db = await connect('memory://', { store });
  const table = await db.openTable('docs');
  const scan = (async () => {
    let n = 0;
    for await (const b of table.scan()) n += b.numRows;
    return n;
  })();
  const [n, hits, count] = await Promise.all([scan, table.search({ text: { column: 'text', query: 'newer' }, k: 400 }), db.sql('SELECT count(*) AS n FROM docs WHERE version = 2')]);
  t.is(n, 3000);
  t.is(hits.numRows, 300, 'every upserted row, found through the index');
  t.is(Number(count.toArray()[0].n), 300);
  // Each generation file once (the region's manifest and WAL are each reader's to read).
  const perFile = new Map<string, number>();
  for (const k of reads.filter((k) => /_gen_\d+\//.test(k))) perFile.set(k, (perFile.get(k) ?? 0) + 1);
  t.true(perFile.size >= 8, `generation files read: ${[...perFile.keys()].join(', ')}`);
  t.deepEqual([...perFile].filter(([, c]) => c > 1), [], 'no generation file read twice');
  await db.close();
});

test('a scan reading ahead gives the same rows, fails on an unreadable generation, and leaves nothing failing when stopped early', async (t) => {
  const mem = await stored();
  const expectedVersion = (id: number) => (id % 10 === 0 ? 2 : 1);
  const db = await connect('memory://', { store: mem });
  const rows = await liveRows(await db.openTable('docs'));
  t.is(rows.size, 3000);
  t.true([...rows].every(([id, v]) => v === expectedVersion(id)), 'newest version of every key, across generations read ahead');
  await db.close();

  // The second newest generation's rows file unreadable (read ahead while the newest streams):
  // the scan that reaches it fails with a data error.
  const files = (await mem.list('docs/')).map((o) => o.key).filter((k) => k.endsWith('/data.arrow'));
  const second = files.sort((a, b) => Number(/_gen_(\d+)\//.exec(b)![1]) - Number(/_gen_(\d+)\//.exec(a)![1]))[1]!;
  await mem.put(second, new TextEncoder().encode('not an arrow file'));
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const broken = await connect('memory://', { store: mem });
    const err = await t.throwsAsync(liveRows(await broken.openTable('docs')));
    t.true(isQuiverError(err, 'data'), String(err));
    t.regex(String(err), /corrupt generation file/);
    await broken.close();
    // Stopped after the first batch: the reads ahead (the broken one among them) settle unseen.
    const early = await connect('memory://', { store: mem });
    for await (const b of (await early.openTable('docs')).scan()) {
      t.true(b.numRows > 0);
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
    await early.close();
    t.deepEqual(unhandled, [], 'no unhandled rejection');
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
