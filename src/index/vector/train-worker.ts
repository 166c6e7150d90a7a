/**
 * IVF-PQ training off the event loop (issue 7): `trainIvfPqOffThread` runs `trainIvfPq` in a
 * worker thread (node:worker_threads), so a server keeps answering while a model trains (seconds
 * at 100k × 128).
 *
 * This one file is both sides: imported normally it exports the client; started as a worker
 * (its own URL, `import.meta.url`: `.js` when compiled by tsc, `.ts` under tsx — see
 * module-worker.ts) it trains the vectors it is sent and posts each model back. One worker per
 * process is started on first use and kept, idle and unref'd, for the next training.
 *
 * What crosses the thread boundary: the non-null vectors, copied once (in steps that yield to
 * the event loop) into one contiguous Float32Array whose buffer is transferred, not copied
 * again, plus the training parameters; the model comes back with its two Float32Arrays
 * transferred. (So training holds a second copy of the column's vectors meanwhile: 51 MB at
 * 100k × 128; `trainIvfPq` only reads a sample of them, but which rows it samples depends on a
 * PRNG it then keeps using for k-means, so the sample cannot be drawn here without changing the
 * model.) Dropping null rows changes nothing:
 * `trainIvfPq` skips them without drawing from its PRNG, and it reads rows in position order
 * regardless of how they are chunked, so the worker's model is the in-process one, bit for bit,
 * for the same input and seed.
 *
 * If no worker can be started (or it dies before answering), training falls back to the calling
 * thread and the result says why (`offThread: false`, `reason`); a training error (too few
 * vectors, bad parameters) is rethrown as the in-process call would throw it.
 */
import { isMainThread, parentPort, type Worker, workerData } from 'node:worker_threads';
import { startModuleWorker } from '../../util/module-worker.js';
import { type IvfPqModel, trainIvfPq, type TrainIvfPqParams } from './ivf-pq-model.js';
import { isValidAt, VectorSource } from './vector-source.js';
import { nextTurn } from '../../util/steps.js';

/** Marks the worker's `workerData`, so importing this file in some other worker does nothing. */
const ROLE = 'quiver.ivf-pq-train';

interface Request {
  dim: number;
  count: number;
  vectors: Float32Array;
  params: TrainIvfPqParams;
}

type Reply = { ok: true; model: IvfPqModel } | { ok: false; message: string };

export interface OffThreadTraining {
  model: IvfPqModel;
  /** True when a worker thread trained the model. */
  offThread: boolean;
  /** Why the calling thread trained it instead. */
  reason?: string;
}

export interface OffThreadOptions {
  /** Train on the calling thread without trying a worker (tests, or callers that are workers). */
  inProcess?: boolean;
  /** Values copied per step while gathering the vectors, between yields to the event loop. */
  copyStep?: number;
}

const DEFAULT_COPY_STEP = 1 << 18;

/** Trains like `trainIvfPq(source, params)`, in a worker thread. */
export async function trainIvfPqOffThread(source: VectorSource, params: TrainIvfPqParams, options: OffThreadOptions = {}): Promise<OffThreadTraining> {
  if (options.inProcess) return { model: trainIvfPq(source, params), offThread: false, reason: 'in-process training was asked for' };
  const { vectors, count } = await gatherVectors(source, options.copyStep ?? DEFAULT_COPY_STEP);
  let reply: Reply;
  try {
    reply = await runWorker({ dim: source.dim, count, vectors, params });
  } catch (e) {
    // The vectors' buffer went to the worker; the source still holds the rows.
    const reason = `no worker thread for IVF-PQ training (${(e as Error).message}); trained on the calling thread`;
    warnOnce(reason);
    return { model: trainIvfPq(source, params), offThread: false, reason };
  }
  if (!reply.ok) throw new Error(reply.message);
  return { model: reply.model, offThread: true };
}

