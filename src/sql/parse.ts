/**
 * `parseSql`: SQL text → one typed `Statement` (statement.ts), cached by text.
 *
 * node-sql-parser (PostgreSQL grammar) reads SELECT, INSERT, DELETE, CREATE TABLE and DROP
 * TABLE; its expressions go through `exec/expr`'s `exprFromAst`, the same converter filters
 * use, so there is one front end for both (with its workarounds: AND/OR precedence, `NOT (x)`,
 * exact 64-bit literals, PostgreSQL string literals). The parser cannot read `EXPLAIN`, index
 * methods other than btree/gin/gist/hash, or `DROP INDEX … ON`; those forms are recognised here
 * by a small grammar of their own over the same pre-processed text.
 *
 * Parsing costs a few hundred µs, far more than planning a cached statement, so statements are
 * kept in an LRU by exact text; long vectors should travel as `$n` parameters so that the text
 * (and its cache entry) stays small and shared. Syntax errors name the line, column and token.
 */
import { DateDay, type DataType, Field, FixedSizeList, Float32, Float64, Int16, Int32, Int64, Bool, TimestampMicrosecond, Utf8 } from 'apache-arrow';
import type { Expr } from '../../exec/expr/expr.js';
import { exprFromAst } from '../../exec/expr/parse-filter.js';
import { originalOffset, type Prepared, prepareSqlText, sqlParser, sqlSyntaxError, syntaxErrorAt } from '../../exec/expr/sql-text.js';
import { InvalidError } from '../errors.js';
import type {
  ColumnDefinition,
  CreateIndexStatement,
  IndexMethod,
  OrderItem,
  SelectItem,
  SelectStatement,
  Statement,
  TableRef,
} from './statement.js';

const CACHE_CAPACITY = 512;
const cache = new Map<string, Statement>();

/** Parses one SQL statement (cached by text). */
export function parseSql(text: string): Statement {
  if (typeof text !== 'string') throw new InvalidError('SQL must be a string');
  const hit = cache.get(text);
  if (hit) {
    cache.delete(text);
    cache.set(text, hit);
    return hit;
  }
  const statement = parseUncached(text);
  cache.set(text, statement);
  if (cache.size > CACHE_CAPACITY) cache.delete(cache.keys().next().value!);
  return statement;
}

export function clearSqlCache(): void {
  cache.clear();
}

type Node = Record<string, any>;

function parseUncached(text: string): Statement {
  if (text.trim() === '' || stripComments(text).trim().replace(/;\s*$/, '') === '') throw new InvalidError('empty SQL statement');
  const prepared = prepareSqlText(text, 'SQL');
  return new StatementParser(text, prepared).parse();
}

class StatementParser {
  constructor(
    private readonly text: string,
    private readonly prepared: Prepared,
  ) {}

  parse(): Statement {
    const body = this.prepared.text;
    const lead = leadingWords(body);
    if (lead[0] === 'EXPLAIN') return this.explain(body);
    if (lead[0] === 'CREATE' && (lead[1] === 'INDEX' || (lead[1] === 'UNIQUE' && lead[2] === 'INDEX'))) return this.createIndex(body);
    if (lead[0] === 'DROP' && lead[1] === 'INDEX') return this.dropIndex(body);
    let parsed = body;
    if (lead[0] === 'CREATE' && lead[1] === 'TABLE') {
      // `CREATE TABLE … (…) WITH (region_spec = …)`: the options are Quiver's; the parser does not read them.
      const w = this.tableOptions(body);
      this.createOptions = w.options;
      parsed = w.rest;
    }
    let ast: unknown;
    try {
      ast = sqlParser().astify(parsed, { database: 'PostgresQL' });
    } catch (e) {
      throw sqlSyntaxError(this.text, e, this.prepared, 0, 'SQL');
    }
    const statements = (Array.isArray(ast) ? ast : [ast]).filter((s) => s != null);
    if (statements.length !== 1) throw new InvalidError(`give one SQL statement at a time (found ${statements.length})`);
    return this.statement(statements[0] as Node);
  }

