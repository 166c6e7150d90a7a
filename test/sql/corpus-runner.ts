/**
 * The SQL conformance corpus (issue 8): statements kept as data files in test/sql/corpus/*.sql,
 * run on Quiver (`db.sql` and `db.query`) and on DuckDB over the same data
 * (corpus-fixture.ts), results compared as JS values.
 *
 * Corpus file format
 * ------------------
 * Statements end with `;` at the end of a line. Comment lines (`-- …`) before a statement are
 * comments, except these directives, which apply to the next statement:
 *
 *   -- ordered                    compare rows in order (the ORDER BY must make the order unique)
 *   -- ordered-on: a, b           rows as a multiset, and these output columns in order (ORDER BY
 *                                 with ties: the sort keys must come out in order, ties in any order)
 *   -- count-only                 compare only the number of rows and columns (LIMIT without ORDER BY)
 *   -- error: text                Quiver must throw an error of kind 'invalid' whose message
 *                                 contains `text` (case-insensitive); DuckDB is not consulted
 *   -- error not_found: text      the same with another error kind
 *   -- duckdb: SELECT …           the statement as DuckDB spells it (one line)
 *   -- params: [1, "a", "5n"]     parameters $1, $2, … as JSON; "<digits>n" is a bigint
 *   -- skip-duckdb                run on Quiver only and only check that it does not fail
 *
 * Default: rows compared as a multiset. Column names are compared for bare column references,
 * `*` and aliased expressions (PostgreSQL names other expressions its own way, DuckDB another).
 *
 * DuckDB runs with `default_null_order = 'postgres'` (NULLs last ascending, first descending)
 * and `integer_division = true` (`/` on integers truncates, as in PostgreSQL).
 *
 * Values: integers compare numerically across widths (bigint = number), floats (and DuckDB
 * decimals) with relative tolerance 1e-9, dates as days, timestamps as microseconds, strings
 * exactly, NULL as null.
 *
 * Command line (triage):
 *   node --import=tsx test/sql/corpus-runner.ts [--duckdb-only] [--file name.sql]… [--verbose]
 * `--duckdb-only` runs every statement on DuckDB alone and reports how many ran (checks the
 * corpus itself); without it, both engines run and every mismatch is printed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { DataType, type RecordBatch, type Table as ArrowTable } from 'apache-arrow';
import { buildFixture, type FixtureModel, loadDuckDb } from './corpus-fixture.js';
import type { Database } from '../../src/quiver.js';

export const CORPUS_DIR = fileURLToPath(new URL('./corpus/', import.meta.url));

// ---------------------------------------------------------------------------------------------
// Corpus files

export type CompareMode = { kind: 'multiset' } | { kind: 'ordered' } | { kind: 'ordered-on'; columns: string[] } | { kind: 'count-only' };

export interface CorpusStatement {
  file: string;
  /** 1-based line where the statement starts. */
  line: number;
  sql: string;
  duckdbSql?: string;
  params: unknown[];
  mode: CompareMode;
  error?: { kind: string; text: string };
  skipDuckdb: boolean;
}

const DIRECTIVE = /^--\s*(ordered|ordered-on|count-only|error|duckdb|params|skip-duckdb)\b\s*([a-z_]+)?\s*(?::\s*(.*?))?\s*$/;

export function corpusFiles(): string[] {
  return readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort();
}

