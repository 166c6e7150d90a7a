/**
 * Input files for `quiver load`, each read as a stream of chunks so memory stays bounded by the
 * batch size, not the file size:
 *
 * - CSV (csv-parse): a header row names the columns; an unquoted empty field is NULL, a quoted
 *   one ("") the empty string; positions are line numbers.
 * - NDJSON: one JSON object a line (keys = columns); positions are line numbers.
 * - Arrow IPC, file or stream format (apache-arrow's reader): typed batches; positions are row
 *   numbers (1-based).
 * - Parquet (hyparquet): read a row range at a time, at most one row group; positions are rows.
 *
 * Each source names its columns, proposes SQL types for a new table (inferred from the first
 * 1000 rows for text formats, from the file's own types otherwise) and reports bytes read for the
 * progress bar.
 */
import { createReadStream, statSync, promises as fsp } from 'node:fs';
import { createInterface } from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { parse as csvParse, type CsvError } from 'csv-parse';
import { type DataType, type RecordBatch, RecordBatchReader, Type } from 'apache-arrow';
import { asyncBufferFromFile, parquetMetadataAsync, parquetRead, parquetSchema } from 'hyparquet';
import { sqlTypeName } from '../../flight/metadata.js';
import { InvalidError } from '../../errors.js';
import { EpochTime } from './columns.js';
import { inferTypes } from './infer.js';

export type InputFormat = 'csv' | 'ndjson' | 'arrow' | 'parquet';

export interface RowChunk {
  kind: 'rows';
  /** Values aligned with the source's columns. */
  rows: unknown[][];
  /** Line (text formats) or row number of each row. */
  positions: number[];
}

export interface BatchChunk {
  kind: 'batch';
  batch: RecordBatch;
  /** Row number of the batch's first row (1-based). */
  firstRow: number;
}

/** A row the parser itself rejected (CSV with --on-error skip). */
export interface SkippedRow {
  position: number;
  message: string;
}

export interface LoadSource {
  readonly format: InputFormat;
  /** What positions count: `line` or `row`. */
  readonly unit: 'line' | 'row';
  readonly columns: string[];
  /** SQL types for a new table, aligned with columns. */
  proposedTypes(): string[];
  /**
   * Typed formats hand over batches of at most `batchRows` rows; text formats (and Parquet, read
   * as rows) hand over rows in chunks of at most `ROW_CHUNK_ROWS`, whatever `batchRows` is, so the
   * per-row JS values die young: the loader builds its batches in Arrow form.
   */
  chunks(batchRows: number): AsyncIterable<RowChunk | BatchChunk>;
  /** Size of the input in bytes (NaN when unknown: standard input). */
  readonly totalBytes: number;
  bytesRead(): number;
  /** Rows dropped by the parser in skip mode. */
  readonly skipped: SkippedRow[];
  close(): Promise<void>;
}

export function formatFromName(file: string): InputFormat | undefined {
  const m = /\.(csv|tsv|ndjson|jsonl|json|arrow|arrows|ipc|feather|parquet|pq)$/i.exec(file);
  if (!m) return undefined;
  const ext = m[1].toLowerCase();
  if (ext === 'csv' || ext === 'tsv') return 'csv';
  if (ext === 'ndjson' || ext === 'jsonl' || ext === 'json') return 'ndjson';
  if (ext === 'parquet' || ext === 'pq') return 'parquet';
  return 'arrow';
}

const SAMPLE_ROWS = 1000;

/**
 * Rows of parsed values handed over at once (see `LoadSource.chunks`). A row of values is a JS
 * array and a string per field (~200 bytes for five columns); a batch's worth of them held at
 * once was most of the loader's heap and, surviving young-generation collections, made the heap
 * grow between full collections. Must hold the inference sample and the header.
 */
export const ROW_CHUNK_ROWS = 1024;

function byteCounter(): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      t.bytes += chunk.length;
      cb(null, chunk);
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}