  private expr(node: unknown): Expr {
    return exprFromAst(checkQualifiers(node, this.qualifiers), this.prepared.strings);
  }

  /** The `WITH (…)` options of a CREATE TABLE, taken off the text before the parser sees it. */
  private createOptions: Record<string, string | number | boolean> = {};

  /** Splits `CREATE TABLE … (columns) WITH (options)` into the text without the options, and them. */
  private tableOptions(body: string): { rest: string; options: Record<string, string | number | boolean> } {
    // The column list is the first parenthesised group; WITH may follow its closing parenthesis.
    let depth = 0;
    let close = -1;
    for (let i = 0; i < body.length; i++) {
      const c = body[i];
      if (c === "'") i = body.indexOf("'", i + 1); // placeholders hold no quotes
      else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) {
        close = i;
        break;
      }
    }
    if (close < 0 || !/^\s*WITH\s*\(/i.test(body.slice(close + 1))) return { rest: body, options: {} };
    const t = new Tokens(body, this.text, this.prepared, close + 1);
    t.word('WITH');
    const options = t.options(this.prepared.strings);
    t.end();
    // Blank the options out (same length, so parser error positions still map to the user's text).
    return { rest: body.slice(0, close + 1) + ' '.repeat(body.length - close - 1), options };
  }

  /** Names a column may be qualified with (the table and its alias). */
  private qualifiers: Set<string> | null = null;

  private statement(n: Node): Statement {
    switch (n.type) {
      case 'select':
        return this.select(n);
      case 'insert':
      case 'replace':
        return this.insert(n);
      case 'delete':
        return this.delete(n);
      case 'create':
        if (n.keyword === 'table') return this.createTable(n);
        throw new InvalidError(`CREATE ${String(n.keyword ?? '').toUpperCase()} is not supported (CREATE TABLE and CREATE INDEX are)`);
      case 'drop':
        if (n.keyword === 'table') {
          const names = (Array.isArray(n.name) ? n.name : [n.name]).map((t: Node) => tableName(t));
          return { kind: 'drop_table', tables: names, ifExists: /IF EXISTS/i.test(String(n.prefix ?? '')) };
        }
        throw new InvalidError(`DROP ${String(n.keyword ?? '').toUpperCase()} is not supported (DROP TABLE and DROP INDEX are)`);
      case 'update':
        throw new InvalidError('UPDATE is not supported: INSERT upserts by primary key (write the whole new row)');
      default:
        throw new InvalidError(`${String(n.type).toUpperCase()} statements are not supported`);
    }
  }

  select(n: Node): SelectStatement {
    if (n.with) throw new InvalidError('WITH (common table expressions) is not supported');
    if (n._next || n.set_op) throw new InvalidError('UNION / INTERSECT / EXCEPT are not supported');
    if (n.window) throw new InvalidError('window functions are not supported');
    if (n.into?.position) throw new InvalidError('SELECT … INTO is not supported');
    if (n.for_update) throw new InvalidError('FOR UPDATE is not supported');
    let from: TableRef | null = null;
    if (Array.isArray(n.from) && n.from.length > 0) {
      if (n.from.length > 1) throw new InvalidError(n.from[1].join ? 'joins are not supported: query one table at a time' : 'selecting from several tables is not supported');
      const f = n.from[0] as Node;
      if (f.expr) throw new InvalidError('subqueries in FROM are not supported');
      from = { table: tableName(f), alias: f.as ?? null };
    }
    const previous = this.qualifiers;
    this.qualifiers = from ? new Set([from.table, ...(from.alias ? [from.alias] : [])]) : new Set();
    try {
      const items: SelectItem[] = (n.columns as Node[]).map((c) => {
        const e = c.expr as Node;
        if (e?.type === 'column_ref' && e.column === '*') {
          const q = e.table == null ? null : typeof e.table === 'string' ? e.table : String(e.table.value);
          if (q !== null && !this.qualifiers!.has(q)) throw new InvalidError(`${q}.* names no table in FROM`);
          return { kind: 'star', qualifier: q };
        }
        return { kind: 'expr', expr: this.expr(e), alias: c.as ?? null };
      });
      const orderBy: OrderItem[] = ((n.orderby ?? []) as Node[]).map((o) => ({
        expr: this.expr(o.expr),
        descending: String(o.type ?? '').toUpperCase() === 'DESC',
        nullsFirst: o.nulls == null ? null : /FIRST/i.test(String(o.nulls)),
      }));
      const { limit, offset } = this.limit(n.limit);
      const groupBy = n.groupby ? ((Array.isArray(n.groupby) ? n.groupby : n.groupby.columns) as Node[]).map((g) => this.expr(g)) : [];
      return {
        kind: 'select',
        distinct: String(n.distinct?.type ?? '').toUpperCase() === 'DISTINCT',
        items,
        from,
        where: n.where ? this.expr(n.where) : null,
        groupBy,
        having: n.having ? this.expr(n.having) : null,
        orderBy,
        limit,
        offset,
      };
    } finally {
      this.qualifiers = previous;
    }
  }

