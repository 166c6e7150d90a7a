/**
 * Filters served by scalar indexes. A search filter is otherwise evaluated over every row of
 * every source; when one of its AND-ed conjuncts compares a column that has a scalar index with
 * literals (`year >= 2021`, `id IN (…)`, `x BETWEEN a AND b`, `name = 'x'`), the index returns a
 * superset of the rows that can pass, and the whole filter is then evaluated on those candidate
 * rows only. The index only narrows: every candidate still goes through the evaluator, so SQL's
 * rules (NULLs, coercions) decide, never the index.
 */
import { type DataType, makeData, RecordBatch, Schema, Struct, Type } from 'apache-arrow';
import type { KeyValue } from '../schema/primary-key.js';
import { gatherData } from '../../exec/kernels/gather.js';
import { columnsOf, type Expr, type LiteralValue } from '../../exec/expr/expr.js';
import type { IndexDef } from '../index/index-def.js';
import type { ScalarIndex, ScalarPredicate } from '../index/scalar/scalar-index.js';

export interface IndexedConjunct {
  def: IndexDef;
  predicate: ScalarPredicate;
}

/** Above this share of a source's rows, evaluating the filter over everything is cheaper. */
export const MAX_CANDIDATE_SHARE = 0.25;

const FLIP: Record<string, '<' | '<=' | '>' | '>=' | '='> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '=': '=' };

/** Plain values an index may compare with: literals and bound `$n` (no temporal literals, NULL or booleans). */
function literal(e: Expr, params?: readonly unknown[]): { value: LiteralValue } | undefined {
  if (e.kind === 'param') {
    const v = params?.[e.index - 1];
    return typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string' ? { value: v } : undefined;
  }
  if (e.kind !== 'literal' || e.temporal || e.value === null || typeof e.value === 'boolean') return undefined;
  return { value: e.value };
}

function conjunctLookup(e: Expr, byColumn: ReadonlyMap<string, IndexDef>, params?: readonly unknown[]): IndexedConjunct | undefined {
  if (e.kind === 'compare') {
    let col = e.left;
    let lit = literal(e.right, params);
    let op = e.op as string;
    if (col.kind !== 'column' || !lit) {
      col = e.right;
      lit = literal(e.left, params);
      op = FLIP[e.op] ?? '';
    }
    const def = col.kind === 'column' ? byColumn.get(col.name) : undefined;
    if (!def || !lit) return undefined;
    switch (op) {
      case '=':
        return { def, predicate: { op: 'eq', value: lit.value } };
      case '<':
      case '<=':
        return { def, predicate: { op: 'range', upper: { value: lit.value, inclusive: op === '<=' } } };
      case '>':
      case '>=':
        return { def, predicate: { op: 'range', lower: { value: lit.value, inclusive: op === '>=' } } };
      default:
        return undefined;
    }
  }
  if (e.kind === 'between' && !e.negated && e.operand.kind === 'column') {
    const def = byColumn.get(e.operand.name);
    const lo = literal(e.low, params);
    const hi = literal(e.high, params);
    if (def && lo && hi) return { def, predicate: { op: 'range', lower: { value: lo.value, inclusive: true }, upper: { value: hi.value, inclusive: true } } };
  }
  if (e.kind === 'in' && !e.negated && e.operand.kind === 'column') {
    const def = byColumn.get(e.operand.name);
    const values = e.list.map((x) => literal(x, params));
    if (def && values.every((v) => v !== undefined)) return { def, predicate: { op: 'in', values: values.map((v) => v!.value) } };
  }
  return undefined;
}

/** The conjuncts of `filter` that a scalar index of `defs` can narrow. */
export function indexedConjuncts(filter: Expr, defs: readonly IndexDef[], params?: readonly unknown[]): IndexedConjunct[] {
  const byColumn = new Map(defs.filter((d) => d.type === 'scalar').map((d) => [d.column, d] as const));
  if (byColumn.size === 0) return [];
  const conjuncts = filter.kind === 'and' ? filter.operands : [filter];
  return conjuncts.map((c) => conjunctLookup(c, byColumn, params)).filter((c): c is IndexedConjunct => c !== undefined);
}

/**
 * Primary-key values a filter pins its rows to: `key = v` or `key IN (v, …)` AND-ed at the top,
 * on a single-column integer or text key, as the key maps of liveness.ts hold them (64-bit
 * integers within ±2^53 as numbers, text as strings). Every source keeps a map from each key to
 * its newest position for liveness anyway, so such a filter needs one lookup per value and
 * source — no scalar index, no pass over the rows. Undefined when the filter has no such
 * conjunct or a value cannot be a key of that type (the filter then decides row by row).
 */
