/**
 * Crash-recovery acceptance test: a child process (crash-writer.ts) writes with durable acks and
 * is killed with SIGKILL at random points, round after round, on a local directory and on the
 * radosgw S3 server. After each kill the database is reopened in this process and checked
 * against a model built from the child's attempt and ack lines:
 *
 * - every key whose newest acknowledged operation is a put is present exactly once, with that
 *   version or the version of a later attempted (unacknowledged) operation on it;
 * - a key whose newest acknowledged operation is a delete is absent, or present with the version
 *   of a later attempted put;
 * - no key appears twice, no key appears that was never attempted, every row is whole;
 * - what a reader has once seen never goes back: the observed state becomes the key's new floor,
 *   so a row that was read and then lost (or an older version resurfacing) fails a later round.
 *
 * The rounds vary what is being killed: writer settings (group-commit interval, WAL buffer,
 * WAL writes in flight, MemTable limits, backpressure), small or big rows, kills 100-800 ms
 * after the first ack or right after opening (while the writer claims and replays). They also
 * vary how the database is reopened: a read-only scan only (the WAL is tailed, nothing is
 * claimed, so the next child replays the log as the last one left it); or a write by this
 * process, which claims the regions, replays the WAL into MemTables and is checked through the
 * writer, then either closed (everything flushed to generations, checked again read-only) or
 * abandoned open, to be fenced by the next child.
 *
 * The S3 test needs the radosgw test server (`npm run s3:start`; QUIVER_S3_ENV points at another
 * one). QUIVER_CRASH_ROUNDS runs more rounds; QUIVER_CRASH_SEED replays a logged round plan (the
 * kill instants are timing, so a replay is close, not exact).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import type { RecordBatch } from 'apache-arrow';
import { connect, type ConnectOptions, type Database, type RegionSpec, type RegionWriterConfig } from '../../src/quiver.js';
import type { ObjectStore } from '../../src/storage/object-store.js';
import { RegionManifestStore } from '../../src/manifest/region-manifest-store.js';
import { RegionLayout } from '../../src/wal/region-layout.js';
import { LocalObjectStore } from '../../src/storage/local-store.js';
import { loadS3Env, makeTestBucketStore } from '../helpers/s3-env.js';
import { DIM, isRowText, makeBatch, rowVec, type WriterArgs } from './crash-writer.js';

const WRITER = fileURLToPath(new URL('./crash-writer.ts', import.meta.url));
const TABLE = 'crash';
/** A key this process writes itself when it reopens with a writer (the child never uses it); it overwrites some of the child's keys too. */
const PARENT_KEY = -1;

// ---- the model -------------------------------------------------------------------------------

interface KeyModel {
  /** The key's state is defined by an operation with version >= floor (-Infinity: maybe none). */
  floor: number;
  /** Versions of every put / delete ever attempted on the key, ascending. */
  puts: number[];
  dels: number[];
}

interface Op {
  op: 'put' | 'del';
  keys: number[];
  v: number;
}

class Model {
  readonly keys = new Map<number, KeyModel>();
  nextVersion = 1;
  newKeyBase = 0;

  private key(k: number): KeyModel {
    let m = this.keys.get(k);
    if (!m) this.keys.set(k, (m = { floor: Number.NEGATIVE_INFINITY, puts: [], dels: [] }));
    return m;
  }

  attempt(op: Op): void {
    if (op.v < this.nextVersion) throw new Error(`version ${op.v} reused (next is ${this.nextVersion})`);
    this.nextVersion = op.v + 1;
    for (const k of op.keys) {
      const m = this.key(k);
      (op.op === 'put' ? m.puts : m.dels).push(op.v);
      if (k >= this.newKeyBase) this.newKeyBase = k + 1;
    }
  }

  /** Ops on one key are sequential (the child locks in-flight keys), so an ack is the newest. */
  ack(op: Op): void {
    for (const k of op.keys) this.key(k).floor = op.v;
  }