  private limit(l: Node | null): { limit: Expr | null; offset: Expr | null } {
    const values = (l?.value ?? []) as Node[];
    if (values.length === 0) return { limit: null, offset: null };
    const sep = String(l!.seperator ?? '');
    const conv = (v: Node) => (v.type === 'origin' && String(v.value).toLowerCase() === 'all' ? null : this.expr(v));
    if (sep === 'offset' && values.length === 1) return { limit: null, offset: conv(values[0]) };
    if (sep === ',') return { limit: conv(values[1]), offset: conv(values[0]) };
    return { limit: conv(values[0]), offset: values.length > 1 ? conv(values[1]) : null };
  }

  private insert(n: Node): Statement {
    if (n.type === 'replace') throw new InvalidError('REPLACE is not supported: INSERT already upserts by primary key');
    if (n.conflict) throw new InvalidError('ON CONFLICT is not supported: INSERT already upserts by primary key');
    if (n.returning) throw new InvalidError('RETURNING is not supported');
    const table = tableName(n.table[0]);
    const columns = n.columns ? (n.columns as (Node | string)[]).map((c) => (typeof c === 'string' ? c : String(c.value))) : null;
    const v = n.values as Node;
    this.qualifiers = new Set([table]);
    if (v?.type === 'values') {
      const rows = (v.values as Node[]).map((row) => (row.value as Node[]).map((e) => this.expr(e)));
      return { kind: 'insert', table, columns, values: rows, select: null };
    }
    if (v?.type === 'select') return { kind: 'insert', table, columns, values: null, select: this.select(v) };
    throw new InvalidError('INSERT needs VALUES (…) or a SELECT');
  }

  private delete(n: Node): Statement {
    const from = (n.from ?? n.table) as Node[];
    if (from.length !== 1) throw new InvalidError('DELETE from one table at a time');
    const table = tableName(from[0]);
    this.qualifiers = new Set([table, ...(from[0].as ? [from[0].as] : [])]);
    if (n.returning) throw new InvalidError('RETURNING is not supported');
    return { kind: 'delete', table, where: n.where ? this.expr(n.where) : null };
  }

