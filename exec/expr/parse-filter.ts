/**
 * SQL text → `Expr`: `parseFilter` for the text of a WHERE clause (table.search filters), and
 * `exprFromAst`, the converter from node-sql-parser's AST that whole statements (src/sql/) use
 * for every expression, so there is one front end for both.
 *
 * A filter is parsed as `SELECT * FROM t WHERE <text>` by node-sql-parser's PostgreSQL grammar
 * (the only dialect with `$n` parameters; only that build is loaded, which costs ~60 ms once
 * instead of ~500 ms for all dialects). Parsing costs a few hundred µs, so the converted,
 * schema-independent tree is cached by text in a small LRU, and the checked tree (name
 * resolution and type checking, check.ts) by text per schema object.
 *
 * Anything the grammar accepts beyond a single boolean expression — a second statement after
 * `;`, ORDER BY / LIMIT / GROUP BY / UNION after the condition, subqueries — is rejected with an
 * `InvalidError` naming it; value expressions (arithmetic, functions, CASE, CAST) are accepted
 * and aggregates are rejected by the checker. Syntax errors keep the position (line, column
 * within the filter text) and drop the parser's list of 100+ expected tokens.
 *
 * node-sql-parser quirks handled here: decimals come back as strings, integers beyond 2^53 as
 * `bigint` nodes holding text, negative ones beyond 2^53 as lossy numbers, `NOT (x)` as a
 * function named NOT, AND and OR with equal precedence, `||` with the precedence of `*`
 * (PostgreSQL: below `+`), and string literals with ad-hoc backslash handling (see
 * `prepareSqlText`: strings follow PostgreSQL's standard_conforming_strings — only `''` is an
 * escape; `$1::type` is parenthesised there because the parser drops the cast and what follows).
 */
import type { Schema } from 'apache-arrow';
import { InvalidError } from '../../src/errors.js';
import { checkFilter } from './check.js';
import { prepareSqlText, sqlParser, sqlSyntaxError } from './sql-text.js';
import {
  and,
  arith,
  type ArithOp,
  between,
  call,
  cast,
  caseWhen,
  col,
  compare,
  type CompareOp,
  type Expr,
  floatLit,
  inList,
  isTest,
  like,
  lit,
  negate,
  not,
  or,
  param,
  type SqlTypeName,
} from './expr.js';

const PREFIX = 'SELECT * FROM t WHERE ';
const CACHE_CAPACITY = 256;

const cache = new Map<string, Expr>();

/** Parses, resolves and type-checks a WHERE-clause text against `schema`. */
export function parseFilter(sql: string, schema: Schema): Expr {
  // The checked tree too is kept, per schema object (a table's schema is one object for its
  // life; a changed schema is a new one): checking a small filter costs ~80 µs a search.
  let checked = checkedCache.get(schema);
  if (!checked) checkedCache.set(schema, (checked = new Map()));
  const hit = checked.get(sql);
  if (hit) return hit;
  const expr = checkFilter(parseFilterExpr(sql), schema);
  if (checked.size >= CACHE_CAPACITY) checked.delete(checked.keys().next().value!);
  checked.set(sql, expr);
  return expr;
}

let checkedCache = new WeakMap<Schema, Map<string, Expr>>();

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
  checkedCache = new WeakMap();
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
  return new InvalidError(`${what} is not supported`);
}

export interface ExprFromAstOptions {
  /**
   * Called with the table qualifier of every qualified column reference (`t` for `t.x`), in
   * source order. The returned `Expr` keeps only the column name, so a caller that allows
   * qualifiers (a statement with `FROM t AS u`) checks them here.
   */
  readonly onQualifier?: (table: string, column: string) => void;
}

/**
 * Converts one node-sql-parser (PostgreSQL dialect) expression node into an `Expr`. `strings`
 * resolves the `'sN'` placeholders `prepareSqlText` substitutes for string literals; without
 * it string values are taken as the parser returned them.
 *
 * Value expressions map as: `+ - * / % ||` → `arith`; unary minus → `negate` (on a numeric
 * literal it is folded into the literal); `f(…)` → `call` with the name in lower case (`NOT(x)`
 * stays `not`); aggregates → `call` (`count(*)` with `star`, `count(DISTINCT x)` with
 * `distinct`); `CASE` → `case`; `CAST(x AS t)` / `x::t` → `cast` with the canonical type name
 * (`CAST('…' AS DATE|TIMESTAMP)` stays a temporal literal); `ARRAY[…]` → `call('array', …)`;
 * `EXTRACT(f FROM x)` → `call('date_part', ['f', x])`. Decimal literals (`2.0`, `1e3`) are
 * double precision (`LiteralExpr.float`).
 */
export function exprFromAst(node: unknown, strings?: readonly string[], options: ExprFromAstOptions = {}): Expr {
  return new AstConverter(strings, options.onQualifier).convert(node);
}

const ARITH_OPS: Record<string, ArithOp> = { '+': '+', '-': '-', '*': '*', '/': '/', '%': '%', '||': '||' };

