/**
 * Rows tokenized on the worker enter a full-text index a step at a time (the code queue runs a
 * few milliseconds of steps a turn): short steps while the index meets many words new to it (a
 * fresh MemTable's first rows, where a new term costs many times a known one), longer ones once
 * the words are known. Counted in steps and rows, not timed.
 */
import test from 'ava';
import { Field, Int32, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, MemoryObjectStore } from '../../src/quiver.js';
import { setTokenizeWorkerEnabled, tokenizeWorkerReady } from '../../src/index/fts/tokenize-worker.js';
import { tokenizedSteps } from '../../src/index/source-indexes.js';

const schema = new Schema([new Field('id', new Int32(), false), new Field('body', new Utf8(), true)]);

function rows(from: number, to: number, text: (i: number) => string): Table {
  return new Table({
    id: makeVector(Int32Array.from({ length: to - from }, (_, i) => from + i)),
    body: vectorFromArray(Array.from({ length: to - from }, (_, i) => text(from + i)), new Utf8()),
  });
}

test.serial('a step adds fewer rows while most words are new to the index, more once they are known', async (t) => {
  setTokenizeWorkerEnabled(true);
  t.true(await tokenizeWorkerReady(), 'the tokenize worker started');
  const db = await connect('memory://', { store: new MemoryObjectStore(), writer: { maxWalFlushIntervalMs: 0 } });
  const table = await db.createTable('t', schema, { primaryKey: 'id' });
  await table.createIndex('body', { type: 'fts', stem: false, stopWords: false });
  // Every row brings eight words no row had before.
  const fresh = (i: number) => Array.from({ length: 8 }, (_, k) => `w${i}x${k}`).join(' ');
  let before = { ...tokenizedSteps };
  await table.put(rows(0, 1000, fresh));
  const freshSteps = tokenizedSteps.steps - before.steps;
  t.is(tokenizedSteps.rows - before.rows, 1000, 'the rows went through the tokenize worker');
  t.true(freshSteps >= 1000 / 24, `short steps while the words are new (${freshSteps} steps)`);
  // Words the index knows by now.
  before = { ...tokenizedSteps };
  await table.put(rows(1000, 2000, (i) => fresh(i % 1000)));
  const knownSteps = tokenizedSteps.steps - before.steps;
  t.is(tokenizedSteps.rows - before.rows, 1000);
  t.true(knownSteps <= Math.ceil(1000 / 128) + 1, `long steps once they are known (${knownSteps} steps)`);
  // Both found by search.
  const r = await table.search({ text: { column: 'body', query: 'w7x3' }, k: 10 });
  t.deepEqual([...r.getChild('id')!].sort((a, b) => a - b), [7, 1007]);
  await db.close();
});