  private createTable(n: Node): Statement {
    if (n.temporary) throw new InvalidError('temporary tables are not supported');
    if (n.query_expr || n.as) throw new InvalidError('CREATE TABLE … AS SELECT is not supported; CREATE TABLE, then INSERT … SELECT');
    const table = tableName(n.table[0]);
    const columns: ColumnDefinition[] = [];
    let tablePk: string[] | null = null;
    for (const d of (n.create_definitions ?? []) as Node[]) {
      if (d.resource === 'column') {
        const name = columnRefName(d.column);
        const { type, text } = columnType(d.definition, name);
        const pk = d.primary_key != null && /primary/i.test(String(d.primary_key));
        columns.push({ name, type, typeText: text, notNull: pk || String(d.nullable?.type ?? '').toLowerCase() === 'not null', primaryKey: pk });
      } else if (d.resource === 'constraint' && /primary key/i.test(String(d.constraint_type))) {
        if (tablePk) throw new InvalidError(`table ${table}: more than one PRIMARY KEY`);
        tablePk = (d.definition as Node[]).map((c) => columnRefName(c));
      } else {
        throw new InvalidError(`table ${table}: only column definitions and PRIMARY KEY (…) are supported in CREATE TABLE`);
      }
    }
    const columnPk = columns.filter((c) => c.primaryKey).map((c) => c.name);
    if (tablePk && columnPk.length) throw new InvalidError(`table ${table}: give the primary key either on a column or as PRIMARY KEY (…), not both`);
    if (columnPk.length > 1) throw new InvalidError(`table ${table}: more than one column says PRIMARY KEY; use PRIMARY KEY (a, b) for a composite key`);
    const primaryKey = tablePk ?? columnPk;
    if (primaryKey.length === 0) throw new InvalidError(`table ${table} needs a PRIMARY KEY (every Quiver table has one: a newer row with the same key replaces the older)`);
    if (n.table_options) throw new InvalidError(`table ${table}: table options other than WITH (region_spec = …, region_column = …, buckets = …) are not supported`);
    return { kind: 'create_table', table, ifNotExists: n.if_not_exists != null, columns, primaryKey, options: this.createOptions };
  }

  // ------------------------------------------------------------------------------------------
  // Quiver's own grammar: EXPLAIN, CREATE INDEX, DROP INDEX

  private explain(body: string): Statement {
    const m = /^\s*(?:(?:--[^\n]*\n|\/\*[\s\S]*?\*\/)\s*)*EXPLAIN\s+(ANALYZE\s+)?/i.exec(body);
    const rest = body.slice(m![0].length);
    if (rest.trim() === '') throw syntaxErrorAt(this.text, this.text.length, 'EXPLAIN needs a statement after it', undefined, 'SQL');
    const inner = new StatementParser(this.text, { ...this.prepared, text: ' '.repeat(m![0].length) + rest }).parse();
    if (inner.kind === 'explain') throw new InvalidError('EXPLAIN EXPLAIN is not a statement');
    return { kind: 'explain', analyze: m![1] !== undefined, statement: inner };
  }

  private createIndex(body: string): CreateIndexStatement {
    const t = new Tokens(body, this.text, this.prepared);
    t.word('CREATE');
    if (t.peekWord('UNIQUE')) throw new InvalidError('UNIQUE indexes are not supported (the primary key is unique)');
    t.word('INDEX');
    let ifNotExists = false;
    if (t.peekWord('IF')) {
      t.word('IF');
      t.word('NOT');
      t.word('EXISTS');
      ifNotExists = true;
    }
    const name = t.peekWord('ON') ? null : t.ident('an index name or ON');
    t.word('ON');
    const table = t.ident('a table name');
    let method: IndexMethod | null = null;
    if (t.peekWord('USING')) {
      t.word('USING');
      method = indexMethod(t.ident('an index method (ivf_pq, fts, btree)'));
    }
    t.punct('(');
    const column = t.ident('a column name');
    if (t.peek() === ',') throw new InvalidError('an index covers one column');
    t.punct(')');
    let options: Record<string, string | number | boolean> = {};
    if (t.peekWord('WITH')) {
      t.word('WITH');
      options = t.options(this.prepared.strings);
    }
    t.end();
    return { kind: 'create_index', name, table, column, method: method ?? 'scalar', options, ifNotExists };
  }

  private dropIndex(body: string): Statement {
    const t = new Tokens(body, this.text, this.prepared);
    t.word('DROP');
    t.word('INDEX');
    let ifExists = false;
    if (t.peekWord('IF')) {
      t.word('IF');
      t.word('EXISTS');
      ifExists = true;
    }
    const name = t.ident('an index name');
    t.end();
    return { kind: 'drop_index', name, ifExists };
  }
}