/** Canonical names of the SQL type names CAST accepts (node-sql-parser spelling, upper case). */
function castTarget(t: Node | undefined): SqlTypeName {
  const name = String(t?.dataType ?? '').toUpperCase();
  const len = typeof t?.length === 'number' ? t.length : undefined;
  if (t?.array) throw new InvalidError(`CAST to an array type (${name.toLowerCase()}[]) is not supported`);
  switch (name) {
    case 'BIGINT':
    case 'INT8':
      return 'bigint';
    case 'INT':
    case 'INTEGER':
    case 'INT4':
      return len === 8 ? 'bigint' : len === 2 ? 'smallint' : 'int';
    case 'SMALLINT':
    case 'INT2':
      return 'smallint';
    case 'DOUBLE PRECISION':
    case 'DOUBLE':
    case 'FLOAT8':
      return 'double';
    case 'FLOAT':
      // float4 / float(p ≤ 24) is real; float8, float(p > 24) and plain float are double.
      return len !== undefined && len <= 24 && len !== 8 ? 'real' : 'double';
    case 'REAL':
    case 'FLOAT4':
      return 'real';
    case 'TEXT':
    case 'VARCHAR':
    case 'CHAR':
    case 'CHARACTER':
    case 'CHARACTER VARYING':
    case 'STRING':
      return 'text';
    case 'BOOLEAN':
    case 'BOOL':
      return 'boolean';
    case 'DATE':
      return 'date';
    case 'TIMESTAMP':
    case 'TIMESTAMPTZ':
    case 'DATETIME':
      return 'timestamp';
    case 'NUMERIC':
    case 'DECIMAL':
      throw new InvalidError(`type ${name.toLowerCase()} is not supported; use double precision or bigint`);
    default:
      throw new InvalidError(
        `unknown type "${name.toLowerCase() || String(t?.dataType)}" in CAST; supported: bigint, int, smallint, double precision, real, text, boolean, date, timestamp`,
      );
  }
}

