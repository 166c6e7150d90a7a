/**
 * Deterministic simulation of the write path: many seeded schedules of 2–3 writers and readers
 * on one region, with latency, reordering, lost responses, failures, crashes and takeovers,
 * each checked against the model (test/sim/model.ts).
 *
 *   QUIVER_SIM_SCHEDULES=N   run N schedules (default 1000)
 *   QUIVER_SIM_SEED=S        run only seed S (replays a failure exactly)
 *
 * A failing schedule prints its seed and writes its whole trace to a file named in the message.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSchedule, type ScheduleResult } from './schedule.js';

const SCHEDULES = Number(process.env.QUIVER_SIM_SCHEDULES ?? 1000);
const ONLY_SEED = process.env.QUIVER_SIM_SEED === undefined ? undefined : Number(process.env.QUIVER_SIM_SEED);
const FIRST_SEED = 1;

function report(r: ScheduleResult): string {
  const file = join(tmpdir(), `quiver-sim-seed-${r.seed}.log`);
  writeFileSync(file, [...r.problems.map((p) => `PROBLEM ${p}`), ...r.trace].join('\n') + '\n');
  return [
    `seed ${r.seed} failed (replay: QUIVER_SIM_SEED=${r.seed} npx ava test/sim/simulation.test.ts)`,
    ...r.problems.slice(0, 5),
    `whole trace: ${file}; its last lines:`,
    ...r.trace.slice(-40),
  ].join('\n');
}

test('seeded schedules keep every acknowledged write, never let an unknown write override a newer acknowledged one, and never read back in time', async (t) => {
  const seeds = ONLY_SEED !== undefined ? [ONLY_SEED] : Array.from({ length: SCHEDULES }, (_, i) => FIRST_SEED + i);
  const totals = { acked: 0, failed: 0, unknown: 0, reads: 0, crashes: 0, takeovers: 0, steps: 0 };
  for (const seed of seeds) {
    const r = await runSchedule({ seed });
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += r.stats[k];
    if (r.problems.length > 0) return t.fail(report(r));
  }
  t.log(`${seeds.length} schedules: ${JSON.stringify(totals)}`);
  // The workload must really exercise the hard cases, or passing means little.
  t.true(totals.acked > seeds.length * 20, 'acknowledged writes');
  t.true(totals.failed + totals.unknown > 0, 'failed or unknown writes');
  t.true(totals.crashes > 0 && totals.takeovers > 0, 'crashes and takeovers');
});

test('the same seed gives the same history', async (t) => {
  for (const seed of [7, 123]) {
    const a = await runSchedule({ seed });
    const b = await runSchedule({ seed });
    t.deepEqual(a.trace, b.trace);
    t.true(a.trace.length > 50);
  }
});