function indexMethod(word: string): IndexMethod {
  switch (word.toLowerCase()) {
    case 'ivf_pq':
    case 'ivfpq':
      return 'ivf_pq';
    case 'fts':
    case 'inverted':
    case 'bm25':
      return 'fts';
    case 'btree':
    case 'scalar':
      return 'scalar';
    default:
      throw new InvalidError(`unknown index method ${word}: use ivf_pq (vectors), fts (full text) or btree (scalar)`);
  }
}

/** The first three words of a statement, upper-cased, after comments. */
function leadingWords(text: string): string[] {
  return stripComments(text)
    .trimStart()
    .split(/[^A-Za-z_]+/, 3)
    .map((w) => w.toUpperCase());
}

function stripComments(text: string): string {
  return text.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ');
}

/** A tiny tokenizer over the pre-processed text (string literals are `'sN'` placeholders). */
class Tokens {
  constructor(
    private readonly body: string,
    private readonly original: string,
    private readonly prepared: Prepared,
    private pos = 0,
  ) {}

  private skip(): void {
    for (;;) {
      const rest = this.body.slice(this.pos);
      const m = /^(\s+|--[^\n]*|\/\*[\s\S]*?\*\/)/.exec(rest);
      if (!m) return;
      this.pos += m[0].length;
    }
  }

  peek(): string {
    this.skip();
    const rest = this.body.slice(this.pos);
    const m = /^("(?:[^"]|"")*"|'[^']*'|[A-Za-z_][A-Za-z0-9_$]*|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|.)/.exec(rest);
    return m ? m[0] : '';
  }

  private take(): string {
    const tok = this.peek();
    this.pos += tok.length;
    return tok;
  }

  private fail(expected: string): never {
    this.skip();
    const at = this.pos;
    const found = this.peek();
    throw syntaxErrorAt(this.original, originalOffset(this.prepared, at), found ? `expected ${expected}, found ${JSON.stringify(found)}` : `expected ${expected} at the end`, undefined, 'SQL');
  }

  peekWord(word: string): boolean {
    return this.peek().toUpperCase() === word;
  }

  word(word: string): void {
    if (!this.peekWord(word)) this.fail(word);
    this.take();
  }

  punct(p: string): void {
    if (this.peek() !== p) this.fail(JSON.stringify(p));
    this.take();
  }

  ident(what: string): string {
    const tok = this.peek();
    if (/^"/.test(tok)) {
      this.take();
      return tok.slice(1, -1).replace(/""/g, '"');
    }
    if (!/^[A-Za-z_]/.test(tok)) this.fail(what);
    this.take();
    return tok.toLowerCase();
  }

  value(strings: readonly string[]): string | number | boolean {
    const tok = this.peek();
    const s = /^'s(\d+)'$/.exec(tok);
    if (s) {
      this.take();
      return strings[Number(s[1])];
    }
    if (/^-?\d/.test(tok)) {
      this.take();
      return Number(tok);
    }
    if (/^(true|false)$/i.test(tok)) {
      this.take();
      return tok.toLowerCase() === 'true';
    }
    if (/^[A-Za-z_]/.test(tok)) {
      this.take();
      return tok.toLowerCase();
    }
    return this.fail('a value');
  }

  /** `(key = value, …)`: keys lower-cased, values as `value` reads them. */
  options(strings: readonly string[]): Record<string, string | number | boolean> {
    this.punct('(');
    const out: Record<string, string | number | boolean> = {};
    for (;;) {
      const key = this.ident('an option name').toLowerCase();
      this.punct('=');
      out[key] = this.value(strings);
      if (this.peek() !== ',') break;
      this.punct(',');
    }
    this.punct(')');
    return out;
  }

  end(): void {
    if (this.peek() === ';') this.take();
    if (this.peek() !== '') this.fail('the end of the statement');
  }
}

