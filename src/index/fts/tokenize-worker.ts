/**
 * Full-text tokenizing off the event loop (issue 7): `tokenizeOffThread(options, data)` runs
 * `tokenizeRows` (row-tokens.ts) on a chunk of Utf8 rows in a worker thread, so the write path's
 * main thread only maps the tokens' lexicon ids to its index's term ids and moves them into the
 * postings (`InvertedIndex.addTokenized`), about half of what `add` costs there; finding, lower-casing,
 * stemming and looking up each word happens here, overlapping the WAL write and the other
 * indexes' work (like IVF-PQ encoding: encode-worker.ts, whose shape this file follows).
 *
 * This one file is both sides: imported normally it exports the client; started as a worker
 * (module-worker.ts) it tokenizes the chunks it is sent. One worker per process, started on
 * first use and kept (unref'd while it has no job); jobs are answered in the order they were
 * sent. Every answer feeds the client's `LexiconMirror` for its tokenizer configuration, in that
 * order, before anyone reads it — also the answers of jobs that were meanwhile done here.
 *
 * What crosses the thread boundary: the chunk's text bytes and offsets (copied into one buffer of
 * shared memory, util/buffer-pool.ts) and its validity bits; back come the token ids and
 * positions (one buffer, shared memory too) and the terms new to the mirror. The buffers go round
 * rather than being made fresh for every job (fresh memory page-faults as it fills: ~0.1 fault a
 * row ingested, ~1 µs a row on the VMs this project is measured on): the worker sends the text
 * buffer back with its answer, the caller hands the tokens' buffer back once the rows are indexed
 * (`TokenizedElsewhere.release`), and each request carries a spare buffer for the worker's next
 * answer. `source` names the worker instance, so a restarted worker (a new lexicon) starts a new
 * mirror. No worker until it is ready, when disabled (`setTokenizeWorkerEnabled(false)`,
 * QUIVER_TOKENIZE_WORKER=0) or after MAX_FAILURES failed workers: `tokenizeOffThread` returns
 * undefined and the caller indexes the rows itself; a job whose worker dies rejects, and the
 * caller does the same.
 */
import { type Data, type Utf8 } from 'apache-arrow';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { BufferPool, transferable } from '../../util/buffer-pool.js';
import { SingleWorker } from '../../util/single-worker.js';
import { LexiconMirror, type TakeBuffer, tokenizeRows, type TokenizedRows, utf8Rows } from './row-tokens.js';
import { resolveTokenizerOptions, type ResolvedTokenizerOptions, type TokenizerOptions } from './tokenizer.js';

/** Marks the worker's `workerData`, so importing this file in some other worker does nothing. */
const ROLE = 'quiver.fts-tokenize';
/** Workers that may fail (error, unexpected exit) in this process before tokenizing stays here. */
const MAX_FAILURES = 3;

interface Request {
  id: number;
  source: number;
  options: ResolvedTokenizerOptions;
  /** The text bytes, then the offsets, in one buffer. */
  values: Uint8Array;
  offsets: Int32Array;
  validity: Uint8Array | null;
  count: number;
  /** Buffers the worker may answer in (shared memory). */
  spare: ArrayBuffer[];
}

/** `spare`: buffers going back to the caller (the request's text buffer, once read). */
type Reply = { ready: true } | { id: number; ok: true; rows: TokenizedRows; spare: ArrayBuffer[] } | { id: number; ok: false; message: string; spare: ArrayBuffer[] };

/** Buffers smaller than this are made fresh (cheap); the others go round (see the module comment). */
const MIN_POOLED_BYTES = 16 * 1024;
/** Idle buffers each side keeps. */
const MAX_IDLE_BYTES = 8 * 1024 * 1024;

/** What the tokenize worker did in this process (tests and benchmarks read these, never timings). */
export const tokenizeWorkerStats = { jobs: 0, rows: 0, failedJobs: 0, workersStarted: 0, workersFailed: 0 };

/** The worker instance answers come from (a new worker has a new lexicon). */
let source = 0;
/** This side's idle buffers: a job's text is copied into one; answers and spares come back here. */
const buffers = new BufferPool(MIN_POOLED_BYTES, MAX_IDLE_BYTES, true);
const takeBuffer: TakeBuffer = (bytes) => buffers.take(bytes).buffer as ArrayBuffer;
function keepBuffer(b: ArrayBuffer): void {
  if (b.byteLength >= MIN_POOLED_BYTES) buffers.give(new Uint8Array(b));
}


/** Per tokenizer configuration: the copy of the worker's lexicon. */
const mirrors = new Map<string, LexiconMirror>();

