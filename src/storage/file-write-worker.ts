/**
 * The local store's small writes, each done start to finish by a thread of its own (issue 7).
 *
 * A durable local write is a chain of system calls: open the temp file, write, fsync, close,
 * link (or rename) it to its name, remove the temp name, fsync the directory. Through
 * `fs.promises` every step is a job on libuv's pool whose completion waits for a turn of the
 * event loop before the next step is issued; on a loop that is busy — a region writer indexes the
 * rows of the WAL entry it is writing meanwhile, in slices of a few milliseconds — each step waits
 * for a slice to end, and a write of 1–4 ms of I/O finished several milliseconds after the
 * indexing, which is when the put could have been acknowledged. Here the whole chain runs
 * synchronously on this worker, so the main thread pays one message out and one back, and the
 * write takes what the disk takes, whatever the loop is doing.
 *
 * This one file is both sides (like the encode worker): imported normally it exports the client;
 * started as a worker (`startModuleWorker`) it writes what it is sent. One worker per process,
 * started by the first write after START_AFTER_WRITES (or by `fileWriteWorkerReady()`) and kept
 * (unref'd while it has no job, so it never holds the process open);
 * `writeOffThread` returns undefined until it has said it is ready (starting one costs ~0.1 s
 * compiled and over a second under tsx), whenever it is disabled
 * (`setFileWriteWorkerEnabled(false)`, QUIVER_FILE_WORKER=0) and after MAX_FAILURES failed
 * workers: the store then writes through `fs.promises` itself.
 *
 * The data is copied once into a buffer of shared memory that goes to the worker (the caller
 * keeps its own) and comes back with the answer, for the next write (util/buffer-pool.ts), so
 * only writes of up to OFF_THREAD_MAX_BYTES come here: a large object's copy would stall the loop
 * longer than its steps' turns cost it. A worker that dies with jobs out leaves their outcome
 * unknown (the object may or may not have been published): they fail as unavailable, never
 * retried here, because retrying a put-if-absent that did land would report a conflict with
 * itself.
 */
