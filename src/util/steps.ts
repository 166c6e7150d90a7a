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

/** Work units between two looks at the clock (`StepPace`). */
const PACE_CHECK_WORK = 4096;

/**
 * When a generator's step should end: after `sliceWork` units of work (the caller weighs its
 * operations), or sooner once `maxStepMs` have passed — code that runs once per flush is still
 * interpreted, or half-compiled, the first time it runs in a process, and a slice sized for
 * compiled code then held the event loop several times longer. `sliceWork` Infinity (a caller
 * that wants the result at once) never ends a step and never reads the clock.
 */
export class StepPace {
  private work = 0;
  private sinceCheck = 0;
  private stepStart: number;

  constructor(
    private readonly sliceWork: number,
    private readonly maxStepMs = 5,
  ) {
    this.stepStart = sliceWork === Infinity ? 0 : performance.now();
  }

  /** Adds `units` of work; true when the step should end now (the caller yields). */
  add(units: number): boolean {
    this.work += units;
    if (this.work >= this.sliceWork) return this.ended();
    if ((this.sinceCheck += units) < PACE_CHECK_WORK || this.sliceWork === Infinity) return false;
    this.sinceCheck = 0;
    return performance.now() - this.stepStart >= this.maxStepMs ? this.ended() : false;
  }

  private ended(): boolean {
    this.work = 0;
    this.sinceCheck = 0;
    this.stepStart = performance.now();
    return true;
  }
}