  /**
   * Checks one observed table state (key -> version) and moves every key's floor up to what was
   * seen. Returns the problems found (empty when the state is allowed).
   */
  check(observed: Map<number, number>): string[] {
    const problems: string[] = [];
    for (const [k, v] of observed) {
      const m = this.keys.get(k);
      if (!m) problems.push(`key ${k} (version ${v}) was never written`);
      else if (!m.puts.includes(v)) problems.push(`key ${k} has version ${v}, which was never put for it (puts ${tail(m.puts)})`);
      else if (v < m.floor) problems.push(`key ${k} has version ${v}, older than its newest acknowledged/seen state ${m.floor} (puts ${tail(m.puts)}, dels ${tail(m.dels)})`);
    }
    for (const [k, m] of this.keys) {
      if (observed.has(k) || m.floor === Number.NEGATIVE_INFINITY) continue;
      // Absent: some delete at or after the floor must explain it.
      if (!m.dels.some((d) => d >= m.floor)) {
        problems.push(`key ${k} is missing; its newest acknowledged/seen state is put version ${m.floor} (puts ${tail(m.puts)}, dels ${tail(m.dels)})`);
      }
    }
    if (problems.length === 0) {
      for (const [k, m] of this.keys) {
        const v = observed.get(k);
        if (v !== undefined) m.floor = v;
        else if (m.floor !== Number.NEGATIVE_INFINITY) m.floor = m.dels.find((d) => d >= m.floor)!;
      }
    }
    return problems;
  }
}

function tail(xs: number[]): string {
  return xs.length > 6 ? `..., ${xs.slice(-6).join(', ')}` : `[${xs.join(', ')}]`;
}

/** Reads the whole table: key -> version, failing on duplicates and torn rows. */
async function observe(db: Database): Promise<{ state: Map<number, number>; problems: string[] }> {
  const table = await db.openTable(TABLE);
  const state = new Map<number, number>();
  const problems: string[] = [];
  for await (const batch of table.scan()) readBatch(batch, state, problems);
  return { state, problems };
}

function readBatch(batch: RecordBatch, state: Map<number, number>, problems: string[]): void {
  const ids = batch.getChild('id')!;
  const versions = batch.getChild('version')!;
  const texts = batch.getChild('text')!;
  const vecs = batch.getChild('vec')!;
  for (let r = 0; r < batch.numRows; r++) {
    const id = Number(ids.get(r) as bigint);
    const v = Number(versions.get(r) as bigint);
    if (state.has(id)) problems.push(`key ${id} appears twice (versions ${state.get(id)} and ${v})`);
    state.set(id, v);
    const text = texts.get(r) as string;
    const vec = Array.from(vecs.get(r)!.toArray() as Float32Array);
    if (!isRowText(text, id, v) || vec.length !== DIM || vec.some((x, i) => x !== rowVec(id, v)[i])) {
      problems.push(`key ${id} version ${v} is torn: text ${JSON.stringify(text.slice(0, 40))}${text.length > 40 ? `... (${text.length} chars)` : ''}, vec [${vec.join(', ')}]`);
    }
  }
}

// ---- one round -------------------------------------------------------------------------------

interface Round {
  acked: number;
  attempted: number;
  failed: string[];
  /** Attempted but neither acknowledged nor failed when the child died. */
  pending: number;
  killMs: number;
}

interface Backend {
  name: string;
  uri: string;
  connectOptions: ConnectOptions;
  regionSpec: RegionSpec;
  /** The database's storage, read directly for the closing checks (generations, WAL sizes). */
  store: ObjectStore;
  /** Time to let requests of the killed child that the server already received finish. */
  settleMs: number;
}

function randomWriterConfig(rnd: () => number, big: boolean): Partial<RegionWriterConfig> {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  return {
    maxWalFlushIntervalMs: pick([5, 10, 20]),
    maxMemtableRows: pick([200, 300, 500]),
    maxMemtableBatches: pick([16, 64, 8000]),
    // Big-row rounds let group commit gather entries of several hundred KiB.
    maxWalBufferSize: big ? 1024 * 1024 : pick([1024, 4096, 16_384]),
    maxWalWritesInFlight: pick([1, 2, 4]),
    // Now and then small enough that puts wait for generation flushes (backpressure).
    maxUnflushedMemtableBytes: pick([64 * 1024, 1024 * 1024, 64 * 1024 * 1024]),
  };
}