export function parseCorpus(file: string, text: string): CorpusStatement[] {
  const out: CorpusStatement[] = [];
  let pending: Omit<CorpusStatement, 'file' | 'line' | 'sql'> = fresh();
  let buf: string[] = [];
  let start = 0;
  const lines = text.split('\n');
  function fresh(): Omit<CorpusStatement, 'file' | 'line' | 'sql'> {
    return { params: [], mode: { kind: 'multiset' }, skipDuckdb: false };
  }
  lines.forEach((raw, i) => {
    const line = raw.trimEnd();
    const trimmed = line.trim();
    if (trimmed.startsWith('--')) {
      if (buf.length > 0) return; // a comment inside a statement: left out
      const m = DIRECTIVE.exec(trimmed);
      if (!m) return;
      const [, name, arg, value] = m;
      const where = `${file}:${i + 1}`;
      const need = () => {
        if (value === undefined || value === '') throw new Error(`${where}: -- ${name} needs a value after ':'`);
        return value;
      };
      switch (name) {
        case 'ordered':
          pending.mode = { kind: 'ordered' };
          break;
        case 'ordered-on':
          pending.mode = { kind: 'ordered-on', columns: need().split(',').map((s) => s.trim()) };
          break;
        case 'count-only':
          pending.mode = { kind: 'count-only' };
          break;
        case 'error':
          pending.error = { kind: arg ?? 'invalid', text: need() };
          break;
        case 'duckdb':
          pending.duckdbSql = need().replace(/;\s*$/, '');
          break;
        case 'params':
          pending.params = (JSON.parse(need()) as unknown[]).map((v) => (typeof v === 'string' && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v));
          break;
        case 'skip-duckdb':
          pending.skipDuckdb = true;
          break;
      }
      return;
    }
    if (trimmed === '' && buf.length === 0) return;
    if (buf.length === 0) start = i + 1;
    buf.push(line);
    if (trimmed.endsWith(';')) {
      const sql = buf.join('\n').trim().replace(/;$/, '').trim();
      out.push({ file, line: start, sql, ...pending });
      pending = fresh();
      buf = [];
    }
  });
  if (buf.length > 0) throw new Error(`${file}:${start}: statement does not end with ';'`);
  return out;
}

export function loadCorpus(files = corpusFiles()): CorpusStatement[] {
  return files.flatMap((f) => parseCorpus(f, readFileSync(join(CORPUS_DIR, f), 'utf8')));
}

// ---------------------------------------------------------------------------------------------
// Expected column names (bare column refs, `*`, aliases), from node-sql-parser's AST

let parser: { astify(sql: string): unknown } | undefined;
/** node-sql-parser's PostgreSQL build, the parser Quiver's SQL front end uses (read here directly,
 * not through Quiver's modules, so the runner does not depend on the code it checks). */
function astify(sql: string): unknown {
  if (!parser) {
    const require = createRequire(import.meta.url);
    const { Parser } = require('node-sql-parser/build/postgresql.js') as { Parser: new () => { astify(sql: string): unknown } };
    parser = new Parser();
  }
  // String contents do not matter for output names, and the parser mishandles some escapes.
  return parser.astify(sql.replace(/'(?:[^']|'')*'/g, "'s'"));
}

/** Per output column: the name it must have, or undefined (not compared). `null` when unknown. */
export function expectedNames(sql: string): { names: (string | undefined)[]; star: boolean } | null {
  let ast: unknown;
  try {
    ast = astify(sql);
  } catch {
    return null;
  }
  const select = (Array.isArray(ast) ? ast[0] : ast) as { type?: string; columns?: unknown } | undefined;
  if (select?.type !== 'select' || !Array.isArray(select.columns)) return null;
  let star = false;
  const names = select.columns.map((c: { expr?: { type?: string; column?: unknown }; as?: unknown }) => {
    if (typeof c.as === 'string' && c.as !== '') return c.as;
    if (c.expr?.type !== 'column_ref') return undefined;
    const col = c.expr.column as string | { expr?: { value?: unknown } };
    const name = typeof col === 'string' ? col : String(col?.expr?.value ?? '');
    if (name === '*') star = true;
    return name || undefined;
  });
  return { names, star };
}

// ---------------------------------------------------------------------------------------------
// Values

export type Value =
  | null
  | { t: 'int'; v: bigint }
  | { t: 'float'; v: number }
  | { t: 'str'; v: string }
  | { t: 'bool'; v: boolean }
  | { t: 'date'; days: number }
  | { t: 'ts'; micros: bigint };

export interface Result {
  names: string[];
  rows: Value[][];
}

function fromNumber(x: number | bigint, integer: boolean): Value {
  if (typeof x === 'bigint') return { t: 'int', v: x };
  return integer && Number.isInteger(x) ? { t: 'int', v: BigInt(x) } : { t: 'float', v: x };
}

