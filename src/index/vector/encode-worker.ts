/**
 * IVF-PQ encoding off the event loop (issue 7): `encodeOffThread(model, chunk)` runs
 * `IvfPqEncoder.encode` in a worker thread, so the write path's main thread only applies the
 * codes (`IvfPqIndex.applyEncoded`, ~0.1 µs a row) instead of computing them (~9 µs a row at
 * 128 dims and 256 partitions), and encoding overlaps the WAL write and the other indexes'
 * work — Lance updates its MemTable indexes on their own threads too (lance-memwal.md §3.5).
 *
 * This one file is both sides (like train-worker.ts): imported normally it exports the client;
 * started as a worker (module-worker.ts) it encodes the chunks it is sent. A process runs one
 * worker per core but one, one to four (QUIVER_ENCODE_WORKERS sets the count; `workerCount`),
 * each started on first use and kept (unref'd while it has no job, so it never holds the process
 * open). A chunk that finds two or more workers idle is split over them and its parts' answers
 * joined into one; otherwise it goes whole to the worker with the fewest rows out. The caller
 * applies answers in its own order (code-queue.ts), whichever worker answers first.
 *
 * What crosses the thread boundary: the chunk's vectors, copied once into a buffer of shared
 * memory that goes there and back (util/buffer-pool.ts; the MemTable keeps the original), its
 * validity bits, and the model the first time it is used (the worker keeps the last
 * MODELS_KEPT, and the client mirrors that list, so it knows when to send a model again); the
 * codes come back with their buffers transferred.
 * The worker runs the same code on the same model as the calling thread would, so its codes are
 * the calling thread's, bit for bit.
 *
 * No worker until it has said it is ready (starting one costs ~0.1 s compiled and over a second
 * under tsx): `encodeOffThread` returns undefined meanwhile, and whenever the worker is
 * disabled (`setEncodeWorkerEnabled(false)`, QUIVER_ENCODE_WORKER=0) or could not be started;
 * the caller then encodes on its own thread. A job whose worker dies rejects (a split job when
 * any of its parts' workers dies), and the caller encodes it itself; a worker slot whose workers
 * failed MAX_FAILURES times starts no new one.
 */
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { emptyEncodedRows, type EncodedRows, IvfPqEncoder } from './ivf-pq-encoder.js';
import type { IvfPqModel } from './ivf-pq-model.js';
import { BufferPool, transferable } from '../../util/buffer-pool.js';
import { SingleWorker } from '../../util/single-worker.js';
import type { VectorChunk } from './vector-source.js';

/** Marks the worker's `workerData`, so importing this file in some other worker does nothing. */
const ROLE = 'quiver.ivf-pq-encode';
/** Models the worker keeps (a grown model replaces its predecessor; few are ever in use). */
const MODELS_KEPT = 8;
/** Failures (error, unexpected exit) each worker slot may have in this process before it stays unused. */
const MAX_FAILURES = 3;

interface Request {
  id: number;
  modelId: number;
  /** Sent with the first job of a model (and again once the worker has let it go). */
  model?: IvfPqModel;
  start: number;
  count: number;
  data: Float32Array;
  validity: Uint8Array | null;
  bitOffset: number;
}

/** `buffer`: the request's vector buffer (shared memory), handed back for reuse. */
type Reply = { ready: true } | { id: number; ok: true; rows: EncodedRows; buffer?: ArrayBuffer } | { id: number; ok: false; message: string; buffer?: ArrayBuffer };

/**
 * What the encode workers did in this process (tests and benchmarks read these, never timings):
 * `jobs` counts chunks taken, `requests` the parts sent (a chunk split over two workers is one job,
 * two requests); `buffersBack` counts vector buffers they handed back (`sharedBack` of them shared memory, see
 * util/buffer-pool.ts), `buffersReused` jobs that took one of them.
 */
export const encodeWorkerStats = { jobs: 0, requests: 0, rows: 0, failedJobs: 0, workersStarted: 0, workersFailed: 0, buffersBack: 0, sharedBack: 0, buffersReused: 0 };

let nextModel = 1;
const modelIds = new WeakMap<IvfPqModel, number>();
/** The buffers jobs carry their vectors in, to the worker and back (reused: see util/buffer-pool.ts). */
const vectorBuffers = new BufferPool(64 * 1024, 32 * 1024 * 1024, true);

