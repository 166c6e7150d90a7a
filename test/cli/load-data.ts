/**
 * Rows for load tests and bench/load.bench.ts: id BIGINT, name TEXT, score DOUBLE, ts
 * TIMESTAMP, flag BOOLEAN — as CSV text and NDJSON text, written in pieces so a million rows
 * never sit in one string.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

export const LOAD_COLUMNS = ['id', 'name', 'score', 'ts', 'flag'] as const;

export function loadRow(i: number): [number, string, number, string, boolean] {
  const ts = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString().replace('Z', '').replace('.000', '');
  return [i, `name ${i % 9973}`, (i % 1000) / 8, ts, i % 3 === 0];
}

export async function writeCsv(path: string, rows: number, mutate?: (i: number, line: string) => string): Promise<void> {
  const out = createWriteStream(path);
  if (!out.write(`${LOAD_COLUMNS.join(',')}\n`)) await once(out, 'drain');
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const line = loadRow(i).join(',');
    chunk += `${mutate ? mutate(i, line) : line}\n`;
    if (chunk.length > 1 << 16) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}

export async function writeNdjson(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  let chunk = '';
  for (let i = 0; i < rows; i++) {
    const [id, name, score, ts, flag] = loadRow(i);
    chunk += `${JSON.stringify({ id, name, score, ts, flag })}\n`;
    if (chunk.length > 1 << 16) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
}
