/**
 * The child process of the crash-recovery test (crash-recovery.test.ts): writes to a Quiver
 * table with durable acks, as fast as it can, until the parent kills it with SIGKILL.
 *
 *   node --import=tsx test/integration/crash-writer.ts '<json WriterArgs>'
 *
 * Every operation gets a version from one counter that the parent carries across rounds, so
 * versions only ever grow. Each row is (id, version, text `k{id}v{version}`, vec derived from
 * both), which lets the parent check that a row it reads back is whole and not a mix.
 *
 * Protocol on stdout, one JSON object a line, written with a synchronous write so that a line is
 * in the pipe *before* the operation it announces starts (an attempt line) or only *after* the
 * operation's promise resolved (an ack line):
 *
 *   {"t":"ready"}                                       table opened, writing starts
 *   {"t":"try","id":7,"op":"put","keys":[..],"v":123}  about to call table.put / table.delete
 *   {"t":"ack","id":7}                                  that call resolved (durable)
 *   {"t":"fail","id":7,"err":"..."}                     that call rejected (outcome unknown)
 *
 * No key is touched by two unresolved operations at once (in-flight keys are locked), so the
 * order of a key's operations is the order of their attempt lines, and the parent's model of
 * "the newest acknowledged state of each key" is exact.
 */
import { writeSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct, Utf8, vectorFromArray } from 'apache-arrow';
import { connect, type ConnectOptions, isQuiverError, type RegionSpec, type RegionWriterConfig } from '../../src/quiver.js';

export interface WriterArgs {
  uri: string;
  s3?: ConnectOptions['s3'];
  table: string;
  /** Create the table (first round) instead of opening it. */
  create: boolean;
  regionSpec?: RegionSpec;
  writer: Partial<RegionWriterConfig>;
  /** Version of the first operation of this run. */
  startVersion: number;
  /** Smallest key never written before; new keys are taken from here up. */
  newKeyBase: number;
  /** Operations in flight at once. */
  inFlight: number;
  /** Pad each row's text with up to this many characters (big rows make big WAL entries). */
  rowPad: number;
  seed: number;
}

export const DIM = 8;

export function crashTableSchema(): Schema {
  return new Schema([
    new Field('id', new Int64(), false),
    new Field('version', new Int64(), false),
    new Field('text', new Utf8(), false),
    new Field('vec', new FixedSizeList(DIM, new Field('item', new Float32(), true)), false),
  ]);
}

/** The text of (id, version): `k{id}v{version}`, then `:` and `pad` x's when padded. */
export function rowText(id: number, version: number, pad = 0): string {
  return pad > 0 ? `k${id}v${version}:${'x'.repeat(pad)}` : `k${id}v${version}`;
}

/** Whether `text` is a (possibly padded) text of (id, version). */
export function isRowText(text: string, id: number, version: number): boolean {
  const head = rowText(id, version);
  if (text === head) return true;
  if (!text.startsWith(`${head}:`)) return false;
  for (let i = head.length + 1; i < text.length; i++) if (text.charCodeAt(i) !== 120 /* x */) return false;
  return true;
}

/** The vector stored with (id, version); integers below 2^24 are exact in Float32. */
export function rowVec(id: number, version: number): number[] {
  return Array.from({ length: DIM }, (_, i) => (i === 0 ? id : i === 1 ? version : (id + version * (i + 1)) % 65_536));
}

export function makeBatch(schema: Schema, keys: number[], version: number, pad: (key: number) => number = () => 0): RecordBatch {
  const n = keys.length;
  const flat = new Float32Array(n * DIM);
  keys.forEach((k, r) => flat.set(rowVec(k, version), r * DIM));
  const vecType = schema.fields[3].type as FixedSizeList;
  const values = makeData({ type: new Float32(), length: n * DIM, nullCount: 0, data: flat });
  const children = [
    vectorFromArray(keys.map(BigInt), new Int64()).data[0],
    vectorFromArray(keys.map(() => BigInt(version)), new Int64()).data[0],
    vectorFromArray(keys.map((k) => rowText(k, version, pad(k))), new Utf8()).data[0],
    makeData({ type: vecType, length: n, nullCount: 0, child: values }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }));
}

/** mulberry32: a small seeded PRNG, so a failing round can be rerun with the same choices. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function emit(obj: unknown): void {
  const buf = Buffer.from(JSON.stringify(obj) + '\n');
  let done = 0;
  while (done < buf.length) {
    try {
      done += writeSync(1, buf, done, buf.length - done);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') continue; // a non-blocking pipe that is momentarily full
      process.exit(4); // the parent is gone (EPIPE): nothing left to write for
    }
  }
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '') as WriterArgs;
  const random = prng(args.seed);
  const int = (n: number) => Math.floor(random() * n);
  const db = await connect(args.uri, { s3: args.s3, writer: args.writer });
  const table = args.create
    ? await db.createTable(args.table, crashTableSchema(), { primaryKey: 'id', regionSpec: args.regionSpec })
    : await db.openTable(args.table);
  const schema = table.schema;
  emit({ t: 'ready' });

  let version = args.startVersion;
  let nextNewKey = args.newKeyBase;
  let opId = 0;
  const busy = new Set<number>();
  // Half of the updates and deletes go to a hot set, so keys see many versions across rounds.
  const existingKey = (): number | undefined => {
    if (nextNewKey === 0) return undefined;
    const range = random() < 0.5 ? Math.min(nextNewKey, 400) : nextNewKey;
    const k = int(range);
    return busy.has(k) ? undefined : k;
  };

  const worker = async (): Promise<void> => {
    for (;;) {
      const del = random() < 0.15;
      const want = del ? 1 + int(4) : 1 + int(12);
      const keys: number[] = [];
      for (let tries = 0; keys.length < want && tries < want * 3; tries++) {
        const k = !del && random() < 0.35 ? nextNewKey++ : existingKey();
        if (k !== undefined && !keys.includes(k) && !busy.has(k)) keys.push(k);
      }
      if (keys.length === 0) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      for (const k of keys) busy.add(k);
      const id = opId++;
      const v = version++;
      emit({ t: 'try', id, op: del ? 'del' : 'put', keys, v });
      try {
        if (del) await table.delete(keys.map(BigInt));
        else await table.put(makeBatch(schema, keys, v, () => (args.rowPad > 0 ? int(args.rowPad) : 0)));
        emit({ t: 'ack', id });
      } catch (e) {
        // Kept short: a line under PIPE_BUF (4 KiB) reaches the pipe whole or not at all.
        emit({ t: 'fail', id, err: `${(e as Error).name}: ${(e as Error).message}`.slice(0, 300), retryable: isQuiverError(e) && e.retryable });
        await new Promise((r) => setTimeout(r, 20));
      } finally {
        for (const k of keys) busy.delete(k);
      }
    }
  };
  await Promise.all(Array.from({ length: args.inFlight }, worker));
}

// Run only as a script: the test imports the schema and row helpers from this file.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    process.stderr.write(`crash-writer: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(2);
  });
}
