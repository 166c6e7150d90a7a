/**
 * `quiver serve` as a child process (through bin/quiver.js, as a user runs it): waits for the
 * address line, reads the server's memory from /proc, stops it with a signal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Field, FixedSizeList, Float32, Int64, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';

const QUIVER_BIN = fileURLToPath(new URL('../../bin/quiver.js', import.meta.url));

export interface ServeProcess {
  readonly url: string;
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Resident set size of the server process, bytes. */
  rss(): number;
  /** Sends a signal and resolves with the exit code (or 128+n for a signal death). */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export function startServe(args: string[], nodeArgs: string[] = []): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, QUIVER_BIN, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let resolved = false;
    const exited = new Promise<number>((res) => child.on('close', (code, signal) => res(code ?? (signal === 'SIGKILL' ? 137 : signal === 'SIGTERM' ? 143 : 128))));
    const onData = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const m = /(grpc(?:\+tls)?:\/\/\S+)/.exec(out);
      if (m && !resolved) {
        resolved = true;
        resolve({
          url: m[1],
          child,
          output: () => out,
          rss: () => rssOf(child.pid!),
          stop: async (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', reject);
    exited.then((code) => {
      if (!resolved) reject(new Error(`quiver serve exited ${code} before listening:\n${out}`));
    });
    setTimeout(() => {
      if (!resolved) {
        child.kill('SIGKILL');
        reject(new Error(`quiver serve did not print its address in 60 s:\n${out}`));
      }
    }, 60_000).unref();
  });
}

export function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

/** A batch of `rows` rows: id (from `start`) and a `dim`-dimensional float vector. */
export function vectorBatch(start: number, rows: number, dim: number, seed = 1): RecordBatch {
  const schema = new Schema([new Field('id', new Int64(), false), new Field('emb', new FixedSizeList(dim, new Field('item', new Float32(), true)), true)]);
  const ids = BigInt64Array.from({ length: rows }, (_, i) => BigInt(start + i));
  const values = new Float32Array(rows * dim);
  let x = (start * 2654435761 + seed) >>> 0;
  for (let i = 0; i < values.length; i++) {
    x = (x * 1664525 + 1013904223) >>> 0;
    values[i] = x / 4294967296;
  }
  const children = [
    makeData({ type: new Int64(), length: rows, nullCount: 0, data: ids }),
    makeData({ type: schema.fields[1].type, length: rows, nullCount: 0, child: makeData({ type: new Float32(), length: rows * dim, data: values }) }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows, nullCount: 0, children }));
}