function openInput(file: string): { stream: Readable; totalBytes: number } {
  if (file === '-') return { stream: process.stdin, totalBytes: NaN };
  return { stream: createReadStream(file, { highWaterMark: 1 << 20 }), totalBytes: statSync(file).size };
}

/** Pulls the first rows for inference, then replays them ahead of the rest. */
async function withSample<T>(iterator: AsyncIterator<T>, n: number): Promise<{ sample: T[]; rest: () => AsyncGenerator<T> }> {
  const sample: T[] = [];
  while (sample.length < n) {
    const next = await iterator.next();
    if (next.done) break;
    sample.push(next.value);
  }
  return {
    sample,
    async *rest() {
      yield* sample;
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
    },
  };
}

/**
 * The parser's records in arrays of up to `size`, pulled with backpressure (the parser pauses
 * while a full array waits). Events, not one promise per record: csv-parse's async iterator
 * and its `info`/`cast` options each cost more than the parse itself.
 */
async function* recordArrays(parser: NodeJS.ReadableStream, size: number): AsyncGenerator<string[][]> {
  let queue: string[][] = [];
  let done = false;
  let error: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  parser.on('data', (record: string[]) => {
    queue.push(record);
    if (queue.length >= size) {
      parser.pause();
      notify();
    }
  });
  parser.on('end', () => {
    done = true;
    notify();
  });
  parser.on('error', (e) => {
    error = e;
    done = true;
    notify();
  });
  for (;;) {
    if (error) throw error;
    if (queue.length >= size || (done && queue.length)) {
      const out = queue;
      queue = [];
      parser.resume();
      yield out;
      continue;
    }
    if (done) return;
    await new Promise<void>((resolve) => (wake = resolve));
  }
}

export async function openCsv(file: string, options: { delimiter: string; skipBadRecords: boolean }): Promise<LoadSource> {
  const { stream, totalBytes } = openInput(file);
  const counter = byteCounter();
  const skipped: SkippedRow[] = [];
  const parser = csvParse({ delimiter: options.delimiter, bom: true, skip_empty_lines: true, skip_records_with_error: options.skipBadRecords });
  parser.on('skip', (err: CsvError & { lines?: number }) => skipped.push({ position: err.lines ?? 0, message: err.message }));
  stream.pipe(counter).pipe(parser);
  stream.on('error', (e) => parser.destroy(e));
  const arrays = recordArrays(parser, ROW_CHUNK_ROWS);
  let first: string[][];
  try {
    const next = await arrays.next();
    first = next.done ? [] : next.value;
  } catch (e) {
    throw csvError(e);
  }
  if (first.length === 0) throw new InvalidError(`${file}: empty CSV input (a header row is needed)`);
  const header = first[0];
  const columns = header.map((v, i) => (v === '' ? `column${i + 1}` : v));
  const sample = first.slice(1, 1 + SAMPLE_ROWS);
  // Line numbers: records counted, plus the line breaks inside quoted fields (blank lines,
  // which the parser skips, are not counted; csv-parse's own errors carry exact lines).
  let line = 1;
  let skippedAt = 0;
  const positionsOf = (records: string[][]): number[] => {
    const out = new Array<number>(records.length);
    for (let r = 0; r < records.length; r++) {
      line++;
      // Lines the parser skipped as malformed come before this record.
      while (skippedAt < skipped.length && skipped[skippedAt].position <= line) {
        if (skipped[skippedAt].position === line) line++;
        skippedAt++;
      }
      const rec = records[r];
      for (let c = 0; c < rec.length; c++) {
        const v = rec[c];
        // An empty field is NULL.
        if (v === '') (rec as unknown[])[c] = null;
        else if (v.length > 0 && v.includes('\n')) line += v.split('\n').length - 1;
      }
      out[r] = line;
    }
    return out;
  };
  return {
    format: 'csv',
    unit: 'line',
    columns,
    proposedTypes: () => inferTypes(columns.length, sample),
    totalBytes,
    bytesRead: () => counter.bytes,
    skipped,
    async *chunks() {
      // Exactly ROW_CHUNK_ROWS rows a chunk, whatever arrays the parser hands over.
      const size = ROW_CHUNK_ROWS;
      let pending: string[][] = first.slice(1);
      const full = function* (final: boolean): Generator<RowChunk> {
        let k = 0;
        for (; pending.length - k >= size || (final && k < pending.length); k += size) {
          const rows = pending.slice(k, k + size);
          yield { kind: 'rows', rows, positions: positionsOf(rows) };
        }
        pending = k === 0 ? pending : pending.slice(k);
      };
      try {
        yield* full(false);
        for await (const records of arrays) {
          pending = pending.length ? pending.concat(records) : records;
          yield* full(false);
        }
        yield* full(true);
      } catch (e) {
        throw csvError(e);
      }
    },
    async close() {
      stream.destroy();
    },
  };
}

