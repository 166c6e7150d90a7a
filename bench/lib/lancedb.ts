/**
 * LanceDB 0.31.0 as an in-process peer, required from bench/peers (see peers.ts) so it brings its
 * own apache-arrow 18.1; Quiver's batches reach it as Arrow IPC bytes, the same rows exactly.
 * In-process, so a suite can interleave LanceDB's operations with Quiver's round by round.
 *
 * Known here (issue 11): its CPU pool defaults to one thread on this 2-core machine, on which its
 * full-text index build hangs from about 100k rows (lancedb/lancedb#3568) — so LANCE_CPU_THREADS
 * is 4 unless set, and it must be set before the native module loads; `add()` writes without
 * fsync; new rows stay unindexed (searched flat) until `optimize()`.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { type RecordBatch, Table as ArrowTable, tableToIPC } from 'apache-arrow';
import { MODE } from './mode.js';
import { NOT_INSTALLED, peerInstalled, peerVersion, requirePeer } from './peers.js';

/** An Arrow table of LanceDB's own apache-arrow (18.1), opaque to Quiver's types. */
export type LanceArrow = { numRows: number; getChild(name: string): { toArray(): ArrayLike<unknown> } | null };

export interface LanceQuery {
  where(predicate: string): this;
  select(columns: string[]): this;
  limit(n: number): this;
  nprobes(n: number): this;
  refineFactor(n: number): this;
  distanceType(t: string): this;
  bypassVectorIndex(): this;
  toArrow(): Promise<LanceArrow>;
}

export interface LanceTable {
  add(data: unknown): Promise<unknown>;
  createIndex(column: string, options?: { config?: unknown; replace?: boolean }): Promise<void>;
  query(): LanceQuery;
  vectorSearch(v: Float32Array | number[]): LanceQuery;
  search(q: string, queryType: string, columns: string): LanceQuery;
  optimize(options?: unknown): Promise<unknown>;
  countRows(filter?: string): Promise<number>;
  stats(): Promise<{ fragmentStats?: { numFragments?: number } }>;
  mergeInsert(on: string): { whenMatchedUpdateAll(): { whenNotMatchedInsertAll(): { execute(data: unknown): Promise<unknown> } } };
  version(): Promise<number>;
  /** Pins the table object to an older version (read-only), e.g. the state before optimize(). */
  checkout(version: number): Promise<void>;
  close(): void;
}

export interface LanceConnection {
  createTable(name: string, data: unknown): Promise<LanceTable>;
  createEmptyTable(name: string, schema: unknown): Promise<LanceTable>;
  openTable(name: string): Promise<LanceTable>;
  close(): void;
}

interface LanceDbModule {
  connect(uri: string): Promise<LanceConnection>;
  Index: {
    ivfPq(o: { numPartitions: number; numSubVectors: number; distanceType?: string; maxIterations?: number }): unknown;
    fts(o?: { withPosition?: boolean; stem?: boolean; removeStopWords?: boolean }): unknown;
    btree(): unknown;
  };
}

interface PeerArrow {
  tableFromIPC(bytes: Uint8Array): { schema: unknown; batches: unknown[] };
  Table: new (batch: unknown) => unknown;
}

export class LancePeer {
  readonly version: string;
  private constructor(
    private readonly lancedb: LanceDbModule,
    private readonly arrow: PeerArrow,
  ) {
    this.version = peerVersion('@lancedb/lancedb');
  }

  /** The peer, or why it is not available. */
  static load(): LancePeer | string {
    if (!peerInstalled('@lancedb/lancedb')) return NOT_INSTALLED;
    process.env.LANCE_CPU_THREADS ??= '4';
    return new LancePeer(requirePeer<LanceDbModule>('@lancedb/lancedb'), requirePeer<PeerArrow>('apache-arrow'));
  }

  get index(): LanceDbModule['Index'] {
    return this.lancedb.Index;
  }

  /**
   * IVF-PQ with L2, as Quiver builds it. Quick mode caps k-means at 10 iterations (LanceDB's
   * default is 50): its training dominates a quick run's time on 2 cores; full mode keeps the default.
   */
  ivfPq(numPartitions: number, numSubVectors: number): unknown {
    return this.lancedb.Index.ivfPq({ numPartitions, numSubVectors, distanceType: 'l2', ...(MODE === 'quick' ? { maxIterations: 10 } : {}) });
  }

  /** Quiver batches as one LanceDB-side Arrow table (through IPC). */
  table(batches: readonly RecordBatch[]): unknown {
    return this.arrow.tableFromIPC(tableToIPC(new ArrowTable(batches as RecordBatch[]), 'stream'));
  }

  /** Quiver batches as LanceDB-side tables, one per batch (one `add()` each). */
  tables(batches: readonly RecordBatch[]): unknown[] {
    const t = this.arrow.tableFromIPC(tableToIPC(new ArrowTable(batches as RecordBatch[]), 'stream'));
    return t.batches.map((b) => new this.arrow.Table(b));
  }

  /** A connection on a fresh temp directory, and how to remove it. */
  async connectTemp(prefix: string): Promise<{ db: LanceConnection; dir: string; dispose: () => Promise<void> }> {
    const dir = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), `lancedb-${prefix}-`));
    const db = await this.lancedb.connect(dir);
    return { db, dir, dispose: async () => (db.close(), rm(dir, { recursive: true, force: true })) };
  }
}

/** The `id` column of a LanceDB result as numbers. */
export function lanceIds(t: LanceArrow): number[] {
  const col = t.getChild('id');
  return col ? Array.from(col.toArray() as ArrayLike<bigint | number>, Number) : [];
}
