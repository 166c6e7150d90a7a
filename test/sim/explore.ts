/**
 * Runs simulation schedules outside ava, for exploring and replaying:
 *
 *   node --import=tsx test/sim/explore.ts --count 2000 [--from 1] [--no-freshness]
 *   node --import=tsx test/sim/explore.ts --seed 983            # writes the trace to a file
 *
 * `--no-freshness` leaves out the check that a read sees every write acknowledged before it
 * began, to look for the other kinds of violation alone.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runSchedule } from './schedule.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    from: { type: 'string', default: '1' },
    count: { type: 'string', default: '500' },
    'no-freshness': { type: 'boolean', default: false },
  },
});
const checkFreshness = !values['no-freshness'];

if (values.seed !== undefined) {
  const r = await runSchedule({ seed: Number(values.seed), checkFreshness });
  const file = join(tmpdir(), `quiver-sim-seed-${r.seed}.log`);
  writeFileSync(file, [...r.problems.map((p) => `PROBLEM ${p}`), ...r.trace].join('\n') + '\n');
  console.log(r.problems.length ? r.problems.join('\n') : 'no problems', JSON.stringify(r.stats), `\ntrace: ${file}`);
} else {
  const from = Number(values.from);
  const count = Number(values.count);
  let failed = 0;
  const t0 = performance.now();
  for (let seed = from; seed < from + count; seed++) {
    const r = await runSchedule({ seed, checkFreshness });
    if (r.problems.length) {
      failed++;
      console.log(`seed ${seed}: ${r.problems.slice(0, 2).join(' | ')}`);
    }
  }
  console.log(`${failed} of ${count} schedules failed (${((performance.now() - t0) / count).toFixed(1)} ms a schedule)`);
}