import { closeSync, constants as fsc, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { BufferPool, transferable } from '../util/buffer-pool.js';
import { SingleWorker } from '../util/single-worker.js';

/** Marks the worker's `workerData`, so importing this file in some other worker does nothing. */
const ROLE = 'quiver.file-write';
/** Workers that may fail (error, unexpected exit) in this process before writes stay on the loop. */
const MAX_FAILURES = 3;
/** Larger writes are done by the caller (see the file comment). */
export const OFF_THREAD_MAX_BYTES = 16 * 1024 * 1024;
/**
 * The worker is started by the write after this many: a short-lived process (a command-line
 * call, a test) writes a few objects and would pay for starting a thread it never uses.
 */
const START_AFTER_WRITES = 32;

/** One durable write: `data` to the new file `tmp`, then published as `target`. */
export interface FileWrite {
  tmp: string;
  target: string;
  /** `link`: fails with EEXIST when `target` exists (put-if-absent); `rename`: replaces it. */
  publish: 'link' | 'rename';
  /** fsync the file before publishing and its directory after. */
  fsync: boolean;
  parts: readonly Uint8Array[];
}

/**
 * What a write came to. A failure names the step and the errno code; the temp file is removed
 * (best effort) before the answer. A directory its file system cannot fsync (NO_DIR_SYNC) is
 * not a failure, as in the store itself.
 */
export type FileWriteOutcome = { ok: true } | { ok: false; step: 'write' | 'publish' | 'sync-dir'; code: string | undefined; message: string };

interface Request {
  id: number;
  tmp: string;
  target: string;
  publish: 'link' | 'rename';
  fsync: boolean;
  data: Uint8Array;
}

/** `buffer`: the request's data buffer (shared memory), handed back for reuse. */
type Reply = { ready: true } | { id: number; outcome: FileWriteOutcome; buffer?: ArrayBuffer };

/**
 * What the worker did in this process (tests and benchmarks read these, never timings):
 * `buffersBack` counts data buffers it handed back (`sharedBack` of them shared memory, see
 * util/buffer-pool.ts), `buffersReused` writes that took one of them.
 */
export const fileWriteWorkerStats = { jobs: 0, bytes: 0, workersStarted: 0, workersFailed: 0, buffersBack: 0, sharedBack: 0, buffersReused: 0 };

let writesSeen = 0;

/** The buffers writes carry to the worker and back (a write's is reused once it has come back). */
const transferBuffers = new BufferPool(64 * 1024, 32 * 1024 * 1024, true);

const worker = new SingleWorker<Request, Exclude<Reply, { ready: true }>>({
  moduleUrl: import.meta.url,
  role: ROLE,
  maxFailures: MAX_FAILURES,
  disabled: process.env.QUIVER_FILE_WORKER === '0',
  onStart: () => void fileWriteWorkerStats.workersStarted++,
  onFailed: () => void fileWriteWorkerStats.workersFailed++,
});

/** Switches off-thread writes on or off (tests, benchmarks); off stops the worker. */
export function setFileWriteWorkerEnabled(on: boolean): void {
  worker.setEnabled(on, 'off-thread file writes were switched off');
}

/**
 * Does `w` on the worker. Undefined when it should not or cannot go there now (too large, no
 * worker ready yet: one is started when it is time); the caller writes it itself. Rejects only
 * when the worker dies before answering (the write's outcome is then unknown).
 */
export function writeOffThread(w: FileWrite): Promise<FileWriteOutcome> | undefined {
  let bytes = 0;
  for (const p of w.parts) bytes += p.byteLength;
  if (bytes > OFF_THREAD_MAX_BYTES) return undefined;
  if (!worker.takesJobs(++writesSeen > START_AFTER_WRITES)) return undefined;
  const reused = transferBuffers.reused;
  const data = transferBuffers.take(bytes).subarray(0, bytes);
  fileWriteWorkerStats.buffersReused += transferBuffers.reused - reused;
  let at = 0;
  for (const part of w.parts) {
    data.set(part, at);
    at += part.byteLength;
  }
  const request: Request = { id: worker.newId(), tmp: w.tmp, target: w.target, publish: w.publish, fsync: w.fsync, data };
  let reply: Promise<Exclude<Reply, { ready: true }>>;
  try {
    reply = worker.post(request, [data.buffer as ArrayBuffer]);
  } catch {
    return undefined; // not sent: nothing was written
  }
  fileWriteWorkerStats.jobs++;
  fileWriteWorkerStats.bytes += bytes;
  return reply.then((r) => {
    if (r.buffer !== undefined) {
      fileWriteWorkerStats.buffersBack++;
      if (r.buffer instanceof SharedArrayBuffer) fileWriteWorkerStats.sharedBack++;
      transferBuffers.give(new Uint8Array(r.buffer));
    }
    return r.outcome;
  });
}

/** Starts the worker if needed; resolves true once it takes writes, false when it cannot. */
export function fileWriteWorkerReady(): Promise<boolean> {
  return worker.ready();
}

// ---- the worker side ---------------------------------------------------------------------------

/** What file systems that cannot fsync a directory answer (the local store's list). */
export const NO_DIR_SYNC = new Set(['EINVAL', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR']);

function failure(step: 'write' | 'publish' | 'sync-dir', e: unknown): FileWriteOutcome {
  return { ok: false, step, code: (e as NodeJS.ErrnoException).code, message: (e as Error).message };
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // best effort: the store's sweep removes a leftover temp file at its next open
  }
}

/** The whole write, synchronously (the worker's side of `writeOffThread`). */
function writeNow(r: Request): FileWriteOutcome {
  let fd: number;
  try {
    fd = openSync(r.tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o644);
  } catch (e) {
    return failure('write', e);
  }
  try {
    for (let at = 0; at < r.data.byteLength; ) at += writeSync(fd, r.data, at, r.data.byteLength - at);
    if (r.fsync) fsyncSync(fd);
  } catch (e) {
    closeQuietly(fd);
    removeQuietly(r.tmp);
    return failure('write', e);
  }
  closeQuietly(fd); // the data is synced: a failed close loses nothing
  try {
    if (r.publish === 'link') linkSync(r.tmp, r.target);
    else renameSync(r.tmp, r.target);
  } catch (e) {
    removeQuietly(r.tmp);
    return failure('publish', e);
  }
  if (r.publish === 'link') removeQuietly(r.tmp);
  if (!r.fsync) return { ok: true };
  try {
    const dfd = openSync(path.dirname(r.target), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeQuietly(dfd);
    }
  } catch (e) {
    if (!NO_DIR_SYNC.has((e as NodeJS.ErrnoException).code ?? '')) return failure('sync-dir', e);
  }
  return { ok: true };
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // nothing depends on it
  }
}

if (!isMainThread && parentPort && (workerData as { role?: string } | undefined)?.role === ROLE) {
  const port = parentPort;
  port.on('message', (r: Request) => {
    let outcome: FileWriteOutcome;
    try {
      outcome = writeNow(r);
    } catch (e) {
      outcome = failure('write', e);
    }
    // The data's buffer goes back (the write is done with it), to carry a later write.
    const buffer = r.data.buffer as ArrayBuffer;
    port.postMessage({ id: r.id, outcome, buffer } satisfies Reply, transferable([buffer]));
  });
  port.postMessage({ ready: true } satisfies Reply);
}