async function runChild(t: ExecutionContext, args: WriterArgs, model: Model, killAfterAckMs: number | undefined, killAfterReadyMs: number): Promise<Round> {
  const child = spawn(process.execPath, ['--import=tsx', WRITER, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const ops = new Map<number, Op>();
  const open = new Set<number>();
  const round: Round = { acked: 0, attempted: 0, failed: [], pending: 0, killMs: 0 };
  let stderr = '';
  let pendingText = '';
  let killTimer: NodeJS.Timeout | undefined;
  let killedAt = 0;
  let readyAt = 0;
  const kill = () => {
    if (killedAt) return;
    killedAt = Date.now();
    round.killMs = readyAt ? killedAt - readyAt : 0;
    child.kill('SIGKILL');
  };
  const schedule = (ms: number) => {
    if (!killTimer) killTimer = setTimeout(kill, ms);
  };
  // A child that never gets going must not hang the test.
  const watchdog = setTimeout(kill, 30_000);
  // A bad line must not throw inside the stream handler (that would crash the worker): it stops
  // the child and fails the round.
  let protocolError: Error | undefined;
  const onLine = (line: string) => {
    try {
      handle(line);
    } catch (e) {
      protocolError ??= new Error(`bad line from the writer (${(e as Error).message}): ${line.slice(0, 200)}`);
      kill();
    }
  };
  const handle = (line: string) => {
    const msg = JSON.parse(line) as { t: string; id?: number; op?: 'put' | 'del'; keys?: number[]; v?: number; err?: string };
    switch (msg.t) {
      case 'ready':
        readyAt = Date.now();
        if (killAfterAckMs === undefined) schedule(killAfterReadyMs);
        break;
      case 'try': {
        const op = { op: msg.op!, keys: msg.keys!, v: msg.v! };
        ops.set(msg.id!, op);
        open.add(msg.id!);
        model.attempt(op);
        round.attempted++;
        break;
      }
      case 'ack':
        open.delete(msg.id!);
        model.ack(ops.get(msg.id!)!);
        round.acked++;
        if (killAfterAckMs !== undefined) schedule(killAfterAckMs);
        break;
      case 'fail':
        open.delete(msg.id!);
        round.failed.push(msg.err!);
        break;
      default:
        throw new Error(`unexpected line from the writer: ${line}`);
    }
  };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    pendingText += chunk;
    const lines = pendingText.split('\n');
    pendingText = lines.pop()!;
    for (const line of lines) if (line) onLine(line);
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr += chunk));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  clearTimeout(watchdog);
  clearTimeout(killTimer);
  // A partial last line can only be an attempt line cut by the kill; writes of a few hundred
  // bytes to a pipe are atomic, so this does not happen, but a partial attempt is still an attempt.
  if (pendingText) t.log(`partial line from the writer: ${pendingText}`);
  if (protocolError) throw protocolError;
  if (signal !== 'SIGKILL' || !killedAt) {
    throw new Error(`the writer exited by itself (code ${code}, signal ${signal}) before it was killed:\n${stderr}`);
  }
  round.pending = open.size;
  return round;
}

// ---- the test --------------------------------------------------------------------------------

/** At least 20 rounds per backend; more with QUIVER_CRASH_ROUNDS (soak runs). */
const ROUNDS = Math.max(20, Number(process.env.QUIVER_CRASH_ROUNDS) || 20);

