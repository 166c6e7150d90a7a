/** Benchmark settings from the environment (e.g. `N=20000 npm run bench:index`). */
export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0, got ${raw}`);
  return v;
}

export function envList(name: string, fallback: string): string[] {
  return (process.env[name] || fallback).split(',').map((s) => s.trim()).filter(Boolean);
}
