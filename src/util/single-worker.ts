/**
 * One helper thread per process for a kind of job (IVF-PQ encoding, local file writes): started
 * on demand, used only once it has said it is ready, unref'd while it has no job (so it never
 * holds the process open), answering jobs by id. A worker that errors or exits unasked fails its
 * jobs and counts as failed; after `maxFailures` of them no new one is started. Whenever no
 * worker takes a job now (`takesJobs` false: starting, disabled, or given up on), the caller does
 * it itself.
 *
 * The worker side posts `{ ready: true }` once, then one reply `{ id, … }` per request.
 */
import type { Worker } from 'node:worker_threads';
import { transferable } from './buffer-pool.js';
import { startModuleWorker } from './module-worker.js';

export interface SingleWorkerOptions {
  /** The module the worker runs (its `import.meta.url`) and the role it is given in `workerData`. */
  moduleUrl: string;
  role: string;
  maxFailures: number;
  /** Off from the start (an environment switch); `setEnabled` changes it. */
  disabled?: boolean;
  /** A worker could not be started, or failed before it was ready. */
  onUnavailable?: (e: Error) => void;
  /** A new worker was started (callers reset what they knew about the old one). */
  onStart?: () => void;
  /** A worker failed (error, unexpected exit). */
  onFailed?: () => void;
}

interface Job<R> {
  resolve: (reply: R) => void;
  reject: (e: Error) => void;
}

interface Pool<R> {
  worker: Worker;
  ready: boolean;
  readyWaiters: ((ready: boolean) => void)[];
  jobs: Map<number, Job<R>>;
  /** Stopped: its later error or exit events change nothing. */
  stopped: boolean;
}

export class SingleWorker<Req extends { id: number }, R extends { id: number }> {
  private pool: Pool<R> | undefined;
  private failures = 0;
  private nextId = 1;
  private enabled: boolean;

  constructor(private readonly opts: SingleWorkerOptions) {
    this.enabled = !opts.disabled;
  }

  /** Switches the worker on or off; off stops it (not counted as failed), its jobs rejecting with `reason`. */
  setEnabled(on: boolean, reason: string): void {
    this.enabled = on;
    if (!on && this.pool) this.stopPool(this.pool, new Error(reason), false);
  }

  /** A fresh job id. */
  newId(): number {
    return this.nextId++;
  }

  /** Whether a worker takes jobs now; otherwise starts one (when `start` and allowed). */
  takesJobs(start: boolean): boolean {
    if (!this.enabled) return false;
    if (this.pool) return this.pool.ready;
    if (start) this.start();
    return false;
  }

  /**
   * Sends `request` to the ready worker (see `takesJobs`): throws when it cannot be sent, and the
   * answer rejects if the worker dies first.
   */
  post(request: Req, transfer: readonly ArrayBufferLike[]): Promise<R> {
    const p = this.pool;
    if (!p?.ready) throw new Error('no worker ready');
    p.worker.postMessage(request, transferable(transfer));
    if (p.jobs.size === 0) p.worker.ref();
    return new Promise<R>((resolve, reject) => p.jobs.set(request.id, { resolve, reject }));
  }

  /** Starts the worker if needed; resolves true once it takes jobs, false when it cannot. */
  ready(): Promise<boolean> {
    if (!this.enabled) return Promise.resolve(false);
    const p = this.pool ?? this.start();
    if (!p) return Promise.resolve(false);
    if (p.ready) return Promise.resolve(true);
    p.worker.ref(); // someone waits for it: the process must not exit meanwhile
    return new Promise((resolve) => p.readyWaiters.push(resolve));
  }

  private start(): Pool<R> | undefined {
    if (this.failures >= this.opts.maxFailures) return undefined;
    let worker: Worker;
    try {
      worker = startModuleWorker(this.opts.moduleUrl, { role: this.opts.role });
    } catch (e) {
      this.failures = this.opts.maxFailures; // no worker threads here
      this.opts.onUnavailable?.(e as Error);
      return undefined;
    }
    this.opts.onStart?.();
    const p: Pool<R> = { worker, ready: false, readyWaiters: [], jobs: new Map(), stopped: false };
    this.pool = p;
    worker.on('message', (reply: R | { ready: true }) => {
      if ('ready' in reply) {
        p.ready = true;
        if (p.jobs.size === 0) worker.unref();
        for (const w of p.readyWaiters.splice(0)) w(true);
        return;
      }
      const job = p.jobs.get(reply.id);
      p.jobs.delete(reply.id);
      if (p.jobs.size === 0) worker.unref();
      job?.resolve(reply);
    });
    worker.on('error', (e) => this.stopPool(p, e, true));
    worker.on('exit', (code) => this.stopPool(p, new Error(`the ${this.opts.role} worker exited with code ${code}`), true));
    // After the listeners: attaching a 'message' listener refs the worker's port again.
    worker.unref();
    return p;
  }

  /** Fails the pool's jobs and lets a later call start a new worker (a `failed` one counts). */
  private stopPool(p: Pool<R>, e: Error, failed: boolean): void {
    if (p.stopped) return;
    p.stopped = true;
    if (this.pool === p) this.pool = undefined;
    if (failed) {
      this.failures++;
      this.opts.onFailed?.();
      if (!p.ready) this.opts.onUnavailable?.(e);
    }
    for (const w of p.readyWaiters.splice(0)) w(false);
    for (const job of p.jobs.values()) job.reject(e);
    p.jobs.clear();
    p.ready = false;
    void p.worker.terminate();
  }
}