/** An Arrow value of `type` as a Value. */
function fromArrow(type: DataType, x: unknown): Value {
  if (x === null || x === undefined) return null;
  if (DataType.isDictionary(type)) return fromArrow(type.dictionary, x);
  if (DataType.isInt(type)) return fromNumber(x as number | bigint, true);
  if (DataType.isFloat(type)) return { t: 'float', v: Number(x) };
  if (DataType.isDecimal(type)) return { t: 'float', v: Number(x) };
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type)) return { t: 'str', v: String(x) };
  if (DataType.isBool(type)) return { t: 'bool', v: Boolean(x) };
  if (DataType.isDate(type)) {
    const ms = x instanceof Date ? x.getTime() : Number(x);
    return { t: 'date', days: Math.round(ms / 86_400_000) };
  }
  if (DataType.isTimestamp(type)) {
    // apache-arrow reads every unit as (fractional) epoch milliseconds.
    const ms = x instanceof Date ? x.getTime() : Number(x);
    return { t: 'ts', micros: BigInt(Math.round(ms * 1000)) };
  }
  return { t: 'str', v: `<unsupported ${String(type)}: ${String(x)}>` };
}

export function arrowResult(table: ArrowTable | { schema: ArrowTable['schema']; batches: RecordBatch[] }): Result {
  const schema = table.schema;
  const rows: Value[][] = [];
  const batches = 'batches' in table ? table.batches : [];
  for (const batch of batches) {
    const cols = schema.fields.map((_, i) => batch.getChildAt(i));
    for (let r = 0; r < batch.numRows; r++) rows.push(schema.fields.map((f, i) => fromArrow(f.type, cols[i]?.get(r))));
  }
  return { names: schema.fields.map((f) => f.name), rows };
}

const DUCK_INT = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/;

function fromDuck(typeName: string, x: DuckDBValue): Value {
  if (x === null || x === undefined) return null;
  if (typeof x === 'boolean') return { t: 'bool', v: x };
  if (typeof x === 'string') return { t: 'str', v: x };
  if (typeof x === 'number' || typeof x === 'bigint') return fromNumber(x, DUCK_INT.test(typeName));
  const o = x as { days?: number; micros?: bigint; toDouble?: () => number };
  if (typeName === 'DATE' && typeof o.days === 'number') return { t: 'date', days: o.days };
  if (typeName === 'TIMESTAMP' && typeof o.micros === 'bigint') return { t: 'ts', micros: o.micros };
  if (typeName.startsWith('DECIMAL') && typeof o.toDouble === 'function') return { t: 'float', v: o.toDouble() };
  return { t: 'str', v: `<unsupported DuckDB ${typeName}: ${String(x)}>` };
}

export async function duckResult(conn: DuckDBConnection, sql: string, params: unknown[]): Promise<Result> {
  const reader = await conn.runAndReadAll(sql, params.length ? (params as DuckDBValue[]) : undefined);
  const types = reader.columnTypes().map(String);
  return { names: reader.columnNames(), rows: reader.getRows().map((row) => row.map((x, i) => fromDuck(types[i], x))) };
}

export function show(v: Value): string {
  if (v === null) return 'NULL';
  switch (v.t) {
    case 'int':
      return `${v.v}`;
    case 'float':
      return `${v.v}f`;
    case 'str':
      return JSON.stringify(v.v);
    case 'bool':
      return String(v.v);
    case 'date':
      return `DATE ${new Date(v.days * 86_400_000).toISOString().slice(0, 10)}`;
    case 'ts': {
      const frac = ((v.micros % 1_000_000n) + 1_000_000n) % 1_000_000n;
      const secs = (v.micros - frac) / 1_000_000n;
      return `TS ${new Date(Number(secs) * 1000).toISOString().slice(0, 19)}.${String(frac).padStart(6, '0')}`;
    }
  }
}

const showRow = (row: Value[] | undefined) => (row ? `(${row.map(show).join(', ')})` : '<no row>');

const isNum = (v: Value): v is { t: 'int'; v: bigint } | { t: 'float'; v: number } => v !== null && (v.t === 'int' || v.t === 'float');

export function sameValue(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  if (isNum(a) && isNum(b)) {
    if (a.t === 'int' && b.t === 'int') return a.v === b.v;
    const x = Number(a.v);
    const y = Number(b.v);
    if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
    if (x === y) return true;
    return Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
  }
  if (a.t !== b.t) return false;
  switch (a.t) {
    case 'str':
    case 'bool':
      return a.v === (b as typeof a).v;
    case 'date':
      return a.days === (b as typeof a).days;
    case 'ts':
      return a.micros === (b as typeof a).micros;
  }
  return false;
}

