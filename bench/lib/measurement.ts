/** One row of a suite's results: a contender's figures in one group (shared by the report and the chart). */
import type { Summary } from './stats.js';

export interface Measurement {
  group: string;
  contender: string;
  /** The peer this row is compared with (its `contender` name in the same group); none for the peer itself. */
  peer?: string;
  /** Per-operation latency, ms. */
  latency?: Summary;
  /** A rate where one matters more than latency (MB/s, rows/s, ops/s). */
  throughput?: { value: number; unit: string };
  /** Extra figures for the table (recall@10, hits, …): name → value. */
  extra?: Record<string, number | string>;
  /** Independent variable of a scaling curve (rows). */
  rows?: number;
}