/** csv-parse's errors as `invalid` errors naming the line. */
function csvError(e: unknown): unknown {
  const err = e as CsvError & { lines?: number };
  if (err && typeof err === 'object' && 'code' in err && String(err.code).startsWith('CSV_')) {
    return new InvalidError(`line ${err.lines}: ${err.message.replace(/^Invalid Record Length: /, '')}`);
  }
  return e;
}

export class BadRow extends Error {
  constructor(
    readonly position: number,
    message: string,
  ) {
    super(message);
  }
}

export async function openNdjson(file: string, options: { skipBadRecords: boolean }): Promise<LoadSource> {
  const { stream, totalBytes } = openInput(file);
  const counter = byteCounter();
  stream.pipe(counter);
  const lines = createInterface({ input: counter, crlfDelay: Infinity });
  const skipped: SkippedRow[] = [];
  type Line = { value: Record<string, unknown>; line: number };
  let lineNo = 0;
  async function* objects(): AsyncGenerator<Line> {
    for await (const text of lines) {
      lineNo++;
      if (!text.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        const message = `not JSON: ${(e as Error).message}`;
        if (options.skipBadRecords) {
          skipped.push({ position: lineNo, message });
          continue;
        }
        throw new BadRow(lineNo, message);
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        const message = 'not a JSON object';
        if (options.skipBadRecords) {
          skipped.push({ position: lineNo, message });
          continue;
        }
        throw new BadRow(lineNo, message);
      }
      yield { value: value as Record<string, unknown>, line: lineNo };
    }
  }
  const { sample, rest } = await withSample(objects(), SAMPLE_ROWS);
  const columns: string[] = [];
  const known = new Set<string>();
  for (const s of sample) for (const k of Object.keys(s.value)) if (!known.has(k)) known.add(k), columns.push(k);
  const toRow = (o: Record<string, unknown>) => columns.map((c) => o[c] ?? null);
  return {
    format: 'ndjson',
    unit: 'line',
    columns,
    proposedTypes: () => inferTypes(columns.length, sample.map((s) => toRow(s.value))),
    totalBytes,
    bytesRead: () => counter.bytes,
    skipped,
    async *chunks() {
      let rows: unknown[][] = [];
      let positions: number[] = [];
      for await (const { value, line } of rest()) {
        const extra = Object.keys(value).find((k) => !known.has(k));
        if (extra !== undefined) {
          const message = `key ${JSON.stringify(extra)} is not a column (columns: ${columns.join(', ')})`;
          if (!options.skipBadRecords) throw new BadRow(line, message);
          skipped.push({ position: line, message });
          continue;
        }
        rows.push(toRow(value));
        positions.push(line);
        if (rows.length >= ROW_CHUNK_ROWS) {
          yield { kind: 'rows', rows, positions };
          rows = [];
          positions = [];
        }
      }
      if (rows.length) yield { kind: 'rows', rows, positions };
    },
    async close() {
      lines.close();
      stream.destroy();
    },
  };
}