/** A sort key equal for values `sameValue` accepts (up to rounding at the 12th digit). */
function valueKey(v: Value): string {
  if (v === null) return '0';
  switch (v.t) {
    case 'int':
    case 'float': {
      const n = Number(v.v);
      return `1${Number.isFinite(n) ? Number(n.toPrecision(12)) : n}`;
    }
    case 'str':
      return `2${v.v}`;
    case 'bool':
      return `3${v.v}`;
    case 'date':
      return `4${v.days}`;
    case 'ts':
      return `5${v.micros}`;
  }
}

const rowKey = (row: Value[]) => row.map(valueKey).join('\u0001');

function sortedRows(rows: Value[][]): Value[][] {
  return rows
    .map((r) => [rowKey(r), r] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, r]) => r);
}

function firstDifference(got: Value[][], want: Value[][]): number {
  const n = Math.max(got.length, want.length);
  for (let i = 0; i < n; i++) {
    const g = got[i];
    const w = want[i];
    if (!g || !w || g.length !== w.length || g.some((v, j) => !sameValue(v, w[j]))) return i;
  }
  return -1;
}

/** Compares Quiver's result with DuckDB's; returns a description of the first difference, or null. */
export function compareResults(st: CorpusStatement, got: Result, want: Result): string | null {
  if (got.names.length !== want.names.length) {
    return `column count: got ${got.names.length} (${got.names.join(', ')}), want ${want.names.length} (${want.names.join(', ')})`;
  }
  const expected = expectedNames(st.sql);
  const names = expected && !expected.star && expected.names.length === want.names.length ? expected.names : expected?.star ? want.names : [];
  for (let i = 0; i < names.length; i++) {
    if (names[i] !== undefined && got.names[i] !== names[i]) return `column ${i + 1} name: got "${got.names[i]}", want "${names[i]}"`;
  }
  if (got.rows.length !== want.rows.length) {
    const extra = got.rows.length > want.rows.length ? `\n  first rows got:  ${got.rows.slice(0, 3).map(showRow).join(' ')}` : '';
    return `row count: got ${got.rows.length}, want ${want.rows.length}${extra}\n  first rows want: ${want.rows.slice(0, 3).map(showRow).join(' ')}`;
  }
  if (st.mode.kind === 'count-only') return null;
  const inOrder = st.mode.kind === 'ordered';
  const g = inOrder ? got.rows : sortedRows(got.rows);
  const w = inOrder ? want.rows : sortedRows(want.rows);
  const d = firstDifference(g, w);
  if (d >= 0) {
    const how = inOrder ? `row ${d + 1} (in order)` : `row ${d + 1} of the sorted multiset`;
    return `${how}:\n  got:  ${showRow(g[d])}\n  want: ${showRow(w[d])}\n  (columns: ${want.names.join(', ')})`;
  }
  if (st.mode.kind === 'ordered-on') {
    const idx = st.mode.columns.map((c) => got.names.indexOf(c));
    const missing = st.mode.columns.filter((_, i) => idx[i] < 0);
    if (missing.length) return `ordered-on: no output column ${missing.join(', ')} (got ${got.names.join(', ')})`;
    const proj = (rows: Value[][]) => rows.map((r) => idx.map((i) => r[i]));
    const od = firstDifference(proj(got.rows), proj(want.rows));
    if (od >= 0) return `order of (${st.mode.columns.join(', ')}) at row ${od + 1}:\n  got:  ${showRow(proj(got.rows)[od])}\n  want: ${showRow(proj(want.rows)[od])}`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Engines

export async function openDuckDb(model: FixtureModel): Promise<{ conn: DuckDBConnection; close: () => void }> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run("SET default_null_order = 'postgres'");
  await conn.run('SET integer_division = true');
  await loadDuckDb(conn, model);
  return {
    conn,
    close: () => {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

type SqlFn = (sql: string, params?: unknown[]) => Promise<ArrowTable>;
type QueryFn = (sql: string, params?: unknown[]) => AsyncIterable<RecordBatch>;

/** `db.sql`, or undefined while the SQL engine does not exist. */
export function sqlOf(db: Database): SqlFn | undefined {
  const fn = (db as unknown as { sql?: SqlFn }).sql;
  return typeof fn === 'function' ? fn.bind(db) : undefined;
}
function queryOf(db: Database): QueryFn | undefined {
  const fn = (db as unknown as { query?: QueryFn }).query;
  return typeof fn === 'function' ? fn.bind(db) : undefined;
}

export const where = (st: CorpusStatement) => `${st.file}:${st.line}`;

function describe(st: CorpusStatement, problem: string): string {
  const alt = st.duckdbSql ? `\n  duckdb: ${st.duckdbSql}` : '';
  const params = st.params.length ? `\n  params: ${st.params.map((p) => (typeof p === 'bigint' ? `${p}n` : JSON.stringify(p))).join(', ')}` : '';
  return `${where(st)}\n  ${st.sql.replaceAll('\n', '\n  ')}${alt}${params}\n  ${problem.replaceAll('\n', '\n  ')}`;
}

const errorText = (e: unknown) => {
  const err = e as { kind?: unknown; message?: unknown };
  return `${typeof err?.kind === 'string' ? `[${err.kind}] ` : ''}${String(err?.message ?? e)}`;
};

/** Runs one statement on both engines; returns the failures (empty when it conforms). */
export async function runStatement(st: CorpusStatement, db: Database, duck: DuckDBConnection, verbose = false): Promise<string[]> {
  const sql = sqlOf(db);
  if (!sql) return [describe(st, 'db.sql is not implemented')];
  if (st.error) {
    try {
      const t = await sql(st.sql, st.params);
      return [describe(st, `expected an error (${st.error.kind}: ${st.error.text}), got ${t.numRows} rows`)];
    } catch (e) {
      const err = e as { kind?: unknown; message?: unknown };
      const ok = err?.kind === st.error.kind && String(err?.message ?? '').toLowerCase().includes(st.error.text.toLowerCase());
      if (verbose) console.log(`${where(st)} error ${ok ? 'ok' : 'MISMATCH'}: ${errorText(e)}`);
      return ok ? [] : [describe(st, `expected an error of kind ${st.error.kind} containing "${st.error.text}", got ${errorText(e)}`)];
    }
  }
  const failures: string[] = [];
  let got: Result;
  try {
    got = arrowResult(await sql(st.sql, st.params));
  } catch (e) {
    return [describe(st, `db.sql failed: ${errorText(e)}`)];
  }
  if (st.skipDuckdb) return [];
  let want: Result;
  try {
    want = await duckResult(duck, st.duckdbSql ?? st.sql, st.params);
  } catch (e) {
    return [describe(st, `DuckDB failed (the corpus is wrong): ${errorText(e)}`)];
  }
  const diff = compareResults(st, got, want);
  if (diff) failures.push(describe(st, `db.sql differs from DuckDB: ${diff}`));
  if (verbose) console.log(`${where(st)} ${diff ? 'DIFF' : 'ok'} (${got.rows.length} rows)`);
  const query = queryOf(db);
  if (query) {
    try {
      const batches: RecordBatch[] = [];
      for await (const b of query(st.sql, st.params)) batches.push(b);
      const streamed = batches.length ? arrowResult({ schema: batches[0].schema, batches }) : { names: got.names, rows: [] };
      const qdiff = compareResults(st, streamed, want);
      if (qdiff) failures.push(describe(st, `db.query differs from DuckDB: ${qdiff}`));
    } catch (e) {
      failures.push(describe(st, `db.query failed: ${errorText(e)}`));
    }
  }
  return failures;
}

/** Runs the statements of one file; returns every failure (a statement can fail on db.sql and db.query). */
export async function runFile(file: string, db: Database, duck: DuckDBConnection, verbose = false): Promise<{ ran: number; failed: number; failures: string[] }> {
  const statements = loadCorpus([file]);
  const failures: string[] = [];
  let failed = 0;
  for (const st of statements) {
    const f = await runStatement(st, db, duck, verbose);
    if (f.length) failed++;
    failures.push(...f);
  }
  return { ran: statements.length, failed, failures };
}

// ---------------------------------------------------------------------------------------------
// --duckdb-only: the corpus checked against DuckDB alone

interface DuckOnlyReport {
  ran: number;
  errorStatements: number;
  duckAlsoErrors: number;
  skipped: number;
  failures: string[];
  warnings: string[];
}

export async function checkCorpusOnDuckDb(statements: CorpusStatement[], duck: DuckDBConnection, verbose = false): Promise<DuckOnlyReport> {
  const report: DuckOnlyReport = { ran: 0, errorStatements: 0, duckAlsoErrors: 0, skipped: 0, failures: [], warnings: [] };
  for (const st of statements) {
    const parsed = expectedNames(st.sql);
    if (st.error) {
      report.errorStatements++;
      try {
        await duckResult(duck, st.duckdbSql ?? st.sql, st.params);
        if (verbose) console.log(`${where(st)} error statement; DuckDB accepts it`);
      } catch (e) {
        report.duckAlsoErrors++;
        if (verbose) console.log(`${where(st)} error statement; DuckDB: ${String((e as Error).message).split('\n')[0]}`);
      }
      continue;
    }
    if (!parsed) report.warnings.push(`${where(st)}: node-sql-parser (PostgreSQL) cannot parse: ${st.sql.replaceAll('\n', ' ')}`);
    if (/\blimit\b/i.test(st.sql) && !/\border\s+by\b/i.test(st.sql) && st.mode.kind !== 'count-only') {
      report.warnings.push(`${where(st)}: LIMIT without ORDER BY should be -- count-only`);
    }
    if (st.skipDuckdb) {
      report.skipped++;
      continue;
    }
    try {
      const r = await duckResult(duck, st.duckdbSql ?? st.sql, st.params);
      report.ran++;
      // The names this runner will demand of Quiver must be the ones DuckDB gives too.
      if (parsed && !parsed.star) {
        if (parsed.names.length !== r.names.length) report.warnings.push(`${where(st)}: ${parsed.names.length} select items but DuckDB returns ${r.names.length} columns`);
        else parsed.names.forEach((n, i) => n !== undefined && n !== r.names[i] && report.failures.push(`${where(st)}: column ${i + 1} expected name "${n}", DuckDB names it "${r.names[i]}"`));
      }
      if (st.mode.kind === 'ordered' && !/\border\s+by\b/i.test(st.sql)) report.failures.push(`${where(st)}: -- ordered without ORDER BY`);
      if (verbose) console.log(`${where(st)} ok: ${r.rows.length} rows; ${r.names.join(', ')}${r.rows[0] ? `; first ${showRow(r.rows[0])}` : ''}`);
    } catch (e) {
      report.failures.push(describe(st, `DuckDB failed: ${String((e as Error).message).split('\n')[0]}`));
    }
  }
  return report;
}

// ---------------------------------------------------------------------------------------------
// Command line

async function main(argv: string[]): Promise<number> {
  const duckOnly = argv.includes('--duckdb-only');
  const verbose = argv.includes('--verbose');
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--file') files.push(basename(argv[++i] ?? ''));
    else if (!['--duckdb-only', '--verbose'].includes(argv[i])) throw new Error(`unknown argument ${argv[i]}; use --duckdb-only, --file name.sql, --verbose`);
  }
  const chosen = files.length ? files.map((f) => (f.endsWith('.sql') ? f : `${f}.sql`)) : corpusFiles();
  const statements = loadCorpus(chosen);

  if (duckOnly) {
    const duck = await openDuckDb(await buildFixture());
    try {
      const r = await checkCorpusOnDuckDb(statements, duck.conn, verbose);
      for (const w of r.warnings) console.log(`warning: ${w}`);
      for (const f of r.failures) console.log(`FAIL ${f}`);
      const perFile = chosen.map((f) => `${f} ${statements.filter((s) => s.file === f).length}`).join(', ');
      console.log(`${statements.length} statements in ${chosen.length} files (${perFile})`);
      console.log(
        `DuckDB ran ${r.ran} of ${statements.length - r.errorStatements - r.skipped} result statements; ${r.failures.length} failures; ` +
          `${r.errorStatements} error statements (DuckDB also rejects ${r.duckAlsoErrors}); ${r.skipped} skip-duckdb; ${r.warnings.length} warnings`,
      );
      return r.failures.length ? 1 : 0;
    } finally {
      duck.close();
    }
  }

  const { connect } = await import('../../src/quiver.js');
  const db = await connect('memory://');
  const model = await buildFixture(db);
  const duck = await openDuckDb(model);
  try {
    if (!sqlOf(db)) {
      console.log('db.sql is not implemented; use --duckdb-only to check the corpus alone');
      return 1;
    }
    let failed = 0;
    for (const st of statements) {
      const f = await runStatement(st, db, duck.conn, verbose);
      if (f.length) failed++;
      for (const m of f) console.log(`FAIL ${m}\n`);
    }
    console.log(`${statements.length - failed} of ${statements.length} statements conform`);
    return failed ? 1 : 0;
  } finally {
    duck.close();
    await db.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      console.error(e);
      process.exit(2);
    },
  );
}
