/**
 * The generation cache counts what a loaded generation really holds: rows, indexes (FTS postings
 * here), and a reserve for readers' liveness state — not only the record batches — and evicts by
 * that total.
 */
import test from 'ava';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { batchBytes } from '../../src/memtable/batch-store.js';
import { GenerationCache, generationBytes } from '../../src/region/generation-cache.js';
import { RegionLayout } from '../../src/wal/region-layout.js';
import { estimateBytes, SIZED_PARTS } from '../../src/util/memory-estimate.js';
import { InvertedIndex } from '../../src/index/fts/inverted-index.js';
import { docs, docsSchema, range } from '../helpers/data.js';
import type { IndexingContext } from '../../src/index/indexing.js';
import type { ObjectStore } from '../../src/storage/object-store.js';
import { readSpy } from '../helpers/read-spy.js';

/** A table with a full-text index and `n` (two) flushed generations of `rows` rows each, and the generations' folders. */
async function twoGenerations(rows: number, n = 2) {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.createIndex('text', { type: 'fts' });
  for (let g = 0; g < n; g++) {
    await table.put(docs(range(g * rows, g * rows + rows), 1));
    await table.flush();
  }
  const ctx = (table as unknown as { ctx: { store: ObjectStore; indexing: IndexingContext } }).ctx;
  const regionId = Object.keys(await table.writerStats())[0];
  const layout = new RegionLayout('docs', regionId);
  const folders = [...new Set((await mem.list(`docs/_mem_wal/${regionId}/`)).map((o) => /([0-9a-f]{8}_gen_\d+)/.exec(o.key)?.[1]).filter((f): f is string => !!f))];
  return { db, table, ctx, layout, folders };
}

test('estimateBytes counts a buffer once, skips excluded objects and buffers, counts map entries', (t) => {
  const buf = new Float32Array(1000);
  const a = { x: buf, y: buf.subarray(10), m: new Map([['k', 1]]) };
  const n = estimateBytes(a);
  t.true(n >= 4000 && n < 4400, String(n));
  t.true(estimateBytes(a, [buf.buffer]) < 400);
  t.true(estimateBytes({ big: new Uint8Array(1 << 20), small: 1 }, [a]) >= 1 << 20);
});

