/** Turning a generation's index sidecar (an Arrow table) back into an index object. */
import type { Table } from 'apache-arrow';
import type { IndexDef } from './index-def.js';
import { InvertedIndex } from './fts/inverted-index.js';
import type { IndexingContext } from './indexing.js';
import { ScalarIndex } from './scalar/scalar-index.js';
import type { SourceIndex } from './source-indexes.js';
import { IvfPqIndex } from './vector/ivf-pq-index.js';

export function indexFromSidecar(def: IndexDef, indexing: IndexingContext, table: Table): SourceIndex | undefined {
  switch (def.type) {
    case 'ivf_pq': {
      const model = indexing.model(def);
      return model ? IvfPqIndex.fromArrow(model, table) : undefined;
    }
    case 'fts':
      return InvertedIndex.fromArrow(table, { stem: def.stem, stopWords: def.stopWords });
    case 'scalar':
      return ScalarIndex.fromArrow(indexing.schema.stored.fields.find((f) => f.name === def.column)!.type, table);
  }
}