export function primaryKeyValues(filter: Expr, keyField: { name: string; type: DataType }, params?: readonly unknown[]): KeyValue[] | undefined {
  const conjuncts = filter.kind === 'and' ? filter.operands : [filter];
  const asKey = (e: Expr): KeyValue | undefined => {
    const v = literal(e, params)?.value;
    if (v === undefined) return undefined;
    if (keyField.type.typeId === Type.Utf8) return typeof v === 'string' ? v : undefined;
    if (keyField.type.typeId !== Type.Int || typeof v === 'string') return undefined;
    const big = typeof v === 'bigint' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : undefined;
    if (big === undefined) return undefined;
    const wide = (keyField.type as unknown as { bitWidth: number }).bitWidth === 64;
    if (!wide) return big >= -(2n ** 31n) && big < 2n ** 31n ? Number(big) : undefined;
    return big >= -(2n ** 53n) && big < 2n ** 53n ? Number(big) : big;
  };
  for (const c of conjuncts) {
    let values: (KeyValue | undefined)[] | undefined;
    if (c.kind === 'compare' && c.op === '=') {
      if (c.left.kind === 'column' && c.left.name === keyField.name) values = [asKey(c.right)];
      else if (c.right.kind === 'column' && c.right.name === keyField.name) values = [asKey(c.left)];
    } else if (c.kind === 'in' && !c.negated && c.operand.kind === 'column' && c.operand.name === keyField.name) {
      values = c.list.map(asKey);
    }
    if (values && values.every((v) => v !== undefined)) return values as KeyValue[];
  }
  return undefined;
}

/**
 * The smallest candidate set (sorted positions below `rowCount`) the conjuncts give for one
 * source, or undefined when no index applies or the candidates are too many to be worth it.
 */
export function candidatePositions(
  conjuncts: readonly IndexedConjunct[],
  index: (name: string) => ScalarIndex | undefined,
  rowCount: number,
): Uint32Array | undefined {
  let best: Uint32Array | undefined;
  for (const { def, predicate } of conjuncts) {
    const idx = index(def.name);
    if (!idx) continue;
    let found: Uint32Array;
    try {
      found = idx.lookup(predicate, rowCount);
    } catch {
      continue; // a literal the index cannot compare: the evaluator decides for every row
    }
    if (!best || found.length < best.length) best = found;
  }
  if (!best || best.length > rowCount * MAX_CANDIDATE_SHARE) return undefined;
  return best.slice().sort();
}

/**
 * Evaluates the filter on the candidate rows only: they are gathered (the columns the filter
 * reads) into one batch, evaluated in one call, and the rows that pass are set to 1 in `mask`
 * (which the caller zeroed). Returns how many candidates passed.
 */
/** The candidate positions (ascending) where the filter passes, evaluated on those rows only. */
export function candidatesPassing(batches: readonly RecordBatch[], candidates: Uint32Array, filter: Expr, evaluate: (batch: RecordBatch) => Uint8Array): Uint32Array {
  const passed = evaluateCandidates(batches, candidates, filter, evaluate);
  let n = 0;
  for (let i = 0; i < passed.length; i++) n += passed[i];
  const out = new Uint32Array(n);
  let o = 0;
  for (let i = 0; i < passed.length; i++) if (passed[i]) out[o++] = candidates[i];
  return out;
}

export function maskFromCandidates(
  batches: readonly RecordBatch[],
  candidates: Uint32Array,
  filter: Expr,
  evaluate: (batch: RecordBatch) => Uint8Array,
  mask: Uint8Array,
): number {
  const passed = evaluateCandidates(batches, candidates, filter, evaluate);
  let count = 0;
  for (let i = 0; i < passed.length; i++) {
    if (passed[i]) {
      mask[candidates[i]] = 1;
      count++;
    }
  }
  return count;
}

/** The filter over the candidate rows (those inside the batches), gathered into one batch: 1 = passes. */
function evaluateCandidates(batches: readonly RecordBatch[], candidates: Uint32Array, filter: Expr, evaluate: (batch: RecordBatch) => Uint8Array): Uint8Array {
  if (candidates.length === 0 || batches.length === 0) return new Uint8Array(0);
  const from = new Uint32Array(candidates.length);
  const rows = new Uint32Array(candidates.length);
  let c = 0;
  let base = 0;
  batches.forEach((batch, b) => {
    const end = base + batch.numRows;
    for (; c < candidates.length && candidates[c] < end; c++) {
      from[c] = b;
      rows[c] = candidates[c] - base;
    }
    base = end;
  });
  const n = c; // candidates past the last batch do not exist in this snapshot
  const schema = batches[0].schema;
  const needed = new Set(columnsOf(filter));
  const fields = schema.fields.map((f, i) => ({ f, i })).filter(({ f }) => needed.has(f.name));
  const sub = new Schema(fields.map(({ f }) => f));
  const children = fields.map(({ i }) => gatherData(batches.map((bt) => bt.data.children[i]), from.subarray(0, n), rows.subarray(0, n)));
  return evaluate(new RecordBatch(sub, makeData({ type: new Struct(sub.fields), length: n, nullCount: 0, children }))).subarray(0, n);
}
