/**
 * Contenders measured interleaved, round by round: every round runs each contender once (for a
 * benny case, or for a fixed number of operations), in an order rotated each round, so a burst
 * of load on this shared machine lands on all of them alike rather than on whichever ran last.
 *
 * benny drives the repetitions of short operations (ops/s with its margin); every operation is
 * also timed here, so the latency percentiles cover all rounds. Long operations (a write run of
 * 1 000 puts) use `fixedOps` instead: benny's minimum of samples would multiply their cost.
 */
import { add, complete, configure, suite } from 'benny';
import { summarize, type Summary } from './stats.js';

export interface Contender {
  name: string;
  /** One operation; `i` counts this contender's operations (pick the i-th query with it). */
  op: (i: number) => Promise<unknown>;
}

export interface RoundsOptions {
  rounds: number;
  /** Untimed operations per contender before the first round. */
  warmup: number;
  /** benny: seconds per contender per round (benchmark.js maxTime). */
  maxTime?: number;
  minSamples?: number;
  /** Instead of benny: exactly this many operations per contender per round. */
  fixedOps?: number;
}

export interface ContenderTiming {
  name: string;
  latency: Summary;
  /** benny's ops/s (mean over rounds) or, with fixedOps, operations / time spent in them. */
  opsPerSec: number;
  /** benny's relative margin of error, % (mean over rounds); undefined with fixedOps. */
  marginPct?: number;
  samples: number[];
}

/**
 * The form benny takes for an async case: it calls `test()` and `test()()` to learn the shape of
 * the case, which would run one operation outside the timing; that probe resolves at once.
 */
function bennyCase(run: () => Promise<unknown>): () => () => Promise<unknown> {
  let probed = false;
  return () => () => {
    if (!probed) {
      probed = true;
      return Promise.resolve();
    }
    return run();
  };
}

export async function runInterleaved(group: string, contenders: readonly Contender[], o: RoundsOptions): Promise<ContenderTiming[]> {
  const counters = contenders.map(() => 0);
  const samples = contenders.map(() => [] as number[]);
  const ops = contenders.map(() => [] as number[]);
  const margins = contenders.map(() => [] as number[]);
  const timed = (c: number) => async () => {
    const t0 = performance.now();
    await contenders[c].op(counters[c]++);
    samples[c].push(performance.now() - t0);
  };
  for (let c = 0; c < contenders.length; c++) for (let w = 0; w < o.warmup; w++) await contenders[c].op(counters[c]++);
  for (let r = 0; r < o.rounds; r++) {
    const order = contenders.map((_, c) => (c + r) % contenders.length);
    if (o.fixedOps !== undefined) {
      for (const c of order) {
        const t0 = performance.now();
        for (let i = 0; i < o.fixedOps; i++) await timed(c)();
        ops[c].push(o.fixedOps / ((performance.now() - t0) / 1000));
      }
      continue;
    }
    const cases = order.map((c) => add(contenders[c].name, bennyCase(timed(c)), { maxTime: o.maxTime ?? 1, minSamples: o.minSamples ?? 5 }));
    const summary = await suite(`${group} (round ${r + 1}/${o.rounds})`, configure({ minDisplayPrecision: 2 }), ...cases, complete(() => undefined));
    for (const res of summary.results) {
      const c = contenders.findIndex((x) => x.name === res.name);
      ops[c].push(res.ops);
      margins[c].push(res.margin);
    }
  }
  const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  return contenders.map((c, i) => ({
    name: c.name,
    latency: summarize(samples[i]),
    opsPerSec: avg(ops[i]),
    marginPct: o.fixedOps === undefined ? avg(margins[i]) : undefined,
    samples: samples[i],
  }));
}
