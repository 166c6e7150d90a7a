/**
 * `quiver demo`: a short tour of the write path on a real
 * directory. It creates a table (if absent), writes through the region writer with durable
 * acks, updates and deletes some keys, closes (flushing a generation), reopens, scans, and
 * prints what it did and what is on storage.
 */
import { Field, FixedSizeList, Float32, Int64, makeData, makeVector, Schema, Table, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, type ConnectOptions } from './quiver.js';
import { resultWriter, stringSink } from './cli/output.js';
import { plainStyle } from './cli/style.js';
import type { RecordBatch } from 'apache-arrow';

const DIM = 8;
const SENTENCES = ['the quick brown fox', 'jumps over the lazy dog', 'arrow flight streams batches', 'a write-ahead log on object storage'];

export const demoSchema = new Schema([
  new Field('id', new Int64(), false),
  new Field('body', new Utf8(), true),
  new Field('embedding', new FixedSizeList(DIM, new Field('item', new Float32(), false)), true),
]);

function rows(ids: number[], round: number): Table {
  const values = new Float32Array(ids.length * DIM);
  for (let i = 0; i < values.length; i++) values[i] = Math.sin(i + round);
  return new Table({
    id: makeVector(BigInt64Array.from(ids.map(BigInt))),
    body: vectorFromArray(ids.map((id) => `${SENTENCES[id % SENTENCES.length]} (row ${id}, round ${round})`), new Utf8()),
    embedding: makeVector(makeData({ type: demoSchema.fields[2].type as FixedSizeList, length: ids.length, nullCount: 0, child: makeData({ type: new Float32(), length: values.length, data: values }) })),
  });
}

export async function runDemo(data: string, options: ConnectOptions, log: (line: string) => void): Promise<void> {
  log(`quiver demo on ${data}`);
  const db = await connect(data, { ...options, writer: { maxWalFlushIntervalMs: 20 } });
  const existing = await db.tableNames();
  const table = existing.includes('demo') ? await db.openTable('demo') : await db.createTable('demo', demoSchema, { primaryKey: 'id' });
  log(existing.includes('demo') ? 'opened table demo (it existed; its WAL was replayed)' : 'created table demo (id BIGINT primary key, body TEXT, embedding FLOAT4[8])');
  const round = Date.now() % 1000;
  const t0 = performance.now();
  await Promise.all([0, 1, 2, 3].map((b) => table.put(rows([b * 5, b * 5 + 1, b * 5 + 2, b * 5 + 3, b * 5 + 4], round))));
  log(`put 20 rows in 4 concurrent batches: durable in ${(performance.now() - t0).toFixed(1)} ms (group commit)`);
  await table.put(rows([1, 2], round + 1));
  log('updated rows 1 and 2 (same primary key: the newer version wins)');
  await table.delete([3n, 4n]);
  log('deleted rows 3 and 4 (tombstones)');
  const stats = await table.writerStats();
  for (const [region, s] of Object.entries(stats)) log(`region ${region}: epoch ${s.epoch}, ${s.walEntries} WAL entries (${s.walBytes} bytes) this run, ${s.replayedEntries} replayed on open`);
  await db.close();
  log('closed the database: MemTables flushed into a generation, region released');

  const reopened = await connect(data, options);
  const again = await reopened.openTable('demo');
  const batches: RecordBatch[] = [];
  for await (const b of again.scan()) batches.push(b);
  await reopened.close();
  const shown = batches.map((b) => b.select(['id', 'body']) as unknown as RecordBatch);
  log('reopened and scanned:');
  const sink = stringSink();
  const writer = resultWriter('table', sink, { style: plainStyle, width: Infinity });
  await writer.begin(shown[0]?.schema ?? demoSchema.select(['id', 'body']));
  for (const b of shown) await writer.batch(b);
  await writer.end();
  log(sink.text().trimEnd());
}