/**
 * Encode workers a process runs: QUIVER_ENCODE_WORKERS, else one per core but one (the event
 * loop's), at least one and at most MAX_WORKERS. More than one lets a put's chunk be encoded in
 * parts at once (at one put in flight the encode job is a put's critical path: posted ~1 ms
 * into a 1 000-row put, answered at ~15–17 ms). Not on two cores: there two workers cost
 * 16 → 20 µs of CPU a row over all threads (the SIMD kernel runs slower with both cores busy)
 * and ingest was no faster (IVF-PQ + scalar, 1 in flight: 75 000–85 000 rows/s either way).
 */
const MAX_WORKERS = 4;
function workerCount(): number {
  const asked = Number(process.env.QUIVER_ENCODE_WORKERS);
  if (Number.isInteger(asked) && asked >= 1) return Math.min(asked, 16);
  return Math.max(1, Math.min(MAX_WORKERS, availableParallelism() - 1));
}
/** A chunk is split over idle workers only when each part gets at least this many rows (a job costs the caller ~0.1 ms). */
const MIN_PART_ROWS = 128;

interface EncodeWorker {
  thread: SingleWorker<Request, Exclude<Reply, { ready: true }>>;
  /** Model ids it holds, oldest first (the worker evicts the same way). */
  held: number[];
  /** Rows sent to it and not answered yet. */
  rowsOut: number;
}

function newEncodeWorker(): EncodeWorker {
  const w: EncodeWorker = {
    held: [],
    rowsOut: 0,
    thread: new SingleWorker<Request, Exclude<Reply, { ready: true }>>({
      moduleUrl: import.meta.url,
      role: ROLE,
      maxFailures: MAX_FAILURES,
      disabled: process.env.QUIVER_ENCODE_WORKER === '0',
      // (`rowsOut` is not reset: the old worker's jobs each take their rows off as they reject.)
      onStart: () => {
        w.held = [];
        encodeWorkerStats.workersStarted++;
      },
      onFailed: () => void encodeWorkerStats.workersFailed++,
      onUnavailable: (e) => warnOnce(`no worker thread for IVF-PQ encoding (${e.message}); encoding on the calling thread`),
    }),
  };
  return w;
}

const workers: EncodeWorker[] = Array.from({ length: workerCount() }, newEncodeWorker);

/** How many encode workers this process runs (see `workerCount`). */
export function encodeWorkerCount(): number {
  return workers.length;
}

/** Switches off-thread encoding on or off (tests, benchmarks); off stops the workers. */
export function setEncodeWorkerEnabled(on: boolean): void {
  for (const w of workers) w.thread.setEnabled(on, 'off-thread encoding was switched off');
}

/**
 * Encodes `chunk` with `model` in the workers: split in equal parts over the workers that have
 * nothing to do (when each part gets MIN_PART_ROWS), else whole on the one with the fewest rows
 * out. Undefined when no worker is ready to take it now (they are started for later calls):
 * the caller encodes it itself. Rejects if a worker dies before answering.
 */
export function encodeOffThread(model: IvfPqModel, chunk: VectorChunk): Promise<EncodedRows> | undefined {
  const ready: EncodeWorker[] = [];
  for (const w of workers) if (w.thread.takesJobs(true)) ready.push(w);
  if (ready.length === 0) return undefined;
  let modelId = modelIds.get(model);
  if (modelId === undefined) modelIds.set(model, (modelId = nextModel++));
  const idle = ready.filter((w) => w.rowsOut === 0);
  const parts = Math.min(idle.length, Math.floor(chunk.count / MIN_PART_ROWS));
  encodeWorkerStats.jobs++;
  if (parts < 2) {
    let least = ready[0]!;
    for (const w of ready) if (w.rowsOut < least.rowsOut) least = w;
    return encodeOn(least, model, modelId, chunk);
  }
  const { dim, subVectors } = model;
  const answers: Promise<EncodedRows>[] = [];
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((p * chunk.count) / parts);
    const to = Math.floor(((p + 1) * chunk.count) / parts);
    const part: VectorChunk = { start: chunk.start + from, count: to - from, data: chunk.data.subarray(from * dim, to * dim), validity: chunk.validity, bitOffset: chunk.bitOffset + from };
    answers.push(encodeOn(idle[p]!, model, modelId, part));
  }
  return Promise.all(answers).then((rows) => concatEncoded(rows, chunk.count, subVectors));
}

