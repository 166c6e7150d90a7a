/**
 * Rendering result rows for the command line: an aligned text table (Node's console.table
 * layout), JSON (one array of row objects), NDJSON (one object a line) or CSV (RFC 4180 quoting).
 * 64-bit integers print as exact decimal strings in JSON, vectors as arrays of numbers.
 */
import { Console } from 'node:console';
import { Writable } from 'node:stream';
import type { RecordBatch } from 'apache-arrow';

export type OutputFormat = 'table' | 'json' | 'ndjson' | 'csv';

function plain(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>);
  if (typeof value === 'object' && value !== null && 'toArray' in value) return Array.from((value as { toArray(): ArrayLike<unknown> }).toArray(), plain);
  if (typeof value === 'object' && value !== null && 'toJSON' in value) return plain((value as { toJSON(): unknown }).toJSON());
  return value;
}

export function rowObjects(batches: readonly RecordBatch[]): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const batch of batches) {
    const names = batch.schema.fields.map((f) => f.name);
    const cols = names.map((n) => batch.getChild(n)!);
    for (let r = 0; r < batch.numRows; r++) {
      const row: Record<string, unknown> = {};
      names.forEach((n, c) => (row[n] = plain(cols[c].get(r))));
      rows.push(row);
    }
  }
  return rows;
}

export function formatRows(batches: readonly RecordBatch[], format: OutputFormat): string {
  const rows = rowObjects(batches);
  const columns = batches[0]?.schema.fields.map((f) => f.name) ?? [];
  switch (format) {
    case 'json':
      return `${JSON.stringify(rows)}\n`;
    case 'ndjson':
      return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
    case 'csv': {
      const cell = (v: unknown) => {
        const s = v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
        return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
      };
      return [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
    }
    case 'table': {
      let out = '';
      const sink = new Writable({ write: (chunk, _enc, cb) => ((out += chunk.toString()), cb()) });
      const shown = rows.map((r) => Object.fromEntries(columns.map((c) => [c, summarize(r[c])])));
      new Console(sink).table(shown, columns);
      return `${out}(${rows.length} row${rows.length === 1 ? '' : 's'})\n`;
    }
  }
}

function summarize(v: unknown): unknown {
  if (Array.isArray(v)) return v.length > 4 ? `[${v.slice(0, 3).map((x) => (typeof x === 'number' ? +x.toFixed(4) : x)).join(', ')}, … ${v.length} items]` : JSON.stringify(v);
  return v;
}
