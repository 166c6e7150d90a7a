/**
 * Long index work is written as generators that pause (yield) between steps (`remapSteps`,
 * `toArrowSteps`, `fromArrowSteps`, …), so one piece of code serves a caller that needs the
 * result now and one that gives the event loop turns meanwhile.
 */

/** Runs the steps to their result at once. */
export function runSteps<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs the steps with `pause()` awaited between them (none: all at once). */
export async function runStepsPausing<T>(steps: Generator<void, T, void>, pause: (() => Promise<void>) | undefined): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (pause) await pause();
  }
}

/** One turn of the event loop (`setImmediate`): timers and I/O callbacks run before the next step. */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Resolves once the event loop has gone round: its timers and I/O polling run before. One
 * `setImmediate` called while the loop polls (a worker's answer, a socket's data) runs in the
 * same iteration's check phase, straight after, before any timer; two always span a timers and
 * a poll phase. For work that follows other long synchronous work in one callback chain.
 */
export function nextLoopIteration(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
}
