/**
 * Runs a test's child script (`node --import=tsx FILE MODE`) and waits for it to exit by itself,
 * bounded: a process held open (say, by a worker thread that is never let go) is killed after
 * 30 s, and its exit code then tells.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export async function runChildToExit(script: URL, mode: string): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import=tsx', fileURLToPath(script), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killer);
  return { code, out };
}