/** SQL type for a column of a typed file (Arrow, Parquet's Arrow-equivalent types). */
export function sqlTypeForArrow(type: DataType): string {
  switch (type.typeId) {
    case Type.Int: {
      const { bitWidth, isSigned } = type as unknown as { bitWidth: number; isSigned: boolean };
      if (bitWidth === 64) return 'BIGINT';
      if (bitWidth === 32) return isSigned ? 'INTEGER' : 'BIGINT';
      if (bitWidth === 16) return isSigned ? 'SMALLINT' : 'INTEGER';
      return 'SMALLINT';
    }
    case Type.Float:
      return (type as unknown as { precision: number }).precision === 2 ? 'DOUBLE PRECISION' : 'REAL';
    case Type.Decimal:
      return 'DOUBLE PRECISION';
    case Type.Date:
      return (type as unknown as { unit: number }).unit === 0 ? 'DATE' : 'TIMESTAMP';
    case Type.Timestamp:
    case Type.Bool:
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Dictionary:
      return sqlTypeName(type);
    case Type.FixedSizeList:
      return `FLOAT4[${(type as unknown as { listSize: number }).listSize}]`;
    default:
      return 'TEXT';
  }
}

export async function openArrow(file: string): Promise<LoadSource> {
  let totalBytes = NaN;
  let reader: RecordBatchReader;
  let counter: (Transform & { bytes: number }) | undefined;
  let handle: fsp.FileHandle | undefined;
  if (file !== '-') {
    totalBytes = statSync(file).size;
    handle = await fsp.open(file, 'r');
    const magic = Buffer.alloc(6);
    await handle.read(magic, 0, 6, 0);
    if (magic.toString('latin1') === 'ARROW1') {
      reader = await RecordBatchReader.from(handle);
    } else {
      await handle.close();
      handle = undefined;
      counter = byteCounter();
      createReadStream(file, { highWaterMark: 1 << 20 }).pipe(counter);
      reader = await RecordBatchReader.from(counter);
    }
  } else {
    counter = byteCounter();
    process.stdin.pipe(counter);
    reader = await RecordBatchReader.from(counter);
  }
  await reader.open();
  const schema = reader.schema;
  if (!schema) throw new InvalidError(`${file}: not an Arrow IPC file or stream`);
  let batchesRead = 0;
  const batchCount = reader.isFile() ? reader.numRecordBatches : 0;
  return {
    format: 'arrow',
    unit: 'row',
    columns: schema.fields.map((f) => f.name),
    proposedTypes: () => schema.fields.map((f) => sqlTypeForArrow(f.type)),
    totalBytes,
    bytesRead: () => (counter ? counter.bytes : batchCount ? (totalBytes * batchesRead) / batchCount : 0),
    skipped: [],
    async *chunks(batchRows) {
      let row = 1;
      for await (const batch of reader as AsyncIterable<RecordBatch>) {
        batchesRead++;
        for (let start = 0; start < batch.numRows; start += batchRows) {
          const part = start === 0 && batch.numRows <= batchRows ? batch : batch.slice(start, Math.min(batch.numRows, start + batchRows));
          yield { kind: 'batch', batch: part, firstRow: row };
          row += part.numRows;
        }
      }
    },
    async close() {
      await reader.cancel?.();
      await handle?.close();
    },
  };
}

/** Parquet: at most this many rows decoded at once (and never more than one row group). */
const PARQUET_READ_ROWS = 131_072;

const EPOCH_PARSERS = {
  timestampFromMilliseconds: (v: bigint) => new EpochTime(v, 1_000n),
  timestampFromMicroseconds: (v: bigint) => new EpochTime(v, 1_000_000n),
  timestampFromNanoseconds: (v: bigint) => new EpochTime(v, 1_000_000_000n),
  dateFromDays: (days: number) => days,
};

interface ParquetElement {
  name: string;
  type?: string;
  converted_type?: string;
  logical_type?: { type: string; bitWidth?: number; isSigned?: boolean };
  num_children?: number;
}

