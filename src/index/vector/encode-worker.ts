/**
 * IVF-PQ encoding off the event loop (issue 7): `encodeOffThread(model, chunk)` runs
 * `IvfPqEncoder.encode` in a worker thread, so the write path's main thread only applies the
 * codes (`IvfPqIndex.applyEncoded`, ~0.1 µs a row) instead of computing them (~9 µs a row at
 * 128 dims and 256 partitions), and encoding overlaps the WAL write and the other indexes'
 * work — Lance updates its MemTable indexes on their own threads too (lance-memwal.md §3.5).
 *
 * This one file is both sides (like train-worker.ts): imported normally it exports the client;
 * started as a worker (module-worker.ts) it encodes the chunks it is sent. One worker per
 * process, started on first use and kept (unref'd while it has no job, so it never holds the
 * process open); jobs run in the order they were sent and are answered in that order.
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
 * the caller then encodes on its own thread. A job whose worker dies rejects, and the caller
 * encodes it itself; after MAX_FAILURES failed workers no new one is started.
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { type EncodedRows, IvfPqEncoder } from './ivf-pq-encoder.js';
import type { IvfPqModel } from './ivf-pq-model.js';
import { BufferPool, transferable } from '../../util/buffer-pool.js';
import { SingleWorker } from '../../util/single-worker.js';
import type { VectorChunk } from './vector-source.js';

/** Marks the worker's `workerData`, so importing this file in some other worker does nothing. */
const ROLE = 'quiver.ivf-pq-encode';
/** Models the worker keeps (a grown model replaces its predecessor; few are ever in use). */
const MODELS_KEPT = 8;
/** Workers that may fail (error, unexpected exit) in this process before encoding stays here. */
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
 * What the encode worker did in this process (tests and benchmarks read these, never timings):
 * `buffersBack` counts vector buffers it handed back (`sharedBack` of them shared memory, see
 * util/buffer-pool.ts), `buffersReused` jobs that took one of them.
 */
export const encodeWorkerStats = { jobs: 0, rows: 0, failedJobs: 0, workersStarted: 0, workersFailed: 0, buffersBack: 0, sharedBack: 0, buffersReused: 0 };

/** Model ids the current worker holds, oldest first (the worker evicts the same way). */
let held: number[] = [];
let nextModel = 1;
const modelIds = new WeakMap<IvfPqModel, number>();
/** The buffers jobs carry their vectors in, to the worker and back (reused: see util/buffer-pool.ts). */
const vectorBuffers = new BufferPool(64 * 1024, 32 * 1024 * 1024, true);

const worker = new SingleWorker<Request, Exclude<Reply, { ready: true }>>({
  moduleUrl: import.meta.url,
  role: ROLE,
  maxFailures: MAX_FAILURES,
  disabled: process.env.QUIVER_ENCODE_WORKER === '0',
  onStart: () => {
    held = [];
    encodeWorkerStats.workersStarted++;
  },
  onFailed: () => void encodeWorkerStats.workersFailed++,
  onUnavailable: (e) => warnOnce(`no worker thread for IVF-PQ encoding (${e.message}); encoding on the calling thread`),
});

/** Switches off-thread encoding on or off (tests, benchmarks); off stops the worker. */
export function setEncodeWorkerEnabled(on: boolean): void {
  worker.setEnabled(on, 'off-thread encoding was switched off');
}

/**
 * Encodes `chunk` with `model` in the worker. Undefined when no worker is ready to take it now
 * (one is started for later calls): the caller encodes it itself. Rejects if the worker dies
 * before answering.
 */
export function encodeOffThread(model: IvfPqModel, chunk: VectorChunk): Promise<EncodedRows> | undefined {
  if (!worker.takesJobs(true)) return undefined;
  let modelId = modelIds.get(model);
  if (modelId === undefined) modelIds.set(model, (modelId = nextModel++));
  const send = !held.includes(modelId);
  const { data, validity, bitOffset } = copyChunk(model.dim, chunk);
  const request: Request = { id: worker.newId(), modelId, model: send ? { ...model, centroids: model.centroids.slice(), codebooks: model.codebooks.slice() } : undefined, start: chunk.start, count: chunk.count, data, validity, bitOffset };
  let reply: Promise<Exclude<Reply, { ready: true }>>;
  try {
    reply = worker.post(request, [data.buffer as ArrayBuffer]);
  } catch (e) {
    return Promise.reject(e as Error);
  }
  if (send) {
    held.push(modelId);
    if (held.length > MODELS_KEPT) held.shift();
  }
  encodeWorkerStats.jobs++;
  return reply.then(
    (r) => {
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
      encodeWorkerStats.failedJobs++;
      throw e;
    },
  );
}

/** Starts the worker if needed; resolves true once it takes jobs, false when it cannot. */
export function encodeWorkerReady(): Promise<boolean> {
  return worker.ready();
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
