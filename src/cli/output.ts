/**
 * Result formats: `table`, `json` (one array of row objects), `ndjson` (one object a line), `csv`
 * (a header row, RFC 4180 quoting, NULL as an empty field) and `arrow` (an Arrow IPC stream).
 *
 * Every format but `table` streams: a batch is written as it arrives, so a large result never
 * sits in memory. JSON numbers are written with all their digits — a 64-bit integer beyond 2^53
 * is the JSON number `9007199254740993`, not a rounded double and not a string (`jq`, Python's
 * `json`, DuckDB and PostgreSQL read it exactly; JavaScript's `JSON.parse` rounds it). NaN and
 * ±Infinity, which JSON has no numbers for, are the strings `"NaN"`, `"Infinity"`. Dates and
 * timestamps are ISO 8601 strings, vectors arrays of numbers.
 */
import { once } from 'node:events';
import type { RecordBatch, Schema } from 'apache-arrow';
import { batchReaders } from './values.js';
import { collectCells, renderTable, type TableCells } from './table-print.js';
import type { Style } from './style.js';
import { encodeBatch, plainBatch, plainSchema, schemaHeader } from '../flight/framing.js';

/** The IPC stream's end: a continuation marker and a zero length. */
const END_OF_STREAM = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/**
 * One encapsulated IPC stream message: 0xFFFFFFFF, the header's length, the header (already
 * padded to 8 bytes by the framing helpers), then the body buffers, each zero-padded to 8 bytes.
 */
function ipcMessage(header: Uint8Array, bodyParts: readonly ArrayBufferView[] = [], bodyLength = 0): Uint8Array {
  const out = new Uint8Array(8 + header.byteLength + bodyLength);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, header.byteLength, true);
  out.set(header, 8);
  let at = 8 + header.byteLength;
  for (const part of bodyParts) {
    out.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at);
    at += (part.byteLength + 7) & ~7;
  }
  return out;
}

export const FORMATS = ['table', 'json', 'ndjson', 'csv', 'arrow'] as const;
export type OutputFormat = (typeof FORMATS)[number];

/** Where results go: `write` resolves once the chunk is accepted (waits for 'drain'). */
export interface Sink {
  write(chunk: string | Uint8Array): Promise<void> | void;
}

export function streamSink(stream: NodeJS.WritableStream): Sink {
  return {
    async write(chunk) {
      if (!stream.write(chunk)) await once(stream, 'drain');
    },
  };
}

/** Collects everything written (tests, the shell's non-streaming paths). */
export function stringSink(): Sink & { text(): string } {
  const parts: string[] = [];
  return {
    write(chunk) {
      parts.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1'));
    },
    text: () => parts.join(''),
  };
}

export interface ResultWriter {
  /** Called once, before the first batch (also for an empty result). */
  begin(schema: Schema): Promise<void>;
  batch(batch: RecordBatch): Promise<void>;
  /** Ends the output; resolves with the number of rows written. */
  end(): Promise<number>;
}

export interface WriterOptions {
  style: Style;
  /** Terminal width the table format fits (Infinity: no limit). */
  width: number;
  /** The table format shows at most this many rows (the first and last halves); default all. */
  maxRows?: number;
  /** The table format's `(N rows)` footer (default true). */
  footer?: boolean;
}

function csvField(text: string | null): string {
  if (text === null) return '';
  return /[",\r\n]/.test(text) || text === '' ? `"${text.replace(/"/g, '""')}"` : text;
}

export function resultWriter(format: OutputFormat, sink: Sink, options: WriterOptions): ResultWriter {
  let rows = 0;
  switch (format) {
    case 'json':
    case 'ndjson': {
      let keys: string[] = [];
      let first = true;
      const array = format === 'json';
      return {
        async begin(schema) {
          keys = schema.fields.map((f) => `${JSON.stringify(f.name)}:`);
          if (array) await sink.write('[');
        },
        async batch(batch) {
          const readers = batchReaders(batch);
          let out = '';
          for (let r = 0; r < batch.numRows; r++) {
            let line = '{';
            for (let c = 0; c < readers.length; c++) line += (c ? ',' : '') + keys[c] + readers[c].json(r);
            line += '}';
            if (array) {
              out += (first ? '\n' : ',\n') + line;
              first = false;
            } else out += `${line}\n`;
          }
          rows += batch.numRows;
          if (out) await sink.write(out);
        },
        async end() {
          if (array) await sink.write(first ? ']\n' : '\n]\n');
          return rows;
        },
      };
    }
    case 'csv':
      return {
        async begin(schema) {
          await sink.write(`${schema.fields.map((f) => csvField(f.name)).join(',')}\n`);
        },
        async batch(batch) {
          const readers = batchReaders(batch);
          let out = '';
          for (let r = 0; r < batch.numRows; r++) out += `${readers.map((c) => csvField(c.text(r))).join(',')}\n`;
          rows += batch.numRows;
          if (out) await sink.write(out);
        },
        end: async () => rows,
      };
    case 'arrow': {
      let schema: Schema | undefined;
      return {
        async begin(s) {
          schema = plainSchema(s);
          await sink.write(ipcMessage(schemaHeader(schema)));
        },
        async batch(batch) {
          const encoded = encodeBatch(plainBatch(batch, schema));
          await sink.write(ipcMessage(encoded.header!, encoded.bodyParts, encoded.bodyLength));
          rows += batch.numRows;
        },
        async end() {
          await sink.write(END_OF_STREAM);
          return rows;
        },
      };
    }
    case 'table': {
      const cells: TableCells = { fields: [], numeric: [], rows: [] };
      const max = options.maxRows ?? Infinity;
      const headRows = Math.ceil(max / 2);
      const tailRows = Math.floor(max / 2);
      // With a row limit: the first rows formatted as they come, the last batches kept (not
      // formatted) until the end, so a long result costs neither memory nor formatting time.
      let tail: RecordBatch[] = [];
      let tailCount = 0;
      return {
        async begin(schema) {
          cells.fields = schema.fields;
        },
        async batch(batch) {
          const readers = batchReaders(batch);
          if (!cells.numeric.length) cells.numeric = readers.map((r) => r.numeric);
          let from = 0;
          if (cells.rows.length < headRows) {
            from = Math.min(batch.numRows, headRows - cells.rows.length);
            collectCells(readers, from, cells.rows);
          }
          if (from < batch.numRows && Number.isFinite(max)) {
            tail.push(from ? batch.slice(from) : batch);
            tailCount += batch.numRows - from;
            while (tail.length > 1 && tailCount - tail[0].numRows >= tailRows) tailCount -= tail.shift()!.numRows;
          }
          rows += batch.numRows;
        },
        async end() {
          if (!cells.numeric.length) cells.numeric = cells.fields.map((f) => /Int|Float|Decimal/.test(String(f.type)));
          if (tailCount) {
            const tailCells: (string | null)[][] = [];
            for (const b of tail) collectCells(batchReaders(b), b.numRows, tailCells);
            const keep = tailCells.slice(-tailRows);
            const hidden = rows - cells.rows.length - keep.length;
            if (hidden > 0) cells.rows.push(cells.fields.map((_f, i) => (i === 0 ? `… ${hidden} rows` : '…')));
            cells.rows.push(...keep);
            tail = [];
          }
          let text = cells.fields.length ? `${renderTable(cells, options.style, options.width)}\n` : '';
          if (options.footer !== false) text += `(${rows} row${rows === 1 ? '' : 's'})\n`;
          await sink.write(text);
          return rows;
        },
      };
    }
  }
}