function parquetSqlType(node: { element: ParquetElement; children: { element: ParquetElement; children: unknown[] }[] }, firstValue: unknown): string {
  const e = node.element;
  const logical = e.logical_type?.type ?? e.converted_type;
  if (node.children.length) {
    // LIST of numbers: a vector when every row has the same length (taken from the first row).
    if (Array.isArray(firstValue) && firstValue.length && firstValue.every((x) => typeof x === 'number')) return `FLOAT4[${firstValue.length}]`;
    return 'TEXT';
  }
  switch (logical) {
    case 'STRING':
    case 'UTF8':
    case 'ENUM':
    case 'JSON':
      return 'TEXT';
    case 'DATE':
      return 'DATE';
    case 'TIMESTAMP':
    case 'TIMESTAMP_MILLIS':
    case 'TIMESTAMP_MICROS':
      return 'TIMESTAMP';
    case 'DECIMAL':
      return 'DOUBLE PRECISION';
    case 'INT_8':
    case 'INT_16':
    case 'UINT_8':
      return 'SMALLINT';
    case 'UINT_16':
      return 'INTEGER';
    case 'UINT_32':
    case 'UINT_64':
      return 'BIGINT';
    case 'INTEGER': {
      const bits = e.logical_type?.bitWidth ?? 64;
      return bits <= 16 ? 'SMALLINT' : bits === 32 && e.logical_type?.isSigned !== false ? 'INTEGER' : 'BIGINT';
    }
  }
  switch (e.type) {
    case 'BOOLEAN':
      return 'BOOLEAN';
    case 'INT32':
      return 'INTEGER';
    case 'INT64':
      return 'BIGINT';
    case 'INT96':
      return 'TIMESTAMP';
    case 'FLOAT':
      return 'REAL';
    case 'DOUBLE':
      return 'DOUBLE PRECISION';
    default:
      return 'TEXT';
  }
}

export async function openParquet(file: string): Promise<LoadSource> {
  if (file === '-') throw new InvalidError('Parquet needs a file (random access), not standard input');
  const totalBytes = statSync(file).size;
  const buffer = await asyncBufferFromFile(file);
  const metadata = await parquetMetadataAsync(buffer);
  const tree = parquetSchema(metadata) as unknown as { children: { element: ParquetElement; children: { element: ParquetElement; children: unknown[] }[] }[] };
  const columns = tree.children.map((c) => c.element.name);
  const totalRows = Number(metadata.num_rows);
  let rowsRead = 0;
  const read = (rowStart: number, rowEnd: number) =>
    new Promise<unknown[][]>((resolve, reject) => {
      parquetRead({ file: buffer, metadata, rowStart, rowEnd, parsers: EPOCH_PARSERS, onComplete: (rows) => resolve(rows as unknown[][]) }).catch(reject);
    });
  const first = totalRows > 0 ? (await read(0, 1))[0] : [];
  return {
    format: 'parquet',
    unit: 'row',
    columns,
    proposedTypes: () => tree.children.map((c, i) => parquetSqlType(c, first?.[i])),
    totalBytes,
    bytesRead: () => (totalRows ? (totalBytes * rowsRead) / totalRows : 0),
    skipped: [],
    async *chunks() {
      let groupStart = 0;
      for (const group of metadata.row_groups) {
        const groupEnd = groupStart + Number(group.num_rows);
        for (let start = groupStart; start < groupEnd; start += PARQUET_READ_ROWS) {
          const end = Math.min(groupEnd, start + PARQUET_READ_ROWS);
          const rows = await read(start, end);
          for (let k = 0; k < rows.length; k += ROW_CHUNK_ROWS) {
            const part = rows.slice(k, k + ROW_CHUNK_ROWS);
            yield { kind: 'rows', rows: part, positions: part.map((_r, j) => start + k + j + 1) };
          }
          rowsRead = end;
        }
        groupStart = groupEnd;
      }
    },
    async close() {},
  };
}
