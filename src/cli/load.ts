/**
 * `quiver load <table> <file>`: streams a CSV, NDJSON, Arrow IPC or Parquet file into a table,
 * embedded or through a Flight SQL server (CommandStatementIngest).
 *
 * A new table is created first (`--primary-key`, column types from `--schema` or the file), with
 * an ordinary CREATE TABLE statement, so both targets take the same path; an existing table
 * keeps its schema and the rows are upserted by primary key. File columns are matched to table
 * columns by name; a table column the file lacks is NULL.
 *
 * Batches of `--batch-rows` rows are built in Arrow form from small chunks of parsed rows and
 * written in order with at most two writes in flight. Memory is bounded whatever the file's size:
 * by those batches, the MemTables waiting for their flush (a budget of their own, see
 * LOADER_OPTIONS) and a small cache of flushed generations. Each write resolves once durable;
 * the loader counts rows as durable only then. A bad row (a value that does not fit its column,
 * a malformed line) fails the load naming its line (text) or row (Arrow, Parquet) and how many
 * rows were durably loaded before it — the rows of the batch being built are not written. With
 * `--on-error skip` it is skipped, counted and listed.
 */
import { makeData, RecordBatch, type Schema, Struct, Type, type Vector } from 'apache-arrow';
import { compareTypes } from 'apache-arrow/visitor/typecomparator';
import { InvalidError, isQuiverError } from '../errors.js';
import { openSession, UsageError, type ConnectionFlags } from './options.js';
import { BadValue, columnBuilder, EpochTime } from './load/columns.js';
import { createTableSql, parseSchemaOption, quoteIdent } from './load/infer.js';
import { BadRow, formatFromName, openArrow, openCsv, openNdjson, openParquet, type InputFormat, type LoadSource, type SkippedRow } from './load/sources.js';
import { makeProgress } from './load/progress.js';
import type { Ingest, Session } from './session.js';
import type { Terminal } from './terminal.js';

export interface LoadFlags extends ConnectionFlags {
  inputFormat?: InputFormat;
  primaryKey?: string;
  schema?: string;
  onError: 'fail' | 'skip';
  batchRows: string;
  delimiter: string;
  quiet?: boolean;
}

/** At most this many writes in flight (each resolves once durable). */
const MAX_IN_FLIGHT = 2;
/**
 * An embedded load only writes: flushed generations need not stay in memory for reads (the
 * cache would otherwise keep up to 512 MiB of the table just loaded), and frozen MemTables
 * waiting for their flush are held to a smaller budget, so memory is set by these and the batch
 * size, not by the file.
 */
const LOADER_OPTIONS = { generationCacheBytes: 16 * 1024 * 1024, writer: { maxUnflushedMemtableBytes: 64 * 1024 * 1024 } };
/** Skipped rows listed on standard error (all are counted). */
const LIST_SKIPPED = 10;

export interface LoadResult {
  rows: number;
  skipped: SkippedRow[];
  bytes: number;
  seconds: number;
}

async function openSource(file: string, flags: LoadFlags): Promise<LoadSource> {
  const format = flags.inputFormat ?? formatFromName(file);
  if (!format) throw new UsageError(`cannot tell the format of ${file} from its name: give --input-format csv|ndjson|arrow|parquet`);
  const skipBadRecords = flags.onError === 'skip';
  switch (format) {
    case 'csv':
      return openCsv(file, { delimiter: flags.delimiter === '\\t' ? '\t' : flags.delimiter, skipBadRecords });
    case 'ndjson':
      return openNdjson(file, { skipBadRecords });
    case 'arrow':
      return openArrow(file);
    case 'parquet':
      return openParquet(file);
  }
}

