/**
 * The SQL text layer shared by filters (parse-filter.ts) and whole statements (src/sql/): the
 * node-sql-parser instance, a pre-pass that protects string literals and 64-bit integers from
 * the parser's quirks, and syntax errors that name the line, column and token in the user's text.
 */
import { createRequire } from 'node:module';
import { InvalidError } from '../../src/errors.js';

export interface SqlParser {
  astify(sql: string, opt?: { database?: string }): unknown;
}

let parser: SqlParser | undefined;
/** node-sql-parser's PostgreSQL build only (~60 ms to load once, instead of ~500 ms for all dialects). */
export function sqlParser(): SqlParser {
  if (!parser) {
    const require = createRequire(import.meta.url);
    const mod = require('node-sql-parser/build/postgresql.js') as { Parser: new () => SqlParser };
    parser = new mod.Parser();
  }
  return parser;
}

// ---------------------------------------------------------------------------------------------
// Pre-pass and error messages

interface Edit {
  readonly origStart: number;
  readonly origEnd: number;
  readonly newStart: number;
  readonly newEnd: number;
}

export interface Prepared {
  readonly text: string;
  /** Contents of the string literals, by placeholder number. */
  readonly strings: string[];
  readonly edits: Edit[];
}

/**
 * Rewrites the filter text before node-sql-parser sees it:
 * - every single-quoted string becomes a placeholder `'sN'` whose content is kept here, read
 *   with PostgreSQL's rules (`''` is a quote, backslash is an ordinary character), because the
 *   parser unescapes `\n`, `\t`, `\u…` but keeps `\'` and `\%` raw, and cannot parse
 *   `ESCAPE '\'`;
 * - `-` directly before an integer of 16+ digits gets a space, because the parser turns
 *   `-9223372036854775808` into a lossy JS number but `- 9223372036854775808` into unary minus
 *   over an exact bigint;
 * - `$n` directly followed by `::` is parenthesised, because the parser reads `$1::int + 1` as
 *   plain `$1` and silently drops the rest.
 * Quoted identifiers and comments are copied unchanged. Edits are kept to map error positions.
 */
export function prepareSqlText(sql: string, where = 'SQL'): Prepared {
  let out = '';
  const strings: string[] = [];
  const edits: Edit[] = [];
  let i = 0;
  const copyUntil = (end: number) => {
    out += sql.slice(i, end);
    i = end;
  };
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'") {
      let j = i + 1;
      let value = '';
      for (;;) {
        if (j >= sql.length) throw syntaxErrorAt(sql, i, 'unterminated string literal', undefined, where === 'filters' ? 'filter' : 'SQL');
        if (sql[j] === "'") {
          if (sql[j + 1] === "'") {
            value += "'";
            j += 2;
            continue;
          }
          break;
        }
        value += sql[j++];
      }
      const placeholder = `'s${strings.length}'`;
      strings.push(value);
      edits.push({ origStart: i, origEnd: j + 1, newStart: out.length, newEnd: out.length + placeholder.length });
      out += placeholder;
      i = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === '"' && sql[j + 1] !== '"')) j += sql[j] === '"' ? 2 : 1;
      copyUntil(Math.min(sql.length, j + 1));
    } else if (c === '-' && sql[i + 1] === '-') {
      const j = sql.indexOf('\n', i);
      copyUntil(j < 0 ? sql.length : j);
    } else if (c === '/' && sql[i + 1] === '*') {
      const j = sql.indexOf('*/', i + 2);
      copyUntil(j < 0 ? sql.length : j + 2);
    } else if (c === '$' && /^\$\d+\s*::/.test(sql.slice(i, i + 40))) {
      const m = /^\$\d+/.exec(sql.slice(i))![0];
      edits.push({ origStart: i, origEnd: i + m.length, newStart: out.length, newEnd: out.length + m.length + 2 });
      out += `(${m})`;
      i += m.length;
    } else if (c === '$' && /[$A-Za-z_]/.test(sql[i + 1] ?? '')) {
      throw new InvalidError(`dollar-quoted strings are not supported in ${where}; use single quotes`);
    } else if (c === '-' && /^\d{16,}(?![\d.eE])/.test(sql.slice(i + 1, i + 40)) && !/[\w$]/.test(sql[i - 1] ?? '')) {
      edits.push({ origStart: i + 1, origEnd: i + 1, newStart: out.length + 1, newEnd: out.length + 2 });
      out += '- ';
      i++;
    } else if (/[A-Za-z0-9_]/.test(c)) {
      // A whole word or number at once (so a quote right after it stays with its literal).
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j])) j++;
      copyUntil(j);
    } else {
      copyUntil(i + 1);
    }
  }
  return { text: out, strings, edits };
}

/** Maps an offset in the prepared text back to the user's text. */
export function originalOffset(prepared: Prepared, offset: number): number {
  let delta = 0;
  for (const e of prepared.edits) {
    if (offset < e.newStart) break;
    if (offset < e.newEnd) return e.origStart;
    delta = e.origEnd - e.newEnd;
  }
  return offset + delta;
}

export function syntaxErrorAt(sql: string, offset: number, problem: string, cause?: unknown, what = 'filter'): InvalidError {
  offset = Math.max(0, Math.min(offset, sql.length));
  const before = sql.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  const lineText = sql.split('\n')[line - 1];
  const caret = `${lineText}\n${' '.repeat(column - 1)}^`;
  return new InvalidError(`syntax error in ${what} at line ${line}, column ${column}: ${problem}\n${caret}`, { cause });
}

/** A node-sql-parser exception as an InvalidError at the user's position; `prefix` characters were prepended to the text parsed. */
export function sqlSyntaxError(sql: string, e: unknown, prepared: Prepared, prefix: number, what: string): InvalidError {
  const err = e as { location?: { start?: { offset?: number } }; found?: string | null; message?: string };
  const start = err.location?.start?.offset;
  if (typeof start !== 'number') return new InvalidError(`could not parse ${what}: ${String(err.message ?? e)}`, { cause: e });
  const offset = originalOffset(prepared, Math.max(0, start - prefix));
  const problem =
    err.found == null || offset >= sql.length ? `unexpected end of ${what}` : `unexpected ${JSON.stringify(sql[offset] ?? err.found)}`;
  return syntaxErrorAt(sql, offset, problem, e, what);
}
