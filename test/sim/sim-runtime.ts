/**
 * The simulation's clock, timers and randomness: a seeded, single-threaded event loop.
 *
 * Every wait in the code under test goes through a `Runtime` (src/util/runtime.ts), and every
 * storage request through the simulated store, which schedules its completion here. The loop
 * pops the earliest event (ties broken by creation order), runs it, then lets every promise
 * continuation it triggered run (one `setImmediate` drains the microtask queue) before it picks
 * the next. Nothing else moves time, so one seed gives one history, exactly.
 */
import type { Runtime, TimerHandle } from '../../src/util/runtime.js';
import { mulberry32 } from '../helpers/rng.js';

interface SimEvent {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class SimRuntime implements Runtime {
  private time = 0;
  private seq = 0;
  private readonly heap: SimEvent[] = [];
  private readonly rng: () => number;
  /** Events run so far (a cheap fingerprint of a schedule). */
  steps = 0;

  constructor(seed: number) {
    this.rng = mulberry32(seed);
  }

  now(): number {
    return this.time;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const ev: SimEvent = { at: this.time + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.push(ev);
    return ev;
  }

  clearTimer(handle: TimerHandle): void {
    (handle as SimEvent).cancelled = true;
  }

  random(): number {
    return this.rng();
  }

  randomHex(bytes: number): string {
    let s = '';
    for (let i = 0; i < bytes; i++) s += Math.floor(this.rng() * 256).toString(16).padStart(2, '0');
    return s;
  }

  /** Runs events until none is left, `stop()` says so, or the clock passes `until`. */
  async run(until = Number.POSITIVE_INFINITY, stop: () => boolean = () => false): Promise<'idle' | 'stopped' | 'time'> {
    for (;;) {
      await drainMicrotasks();
      if (stop()) return 'stopped';
      const ev = this.pop();
      if (!ev || ev.at > until) {
        // Time passes even when nothing happens.
        if (Number.isFinite(until) && until > this.time) this.time = until;
        if (!ev) return 'idle';
        this.push(ev);
        return 'time';
      }
      this.time = ev.at;
      this.steps++;
      ev.fn();
    }
  }

  /** Runs until `promise` settles (or the loop runs dry); returns its outcome. */
  async settle<T>(promise: Promise<T>, until = Number.POSITIVE_INFINITY): Promise<{ ok: true; value: T } | { ok: false; error: unknown } | undefined> {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    promise.then(
      (value) => (outcome = { ok: true, value }),
      (error) => (outcome = { ok: false, error }),
    );
    await this.run(until, () => outcome !== undefined);
    return outcome;
  }

  private push(ev: SimEvent): void {
    const h = this.heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  private pop(): SimEvent | undefined {
    const h = this.heap;
    for (;;) {
      if (h.length === 0) return undefined;
      const top = h[0];
      const last = h.pop()!;
      if (h.length > 0) {
        h[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          const r = l + 1;
          let m = i;
          if (l < h.length && before(h[l], h[m])) m = l;
          if (r < h.length && before(h[r], h[m])) m = r;
          if (m === i) break;
          [h[i], h[m]] = [h[m], h[i]];
          i = m;
        }
      }
      if (!top.cancelled) return top;
    }
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
