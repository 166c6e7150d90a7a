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
 * undefined when the result did not come (the job then does its work on this thread).
 */
interface OtherJob {
  apply: (result: unknown) => void;
  result: unknown;
  /** The result came, or will not. */
  ready: boolean;
  done: boolean;
}

type Entry = CodesJob | OtherJob | { after: () => void };

export class CodeQueue {
  private entries: Entry[] = [];
  private head = 0;

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
  addJob<T>(away: Promise<T> | undefined, apply: (result: T | undefined) => void): void {
    if (away === undefined && this.idle) {
      apply(undefined);
      return;
    }
    const job: OtherJob = { apply: apply as (r: unknown) => void, result: undefined, ready: away === undefined, done: false };
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
      else if ('apply' in e) applyOther(e);
      else apply(e);
    }
    this.reset();
  }

  /** Applies the chunks at the head whose codes are in, in order. */
  private drain(): void {
    while (this.head < this.entries.length) {
      const e = this.entries[this.head];
      if ('after' in e) {
        this.head++;
        e.after();
      } else if ('apply' in e) {
        if (!e.ready) return;
        this.head++;
        applyOther(e);
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

function applyOther(job: OtherJob): void {
  job.done = true;
  const r = job.result;
  job.result = undefined;
  job.apply(r);
}