// ---------------------------------------------------------------------------------------------
// AST helpers

function tableName(t: Node): string {
  if (t == null) throw new InvalidError('a table name is missing');
  if (t.db) throw new InvalidError(`schema-qualified table names (${String(t.db)}.${String(t.table)}) are not supported`);
  return String(t.table);
}

function columnRefName(c: Node): string {
  if (typeof c === 'string') return c;
  const v = c?.column?.expr?.value ?? c?.column ?? c?.value;
  if (typeof v !== 'string') throw new InvalidError('a column name is missing');
  return v;
}

/**
 * Checks `t.col` qualifiers against the statement's table and alias (the shared converter keeps
 * only the column name), and returns the node unchanged.
 */
function checkQualifiers(node: unknown, allowed: Set<string> | null): unknown {
  if (!allowed) return node;
  const walk = (x: unknown): void => {
    if (x == null || typeof x !== 'object') return;
    if (Array.isArray(x)) {
      x.forEach(walk);
      return;
    }
    const n = x as Node;
    if (n.type === 'column_ref' && n.table != null) {
      const q = typeof n.table === 'string' ? n.table : String(n.table.value ?? '');
      if (!allowed.has(q)) throw new InvalidError(`column ${q}.${columnRefName(n)}: ${q} names no table in FROM`);
    }
    if (n.ast !== undefined) return;
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v);
  };
  walk(node);
  return node;
}

/** A column's SQL type as an Arrow type (DESIGN.md's type table). */
function columnType(def: Node, column: string): { type: DataType; text: string } {
  const base = String(def?.dataType ?? '').toUpperCase();
  const length = def?.length as number | undefined;
  const array = def?.array as Node | undefined;
  const text = base + (length !== undefined ? String(length) : '') + (array ? `[${(array.length ?? []).map((l: Node) => l?.value ?? '').join('][')}]` : '');
  let scalar: DataType | null = null;
  switch (base) {
    case 'BIGINT':
    case 'INT8':
      scalar = new Int64();
      break;
    case 'INT':
    case 'INTEGER':
    case 'INT4':
      scalar = new Int32();
      break;
    case 'SMALLINT':
    case 'INT2':
      scalar = new Int16();
      break;
    case 'DOUBLE':
    case 'DOUBLE PRECISION':
    case 'FLOAT8':
      scalar = new Float64();
      break;
    case 'FLOAT':
      // FLOAT4 arrives as FLOAT with length 4; FLOAT(p) with p ≤ 24 is REAL in PostgreSQL.
      scalar = length !== undefined && length <= 24 ? new Float32() : new Float64();
      break;
    case 'REAL':
    case 'FLOAT4':
      scalar = new Float32();
      break;
    case 'TEXT':
    case 'VARCHAR':
    case 'CHARACTER VARYING':
    case 'CHAR':
    case 'STRING':
      scalar = new Utf8();
      break;
    case 'BOOLEAN':
    case 'BOOL':
      scalar = new Bool();
      break;
    case 'DATE':
      scalar = new DateDay();
      break;
    case 'TIMESTAMP':
      scalar = new TimestampMicrosecond();
      break;
  }
  if (!scalar) throw new InvalidError(`column ${column}: unsupported type ${text || '(none)'}; use BIGINT, INT, SMALLINT, DOUBLE, REAL, TEXT, BOOLEAN, DATE, TIMESTAMP or FLOAT4[n]`);
  if (!array) return { type: scalar, text };
  const dims = (array.length ?? []) as Node[];
  const n = Number(dims[0]?.value);
  if (!(scalar instanceof Float32) || dims.length !== 1 || !Number.isInteger(n) || n < 1)
    throw new InvalidError(`column ${column}: vector columns are FLOAT4[n] (or REAL[n]) with a positive dimension n; got ${text}`);
  return { type: new FixedSizeList(n, new Field('item', new Float32(), true)), text };
}