/** Posts one job to worker `w`; rejects when it cannot be sent or the worker dies first. */
function encodeOn(w: EncodeWorker, model: IvfPqModel, modelId: number, chunk: VectorChunk): Promise<EncodedRows> {
  const send = !w.held.includes(modelId);
  const { data, validity, bitOffset } = copyChunk(model.dim, chunk);
  const request: Request = { id: w.thread.newId(), modelId, model: send ? { ...model, centroids: model.centroids.slice(), codebooks: model.codebooks.slice() } : undefined, start: chunk.start, count: chunk.count, data, validity, bitOffset };
  let reply: Promise<Exclude<Reply, { ready: true }>>;
  try {
    reply = w.thread.post(request, [data.buffer as ArrayBuffer]);
  } catch (e) {
    return Promise.reject(e as Error);
  }
  if (send) {
    w.held.push(modelId);
    if (w.held.length > MODELS_KEPT) w.held.shift();
  }
  encodeWorkerStats.requests++;
  w.rowsOut += chunk.count;
  return reply.then(
    (r) => {
      w.rowsOut -= chunk.count;
      if (r.buffer !== undefined) {
        encodeWorkerStats.buffersBack++;
        if (r.buffer instanceof SharedArrayBuffer) encodeWorkerStats.sharedBack++;
        vectorBuffers.give(new Uint8Array(r.buffer));
      }
      if (r.ok) {
        encodeWorkerStats.rows += r.rows.count + r.rows.skipped;
        return r.rows;
      }
      encodeWorkerStats.failedJobs++;
      throw new Error(r.message);
    },
    (e: Error) => {
      w.rowsOut -= chunk.count;
      encodeWorkerStats.failedJobs++;
      throw e;
    },
  );
}

/**
 * The parts' answers as the one answer the whole chunk (`count` rows, `M` codes a row) would
 * have had: rows in order, arrays sized to the chunk (an answer's arrays are sized to its rows,
 * filled up to its `count`).
 */
function concatEncoded(parts: readonly EncodedRows[], count: number, M: number): EncodedRows {
  const out = emptyEncodedRows(count, M);
  for (const p of parts) {
    const o = out.count;
    const n = p.count;
    out.positions.set(p.positions.subarray(0, n), o);
    out.partitions.set(p.partitions.subarray(0, n), o);
    out.codes.set(p.codes.subarray(0, n * M), o * M);
    out.terms.set(p.terms.subarray(0, n), o);
    out.errors.set(p.errors.subarray(0, n), o);
    out.count = o + n;
    out.skipped += p.skipped;
  }
  return out;
}

/** Starts the workers if needed; resolves true once they take jobs, false when none can. */
export async function encodeWorkerReady(): Promise<boolean> {
  const ready = await Promise.all(workers.map((w) => w.thread.ready()));
  return ready.some(Boolean);
}

/** The chunk's vectors in a buffer of their own (from the pool), and the validity bits they need (re-based to bit < 8). */
function copyChunk(dim: number, c: VectorChunk): { data: Float32Array; validity: Uint8Array | null; bitOffset: number } {
  const n = c.count * dim;
  const reused = vectorBuffers.reused;
  const data = new Float32Array(vectorBuffers.take(n * 4).buffer, 0, n);
  encodeWorkerStats.buffersReused += vectorBuffers.reused - reused;
  data.set(c.data.subarray(0, n));
  if (c.validity === null) return { data, validity: null, bitOffset: 0 };
  const first = c.bitOffset >> 3;
  const last = (c.bitOffset + c.count + 7) >> 3;
  return { data, validity: c.validity.slice(first, last), bitOffset: c.bitOffset & 7 };
}

let warned = false;
function warnOnce(reason: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(reason, { code: 'QUIVER_ENCODE_WORKER' });
}

// ---- the worker side ---------------------------------------------------------------------------

if (!isMainThread && parentPort && (workerData as { role?: string } | undefined)?.role === ROLE) {
  const port = parentPort;
  const models = new Map<number, IvfPqModel>();
  port.on('message', (r: Request) => {
    let reply: Reply;
    try {
      if (r.model) {
        models.set(r.modelId, r.model);
        if (models.size > MODELS_KEPT) models.delete(models.keys().next().value!);
      }
      const model = models.get(r.modelId);
      if (!model) throw new Error(`encode worker: model ${r.modelId} is not held`);
      const rows = IvfPqEncoder.of(model).encode({ start: r.start, count: r.count, data: r.data, validity: r.validity, bitOffset: r.bitOffset });
      reply = { id: r.id, ok: true, rows };
    } catch (e) {
      reply = { id: r.id, ok: false, message: (e as Error).message };
    }
    // The vectors' buffer goes back (encoding is done with it), to carry a later job.
    reply.buffer = r.data.buffer as ArrayBuffer;
    const transfer = reply.ok ? [reply.rows.positions.buffer, reply.rows.partitions.buffer, reply.rows.codes.buffer, reply.rows.terms.buffer, reply.rows.errors.buffer, reply.buffer] : [reply.buffer];
    port.postMessage(reply, transferable(transfer));
  });
  port.postMessage({ ready: true } satisfies Reply);
}