/** Creates the table when absent; returns its schema. */
async function prepareTable(session: Session, table: string, source: LoadSource, flags: LoadFlags): Promise<Schema> {
  const exists = (await session.tableNames()).includes(table);
  if (exists) {
    if (flags.schema) throw new UsageError(`table ${table} exists: its own schema is used, --schema is only for a new table`);
  } else {
    if (!flags.primaryKey) throw new UsageError(`table ${table} does not exist: give --primary-key <column> to create it`);
    const primaryKey = flags.primaryKey.split(',').map((c) => c.trim());
    let columns: { name: string; type: string }[];
    if (flags.schema) {
      try {
        columns = parseSchemaOption(flags.schema);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
    } else {
      const types = source.proposedTypes();
      columns = source.columns.map((name, i) => ({ name, type: types[i] }));
    }
    for (const k of primaryKey) if (!columns.some((c) => c.name === k)) throw new UsageError(`--primary-key ${k} is not a column (${columns.map((c) => c.name).join(', ')})`);
    const result = await session.run(createTableSql(table, columns, primaryKey), []);
    for await (const _ of result.batches); // run it to the end
  }
  return (await session.tableInfo(table)).schema;
}

/** For a typed source column whose type differs from the table's: its values for the builders. */
function vectorValue(vector: Vector, row: number): unknown {
  if (!vector.isValid(row)) return null;
  const type = vector.type;
  if (type.typeId === Type.Timestamp) {
    const data = vector.data[0];
    const per = [1n, 1_000n, 1_000_000n, 1_000_000_000n][(type as unknown as { unit: number }).unit];
    return new EpochTime(BigInt((data.values as BigInt64Array)[data.offset + row]), per);
  }
  return vector.get(row);
}

export async function runLoad(table: string, file: string, flags: LoadFlags, terminal: Terminal): Promise<number> {
  const batchRows = Number(flags.batchRows);
  if (!Number.isInteger(batchRows) || batchRows < 1) throw new UsageError(`--batch-rows must be a positive integer, got ${flags.batchRows}`);
  const source = await openSource(file, flags);
  const session = await openSession(flags, LOADER_OPTIONS);
  const started = performance.now();
  let rowsDurable = 0;
  let ingest: Ingest | undefined;
  const progress = makeProgress({ quiet: !!flags.quiet, totalBytes: source.totalBytes, colour: terminal.style.enabled });
  const skippedValues: SkippedRow[] = [];
  const inFlight: Promise<number>[] = [];
  try {
    const schema = await prepareTable(session, table, source, flags);
    // File column -> table column.
    const target = source.columns.map((name) => {
      const i = schema.fields.findIndex((f) => f.name === name);
      if (i < 0) throw new InvalidError(`column ${name} of ${file} is not in table ${table} (${schema.fields.map((f) => f.name).join(', ')})`);
      return i;
    });
    const fromFile = new Set(target);
    for (const [i, f] of schema.fields.entries()) {
      if (!fromFile.has(i) && !f.nullable) throw new InvalidError(`column ${f.name} of table ${table} is NOT NULL and not in ${file}`);
    }
    const builders = schema.fields.map((f) => columnBuilder(f));
    const missing = schema.fields.map((_f, i) => i).filter((i) => !fromFile.has(i));

    ingest = await session.ingest(table);
    const write = async (batch: RecordBatch) => {
      if (inFlight.length >= MAX_IN_FLIGHT) rowsDurable += await inFlight.shift()!;
      const put = ingest!.put(batch).then(() => batch.numRows);
      put.catch(() => {}); // observed when awaited
      inFlight.push(put);
    };
    const fromBuilders = () => {
      const children = builders.map((b) => b.finish());
      return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: children[0]?.length ?? 0, nullCount: 0, children }));
    };

    let rowsRead = 0;
    for await (const chunk of source.chunks(batchRows)) {
      if (chunk.kind === 'batch') {
        const b = chunk.batch;
        const sameTypes = missing.length === 0 && target.every((t, c) => compareTypes(b.schema.fields[c].type, schema.fields[t].type));
        if (sameTypes) {
          const children = schema.fields.map((_f, t) => b.data.children[target.indexOf(t)]);
          await write(new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: b.numRows, nullCount: 0, children })));
        } else {
          const vectors = b.schema.fields.map((_f, c) => b.getChildAt(c)!);
          for (let r = 0; r < b.numRows; r++) {
            appendRow(builders, target, missing, (c) => vectorValue(vectors[c], r), chunk.firstRow + r, source, flags, skippedValues);
            if (builders[0].length === batchRows) await write(fromBuilders());
          }
        }
        rowsRead += b.numRows;
      } else {
        const { rows, positions } = chunk;
        for (let r = 0; r < rows.length; r++) {
          const row = rows[r];
          appendRow(builders, target, missing, (c) => row[c], positions[r], source, flags, skippedValues);
          if (builders[0].length === batchRows) await write(fromBuilders());
        }
        rowsRead += rows.length;
      }
      progress.update(rowsRead, source.bytesRead());
      // Parsing never waits while rows are buffered, so without this the loader would run on
      // microtasks alone and starve the writer's flush (each flush step waits for a turn of the
      // event loop): MemTables would pile up until backpressure. One turn per chunk keeps the
      // flush in step with the load.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (builders[0].length > 0) await write(fromBuilders());
    while (inFlight.length) rowsDurable += await inFlight.shift()!;
    const stored = await ingest.finish();
    progress.stop();
    const seconds = (performance.now() - started) / 1000;
    const bytes = Number.isFinite(source.totalBytes) ? source.totalBytes : source.bytesRead();
    const skipped = [...source.skipped, ...skippedValues].sort((a, b) => a.position - b.position);
    reportSkipped(skipped, source, flags, terminal);
    const mbps = bytes / 1024 / 1024 / seconds;
    const skippedText = skipped.length ? `; ${skipped.length} bad ${source.unit}${skipped.length === 1 ? '' : 's'} skipped` : '';
    await terminal.sink.write(
      `loaded ${stored} rows into ${table} in ${seconds.toFixed(2)} s (${Math.round(stored / seconds).toLocaleString('en-US')} rows/s, ${mbps.toFixed(1)} MB/s)${skippedText}\n`,
    );
    return 0;
  } catch (e) {
    progress.stop();
    // Wait for the writes already sent: they count as loaded only once durable.
    for (const put of inFlight) rowsDurable += await put.catch(() => 0);
    rowsDurable = await settleLoaded(rowsDurable, ingest);
    const where = e instanceof BadRow ? `${source.unit} ${e.position}: ` : '';
    const loaded = ingest ? `; ${rowsDurable} rows were loaded (durable) before it, nothing after` : '';
    if (e instanceof BadRow) {
      terminal.error(`quiver: invalid: ${where}${e.message}${loaded}`);
      return 1;
    }
    if (e instanceof UsageError) throw e;
    if (isQuiverError(e)) {
      terminal.error(`quiver: ${e.kind}: ${e.message}${loaded}`);
      return 1;
    }
    throw e;
  } finally {
    await source.close();
    await session.close();
  }

  async function settleLoaded(durable: number, ing: Ingest | undefined): Promise<number> {
    if (!ing) return durable;
    try {
      return await ing.abort();
    } catch {
      return durable;
    }
  }
}

function appendRow(
  builders: ReturnType<typeof columnBuilder>[],
  target: number[],
  missing: number[],
  value: (sourceColumn: number) => unknown,
  position: number,
  source: LoadSource,
  flags: LoadFlags,
  skipped: SkippedRow[],
): void {
  const before = builders[0].length;
  try {
    for (let c = 0; c < target.length; c++) builders[target[c]].append(value(c));
    for (const m of missing) builders[m].append(null);
  } catch (e) {
    if (!(e instanceof BadValue)) throw e;
    for (const b of builders) if (b.length > before) b.truncate(before);
    if (flags.onError === 'skip') {
      skipped.push({ position, message: e.message });
      return;
    }
    throw new BadRow(position, e.message);
  }
}

function reportSkipped(skipped: SkippedRow[], source: LoadSource, flags: LoadFlags, terminal: Terminal): void {
  if (flags.quiet) return;
  for (const s of skipped.slice(0, LIST_SKIPPED)) terminal.error(`quiver: skipped ${source.unit} ${s.position}: ${s.message}`);
  if (skipped.length > LIST_SKIPPED) terminal.error(`quiver: … and ${skipped.length - LIST_SKIPPED} more`);
}

export { quoteIdent };
