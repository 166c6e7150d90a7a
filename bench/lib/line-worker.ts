/**
 * A child process driven one command at a time over stdin / stdout (one JSON line back per
 * command line), so a client in another language can be one more contender in an interleaved
 * round: each call resolves when the worker has finished the command.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export class LineWorker {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }[] = [];
  private stderr = '';

  constructor(command: string, args: string[]) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const w = this.waiting.shift();
      if (!w) return;
      const out = JSON.parse(line) as Record<string, unknown>;
      if (out.error) w.reject(new Error(String(out.error)));
      else w.resolve(out);
    });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    this.child.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`worker exited (${code}): ${this.stderr}`));
    });
  }

  call(line: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(line + '\n');
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