test('an inverted index sizes its dictionary in bulk: within a few % of walking it, and a view-only buffer still counted', (t) => {
  const words = Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}x${'y'.repeat(i % 7)}`);
  const texts = Array.from({ length: 4000 }, (_, r) => Array.from({ length: 12 }, (_, j) => words[(r * 31 + j * j * 17) % words.length]).join(' '));
  const memtable = new InvertedIndex({ stem: false, stopWords: false });
  memtable.add(0, texts);
  const remapped = memtable.remapped(Int32Array.from({ length: texts.length }, (_, i) => (i % 9 === 0 ? -1 : i)));
  const loaded = InvertedIndex.fromArrow(remapped.toArrow(), { stem: false, stopWords: false });
  for (const [name, index] of [['memtable', memtable], ['remapped', remapped], ['fromArrow', loaded]] as const) {
    t.is(typeof (index as unknown as Record<symbol, unknown>)[SIZED_PARTS], 'function');
    // A plain copy of the fields has no bulk sizer: the generic walk (which counts each term
    // string twice, as map key and array element).
    const walked = estimateBytes({ ...index });
    const sized = estimateBytes(index);
    t.true(Math.abs(sized - walked) / walked < 0.05, `${name}: sized ${sized} vs walked ${walked}`);
  }
  // Views read from a buffer nothing else holds: the buffer is counted through them.
  const index = new InvertedIndex({ stem: false, stopWords: false });
  index.add(0, ['a b c']);
  const before = estimateBytes(index);
  const alone = new Uint32Array(1 << 16);
  (index as unknown as { post: Uint32Array[] }).post.push(alone.subarray(0, 4), alone.subarray(4, 8));
  t.true(estimateBytes(index) >= before + alone.byteLength, 'the buffer behind the views is charged');
  t.true(estimateBytes(index, [alone.buffer]) < before + 1000, 'and left out when shared');
});

test('a loaded generation is charged for its indexes, and the cache evicts by that charge', async (t) => {
  const { db, ctx, layout, folders: unique } = await twoGenerations(3000);
  t.is(unique.length, 2);
  const probe = new GenerationCache(ctx.store, ctx.indexing, 1 << 30);
  const loaded = await Promise.all(unique.map((f) => probe.get(layout, Number(f.split('_gen_')[1]), f)));
  const rowsOnly = loaded.map((g) => g.batches.reduce((n, b) => n + batchBytes(b), 0));
  const charged = loaded.map((g) => generationBytes(g, ctx.indexing));
  for (let i = 0; i < 2; i++) t.true(charged[i] > rowsOnly[i] * 1.5, `charged ${charged[i]} vs rows ${rowsOnly[i]}`);
  // A budget that holds both generations' rows but not both with their indexes keeps only one.
  const cache = new GenerationCache(ctx.store, ctx.indexing, Math.floor((rowsOnly[0] + rowsOnly[1]) * 1.2));
  const first = await cache.get(layout, loaded[0].generation, loaded[0].folder);
  await cache.get(layout, loaded[1].generation, loaded[1].folder);
  const again = await cache.get(layout, loaded[0].generation, loaded[0].folder);
  t.not(again, first, 'the first generation was evicted and loaded again');
  await db.close();
});

test('the cache lets the least recently asked-for generation go: a peek or a get keeps one', async (t) => {
  const { db, ctx, layout, folders } = await twoGenerations(1000, 3);
  t.is(folders.length, 3);
  const gen = (f: string) => Number(f.split('_gen_')[1]);
  const sizes = await Promise.all(folders.map(async (f) => generationBytes(await new GenerationCache(ctx.store, ctx.indexing, 1 << 30).get(layout, gen(f), f), ctx.indexing)));
  // Room for two of the three.
  const budget = Math.floor(Math.max(...sizes) * 2.5);
  for (const touch of ['peek', 'get'] as const) {
    const cache = new GenerationCache(ctx.store, ctx.indexing, budget);
    const a = await cache.get(layout, gen(folders[0]), folders[0]);
    await cache.get(layout, gen(folders[1]), folders[1]);
    // The first one asked for again: the second is now the least recent.
    if (touch === 'peek') t.is(cache.peek(layout, folders[0]), a);
    else t.is(await cache.get(layout, gen(folders[0]), folders[0]), a);
    await cache.get(layout, gen(folders[2]), folders[2]);
    t.is(cache.peek(layout, folders[0]), a, `${touch}: the generation asked for again stays`);
    t.is(cache.peek(layout, folders[1]), undefined, `${touch}: the least recent went`);
    t.truthy(cache.peek(layout, folders[2]), `${touch}: the newest stays`);
  }
  await db.close();
});

test('rowCount reads a generation\'s primary-key filter, not the generation; without one it loads it', async (t) => {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.createIndex('text', { type: 'fts' });
  // 2 500 keys put as 3 000 rows (500 upserted again): the generation holds one row a key.
  await table.put(docs(range(0, 2500), 1));
  await table.put(docs(range(2000, 2500), 2));
  await table.flush();
  const ctx = (table as unknown as { ctx: { store: ObjectStore; indexing: IndexingContext } }).ctx;
  const regionId = Object.keys(await table.writerStats())[0];
  const layout = new RegionLayout('docs', regionId);
  const keys = (await mem.list(`docs/_mem_wal/${regionId}/`)).map((o) => o.key);
  const folder = keys.map((k) => /([0-9a-f]{8}_gen_\d+)/.exec(k)?.[1]).find((f): f is string => !!f)!;
  const generation = Number(folder.split('_gen_')[1]);
  const { store: spy, reads } = readSpy(mem);
  const cache = new GenerationCache(spy, ctx.indexing, 1 << 30);
  t.is(await cache.rowCount(layout, generation, folder), 2500);
  t.deepEqual(reads.map((k) => k.split('/').pop()), ['pk_filter.bin'], 'only the filter was read');
  const loaded = await cache.get(layout, generation, folder);
  t.is(loaded.rowCount, 2500, 'the count the filter gave is the generation\'s');
  // A generation without a filter file is loaded to count it.
  const filterKey = keys.find((k) => k.includes(folder) && k.endsWith('pk_filter.bin'))!;
  await mem.delete(filterKey);
  reads.length = 0;
  const cold = new GenerationCache(spy, ctx.indexing, 1 << 30);
  t.is(await cold.rowCount(layout, generation, folder), 2500);
  t.true(reads.some((k) => k.endsWith('data.arrow') || !k.endsWith('pk_filter.bin')), `loaded: ${reads.join(', ')}`);
  await db.close();
});

test('peek gives a loaded generation without awaiting, and nothing while it is unloaded, lacks a buildable index, or was evicted', async (t) => {
  const { db, table, ctx, layout, folders } = await twoGenerations(1000);
  t.is(folders.length, 2);
  const gen = (f: string) => Number(f.split('_gen_')[1]);
  const cache = new GenerationCache(ctx.store, ctx.indexing, 1 << 30);
  t.is(cache.peek(layout, folders[0]), undefined, 'not loaded yet');
  const pending = cache.get(layout, gen(folders[0]), folders[0]);
  t.is(cache.peek(layout, folders[0]), undefined, 'still loading');
  const loaded = await pending;
  t.is(cache.peek(layout, folders[0]), loaded, 'loaded: the same object, synchronously');
  // A new index the generation lacks: peek leaves it to get, which builds it.
  await table.createIndex('id', { type: 'scalar' });
  t.false(loaded.indexes.hasIndex(ctx.indexing.defs.find((d) => d.column === 'id')!.name));
  t.is(cache.peek(layout, folders[0]), undefined, 'an index to build first');
  const completed = await cache.get(layout, gen(folders[0]), folders[0]);
  t.true(completed.indexes.hasIndex(ctx.indexing.defs.find((d) => d.column === 'id')!.name));
  t.is(cache.peek(layout, folders[0]), completed);
  // Evicted: a budget of one byte keeps only the generation loaded last.
  const small = new GenerationCache(ctx.store, ctx.indexing, 1);
  await small.get(layout, gen(folders[0]), folders[0]);
  await small.get(layout, gen(folders[1]), folders[1]);
  t.is(small.peek(layout, folders[0]), undefined, 'evicted');
  t.truthy(small.peek(layout, folders[1]));
  await db.close();
});

test('a generation loaded for a scan holds no index; a reader that needs them gets them once, in place, and the cache charges them', async (t) => {
  const mem = new MemoryObjectStore();
  const db = await connect('memory://', { store: mem, writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('docs', docsSchema, { primaryKey: 'id' });
  await table.createIndex('text', { type: 'fts' });
  await table.createIndex('version', { type: 'scalar' });
  await table.put(docs(range(0, 2000), 1));
  await table.flush();
  const ctx = (table as unknown as { ctx: { indexing: IndexingContext } }).ctx;
  const regionId = Object.keys(await table.writerStats())[0];
  const layout = new RegionLayout('docs', regionId);
  const folder = (await mem.list(`docs/_mem_wal/${regionId}/`)).map((o) => /([0-9a-f]{8}_gen_\d+)/.exec(o.key)?.[1]).find((f): f is string => !!f)!;
  const generation = Number(folder.split('_gen_')[1]);
  const fts = ctx.indexing.defs.find((d) => d.type === 'fts')!.name;
  const scalar = ctx.indexing.defs.find((d) => d.type === 'scalar')!.name;
  const { store: spy, reads } = readSpy(mem);
  const cache = new GenerationCache(spy, ctx.indexing, 1 << 30);
  const charged = () => (cache as unknown as { bytes: number }).bytes;
  const files = () => reads.map((k) => k.split('/').pop()).sort();

  const rows = await cache.get(layout, generation, folder, 'none');
  t.deepEqual(files(), ['data.arrow'], 'a scan reads the rows only');
  t.false(rows.indexes.hasIndex(fts));
  t.false(rows.indexes.hasIndex(scalar));
  t.is(rows.rowCount, 2000);
  t.is(cache.peek(layout, folder, 'none'), rows);
  t.is(cache.peek(layout, folder, 'scalar'), undefined, 'a filtered scan has a scalar index to load first');
  t.is(cache.peek(layout, folder), undefined, 'a search has every index to load first');
  const rowsCharge = charged();
  t.is(rowsCharge, generationBytes(rows, ctx.indexing));

  reads.length = 0;
  t.is(await cache.get(layout, generation, folder, 'scalar'), rows, 'the same object, upgraded in place');
  t.deepEqual(files(), ['index_version_scalar.arrow']);
  t.true(rows.indexes.hasIndex(scalar));
  t.false(rows.indexes.hasIndex(fts));

  // Two searches at once share one upgrade: each sidecar is read once.
  reads.length = 0;
  const [a, b] = await Promise.all([cache.get(layout, generation, folder), cache.get(layout, generation, folder)]);
  t.is(a, rows);
  t.is(b, rows);
  t.deepEqual(files(), ['index_text_fts.arrow']);
  t.true(rows.indexes.hasIndex(fts));
  t.is(cache.peek(layout, folder), rows);
  t.is(charged(), generationBytes(rows, ctx.indexing), 'charged again after the upgrade');
  t.true(charged() > rowsCharge * 1.2, `the full-text postings are charged: ${rowsCharge} → ${charged()}`);

  // Nothing more to read for any reader now.
  reads.length = 0;
  for (const scope of ['none', 'scalar', 'all'] as const) t.is(await cache.get(layout, generation, folder, scope), rows);
  t.deepEqual(reads, []);
  await db.close();
});

test('a generation only scans asked for is kept only while it fits: a scan never pushes out another generation, a search does', async (t) => {
  const { db, ctx, layout, folders } = await twoGenerations(2000, 3);
  t.is(folders.length, 3);
  const gen = (f: string) => Number(f.split('_gen_')[1]);
  const [a, b, c] = folders;
  const sized = async (f: string, scope: 'none' | 'all') => generationBytes(await new GenerationCache(ctx.store, ctx.indexing, 1 << 30).get(layout, gen(f), f, scope), ctx.indexing);
  const full = await sized(a, 'all');
  const rows = Math.max(await sized(b, 'none'), await sized(c, 'none'));
  t.true(full > rows * 1.2, 'the index is charged');
  // Room for a with its index and one generation's rows, not two.
  const cache = new GenerationCache(ctx.store, ctx.indexing, full + Math.floor(rows * 1.5));
  const searched = await cache.get(layout, gen(a), a);
  const scannedB = await cache.get(layout, gen(b), b, 'none');
  t.is(cache.peek(layout, b, 'none'), scannedB, 'a scan load that fits is kept');
  const scannedC = await cache.get(layout, gen(c), c, 'none');
  t.is(scannedC.rowCount, 2000, 'the scan still gets its rows');
  t.is(cache.peek(layout, c, 'none'), undefined, 'a scan load that does not fit is not kept');
  t.is(cache.peek(layout, a), searched, 'and pushed nothing out: the searched generation stays');
  t.is(cache.peek(layout, b, 'none'), scannedB);
  t.not(await cache.get(layout, gen(c), c, 'scalar'), await cache.get(layout, gen(c), c, 'scalar'), 'asked for again by scans it is read again each time');
  t.is(cache.peek(layout, c, 'none'), undefined, 'and never kept');
  t.is(cache.peek(layout, a), searched);
  // A search's load makes room, least recently used first (a, then b).
  const searchedC = await cache.get(layout, gen(c), c);
  t.is(cache.peek(layout, c), searchedC, 'a search load is kept');
  t.is(cache.peek(layout, a), undefined, 'by letting the least recently used go');
  // A scan load a search joins is the search's: kept like any other.
  const small = new GenerationCache(ctx.store, ctx.indexing, 1);
  const [x, y] = await Promise.all([small.get(layout, gen(a), a, 'none'), small.get(layout, gen(a), a)]);
  t.is(x, y);
  t.is(small.peek(layout, a), y, 'kept (alone over the budget, as the newest entry always is)');
  await db.close();
});
