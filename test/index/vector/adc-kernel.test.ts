/**
 * The generated ADC kernel reads the mask early (before the distance) or late (only for rows
 * within the bound): both write the same rows with the same sums, so the late read — which skips
 * most mask reads once a search's pool is full — changes no answer.
 */
import test from 'ava';
import { adcKernel } from '../../../src/index/vector/adc-kernel.js';
import { mulberry32 } from '../../helpers/rng.js';

test('the kernel writes the same rows and sums with the mask read early or late, for any bound', (t) => {
  const rnd = mulberry32(7);
  const M = 16;
  const n = 500;
  const kernel = adcKernel(M)!;
  t.truthy(kernel);
  const positions = Uint32Array.from({ length: n }, (_, i) => i * 3 + (i % 2));
  const codes = Uint8Array.from({ length: n * M }, () => Math.floor(rnd() * 256));
  const words = new Uint32Array(codes.buffer);
  const lut = Float32Array.from({ length: M * 256 }, () => rnd());
  const terms = Float32Array.from({ length: n }, () => rnd() - 0.5);
  const mask = Uint8Array.from({ length: 3 * n + 2 }, () => (rnd() < 0.3 ? 0 : 1));
  for (const bound of [Infinity, 7.5, 8, 8.5, -1]) {
    for (const withTerms of [true, false]) {
      const run = (late: boolean) => {
        const out = new Float64Array(n);
        const rows = new Int32Array(n);
        const m = kernel(n, positions, words, lut, mask, 1400, 0.25, withTerms ? terms : undefined, bound, out, rows, new Int32Array(1), late);
        return { rows: Array.from(rows.subarray(0, m)), sums: Array.from(out.subarray(0, m)) };
      };
      const early = run(false);
      const late = run(true);
      t.deepEqual(late, early, `bound ${bound}`);
      for (const r of late.rows) t.true(mask[positions[r]] === 1 && positions[r] < 1400);
    }
  }
});
