/**
 * `parseFilter`: the text of a WHERE clause → a checked `Expr`.
 *
 * The text is parsed as `SELECT * FROM t WHERE <text>` by node-sql-parser's PostgreSQL grammar
 * (the only dialect with `$n` parameters; only that build is loaded, which costs ~60 ms once
 * instead of ~500 ms for all dialects). Parsing costs a few hundred µs, so the converted,
 * schema-independent tree is cached by text in a small LRU; name resolution and type checking
 * (check.ts) run on every call because the same text may meet different schemas.
 *
 * Anything the grammar accepts beyond a single boolean expression — a second statement after
 * `;`, ORDER BY / LIMIT / GROUP BY / UNION after the condition, subqueries, functions,
 * arithmetic — is rejected with an `InvalidError` naming it. Syntax errors keep the position
 * (line, column within the filter text) and drop the parser's list of 100+ expected tokens.
 *
 * node-sql-parser quirks handled here: decimals come back as strings, integers beyond 2^53 as
 * `bigint` nodes holding text, negative ones beyond 2^53 as lossy numbers, `NOT (x)` as a
 * function named NOT, and string literals with ad-hoc backslash handling (see `prepareText`:
 * strings follow PostgreSQL's standard_conforming_strings — only `''` is an escape).
 */
import type { Schema } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { checkFilter } from './check.js';
import { prepareSqlText, sqlParser, sqlSyntaxError } from './sql-text.js';
import {
  and,
  between,
  col,
  compare,
  type CompareOp,
  type Expr,
  inList,
  isTest,
  like,
  lit,
  not,
  or,
  param,
} from './expr.js';

const PREFIX = 'SELECT * FROM t WHERE ';
const CACHE_CAPACITY = 256;

const cache = new Map<string, Expr>();

/** Parses, resolves and type-checks a WHERE-clause text against `schema`. */
export function parseFilter(sql: string, schema: Schema): Expr {
  return checkFilter(parseFilterExpr(sql), schema);
}

/** Parses a WHERE-clause text into an unchecked `Expr` (cached by text). */
export function parseFilterExpr(sql: string): Expr {
  const hit = cache.get(sql);
  if (hit) {
    cache.delete(sql);
    cache.set(sql, hit);
    return hit;
  }
  const expr = parseUncached(sql);
  cache.set(sql, expr);
  if (cache.size > CACHE_CAPACITY) cache.delete(cache.keys().next().value!);
  return expr;
}

/** Empties the parse cache (tests, or after a grammar change). */
export function clearFilterCache(): void {
  cache.clear();
}

export function filterCacheSize(): number {
  return cache.size;
}

function parseUncached(sql: string): Expr {
  if (typeof sql !== 'string') throw new InvalidError('a filter must be a string');
  if (sql.trim() === '') throw new InvalidError('empty filter: expected a boolean condition such as "year > 2020"');
  const prepared = prepareSqlText(sql, 'filters');
  let ast: unknown;
  try {
    ast = sqlParser().astify(PREFIX + prepared.text, { database: 'PostgresQL' });
  } catch (e) {
    throw sqlSyntaxError(sql, e, prepared, PREFIX.length, 'filter');
  }
  const statements = Array.isArray(ast) ? ast : [ast];
  if (statements.length !== 1) throw new InvalidError('a filter must be one condition; remove the ";" and what follows it');
  const select = statements[0] as Record<string, unknown>;
  rejectTrailingClauses(select);
  if (select.where == null) throw new InvalidError('empty filter: expected a boolean condition such as "year > 2020"');
  return exprFromAst(select.where, prepared.strings);
}

function rejectTrailingClauses(select: Record<string, unknown>): void {
  const present = (k: string) => {
    const v = select[k] as unknown;
    if (v == null) return false;
    if (k === 'limit') return ((v as { value?: unknown[] }).value ?? []).length > 0;
    if (k === 'into') return (v as { position?: unknown }).position != null;
    return !(Array.isArray(v) && v.length === 0);
  };
  const clauses: [string, string][] = [
    ['groupby', 'GROUP BY'],
    ['having', 'HAVING'],
    ['orderby', 'ORDER BY'],
    ['limit', 'LIMIT/OFFSET'],
    ['window', 'WINDOW'],
    ['_next', 'UNION/INTERSECT/EXCEPT'],
    ['set_op', 'UNION/INTERSECT/EXCEPT'],
    ['into', 'INTO'],
    ['for_update', 'FOR UPDATE'],
  ];
  for (const [key, name] of clauses)
    if (present(key)) throw new InvalidError(`a filter must be one condition; ${name} is not allowed in it`);
}

