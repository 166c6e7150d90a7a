/**
 * Time, timers and randomness, injected rather than read from globals.
 *
 * The write path waits (group-commit timer, retry backoff, flush retries, backpressure) and draws
 * random numbers (backoff jitter, writer ids, generation folder names). Production uses the
 * system's; the deterministic simulation (test/sim/) passes a simulated clock and a seeded
 * generator, so one seed replays one schedule exactly. Code on the write path takes these from
 * a `Runtime`, never from `setTimeout`, `Date.now` or `Math.random` directly.
 */
import { randomBytes } from 'node:crypto';

export type TimerHandle = { readonly __timer: unique symbol } | object;

export interface Runtime {
  /** Milliseconds on this runtime's clock. */
  now(): number;
  setTimer(fn: () => void, ms: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
  /** Uniform in [0, 1). */
  random(): number;
  /** `n` random bytes as lowercase hex. */
  randomHex(bytes: number): string;
}

/**
 * A zero-delay timer runs on the event loop's next turn (`setImmediate`) rather than after
 * `setTimeout`'s 1 ms minimum: a flush gives the loop a turn between its steps hundreds of
 * times (`sleep(runtime, 0)`), and each 1 ms wait left the thread idle.
 */
class ImmediateTimer {
  constructor(readonly immediate: NodeJS.Immediate) {}
}

export const systemRuntime: Runtime = {
  now: () => Date.now(),
  setTimer: (fn, ms) => (ms > 0 ? setTimeout(fn, ms) : new ImmediateTimer(setImmediate(fn))),
  clearTimer: (handle) => (handle instanceof ImmediateTimer ? clearImmediate(handle.immediate) : clearTimeout(handle as NodeJS.Timeout)),
  random: () => Math.random(),
  randomHex: (bytes) => randomBytes(bytes).toString('hex'),
};

/** Resolves after `ms` on the runtime's clock. */
export function sleep(runtime: Runtime, ms: number): Promise<void> {
  return new Promise((resolve) => runtime.setTimer(resolve, ms));
}

/** A random version-4 UUID drawn from the runtime (writer ids). */
export function runtimeUuid(runtime: Runtime): string {
  const h = runtime.randomHex(16).split('');
  h[12] = '4';
  h[16] = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}
