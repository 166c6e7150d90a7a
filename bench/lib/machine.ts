/**
 * What a result was measured on: the machine, its load, and the code (commit plus any
 * uncommitted engine files), recorded in every result file so figures from different runs are
 * never compared blind.
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

export interface MachineInfo {
  cpus: number;
  model: string;
  node: string;
  memGb: number;
  loadavg: number[];
  commit: string;
  uncommitted: string[];
}

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

export function codeVersion(): { commit: string; uncommitted: string[] } {
  if (process.env.BENCH_COMMIT) return { commit: process.env.BENCH_COMMIT, uncommitted: [] };
  const git = (...args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const commit = git('rev-parse', '--short', 'HEAD').stdout?.trim() || 'unknown';
  const status = git('status', '--porcelain', '--', 'src', 'exec', 'planner').stdout ?? '';
  return { commit, uncommitted: status.split('\n').map((l) => l.slice(3).trim()).filter(Boolean) };
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model ?? 'unknown',
    node: process.version,
    memGb: Math.round(os.totalmem() / 1024 ** 3),
    loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    ...codeVersion(),
  };
}

/** A progress line with the time and the 1-minute load, which explains most outliers here. */
export function log(msg: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)} load ${os.loadavg()[0].toFixed(2)}] ${msg}`);
}
