/**
 * Explain: prints the exec tree of a statement, one node a line, indented by depth — the node
 * kind and its key parameters (index used or why not, nprobes, prefilter, sources). With ANALYZE
 * the statement runs first (its results are discarded; a write is performed, as in PostgreSQL)
 * and every line adds what the node did: rows, batches, inclusive time, and its own counters.
 */
import { makeData, RecordBatch, Schema, Struct, Field, Utf8, vectorFromArray } from 'apache-arrow';
import { BaseExec, type ExecContext, type ExecNode } from './exec-node.js';
import { ExplainNames } from './explain-names.js';

export const EXPLAIN_SCHEMA = new Schema([new Field('plan', new Utf8(), false)]);

export class ExplainExec extends BaseExec {
  readonly kind = 'Explain';

  constructor(
    readonly input: ExecNode,
    readonly analyze: boolean,
  ) {
    super(EXPLAIN_SCHEMA, [input]);
  }

  protected async *run(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    const start = performance.now();
    if (this.analyze) for await (const _ of this.input.execute(ctx)) void _;
    const lines = explainLines(this.input, this.analyze);
    if (this.analyze) lines.push(`Execution time: ${(performance.now() - start).toFixed(3)} ms`);
    const data = vectorFromArray(lines, new Utf8()).data[0];
    yield new RecordBatch(EXPLAIN_SCHEMA, makeData({ type: new Struct(EXPLAIN_SCHEMA.fields), length: lines.length, nullCount: 0, children: [data] }));
  }

  explain(): string {
    return `Explain${this.analyze ? ' analyze' : ''}`;
  }
}

/** The tree as text lines; with `analyze`, each line ends with the node's metrics. */
export function explainLines(root: ExecNode, analyze: boolean): string[] {
  const out: string[] = [];
  // The planner's internal column names shown as the expressions they stand for.
  const names = ExplainNames.of(root);
  const walk = (n: ExecNode, depth: number) => {
    let line = `${'  '.repeat(depth)}${depth > 0 ? '-> ' : ''}${n.explain(names)}`;
    if (analyze) {
      const m = n.metrics;
      const own = m.timeMs - n.children.reduce((t, c) => t + c.metrics.timeMs, 0);
      const extra = Object.entries(m.extra).map(([k, v]) => `${k}=${v}`);
      line += `  (rows=${m.rows} batches=${m.batches} time=${m.timeMs.toFixed(3)} ms self=${Math.max(0, own).toFixed(3)} ms${extra.length ? ' ' + extra.join(' ') : ''})`;
    }
    out.push(line);
    for (const c of n.children) walk(c, depth + 1);
  };
  walk(root, 0);
  return out;
}
