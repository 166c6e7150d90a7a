/**
 * One simulated schedule: 2–3 writer processes and a few reader processes on one region of one
 * table, over the simulated store, driven by a seeded workload of puts, deletes, flushes, reads,
 * crashes (a process abandoned mid-flight) and takeovers (a new process claiming the region).
 * Every read is checked against the model as it completes; at the end a fresh reader, then a
 * fresh writer (which replays the WAL and flushes) and another fresh reader check the final
 * state with faults off.
 *
 * Processes use the public embedded API (`connect`, `openTable`, `put`, `delete`, `flush`,
 * `scan`, `close`) exactly as an application would, each with its own Database over its own
 * store client, all sharing the simulated clock.
 */
import { Field, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { connect, type Database, isQuiverError, type Table } from '../../src/quiver.js';
import type { RegionWriterConfig } from '../../src/region/writer-config.js';
import { mulberry32 } from '../helpers/rng.js';
import { type KeyOp, Model, MonotonicReader, type Observation } from './model.js';
import { type FaultProfile, NO_FAULTS, SimStorage, type SimStoreClient } from './sim-store.js';
import { SimRuntime } from './sim-runtime.js';

export const simSchema = new Schema([new Field('id', new Int64(), false), new Field('v', new Int64(), true)]);

export interface ScheduleOptions {
  seed: number;
  /** Workload actions (default 80; 45 for the takeover profile). */
  actions?: number;
  /** Check every read's freshness against acks that came before it (default true). */
  checkFreshness?: boolean;
  /**
   * `mixed` draws writer settings and faults at random. `takeover` aims at the narrowest race
   * there is: a writer with many single-put WAL entries in flight crashes or is fenced, its
   * requests land late and spread out, and the new writer flushes after every put, so a late
   * entry can land right after the new writer's flushed cursor (default: seed-dependent).
   */
  profile?: 'mixed' | 'takeover';
}

export interface ScheduleResult {
  seed: number;
  problems: string[];
  trace: string[];
  stats: { acked: number; failed: number; unknown: number; reads: number; crashes: number; takeovers: number; steps: number; simMs: number };
}

interface Proc {
  name: string;
  client: SimStoreClient;
  db: Database;
  table: Table;
  alive: boolean;
  /** Ops in flight from this process (abandoned when it crashes). */
  pending: Set<{ key: number; op: KeyOp }>;
  reader: MonotonicReader;
}

const KEYS = 10;

export async function runSchedule(options: ScheduleOptions): Promise<ScheduleResult> {
  const { seed } = options;
  const rng = mulberry32(seed);
  const runtime = new SimRuntime(seed ^ 0x5eed);
  // Lines are kept unformatted (time + text or a function making it) and formatted only when
  // the trace is read: formatting every storage request costs more than running it.
  const lines: { at: number; text: string | (() => string) }[] = [];
  const log = (text: string | (() => string)) => lines.push({ at: runtime.now(), text });
  const storage = new SimStorage(runtime, mulberry32(seed ^ 0xabcd), log);
  const model = new Model();
  const problems: string[] = [];
  let tick = 0;
  let version = 0;
  let procCount = 0;
  let crashes = 0;
  let takeovers = 0;
  let reads = 0;

  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
  const profile = options.profile ?? (seed % 3 === 0 ? 'takeover' : 'mixed');
  const takeoverProfile = profile === 'takeover';
  const writer: Partial<RegionWriterConfig> = takeoverProfile
    ? { maxWalFlushIntervalMs: 0, maxMemtableRows: 1, maxWalWritesInFlight: 8, maxWalBufferSize: 1, backpressureTimeoutMs: 2000 }
    : {
        maxWalFlushIntervalMs: pick([0, 2, 5, 20]),
        maxMemtableRows: pick([2, 4, 16, 64]),
        maxWalWritesInFlight: pick([1, 2, 4, 8]),
        maxWalBufferSize: pick([1, 4096, 1 << 20]),
        backpressureTimeoutMs: 2000,
      };
  const faults: FaultProfile = {
    failBefore: pick([0, 0.02, 0.05]),
    failAfter: pick([0, 0.02, 0.05]),
    latencyMs: [0.2, pick([2, 5])],
    stragglerRate: pick([0, 0.05, 0.15]),
    stragglerMs: [20, 300],
  };
  if (takeoverProfile) faults.stragglerRate = 0.01;
  log(`seed ${seed} profile ${profile} writer ${JSON.stringify(writer)} faults ${JSON.stringify(faults)}`);

  const open = async (role: string): Promise<Proc | undefined> => {
    const name = `${role}${++procCount}`;
    const client = storage.client(name);
    const db = await connect('memory://', { store: client, runtime, writer, retry: { maxAttempts: 3, baseDelayMs: 2, maxDelayMs: 20 } });
    const opened = await runtime.settle(db.openTable('t'));
    if (!opened?.ok) {
      log(`${name} could not open the table: ${opened ? (opened.error as Error).message : 'stalled'}`);
      return undefined;
    }
    log(`${name} started`);
    return { name, client, db, table: opened.value, alive: true, pending: new Set(), reader: new MonotonicReader(model, name) };
  };

  // Set-up: the table, created without faults.
  {
    const setupClient = storage.client('setup');
    const db = await connect('memory://', { store: setupClient, runtime });
    const created = await runtime.settle(db.createTable('t', simSchema, { primaryKey: 'id' }));
    if (!created?.ok) throw new Error(`sim set-up failed: ${created ? String(created.error) : 'stalled'}`);
  }
  storage.faults = faults;

  const writers: Proc[] = [];
  const readers: Proc[] = [];
  for (let i = 0; i < 2; i++) {
    const p = await open('w');
    if (p) writers.push(p);
  }
  for (let i = 0; i < 2; i++) {
    const p = await open('r');
    if (p) readers.push(p);
  }

  const write = (p: Proc, kind: 'put' | 'delete') => {
    const free = Array.from({ length: KEYS }, (_, k) => k).filter((k) => !model.isBusy(k));
    if (free.length === 0) return;
    const n = kind === 'put' ? 1 + Math.floor(rng() * Math.min(3, free.length)) : 1;
    const keys: number[] = [];
    for (let i = 0; i < n; i++) keys.push(free.splice(Math.floor(rng() * free.length), 1)[0]);
    const entries = keys.map((key) => ({ key, op: model.begin(key, kind, ++version) }));
    for (const e of entries) p.pending.add(e);
    const label = `${p.name} ${kind} ${entries.map((e) => `${e.key}=v${e.op.version}`).join(',')}`;
    log(`${label} issued`);
    const done = kind === 'put' ? p.table.put(batchOf(entries.map((e) => [e.key, e.op.version]))) : p.table.delete(keys.map(BigInt));
    done.then(
      () => {
        const at = ++tick;
        for (const e of entries) {
          model.settle(e.key, e.op, 'acked', at);
          p.pending.delete(e);
        }
        log(`${label} acked`);
      },
      (e: unknown) => {
        for (const en of entries) {
          model.settle(en.key, en.op, 'failed', 0);
          p.pending.delete(en);
        }
        log(`${label} failed: ${(e as Error).message}`);
        if (isQuiverError(e, 'fenced') && p.alive) void recoverFromFence(p);
      },
    );
  };

  /** The documented recovery from `fenced`: close the table, open it again, write again. */
  const recoverFromFence = async (p: Proc) => {
    if (rng() < 0.5) return;
    try {
      await p.table.close();
    } catch {
      // Closing a fenced table reports nothing worth acting on here.
    }
    try {
      p.table = await p.db.openTable('t');
      log(`${p.name} reopened the table after fenced`);
    } catch (e) {
      log(`${p.name} could not reopen: ${(e as Error).message}`);
    }
  };

  const read = (p: Proc) => {
    const startedAt = ++tick;
    const id = ++reads;
    const baseline = p.reader.begin();
    log(`${p.name} read#${id} begins`);
    void observe(p.table).then(
      (obs) => {
        if (typeof obs === 'string') {
          problems.push(`${p.name}: ${obs}`);
          return;
        }
        log(`${p.name} read#${id} ${show(obs)}`);
        if (options.checkFreshness !== false) problems.push(...model.checkRead(obs, startedAt, `${p.name} read`));
        problems.push(...p.reader.check(obs, baseline));
      },
      (e: unknown) => log(`${p.name} read#${id} failed: ${(e as Error).message}`),
    );
  };

  // Takeover schedules are shorter: their races happen around each crash, and they flush a
  // generation per put, which makes long schedules slow.
  const actions = options.actions ?? (takeoverProfile ? 45 : 80);
  for (let a = 0; a < actions && problems.length === 0; a++) {
    await runtime.run(runtime.now() + rng() * 6);
    const live = writers.filter((w) => w.alive);
    const r = rng();
    if (live.length === 0 || (r < 0.04 && live.length < 3)) {
      const p = await open('w');
      if (p) {
        writers.push(p);
        takeovers++;
      }
    } else if (r < 0.62) write(pick(live), 'put');
    else if (r < 0.7) write(pick(live), 'delete');
    else if (r < 0.76) {
      const p = pick(live);
      log(`${p.name} flush`);
      p.table.flush().then(
        () => log(`${p.name} flush done`),
        (e: unknown) => log(`${p.name} flush failed: ${(e as Error).message}`),
      );
    } else if (r < 0.95) read(rng() < 0.6 ? pick(readers) : pick(live));
    else if (live.length > 1 || rng() < 0.3) {
      // Crash a writer, preferring one with writes in flight (their requests may land later).
      const busiest = Math.max(...live.map((w) => w.client.requestsInFlight));
      const busy = live.filter((w) => w.pending.size > 0 && w.client.requestsInFlight === busiest);
      const p = pick(busy.length > 0 ? busy : live);
      if (takeoverProfile) {
        // A burst just before the crash: several single-put WAL entries in flight at once.
        const burst = 2 + Math.floor(rng() * 5);
        for (let i = 0; i < burst; i++) write(p, 'put');
        await runtime.run(runtime.now() + rng() * 0.5);
      }
      p.alive = false;
      p.client.kill(takeoverProfile || rng() < 0.5);
      model.abandon(p.pending);
      p.pending.clear();
      crashes++;
      log(`${p.name} crashed`);
      // Usually another process takes over at once, while the dead one's requests are in flight.
      if (rng() < 0.7) {
        const q = await open('w');
        if (q) {
          writers.push(q);
          takeovers++;
        }
      }
    }
  }

  // Let everything in flight finish (bounded: a livelock shows up as a problem).
  const quiet = await runtime.run(runtime.now() + 120_000, () => problems.length > 0);
  if (quiet === 'time') problems.push('the system did not go quiet within 120 s of simulated time after the workload');

  // Final checks, faults off: a fresh reader; a fresh writer (replay + flush); a fresh reader.
  storage.faults = NO_FAULTS;
  for (const p of writers) if (p.alive) model.abandon(p.pending);
  if (problems.length === 0) {
    const finalRead = async (who: string) => {
      const p = await open(who);
      if (!p) return problems.push(`${who}: could not open the table`);
      const obs = await runtime.settle(observe(p.table));
      if (!obs?.ok) return problems.push(`${who}: final read failed: ${obs ? (obs.error as Error).message : 'stalled'}`);
      if (typeof obs.value === 'string') return problems.push(`${who}: ${obs.value}`);
      obs.value.delete(KEYS); // the final writer's own key
      log(`${p.name} final read ${show(obs.value)}`);
      problems.push(...model.checkRead(obs.value, Number.POSITIVE_INFINITY, `${who} final read`));
    };
    await finalRead('final-reader-');
    const w = await open('final-writer-');
    if (w) {
      const key = KEYS; // a key of its own, so the model's keys stay untouched
      const put = await runtime.settle(w.table.put(batchOf([[key, 0]])).then(() => w.table.flush()));
      if (!put?.ok) problems.push(`final writer could not write and flush: ${put ? (put.error as Error).message : 'stalled'}`);
      const obs = await runtime.settle(observe(w.table));
      if (obs?.ok && typeof obs.value !== 'string') {
        obs.value.delete(key);
        problems.push(...model.checkRead(obs.value, Number.POSITIVE_INFINITY, 'final writer read'));
      }
      await runtime.settle(w.table.close());
    }
    await finalRead('final-reader-after-replay-');
  }

  const s = model.summary();
  return {
    seed,
    problems,
    get trace() {
      return lines.map(({ at, text }) => `${at.toFixed(2).padStart(9)} ${typeof text === 'string' ? text : text()}`);
    },
    stats: { ...s, reads, crashes, takeovers, steps: runtime.steps, simMs: Math.round(runtime.now()) },
  };
}

function batchOf(rows: [number, number][]): RecordBatch {
  const ids = makeData({ type: new Int64(), length: rows.length, nullCount: 0, data: BigInt64Array.from(rows.map(([k]) => BigInt(k))) });
  const vs = makeData({ type: new Int64(), length: rows.length, nullCount: 0, data: BigInt64Array.from(rows.map(([, v]) => BigInt(v))) });
  return new RecordBatch(simSchema, makeData({ type: new Struct(simSchema.fields), length: rows.length, nullCount: 0, children: [ids, vs] }));
}

/** Every live row of a scan, or a message when a key shows up twice. */
async function observe(table: Table): Promise<Observation | string> {
  const out: Observation = new Map();
  for await (const batch of table.scan()) {
    const [idData, vData] = batch.data.children;
    const ids = idData.values as BigInt64Array;
    const vs = vData.values as BigInt64Array;
    for (let i = 0; i < batch.numRows; i++) {
      const id = Number(ids[idData.offset + i]);
      if (out.has(id)) return `key ${id} appears twice in one scan`;
      out.set(id, Number(vs[vData.offset + i]));
    }
  }
  return out;
}

function show(obs: Observation): string {
  return [...obs].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}=v${v}`).join(' ');
}
