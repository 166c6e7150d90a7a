/**
 * Quiver as a contender: a database on a fresh temp directory (or the given URI), and puts with
 * a bounded number in flight, the way a client streams rows in.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { RecordBatch } from 'apache-arrow';
import { connect, type ConnectOptions, type Database } from '../../src/database.js';
import type { Table } from '../../src/table/table.js';

const GiB = 1024 ** 3;

/** Writer settings of tables built for reading: no MemTable is frozen before an explicit flush(). */
export const HOLD_IN_MEMTABLE = { maxMemtableRows: 1e9, maxMemtableSize: 64 * GiB, maxMemtableBatches: 1e7, maxUnflushedMemtableBytes: 128 * GiB };

export async function openQuiverTemp(prefix: string, options: ConnectOptions = {}): Promise<{ db: Database; dir: string; dispose: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(process.env.BENCH_DIR ?? os.tmpdir(), `quiver-${prefix}-`));
  const db = await connect(dir, options);
  return {
    db,
    dir,
    dispose: async () => {
      await db.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Puts every batch, at most `inflight` outstanding; resolves when all are acknowledged. */
export async function putAll(table: Table, batches: readonly RecordBatch[], inflight = 4): Promise<void> {
  const pending = new Set<Promise<void>>();
  for (const b of batches) {
    const p: Promise<void> = table.put(b).then(() => void pending.delete(p));
    pending.add(p);
    if (pending.size >= inflight) await Promise.race(pending);
  }
  await Promise.all(pending);
}

/** Ids of a Quiver result's `id` column as numbers. */
export function quiverIds(t: { getChild(name: string): { toArray(): ArrayLike<unknown> } | null }): number[] {
  const col = t.getChild('id');
  return col ? Array.from(col.toArray() as ArrayLike<bigint | number>, Number) : [];
}