async function crashRounds(t: ExecutionContext, backend: Backend, rounds: number): Promise<void> {
  const seed = Number(process.env.QUIVER_CRASH_SEED) || randomBytes(4).readUInt32LE() || 1;
  let s = seed;
  const rnd = () => {
    // xorshift32: the round plan is reproducible from the logged seed.
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
  t.log(`${backend.name}: seed ${seed}`);
  const model = new Model();
  let totalAcked = 0;
  let totalAttempted = 0;
  let roundsWithPending = 0;
  let earlyKills = 0;
  let parentWrites = 0;
  const failures: string[] = [];
  const abandoned: Database[] = [];
  const started = Date.now();
  // Abandoned writers are fenced by now; closing them must not throw (Table.close ignores fenced).
  t.teardown(async () => {
    for (const db of abandoned) await db.close().catch((e) => t.log(`closing an abandoned writer: ${(e as Error).message}`));
  });

  for (let round = 0; round < rounds; round++) {
    // A quarter of the rounds write rows with texts of up to 6 000 characters and twice the
    // operations in flight, so WAL entries and generations are large.
    const big = rnd() < 0.25;
    const writer = randomWriterConfig(rnd, big);
    // Most rounds die 100-800 ms after the first ack; some die right after opening, while the
    // writer claims the region and replays the log (never the first round, which creates the table).
    const early = round > 0 && rnd() < 0.2;
    const args: WriterArgs = {
      uri: backend.uri,
      s3: backend.connectOptions.s3,
      table: TABLE,
      create: round === 0,
      regionSpec: backend.regionSpec,
      writer,
      startVersion: model.nextVersion,
      newKeyBase: model.newKeyBase,
      inFlight: big ? 16 : 8,
      rowPad: big ? 6000 : 0,
      seed: Math.floor(rnd() * 2 ** 31),
    };
    const r = await runChild(t, args, model, early ? undefined : 100 + Math.floor(rnd() * 700), Math.floor(rnd() * 120));
    if (early) earlyKills++;
    totalAcked += r.acked;
    totalAttempted += r.attempted;
    if (r.pending > 0) roundsWithPending++;
    failures.push(...r.failed);
    await new Promise((resolve) => setTimeout(resolve, backend.settleMs));

    // Reopen. Always a read-only check first (tails the WAL, claims nothing); then, by mode:
    // - read:    nothing more; the next child replays the log exactly as this child left it;
    // - write:   claim the region with a write of our own (the writer replays the WAL into
    //            MemTables), check again through the writer, close (flushes everything into
    //            generations and moves the replay cursor), and check a fresh read-only reopen;
    // - abandon: like write, but never close: this writer stays behind, possibly still flushing
    //            what it replayed, while the next child claims the region and fences it.
    const pick = rnd();
    const mode = pick < 0.4 ? 'read' : pick < 0.8 ? 'write' : 'abandon';
    const where = `${backend.name} round ${round} (${early ? 'early kill' : `killed ${r.killMs} ms after ready`}, ${r.acked}/${r.attempted} acked, ${r.pending} pending, ${big ? 'big rows, ' : ''}writer ${JSON.stringify(writer)}, reopen ${mode})`;
    const verify = async (db: Database, what: string) => {
      const seen = await observe(db);
      const problems = [...seen.problems, ...model.check(seen.state)];
      if (problems.length) throw new Error(`${where}, ${what}: ${problems.length} problem(s)\n  ${problems.slice(0, 20).join('\n  ')}`);
    };
    const db = await connect(backend.uri, { ...backend.connectOptions, writer });
    let closeDb = mode !== 'abandon';
    try {
      await verify(db, 'read-only reopen');
      if (mode !== 'read') {
        const table = await db.openTable(TABLE);
        // Overwrite keys the child wrote, too: a stale entry of the killed child (one still in
        // flight when it died, landing late) applied over these newer versions would be caught.
        const written = [...model.keys.keys()].filter((k) => k !== PARENT_KEY);
        const overwrite = new Set<number>();
        for (let i = 0; i < 16 && written.length > 0; i++) overwrite.add(written[Math.floor(rnd() * written.length)]);
        const op: Op = { op: 'put', keys: [PARENT_KEY, ...overwrite], v: model.nextVersion };
        model.attempt(op);
        await table.put(makeBatch(table.schema, op.keys, op.v));
        model.ack(op);
        parentWrites++;
        await verify(db, 'scan through the reopened writer');
      }
    } catch (e) {
      closeDb = true;
      throw e;
    } finally {
      if (!closeDb) abandoned.push(db);
      else if (mode === 'read') await db.store.close(); // nothing to flush: no writer was opened
      else await db.close(); // flushes the replayed MemTables to generations
    }
    if (mode === 'write') {
      const again = await connect(backend.uri, backend.connectOptions);
      try {
        await verify(again, 'read-only reopen after close');
      } finally {
        await again.store.close();
      }
    }
    t.log(`${where}: ok`);
  }

  // Flushed generations that count: the ones the regions' latest manifests list (a flush that
  // died before its manifest commit, or was fenced, leaves an orphan folder that does not count).
  // Manifests are read before storage is listed: an abandoned writer of the last round may still
  // be flushing, and a generation it commits after the listing would look missing. Files are
  // written before their manifest commit, so a listing taken after the read shows them all.
  const regionIds = new Set((await backend.store.list(`${TABLE}/_mem_wal/`)).map((o) => o.key.split('/')[2]));
  const manifests = new Map<string, Awaited<ReturnType<RegionManifestStore['readLatest']>>>();
  for (const id of regionIds) manifests.set(id, await new RegionManifestStore(backend.store, new RegionLayout(TABLE, id).manifestDir, id).readLatest());
  const all = await backend.store.list(`${TABLE}/_mem_wal/`);
  const genFolders = new Set(all.map((o) => /\/([0-9a-f]{8}_gen_\d+)\//.exec(o.key)?.[1]).filter(Boolean));
  const walSizes = all.filter((o) => o.key.includes('/wal/')).map((o) => o.size);
  const largestWalEntry = walSizes.reduce((a, b) => Math.max(a, b), 0);
  let committedGenerations = 0;
  for (const [id, manifest] of manifests) {
    for (const g of manifest?.flushedGenerations ?? []) {
      committedGenerations++;
      if (!genFolders.has(g.path)) throw new Error(`region ${id} lists generation folder ${g.path}, which is not in storage`);
    }
  }
  const ackedKeys = [...model.keys.values()];
  const multiVersion = ackedKeys.filter((m) => m.puts.length + m.dels.length >= 3).length;
  const deletedNow = ackedKeys.filter((m) => m.floor !== Number.NEGATIVE_INFINITY && m.dels.includes(m.floor)).length;
  t.log(
    `${backend.name}: ${rounds} rounds in ${((Date.now() - started) / 1000).toFixed(1)} s; ${totalAcked} acked of ${totalAttempted} attempted ops; ` +
      `${roundsWithPending} rounds killed with ops pending; ${earlyKills} early kills; ${parentWrites} reopen-with-writer rounds (${abandoned.length} abandoned); ` +
      `${model.keys.size} keys, ${multiVersion} with >= 3 operations, ${deletedNow} deleted now; ${committedGenerations} committed generations (${genFolders.size} folders); ${walSizes.length} WAL entries, the largest ${(largestWalEntry / 1024).toFixed(0)} KiB; ${failures.length} failed ops`,
  );
  if (failures.length) t.log(`failed ops (outcome unknown, allowed): ${[...new Set(failures)].slice(0, 5).join(' | ')}`);

  // The rounds must have done real work, or the checks above prove nothing.
  t.true(totalAcked >= rounds * 10, `only ${totalAcked} acknowledged ops in ${rounds} rounds`);
  t.true(roundsWithPending >= 1, 'no round killed the writer with operations in flight');
  t.true(committedGenerations >= 2, `only ${committedGenerations} flushed generations in the manifests`);
  t.true(multiVersion >= 10, `only ${multiVersion} keys were written 3 times or more`);
  t.true(deletedNow >= 1, 'no key ends deleted');
}

test.serial('crash recovery: SIGKILLed writer on a local directory loses no acknowledged row', async (t) => {
  t.timeout(60_000 + ROUNDS * 6_000);
  const dir = await mkdtemp(path.join(tmpdir(), 'quiver-crash-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await crashRounds(t, { name: 'local', uri: dir, connectOptions: {}, regionSpec: { kind: 'unsharded' }, store: new LocalObjectStore(dir), settleMs: 0 }, ROUNDS);
});

test.serial('crash recovery: SIGKILLed writer on radosgw (S3) loses no acknowledged row', async (t) => {
  t.timeout(60_000 + ROUNDS * 8_000);
  const env = loadS3Env();
  const prefix = 'crash/db';
  const { store, bucket, cleanup } = await makeTestBucketStore(prefix);
  t.teardown(async () => {
    await store.close();
    await cleanup();
  });
  const s3 = { endpoint: env.endpoint, region: env.region, accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey, forcePathStyle: true };
  // Three bucket regions: a put spans several region writers, each claimed and replayed apart.
  await crashRounds(t, { name: 's3', uri: `s3://${bucket}/${prefix}`, connectOptions: { s3 }, regionSpec: { kind: 'bucket', column: 'id', buckets: 3 }, store, settleMs: 100 }, ROUNDS);
});