class AstConverter {
  constructor(
    private readonly strings?: readonly string[],
    private readonly onQualifier?: (table: string, column: string) => void,
  ) {}

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
      case 'column_ref': {
        const name = columnName(n);
        if (n.table != null && this.onQualifier) {
          const q = typeof n.table === 'string' ? n.table : String(n.table.value ?? n.table);
          this.onQualifier(q, name);
        }
        return col(name);
      }
      case 'number':
      case 'bigint': {
        const v = numberLiteral(n.value);
        return typeof v === 'number' && typeof n.value === 'string' && /[.eE]/.test(n.value) ? floatLit(v) : lit(v);
      }
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
      case 'aggr_func':
        return this.aggregate(n);
      case 'binary_expr':
        return this.binary(n);
      case 'cast':
        return this.cast(n);
      case 'case':
        return this.caseExpr(n);
      case 'array': {
        const items = n.expr_list?.type === 'expr_list' && Array.isArray(n.expr_list.value) ? (n.expr_list.value as unknown[]) : [];
        return call('array', items.map((x) => this.convert(x)));
      }
      case 'extract': {
        const field = String(n.args?.field ?? '').toLowerCase();
        if (!field) throw unsupported('this EXTRACT form');
        return call('date_part', [lit(field), this.convert(n.args.source)]);
      }
      case 'default':
        if (typeof n.value === 'string' && /^[eE]'/.test(n.value)) throw unsupported("an E'...' escape string");
        throw unsupported(`the expression ${String(n.value)}`);
      case 'expr_list':
        throw unsupported('a parenthesised list outside IN (...)');
      case 'interval':
        throw unsupported('INTERVAL');
      case 'star':
        throw unsupported('* here');
      default:
        throw unsupported(`an expression of type ${String(n.type)}`);
    }
  }

  private unary(n: Node): Expr {
    const op = String(n.operator).toUpperCase();
    if (op === 'NOT') return not(this.convert(n.expr));
    if (op === '-' || op === '+') {
      const inner = this.convert(n.expr);
      if (op === '+') return inner;
      if (inner.kind === 'literal' && (typeof inner.value === 'number' || typeof inner.value === 'bigint')) {
        const neg = -inner.value;
        if (inner.float) return floatLit(neg as number);
        return lit(typeof neg === 'bigint' && neg >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(neg) : neg);
      }
      return negate(inner);
    }
    throw unsupported(`the operator ${op}`);
  }

  private functionCall(n: Node): Expr {
    const parts = n.name?.name as { value?: string }[] | undefined;
    const name = parts?.map((p) => p.value).join('.') ?? String(n.name);
    if (n.over) throw unsupported(`the window function ${name}() OVER (…)`);
    const rawArgs = (n.args?.value ?? []) as Node[];
    const upper = name.toUpperCase();
    if (upper === 'NOT' && rawArgs.length === 1) return not(this.convert(rawArgs[0]));
    // SQL-standard keyword forms: TRIM([LEADING|TRAILING|BOTH] [chars] FROM s), POSITION(a IN s).
    const keyword = (x: Node | undefined) => (x?.type === 'origin' ? String(x.value).toLowerCase() : undefined);
    if (upper === 'TRIM' && rawArgs.some((a) => keyword(a) !== undefined)) {
      let fn = 'btrim';
      let i = 0;
      const side = keyword(rawArgs[0]);
      if (side === 'leading' || side === 'trailing' || side === 'both') {
        fn = side === 'leading' ? 'ltrim' : side === 'trailing' ? 'rtrim' : 'btrim';
        i++;
      }
      let chars: Expr | undefined;
      if (i < rawArgs.length && keyword(rawArgs[i]) !== 'from') chars = this.convert(rawArgs[i++]);
      if (keyword(rawArgs[i]) === 'from') i++;
      if (i !== rawArgs.length - 1) throw unsupported('this TRIM form');
      const s = this.convert(rawArgs[i]);
      return call(fn, chars ? [s, chars] : [s]);
    }
    if (upper === 'POSITION' && rawArgs.length === 3 && keyword(rawArgs[1]) === 'in')
      return call('strpos', [this.convert(rawArgs[2]), this.convert(rawArgs[0])]);
    if (rawArgs.some((a) => keyword(a) !== undefined)) throw unsupported(`this form of ${name}()`);
    return call(name.toLowerCase(), rawArgs.map((a) => this.convert(a)));
  }

  private aggregate(n: Node): Expr {
    const name = String(n.name).toLowerCase();
    if (n.over) throw unsupported(`the window function ${name}() OVER (…)`);
    if (n.filter) throw unsupported(`FILTER (WHERE …) on ${name}()`);
    const a = n.args as Node | undefined;
    if (a?.orderby) throw unsupported(`ORDER BY inside ${name}()`);
    const distinct = String(a?.distinct ?? '').toUpperCase() === 'DISTINCT';
    const e = a?.expr as Node | undefined;
    if (e?.type === 'star' || (e?.type === 'column_ref' && e.column === '*' && e.table == null)) {
      if (name !== 'count') throw new InvalidError(`${name}(*) is not valid; only count(*) takes *`);
      return call('count', [], { star: true });
    }
    if (e == null) return call(name, [], { distinct });
    const args = e.type === 'expr_list' && Array.isArray(e.value) ? (e.value as unknown[]) : [e];
    return call(name, args.map((x) => this.convert(x)), { distinct });
  }

  private cast(n: Node): Expr {
    const targets = (n.target ?? []) as Node[];
    if (targets.length === 0) throw unsupported('CAST without a type');
    let e = this.convert(n.expr);
    for (const t of targets) {
      const to = castTarget(t);
      if (e.kind === 'literal' && typeof e.value === 'string' && !e.temporal) {
        // Typed string literals stay literals (as `DATE '…'` does).
        if (to === 'date' || to === 'timestamp') {
          e = lit(e.value, to);
          continue;
        }
        if (to === 'text') continue;
      }
      e = cast(e, to);
    }
    return e;
  }

  private caseExpr(n: Node): Expr {
    const operand = n.expr == null ? null : this.convert(n.expr);
    const whens: { when: Expr; then: Expr }[] = [];
    let otherwise: Expr | null = null;
    for (const a of (n.args ?? []) as Node[]) {
      if (a.type === 'when') whens.push({ when: this.convert(a.cond), then: this.convert(a.result) });
      else if (a.type === 'else') otherwise = this.convert(a.result);
      else throw unsupported(`a CASE branch of type ${String(a.type)}`);
    }
    if (whens.length === 0) throw new InvalidError('CASE needs at least one WHEN');
    return caseWhen(operand, whens, otherwise);
  }

  /**
   * node-sql-parser gives `||` the precedence of `*` and associates every arithmetic operator
   * left; PostgreSQL binds `* / %` tighter than `+ -`, and those tighter than `||`. The
   * unparenthesised chain is flattened in source order and rebuilt with those precedences.
   */
  private arithChain(root: Node): Expr {
    const operands: Node[] = [];
    const ops: ArithOp[] = [];
    const walk = (x: Node, isRoot: boolean) => {
      const op = x?.type === 'binary_expr' ? ARITH_OPS[String(x.operator)] : undefined;
      if (op && (isRoot || !x.parentheses)) {
        walk(x.left, false);
        ops.push(op);
        walk(x.right, false);
      } else operands.push(x);
    };
    walk(root, true);
    const prec = (op: ArithOp) => (op === '*' || op === '/' || op === '%' ? 3 : op === '||' ? 1 : 2);
    const values: Expr[] = [this.convert(operands[0])];
    const stack: ArithOp[] = [];
    const reduce = () => {
      const r = values.pop()!;
      const l = values.pop()!;
      values.push(arith(stack.pop()!, l, r));
    };
    ops.forEach((op, i) => {
      while (stack.length > 0 && prec(stack[stack.length - 1]) >= prec(op)) reduce();
      stack.push(op);
      values.push(this.convert(operands[i + 1]));
    });
    while (stack.length > 0) reduce();
    return values[0];
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
    if (ARITH_OPS[String(n.operator)]) return this.arithChain(n);
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