const worker = new SingleWorker<Request, Exclude<Reply, { ready: true }>>({
  moduleUrl: import.meta.url,
  role: ROLE,
  maxFailures: MAX_FAILURES,
  disabled: process.env.QUIVER_TOKENIZE_WORKER === '0',
  onStart: () => {
    source++;
    tokenizeWorkerStats.workersStarted++;
  },
  onFailed: () => void tokenizeWorkerStats.workersFailed++,
  onUnavailable: (e) => warnOnce(`no worker thread for full-text tokenizing (${e.message}); tokenizing on the calling thread`),
});

/** Switches off-thread tokenizing on or off (tests, benchmarks); off stops the worker. */
export function setTokenizeWorkerEnabled(on: boolean): void {
  worker.setEnabled(on, 'off-thread tokenizing was switched off');
}

/** Starts the worker if needed; resolves true once it takes jobs, false when it cannot. */
export function tokenizeWorkerReady(): Promise<boolean> {
  return worker.ready();
}

/** Rows tokenized elsewhere, with the mirror to read their ids through (already fed with them). */
export interface TokenizedElsewhere {
  rows: TokenizedRows;
  mirror: LexiconMirror;
  /** Called once nothing reads `rows` any more: their memory may serve a later job. */
  release?: () => void;
}

/** Tokenizes rows elsewhere; undefined when that is not possible now (see `tokenizeOffThread`). */
export type OffThreadTokenize = (options: TokenizerOptions, data: Data<Utf8>) => Promise<TokenizedElsewhere> | undefined;

/**
 * Tokenizes the rows of `data` with `options` in the worker. Undefined when no worker is ready to
 * take it now (one is started for later calls): the caller indexes the rows itself. Rejects if
 * the worker dies before answering.
 */
export const tokenizeOffThread: OffThreadTokenize = (options, data) => {
  if (!worker.takesJobs(true)) return undefined;
  const o = resolveTokenizerOptions(options);
  const key = `${o.stem}|${o.stopWords}|${o.maxTokenLength}`;
  let mirror = mirrors.get(key);
  if (mirror === undefined) mirrors.set(key, (mirror = new LexiconMirror()));
  const { values, offsets, validity, count } = utf8Rows(data, true, takeBuffer);
  // A spare for the worker's answer, when this side has one idle.
  const spare = buffers.idleByteLength > 0 ? [takeBuffer(MIN_POOLED_BYTES)] : [];
  const request: Request = { id: worker.newId(), source, options: o, values, offsets, validity, count, spare };
  let reply: Promise<Exclude<Reply, { ready: true }>>;
  try {
    reply = worker.post(request, [values.buffer as ArrayBuffer, ...spare]);
  } catch (e) {
    return Promise.reject(e as Error);
  }
  tokenizeWorkerStats.jobs++;
  const m = mirror;
  return reply.then(
    (r) => {
      for (const b of r.spare) keepBuffer(b);
      if (!r.ok) {
        tokenizeWorkerStats.failedJobs++;
        throw new Error(r.message);
      }
      // In answer order, whether or not the job still wants the rows.
      m.feed(r.rows);
      tokenizeWorkerStats.rows += r.rows.docLen.length;
      const rows = r.rows;
      return { rows, mirror: m, release: () => keepBuffer(rows.tokTerm.buffer as ArrayBuffer) };
    },
    (e: Error) => {
      tokenizeWorkerStats.failedJobs++;
      throw e;
    },
  );
};

let warned = false;
function warnOnce(reason: string): void {
  if (warned) return;
  warned = true;
  process.emitWarning(reason, { code: 'QUIVER_TOKENIZE_WORKER' });
}

// ---- the worker side ---------------------------------------------------------------------------

if (!isMainThread && parentPort && (workerData as { role?: string } | undefined)?.role === ROLE) {
  const port = parentPort;
  // Buffers to answer in: the spares requests bring.
  const answers = new BufferPool(MIN_POOLED_BYTES, MAX_IDLE_BYTES, true);
  const take: TakeBuffer = (bytes) => answers.take(bytes).buffer as ArrayBuffer;
  port.on('message', (r: Request) => {
    for (const b of r.spare) answers.give(new Uint8Array(b));
    // The text buffer goes back once read (the caller copies the next job's text into it).
    const spare = r.values.buffer.byteLength >= MIN_POOLED_BYTES ? [r.values.buffer as ArrayBuffer] : [];
    let reply: Reply;
    try {
      const rows = tokenizeRows({ values: r.values, offsets: r.offsets, validity: r.validity, count: r.count }, r.options, r.source, undefined, take);
      reply = { id: r.id, ok: true, rows, spare };
    } catch (e) {
      reply = { id: r.id, ok: false, message: (e as Error).message, spare };
    }
    const transfer = reply.ok ? [reply.rows.docLen.buffer, reply.rows.tokTerm.buffer, ...spare] : spare;
    port.postMessage(reply, transferable(transfer));
  });
  port.postMessage({ ready: true } satisfies Reply);
}
