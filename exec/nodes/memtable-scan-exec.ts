/**
 * MemTableScan: the live, filtered rows of one MemTable (active or frozen) as of the snapshot —
 * the rows a durable write acknowledged just before the query began are here, which is what
 * makes a query fresh to the last acknowledged write. Runs under its region's KeyDedup, which
 * hands it the mask of rows to emit (source-scan.ts).
 */
import { SourceScanExec } from './source-scan.js';

export class MemTableScanExec extends SourceScanExec {
  readonly kind = 'MemTableScan';
}
