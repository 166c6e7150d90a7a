/**
 * GenerationScan: the live, filtered rows of one flushed generation (immutable; loaded through
 * the generation cache). Rows superseded by a newer generation or MemTable, and deleted keys,
 * are masked out by the region's KeyDedup before this node emits anything (source-scan.ts).
 */
import { SourceScanExec } from './source-scan.js';

export class GenerationScanExec extends SourceScanExec {
  readonly kind = 'GenerationScan';
}
