/**
 * Values a search node reads from its query before running: the query vector of a distance
 * (a `$n` bound to a Float32Array or number[], `ARRAY[…]`, or a '[…]' string) and the text of a
 * `match()`. Checked here, once per execution, with errors that name the problem.
 */
import type { Expr } from '../expr/expr.js';
import { InvalidError } from '../../src/errors.js';

export function queryVector(e: Expr, params: readonly unknown[], dimension: number, what: string): Float32Array {
  let values: ArrayLike<unknown>;
  if (e.kind === 'param') {
    if (e.index > params.length) throw new InvalidError(`${what}: $${e.index} is not bound (${params.length} parameter(s) given)`);
    const v = params[e.index - 1];
    if (v instanceof Float32Array || v instanceof Float64Array || Array.isArray(v)) values = v as ArrayLike<unknown>;
    else if (typeof v === 'string') values = parseVectorText(v, what);
    else throw new InvalidError(`${what}: $${e.index} must be a vector (Float32Array or number[]), got ${v === null ? 'NULL' : typeof v}`);
  } else if (e.kind === 'literal' && typeof e.value === 'string') {
    values = parseVectorText(e.value, what);
  } else if (e.kind === 'call' && e.name === 'array') {
    values = e.args.map((a) => {
      if (a.kind === 'literal' && typeof a.value === 'number') return a.value;
      if (a.kind === 'literal' && typeof a.value === 'bigint') return Number(a.value);
      throw new InvalidError(`${what}: ARRAY[…] elements must be numbers`);
    });
  } else {
    throw new InvalidError(`${what}: the query vector must be a $n parameter, ARRAY[…] or '[…]'`);
  }
  if (values.length !== dimension) throw new InvalidError(`${what}: the query vector has dimension ${values.length}, the column has dimension ${dimension}`);
  const out = new Float32Array(dimension);
  for (let i = 0; i < dimension; i++) {
    const x = values[i];
    if (typeof x !== 'number' || !Number.isFinite(x)) throw new InvalidError(`${what}: query vector element ${i} is not a finite number`);
    out[i] = x;
  }
  return out;
}

function parseVectorText(text: string, what: string): number[] {
  const t = text.trim();
  if (!/^\[.*\]$/s.test(t)) throw new InvalidError(`${what}: a vector literal looks like '[0.1, 0.2, …]', got '${text.slice(0, 40)}'`);
  const inner = t.slice(1, -1).trim();
  if (inner === '') return [];
  return inner.split(',').map((s, i) => {
    const x = Number(s.trim());
    if (s.trim() === '' || Number.isNaN(x)) throw new InvalidError(`${what}: vector literal element ${i} is not a number`);
    return x;
  });
}

export function queryText(e: Expr, params: readonly unknown[], what: string): string {
  if (e.kind === 'literal' && typeof e.value === 'string') return e.value;
  if (e.kind === 'param') {
    const v = params[e.index - 1];
    if (e.index > params.length) throw new InvalidError(`${what}: $${e.index} is not bound (${params.length} parameter(s) given)`);
    if (typeof v !== 'string') throw new InvalidError(`${what}: $${e.index} must be a string, got ${v === null ? 'NULL' : typeof v}`);
    return v;
  }
  throw new InvalidError(`${what}: the query must be a string literal or a parameter`);
}
