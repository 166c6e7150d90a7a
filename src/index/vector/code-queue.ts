/**
 * IVF-PQ codes of one source computed off the calling thread and applied to their indexes in
 * the order the rows were inserted (issue 7).
 *
 * A MemTable inserts a WAL entry's rows into its indexes while the entry is written; the IVF-PQ
 * codes go to the encode worker (`encodeOffThread`) and come back later. Rows must enter each
 * index in position order (`IvfPqIndex.remapped` and the sidecar keep partitions in position
 * order), so the queue holds every chunk submitted while an earlier one is still out — a chunk
 * encoded here (small, or no worker ready) waits behind the ones encoded there — and applies
 * them strictly in order as their codes arrive. `whenApplied(fn)` runs `fn` once everything submitted
 * before it is applied: the MemTable makes rows visible from there, so a visible row is always
 * indexed. `finishNow()` applies everything at once, encoding here what has not come back (for
 * callers that need the index complete now; late answers are then ignored). A job whose worker
 * fails is encoded here; nothing is ever lost or applied twice.
 */
import { type EncodedRows, IvfPqEncoder } from './ivf-pq-encoder.js';
import type { IvfPqIndex } from './ivf-pq-index.js';
import type { IvfPqModel } from './ivf-pq-model.js';
import type { VectorChunk } from './vector-source.js';

/** Encodes a chunk elsewhere; undefined when that is not possible now (see `encodeOffThread`). */
export type OffThreadEncode = (model: IvfPqModel, chunk: VectorChunk) => Promise<EncodedRows> | undefined;

/**
 * Below this many rows a chunk is encoded on the calling thread: copying, posting and applying
 * cost ~0.1–0.2 ms a job on the calling thread, about what encoding 16–32 rows costs there.
 */
export const MIN_OFF_THREAD_ROWS = 64;

/** Work a drain does in one event-loop turn before it lets the loop go on (ms). */
const DRAIN_SLICE_MS = 4;

interface CodesJob {
  index: IvfPqIndex;
  chunk: VectorChunk;
  /** The codes, once computed (here, or returned by the worker). */
  rows: EncodedRows | undefined;
  /** Applied (a late answer from the worker is then ignored). */
  done: boolean;
}

/**
 * A job of another kind (full-text rows tokenized elsewhere): `apply(result)` in turn, with
 * undefined when the result did not come (the job then does its work on this thread). `apply`
 * may do its work a piece at a time: it returns false while there is more (it is called again,
 * still at the head, on a later turn when this one's budget is spent).
 */
interface OtherJob {
  apply: (result: unknown) => boolean | void;
  result: unknown;
  /** The result came, or will not. */
  ready: boolean;
  done: boolean;
}

type Entry = CodesJob | OtherJob | { after: () => void };

export class CodeQueue {
  private entries: Entry[] = [];
  private head = 0;

  /** `clock` (ms) times a drain's turn (tests pass their own). */
  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** True when every submitted chunk is applied. */
  get idle(): boolean {
    return this.head === this.entries.length;
  }

  /**
   * Adds `chunk` to `index`: now when nothing is pending and it is not sent away, else in turn.
   * True when it was sent away (its codes are computed elsewhere); with `onlyAway`, a chunk that
   * is not is left alone (false, nothing added).
   */
  add(index: IvfPqIndex, chunk: VectorChunk, offThread: OffThreadEncode | undefined, onlyAway = false): boolean {
    const away = offThread !== undefined && chunk.count >= MIN_OFF_THREAD_ROWS ? offThread(index.model, chunk) : undefined;
    if (away === undefined) {
      if (onlyAway) return false;
      if (this.idle) index.add(chunk);
      else this.entries.push({ index, chunk, rows: IvfPqEncoder.of(index.model).encode(chunk), done: false });
      return false;
    }
    const job: CodesJob = { index, chunk, rows: undefined, done: false };
    this.entries.push(job);
    away.then(
      (rows) => {
        if (job.done) return;
        job.rows = rows;
        this.drain();
      },
      () => {
        // The worker failed or went away: encode it here, in turn.
        if (job.done) return;
        job.rows = IvfPqEncoder.of(index.model).encode(chunk);
        this.drain();
      },
    );
    return true;
  }

  /**
   * Adds a job of another kind that must take its turn among the chunks (its index takes rows
   * in position order): `apply(result)` once everything before it is applied and `away` has
   * settled — `apply(undefined)` when it failed, or at once when there is no `away` and the
   * queue is idle.
   */
  addJob<T>(away: Promise<T> | undefined, apply: (result: T | undefined) => boolean | void): void {
    if (away === undefined && this.idle) {
      while (apply(undefined) === false);
      return;
    }
    const job: OtherJob = { apply: apply as (r: unknown) => boolean | void, result: undefined, ready: away === undefined, done: false };
    this.entries.push(job);
    away?.then(
      (r) => {
        if (job.done) return;
        job.result = r;
        job.ready = true;
        this.drain();
      },
      () => {
        if (job.done) return;
        job.ready = true;
        this.drain();
      },
    );
  }

  /** Runs `fn` once every chunk submitted so far is applied (now, when the queue is idle). */
  whenApplied(fn: () => void): void {
    if (this.idle) fn();
    else this.entries.push({ after: fn });
  }

  /** Applies every pending chunk now (encoding here those still away) and runs the waiting `whenApplied` callbacks. */
  finishNow(): void {
    while (this.head < this.entries.length) {
      const e = this.entries[this.head++];
      if ('after' in e) e.after();
      else if ('apply' in e) while (!applyOther(e));
      else apply(e);
    }
    this.reset();
  }

  /** A drain continues on a later event-loop turn (see `drain`). */
  private continuing = false;
  /** When this event-loop turn's draining began (−1: none yet): answers that arrive in one turn share its budget. */
  private turnStart = -1;

  /**
   * Applies the chunks at the head whose codes are in, in order — about DRAIN_SLICE_MS of them
   * an event-loop turn, however many answers arrive in it: answers that arrive together (a
   * group-committed entry's batches at 8 puts in flight) held the loop 100–170 ms when applied
   * at once (full-text rows ~5 ms a 1 000-row batch).
   */
  private drain(): void {
    if (this.continuing) return;
    if (this.turnStart < 0) {
      this.turnStart = this.clock();
      setImmediate(() => void (this.turnStart = -1));
    }
    while (this.head < this.entries.length) {
      if (this.clock() - this.turnStart >= DRAIN_SLICE_MS) {
        this.continuing = true;
        setImmediate(() => {
          this.continuing = false;
          this.drain();
        });
        return;
      }
      const e = this.entries[this.head];
      if ('after' in e) {
        this.head++;
        e.after();
      } else if ('apply' in e) {
        if (!e.ready) return;
        if (applyOther(e)) this.head++;
      } else if (e.rows !== undefined) {
        this.head++;
        apply(e);
      } else return;
    }
    this.reset();
  }

  private reset(): void {
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
    }
  }
}

function apply(job: CodesJob): void {
  job.done = true;
  job.index.applyEncoded(job.rows ?? IvfPqEncoder.of(job.index.model).encode(job.chunk));
  job.rows = undefined;
}

/** One piece of `job`; true when it is finished (then its result is let go). */
function applyOther(job: OtherJob): boolean {
  job.done = true; // a late answer is ignored from the first piece on
  if (job.apply(job.result) === false) return false;
  job.result = undefined;
  return true;
}
