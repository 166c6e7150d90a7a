/**
 * Runs the `quiver` command as a child process (the way a user does, through bin/quiver.js),
 * with standard input given, colour off unless asked for, and a time bound.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const QUIVER_BIN = fileURLToPath(new URL('../../bin/quiver.js', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** Standard output as bytes (for --format arrow). */
  bytes: Buffer;
}

export function quiver(args: string[], options: { input?: string | Buffer; env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [QUIVER_BIN, ...args], {
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '', ...options.env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const bytes = Buffer.concat(out);
      resolve({ code: code ?? (signal ? 128 : -1), stdout: bytes.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), bytes });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Samples a process's peak resident memory (VmHWM, from /proc) every 50 ms; the returned function
 * stops sampling and gives the peak in MB.
 */
export function samplePeakRss(pid: number): () => number {
  let peak = 0;
  const read = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) peak = Math.max(peak, Number(m[1]) / 1024);
    } catch {
      // exited
    }
  };
  const timer = setInterval(read, 50);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

export function tempDir(prefix = 'quiver-cli-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
