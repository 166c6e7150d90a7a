/**
 * A `quiver` process on a pseudo-terminal (util-linux `script`), for the shell tests: send keys,
 * wait for screen text, count what scrolled by.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { QUIVER_BIN } from './quiver-process.js';

export const hasScript = spawnSync('script', ['--version']).status === 0;

export class Pty {
  private out = '';
  private seen = 0;
  readonly child: ChildProcess;
  constructor(args: string[], env: NodeJS.ProcessEnv) {
    const command = [process.execPath, QUIVER_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    this.child = spawn('script', ['-qfec', `stty cols 100 rows 40; exec ${command}`, '/dev/null'], { env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (b: Buffer) => (this.out += b.toString('utf8')));
    this.child.stderr!.on('data', (b: Buffer) => (this.out += b.toString('utf8')));
  }
  /** The screen text since the last expect, without terminal control sequences. */
  private fresh(): string {
    // (Only the last 200 kB of a flood: the prompt and markers are at its end.)
    // eslint-disable-next-line no-control-regex
    return this.out.slice(Math.max(this.seen, this.out.length - 200_000)).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  }
  async expect(pattern: RegExp, timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = this.fresh();
      const m = pattern.exec(text);
      if (m) {
        // Consume up to the match's end in the raw buffer (approximately: the whole buffer).
        this.seen = this.out.length;
        return text;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; screen:\n${text.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  mark(): number {
    return this.out.length;
  }
  count(from: number, pattern: RegExp): number {
    return this.out.slice(from).match(pattern)?.length ?? 0;
  }
  /** Resolves once this many characters arrived since the last expect. */
  async flowing(chars: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.out.length - this.seen < chars) {
      if (Date.now() > deadline) throw new Error('no output');
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  send(text: string): void {
    this.child.stdin!.write(text);
  }
  async exit(): Promise<number> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve(this.child.exitCode);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
      this.child.on('close', (code) => {
        clearTimeout(timer);
        resolve(code ?? -1);
      });
    });
  }
}