/** The non-null vectors of `source` in position order, copied into one array (in steps). */
async function gatherVectors(source: VectorSource, step: number): Promise<{ vectors: Float32Array; count: number }> {
  const dim = source.dim;
  let count = 0;
  for (const c of source.chunks) {
    if (c.validity === null) count += c.count;
    else for (let i = 0; i < c.count; i++) if (isValidAt(c.validity, c.bitOffset, i)) count++;
  }
  const vectors = new Float32Array(count * dim);
  let o = 0;
  let sinceYield = 0;
  for (const c of source.chunks) {
    if (c.validity === null) {
      for (let i = 0; i < c.count; ) {
        const n = Math.min(c.count - i, Math.max(1, Math.floor(step / dim)));
        vectors.set(c.data.subarray(i * dim, (i + n) * dim), o);
        o += n * dim;
        i += n;
        sinceYield += n * dim;
        if (sinceYield >= step) {
          sinceYield = 0;
          await nextTurn();
        }
      }
    } else {
      for (let i = 0; i < c.count; i++) {
        if (!isValidAt(c.validity, c.bitOffset, i)) continue;
        vectors.set(c.data.subarray(i * dim, (i + 1) * dim), o);
        o += dim;
        if ((sinceYield += dim) >= step) {
          sinceYield = 0;
          await nextTurn();
        }
      }
    }
  }
  return { vectors, count };
}

/** Training jobs in flight on the shared worker, by id. */
interface Job {
  resolve: (reply: Reply) => void;
  reject: (e: Error) => void;
}

/**
 * One worker per process, started on first use and kept (unref'd while idle, so it never holds
 * the process open): starting one costs ~0.1 s compiled and over a second under tsx, which a
 * table paying it for every index would notice. Jobs run one after another on it.
 */
let shared: { worker: Worker; jobs: Map<number, Job> } | undefined;
let nextJob = 1;

function runWorker(request: Request): Promise<Reply> {
  return new Promise<Reply>((resolve, reject) => {
    let pool = shared;
    if (!pool) {
      let worker: Worker;
      try {
        worker = startWorker();
      } catch (e) {
        reject(e as Error);
        return;
      }
      const jobs = new Map<number, Job>();
      const current = (pool = shared = { worker, jobs });
      const fail = (e: Error) => {
        if (shared === current) shared = undefined;
        for (const job of jobs.values()) job.reject(e);
        jobs.clear();
        void worker.terminate();
      };
      worker.on('message', (reply: Reply & { id: number }) => {
        const job = jobs.get(reply.id);
        jobs.delete(reply.id);
        if (jobs.size === 0) worker.unref();
        job?.resolve(reply);
      });
      worker.on('error', (e) => fail(e));
      worker.on('exit', (code) => fail(new Error(`the training worker exited with code ${code}`)));
    }
    const id = nextJob++;
    pool.jobs.set(id, { resolve, reject });
    pool.worker.ref();
    try {
      pool.worker.postMessage({ ...request, id }, [request.vectors.buffer as ArrayBuffer]);
    } catch (e) {
      pool.jobs.delete(id);
      if (pool.jobs.size === 0) pool.worker.unref();
      reject(e as Error);
    }
  });
}

/** A worker running this file (see module-worker.ts for the `.ts` case). */
function startWorker(): Worker {
  return startModuleWorker(import.meta.url, { role: ROLE });
}

let warned = false;
function warnOnce(reason: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(reason, { code: 'QUIVER_TRAIN_WORKER' });
}


// ---- the worker side ---------------------------------------------------------------------------

if (!isMainThread && parentPort && (workerData as { role?: string } | undefined)?.role === ROLE) {
  const port = parentPort;
  port.on('message', ({ id, dim, count, vectors, params }: Request & { id: number }) => {
    let reply: Reply;
    try {
      const source = new VectorSource(dim, [{ start: 0, count, data: vectors, validity: null, bitOffset: 0 }]);
      reply = { ok: true, model: trainIvfPq(source, params) };
    } catch (e) {
      reply = { ok: false, message: (e as Error).message };
    }
    port.postMessage({ ...reply, id }, reply.ok ? [reply.model.centroids.buffer as ArrayBuffer, reply.model.codebooks.buffer as ArrayBuffer] : []);
  });
}
