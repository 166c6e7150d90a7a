/**
 * The exec node contract: what every physical operator of a query is.
 *
 * DataFusion's `ExecutionPlan`, made small. A node knows its output `schema` before it runs (so a
 * Flight server can answer GetFlightInfo / GetSchema without executing anything), names its
 * `children` (EXPLAIN walks them), and `execute(ctx)` returns a pull-based async iterable of
 * record batches: nothing is computed until the consumer asks for the next batch, and a consumer
 * that stops pulling (or aborts `ctx.signal`) stops the whole tree, because every node pulls
 * from its children only as fast as it is pulled itself.
 *
 * Metrics are counted by the node as it produces batches; EXPLAIN ANALYZE prints them after the
 * query has drained. `timeMs` is the wall time spent inside this node's own `next()` calls,
 * children included (DataFusion's `elapsed_compute` is exclusive; ours is inclusive, and the
 * explain printer shows both the total and the node's own share).
 */
import type { RecordBatch, Schema } from 'apache-arrow';
import { CancelledError } from '../../src/errors.js';
import type { ExplainNames } from './explain-names.js';

/** What a running query hands every node. */
export interface ExecContext {
  /** Aborted when the consumer cancels: nodes stop and release what they hold. */
  readonly signal?: AbortSignal;
  /** Values of `$1`, `$2`, … */
  readonly params: readonly unknown[];
}

export interface ExecMetrics {
  /** Rows this node produced. */
  rows: number;
  /** Batches this node produced. */
  batches: number;
  /** Wall milliseconds spent producing them, children included. */
  timeMs: number;
  /** Node-specific counters (rows scanned, partitions probed, spilled groups, …). */
  extra: Record<string, number | string>;
}

export interface ExecNode {
  /** The node kind as EXPLAIN prints it: `MemTableScan`, `VectorKnn`, `HashAggregate`, … */
  readonly kind: string;
  readonly schema: Schema;
  readonly children: readonly ExecNode[];
  execute(ctx: ExecContext): AsyncIterable<RecordBatch>;
  /**
   * One line: the kind and its key parameters (index used or why not, filter, k, …); columns
   * and expressions as `names` shows them (EXPLAIN passes the tree's, explain-names.ts).
   */
  explain(names?: ExplainNames): string;
  /** Tells `names` what the internal-named columns this node makes stand for (Project, HashAggregate). */
  defineNames?(names: ExplainNames): void;
  readonly metrics: ExecMetrics;
}

export function emptyMetrics(): ExecMetrics {
  return { rows: 0, batches: 0, timeMs: 0, extra: {} };
}

/** Throws `CancelledError` when the query was aborted. */
export function checkCancelled(ctx: ExecContext): void {
  if (ctx.signal?.aborted) throw new CancelledError();
}

/**
 * Base class for nodes: subclasses write `run(ctx)` as an async generator; `execute` wraps it to
 * count rows, batches and time, and to stop on cancellation between batches.
 */
export abstract class BaseExec implements ExecNode {
  abstract readonly kind: string;
  readonly metrics: ExecMetrics = emptyMetrics();

  constructor(
    readonly schema: Schema,
    readonly children: readonly ExecNode[],
  ) {}

  protected abstract run(ctx: ExecContext): AsyncGenerator<RecordBatch>;
  abstract explain(names?: ExplainNames): string;

  async *execute(ctx: ExecContext): AsyncGenerator<RecordBatch> {
    checkCancelled(ctx);
    const it = this.run(ctx);
    try {
      for (;;) {
        const start = performance.now();
        const step = await it.next();
        this.metrics.timeMs += performance.now() - start;
        if (step.done) return;
        const batch = step.value;
        if (batch.numRows === 0) continue;
        this.metrics.rows += batch.numRows;
        this.metrics.batches += 1;
        yield batch;
        checkCancelled(ctx);
      }
    } finally {
      // Stops the node's own generator (and through it, its children) when the consumer leaves early.
      await it.return(undefined);
    }
  }
}