// ---------------------------------------------------------------------------------------------
// AST → Expr

type Node = Record<string, any>;

const COMPARE_OPS: Record<string, CompareOp> = {
  '=': '=',
  '<>': '<>',
  '!=': '<>',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};

function unsupported(what: string): InvalidError {
  return new InvalidError(`${what} is not supported in filters`);
}

/**
 * Converts one node-sql-parser (PostgreSQL dialect) expression node into an `Expr`. `strings`
 * resolves the `'sN'` placeholders `parseFilterExpr` substitutes for string literals; without
 * it string values are taken as the parser returned them.
 */
export function exprFromAst(node: unknown, strings?: readonly string[]): Expr {
  return new AstConverter(strings).convert(node);
}

class AstConverter {
  constructor(private readonly strings?: readonly string[]) {}

  private str(value: unknown): string {
    const v = String(value);
    if (this.strings) {
      const m = /^s(\d+)$/.exec(v);
      if (m && Number(m[1]) < this.strings.length) return this.strings[Number(m[1])];
    }
    return v;
  }

  convert(node: unknown): Expr {
    if (node == null || typeof node !== 'object') throw unsupported(`the expression ${String(node)}`);
    const n = node as Node;
    if (n.ast !== undefined || n.type === 'select') throw unsupported('a subquery');
    switch (n.type) {
      case 'column_ref':
        return col(columnName(n));
      case 'number':
      case 'bigint':
        return lit(numberLiteral(n.value));
      case 'single_quote_string':
      case 'string':
        return lit(this.str(n.value));
      case 'bool':
        return lit(Boolean(n.value));
      case 'null':
        return lit(null);
      case 'date':
      case 'timestamp':
        return lit(this.str(n.value), n.type);
      case 'var':
        if (n.prefix === '$' && typeof n.name === 'number') {
          if (n.name < 1) throw new InvalidError(`parameters are numbered from $1; $${n.name} is not valid`);
          return param(n.name);
        }
        throw unsupported(`the variable ${String(n.prefix ?? '')}${String(n.name)}`);
      case 'param':
        throw unsupported(`the named parameter :${String(n.value)} (use $1, $2, …)`);
      case 'unary_expr':
        return this.unary(n);
      case 'function':
        return this.functionCall(n);
      case 'binary_expr':
        return this.binary(n);
      case 'cast':
        return this.cast(n);
      case 'default':
        if (typeof n.value === 'string' && /^[eE]'/.test(n.value)) throw unsupported("an E'...' escape string");
        throw unsupported(`the expression ${String(n.value)}`);
      case 'expr_list':
        throw unsupported('a parenthesised list outside IN (...)');
      case 'interval':
        throw unsupported('INTERVAL');
      case 'case':
        throw unsupported('CASE');
      case 'aggr_func':
        throw unsupported(`the aggregate ${String(n.name)}()`);
      default:
        throw unsupported(`an expression of type ${String(n.type)}`);
    }
  }

  private unary(n: Node): Expr {
    const op = String(n.operator).toUpperCase();
    if (op === 'NOT') return not(this.convert(n.expr));
    if (op === '-' || op === '+') {
      const inner = this.convert(n.expr);
      if (inner.kind === 'literal' && (typeof inner.value === 'number' || typeof inner.value === 'bigint')) {
        if (op === '+') return inner;
        const neg = -inner.value;
        return lit(typeof neg === 'bigint' && neg >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(neg) : neg);
      }
      throw unsupported(`arithmetic (unary ${op})`);
    }
    throw unsupported(`the operator ${op}`);
  }

  private functionCall(n: Node): Expr {
    const parts = n.name?.name as { value?: string }[] | undefined;
    const name = parts?.map((p) => p.value).join('.') ?? String(n.name);
    const args = (n.args?.value ?? []) as unknown[];
    if (name.toUpperCase() === 'NOT' && args.length === 1) return not(this.convert(args[0]));
    throw unsupported(`the function ${name}()`);
  }

  private cast(n: Node): Expr {
    const target = String(n.target?.[0]?.dataType ?? '').toUpperCase();
    const inner = this.convert(n.expr);
    if (inner.kind === 'literal' && typeof inner.value === 'string') {
      if (target === 'DATE') return lit(inner.value, 'date');
      if (target === 'TIMESTAMP' || target === 'TIMESTAMPTZ') return lit(inner.value, 'timestamp');
      if (target === 'TEXT' || target === 'VARCHAR') return inner;
    }
    throw unsupported(`CAST to ${target || 'this type'}`);
  }

  /**
   * node-sql-parser 5.4.0 (PostgreSQL grammar) gives AND and OR the same precedence and
   * associates left: `a OR b AND c` comes back as `(a OR b) AND c`. Parenthesised groups are
   * marked `parentheses: true`, so the unparenthesised chain is flattened in source order and
   * rebuilt with AND binding tighter than OR, as SQL defines.
   */
  private logicChain(root: Node): Expr {
    const operands: Node[] = [];
    const ops: string[] = [];
    const walk = (x: Node, isRoot: boolean) => {
      const op = x?.type === 'binary_expr' ? String(x.operator).toUpperCase() : '';
      if ((op === 'AND' || op === 'OR') && (isRoot || !x.parentheses)) {
        walk(x.left, false);
        ops.push(op);
        walk(x.right, false);
      } else operands.push(x);
    };
    walk(root, true);
    const groups: Expr[][] = [[this.convert(operands[0])]];
    ops.forEach((op, i) => {
      const e = this.convert(operands[i + 1]);
      if (op === 'AND') groups[groups.length - 1].push(e);
      else groups.push([e]);
    });
    return or(...groups.map((g) => and(...g)));
  }

  private listItems(n: Node, op: string): Expr[] {
    const right = n.right as Node;
    if (right?.type !== 'expr_list' || !Array.isArray(right.value)) throw unsupported(`${op} without a list`);
    return right.value.map((v: unknown) => this.convert(v));
  }

  private binary(n: Node): Expr {
    const op = String(n.operator).toUpperCase();
    // `NOT (x) IS TRUE`, `NOT (a) = b`: the parser reads `NOT (...)` as a function call binding
    // tighter than the operator after it; in SQL, NOT binds looser than every comparison.
    const left = n.left as Node;
    if (op !== 'AND' && op !== 'OR' && isNotCall(left) && !left.parentheses)
      return not(this.convert({ ...n, left: { ...(left.args.value[0] as Node), parentheses: true } }));
    const cmp = COMPARE_OPS[op];
    if (cmp) return compare(cmp, this.convert(n.left), this.convert(n.right));
    switch (op) {
      case 'AND':
      case 'OR':
        return this.logicChain(n);
      case 'IN':
      case 'NOT IN':
        return inList(this.convert(n.left), this.listItems(n, op), op === 'NOT IN');
      case 'BETWEEN':
      case 'NOT BETWEEN': {
        const items = this.listItems(n, op);
        if (items.length !== 2) throw new InvalidError(`${op} needs two bounds`);
        return between(this.convert(n.left), items[0], items[1], op === 'NOT BETWEEN');
      }
      case 'IS':
      case 'IS NOT': {
        const r = n.right as Node;
        const negated = op === 'IS NOT';
        if (r?.type === 'null') return isTest(this.convert(n.left), 'null', negated);
        if (r?.type === 'bool') return isTest(this.convert(n.left), r.value ? 'true' : 'false', negated);
        throw unsupported(`${op} ${String(r?.value ?? r?.type)}`);
      }
      case 'LIKE':
      case 'NOT LIKE':
      case 'ILIKE':
      case 'NOT ILIKE': {
        const right = n.right as Node;
        let escape = '\\';
        const esc = right?.escape?.value;
        if (esc) {
          const e = this.convert(esc);
          if (e.kind !== 'literal' || typeof e.value !== 'string' || [...e.value].length > 1)
            throw new InvalidError('ESCAPE must be a single character string');
          escape = e.value;
        }
        const { escape: _ignored, ...patternNode } = right ?? {};
        return like(this.convert(n.left), this.convert(patternNode), {
          negated: op.startsWith('NOT'),
          caseInsensitive: op.endsWith('ILIKE'),
          escape,
        });
      }
      default:
        throw unsupported(`the operator ${op}`);
    }
  }
}

function isNotCall(n: Node | undefined): n is Node {
  const parts = n?.type === 'function' ? (n.name?.name as { value?: string }[] | undefined) : undefined;
  return parts?.length === 1 && String(parts[0].value).toUpperCase() === 'NOT' && n!.args?.value?.length === 1;
}

function columnName(n: Node): string {
  const c = n.column;
  if (typeof c === 'string') {
    if (c === '*') throw unsupported('*');
    return c;
  }
  const v = c?.expr?.value;
  if (typeof v !== 'string') throw unsupported('this column reference');
  return v;
}

function numberLiteral(v: unknown): number | bigint {
  if (typeof v === 'number') return v;
  const s = String(v);
  if (/^[+-]?\d+$/.test(s)) {
    const b = BigInt(s);
    return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
  }
  const x = Number(s);
  if (Number.isNaN(x)) throw new InvalidError(`invalid number ${s}`);
  return x;
}

