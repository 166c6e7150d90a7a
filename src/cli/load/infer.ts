/**
 * Column types for a new table loaded from CSV or NDJSON, inferred from the first rows: the
 * narrowest of BIGINT, DOUBLE PRECISION, BOOLEAN, DATE, TIMESTAMP, FLOAT4[n] (a JSON array of n
 * numbers) that every non-empty sample value fits, else TEXT. A later row that does not fit
 * fails (or is skipped) naming its line; `--schema` sets the types instead.
 */

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BOOL = /^(true|false|t|f)$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/i;

type Candidate = 'BIGINT' | 'DOUBLE PRECISION' | 'BOOLEAN' | 'DATE' | 'TIMESTAMP' | 'VECTOR' | 'TEXT';

function fits(candidate: Candidate, v: unknown): boolean {
  switch (candidate) {
    case 'BIGINT':
      return typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v)) || (typeof v === 'string' && INT.test(v.trim()));
    case 'DOUBLE PRECISION':
      return typeof v === 'number' || typeof v === 'bigint' || (typeof v === 'string' && FLOAT.test(v.trim()));
    case 'BOOLEAN':
      return typeof v === 'boolean' || (typeof v === 'string' && BOOL.test(v.trim()));
    case 'DATE':
      return typeof v === 'string' && DATE.test(v.trim());
    case 'TIMESTAMP':
      return (typeof v === 'string' && TIMESTAMP.test(v.trim())) || v instanceof Date;
    case 'VECTOR':
      return vectorLength(v) !== null;
    case 'TEXT':
      return true;
  }
}

function vectorLength(v: unknown): number | null {
  let arr = v;
  if (typeof v === 'string') {
    if (!v.trimStart().startsWith('[')) return null;
    try {
      arr = JSON.parse(v);
    } catch {
      return null;
    }
  }
  return Array.isArray(arr) && arr.length > 0 && arr.every((x) => typeof x === 'number') ? arr.length : null;
}

const ORDER: Candidate[] = ['BIGINT', 'DOUBLE PRECISION', 'BOOLEAN', 'DATE', 'TIMESTAMP', 'VECTOR', 'TEXT'];

/** SQL types for each column from sample rows (values aligned with the columns). */
export function inferTypes(columns: number, sample: readonly (readonly unknown[])[]): string[] {
  const types: string[] = [];
  for (let c = 0; c < columns; c++) {
    const values = sample.map((r) => r[c]).filter((v) => v !== null && v !== undefined && v !== '');
    if (values.length === 0) {
      types.push('TEXT');
      continue;
    }
    const type = ORDER.find((cand) => values.every((v) => fits(cand, v)))!;
    if (type === 'VECTOR') {
      const lengths = new Set(values.map(vectorLength));
      types.push(lengths.size === 1 ? `FLOAT4[${[...lengths][0]}]` : 'TEXT');
    } else types.push(type);
  }
  return types;
}

/** Double-quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `CREATE TABLE` for a new table: the columns with their SQL types and the primary key. */
export function createTableSql(table: string, columns: readonly { name: string; type: string }[], primaryKey: readonly string[]): string {
  const cols = columns.map((c) => `${quoteIdent(c.name)} ${c.type}`);
  return `CREATE TABLE ${quoteIdent(table)} (${cols.join(', ')}, PRIMARY KEY (${primaryKey.map(quoteIdent).join(', ')}))`;
}

/**
 * `--schema "id BIGINT, body TEXT, embedding FLOAT4[8]"`: column definitions split at top-level
 * commas (a type may hold commas in parentheses).
 */
export function parseSchemaOption(text: string): { name: string; type: string }[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(' || text[i] === '[') depth++;
    else if (text[i] === ')' || text[i] === ']') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const m = /^("(?:[^"]|"")+"|[^\s]+)\s+(.+)$/.exec(p);
      if (!m) throw new Error(`--schema: "${p}" is not "column TYPE"`);
      const name = m[1].startsWith('"') ? m[1].slice(1, -1).replace(/""/g, '"') : m[1];
      return { name, type: m[2].trim() };
    });
}
