/**
 * ScalarIndexScan: a source scan whose filter has conjuncts on a scalar-indexed column
 * (`year = 2020`, `id IN (…)`, `price BETWEEN …`): the sorted index yields the candidate rows
 * and the whole filter is evaluated only on those, instead of on every row of the source — an
 * `IN` list of 100 keys costs 100 lookups, not a pass over the table. The index narrows the
 * rows the first time a source version is filtered; the result is remembered per version like
 * every other filter (filter-memo.ts).
 */
import { SourceScanExec } from './source-scan.js';

export class ScalarIndexScanExec extends SourceScanExec {
  readonly kind = 'ScalarIndexScan';
}
