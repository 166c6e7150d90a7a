/**
 * Full-text rows of written rows tokenized on the tokenize worker (issue 7) keep the write path's
 * promise: a put resolves only when its rows are durable and in every index, so a text search
 * started after the ack finds them; several puts in flight, the worker switched off and on
 * mid-stream (its jobs then fail and the rows are tokenized here), a flush and a reopen change no
 * answer — the scores equal those of a table written with the worker off throughout.
 */
import test from 'ava';
import { Field, Int32, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { setTokenizeWorkerEnabled, tokenizeWorkerReady, tokenizeWorkerStats } from '../../src/index/fts/tokenize-worker.js';
import { Rng } from '../../src/index/vector/kmeans.js';

const ROWS = 6000;
const schema = new Schema([new Field('id', new Int32(), false), new Field('body', new Utf8(), true)]);
const VOCAB = ['database', 'vector', 'search', 'stream', 'arrow', 'flight', 'index', 'query', 'writer', 'region', 'café', 'Ångström', 'the', 'of', 'running', 'runs'];

/** Row i's text: a word only row i holds (`uniq<i>`), and common words. */
function body(i: number, rng: Rng): string | null {
  if (i % 50 === 49) return null;
  const words = [`uniq${i}`];
  for (let k = 3 + rng.int(12); k > 0; k--) words.push(VOCAB[rng.int(VOCAB.length)]!);
  return words.join(' ');
}

const texts = (() => {
  const rng = new Rng(17);
  return Array.from({ length: ROWS }, (_, i) => body(i, rng));
})();

function rows(from: number, to: number): Table {
  return new Table({ id: makeVector(Int32Array.from({ length: to - from }, (_, i) => from + i)), body: vectorFromArray(texts.slice(from, to), new Utf8()) });
}

type T = Awaited<ReturnType<Awaited<ReturnType<typeof connect>>['createTable']>>;

async function hits(table: T, text: string): Promise<[number, number][]> {
  const r = await table.search({ text: { column: 'body', query: text }, k: 20 });
  const ids = r.getChild('id')!;
  const scores = r.getChild('_score')!;
  return Array.from({ length: r.numRows }, (_, i) => [ids.get(i) as number, Math.round((scores.get(i) as number) * 1e9) / 1e9]);
}

async function write(table: T, rng: Rng, onPut: (from: number, to: number, n: number) => Promise<void> | void): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let puts = 0;
  for (let start = 1000; start < ROWS; ) {
    const end = Math.min(ROWS, start + 64 + rng.int(400));
    const from = start;
    const n = puts++;
    const put: Promise<void> = table.put(rows(from, end)).then(() => onPut(from, end, n)).finally(() => inFlight.delete(put));
    inFlight.add(put);
    if (inFlight.size >= 1 + rng.int(6)) await Promise.race(inFlight);
    start = end;
  }
  await Promise.all(inFlight);
}

test('rows are found by text search the moment their put resolves, and score as if tokenized here', async (t) => {
  setTokenizeWorkerEnabled(true);
  t.true(await tokenizeWorkerReady(), 'a worker thread starts');
  const db = await connect('memory://', { store: new MemoryObjectStore() });
  const table = await db.createTable('docs', schema, { primaryKey: 'id' });
  await table.put(rows(0, 1000));
  await table.createIndex('body', { type: 'fts' });

  const rng = new Rng(5);
  const rows0 = tokenizeWorkerStats.rows;
  let checked = 0;
  let disables = 0;
  const missing: number[] = [];
  await write(table, rng, async (from, to, n) => {
    // Acknowledged: a row of the put is found by its own word in a search started now.
    let probe = from + rng.int(to - from);
    if (texts[probe] === null) probe = from;
    if (texts[probe] === null) return;
    const found = await hits(table, `uniq${probe}`);
    if (found.length !== 1 || found[0]![0] !== probe) missing.push(probe);
    checked++;
    if (n % 6 === 2) {
      setTokenizeWorkerEnabled(false); // jobs out there fail: their rows are tokenized here
      disables++;
    } else if (n % 6 === 4) {
      setTokenizeWorkerEnabled(true);
    }
  });
  setTokenizeWorkerEnabled(true);
  t.deepEqual(missing, [], 'every probed row was found right after its ack');
  t.true(checked > 10);
  t.true(tokenizeWorkerStats.rows > rows0, 'some rows were tokenized on the worker');
  t.true(disables > 1, 'the schedule switched the worker off');

  // The same rows written with the worker off throughout: the same answers, the same scores.
  setTokenizeWorkerEnabled(false);
  const db2 = await connect('memory://', { store: new MemoryObjectStore() });
  const plain = await db2.createTable('docs', schema, { primaryKey: 'id' });
  await plain.put(rows(0, 1000));
  await plain.createIndex('body', { type: 'fts' });
  await write(plain, new Rng(5), () => undefined);
  setTokenizeWorkerEnabled(true);
  const queries = ['database vector', 'running', 'café Ångström', 'search stream arrow', 'uniq4321', 'region writer query'];
  for (const q of queries) t.deepEqual(await hits(table, q), await hits(plain, q), q);
  await table.flush();
  for (const q of queries) t.deepEqual(await hits(table, q), await hits(plain, q), `${q} after a flush`);
  await db.close();
  await db2.close();
});
