/**
 * Index definitions, as stored in table metadata (`indexes`). One index per (column, type).
 *
 * - `ivf_pq` on a FixedSizeList<Float32> column: `metric` (l2 | cosine | dot), optional
 *   `partitions` / `subVectors`; `model` names the trained model file (relative to the table,
 *   `_indices/{name}-{uuid}.arrow`) once trained. Until then searches are exact brute force.
 *   A model grows with the table (src/table/model-growth.ts): `trainedRows` is how many rows
 *   the current model was trained from, `previousModels` the files of the models it replaced,
 *   oldest first — codes made with one of those are still valid (the generation is re-encoded
 *   in the background), codes of any other model are not (another process's index).
 * - `fts` on a Utf8 column: tokenizer options `stem` (default true) and `stopWords` (default false).
 * - `scalar` on an int, float, string, date, timestamp or boolean column.
 */
import { type DataType, type Field, FixedSizeList, Type } from 'apache-arrow';
import { InvalidError } from '../errors.js';
import { METRICS, type Metric } from './vector/distance.js';

export type IndexType = 'ivf_pq' | 'fts' | 'scalar';

export interface IndexDef {
  name: string;
  column: string;
  type: IndexType;
  metric?: Metric;
  partitions?: number;
  subVectors?: number;
  model?: string;
  /** IVF-PQ: rows the current model was trained from (absent: trained before models grew). */
  trainedRows?: number;
  /** IVF-PQ: model files this index used before `model`, oldest first. */
  previousModels?: string[];
  stem?: boolean;
  stopWords?: boolean;
}

export interface CreateIndexOptions {
  type: IndexType;
  /** Default `<column>_<type>`; letters, digits and `_`. */
  name?: string;
  metric?: Metric;
  partitions?: number;
  subVectors?: number;
  stem?: boolean;
  stopWords?: boolean;
}

const SCALAR_TYPES = new Set([Type.Int, Type.Float, Type.Utf8, Type.Date, Type.Timestamp, Type.Bool]);

export function isFloat32Vector(type: DataType): type is FixedSizeList {
  return type instanceof FixedSizeList && type.children[0].type.typeId === Type.Float && (type.children[0].type as { precision?: number }).precision === 1;
}

/** Checks options against the column and returns the stored definition. */
export function makeIndexDef(field: Field | undefined, column: string, options: CreateIndexOptions): IndexDef {
  if (!field) throw new InvalidError(`createIndex: unknown column ${column}`);
  if (!options || !['ivf_pq', 'fts', 'scalar'].includes(options.type)) {
    throw new InvalidError(`createIndex: type must be 'ivf_pq', 'fts' or 'scalar', got ${JSON.stringify(options?.type)}`);
  }
  const name = options.name ?? `${column}_${options.type}`;
  if (typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new InvalidError(`createIndex: an index name is letters, digits and _ (at most 63), got ${JSON.stringify(name)}`);
  switch (options.type) {
    case 'ivf_pq': {
      if (!isFloat32Vector(field.type)) throw new InvalidError(`createIndex: ivf_pq needs a FLOAT4[n] vector column; ${column} is ${String(field.type)}`);
      const metric = options.metric ?? 'l2';
      if (!METRICS.includes(metric)) throw new InvalidError(`createIndex: metric must be one of ${METRICS.join(', ')}, got ${String(metric)}`);
      for (const k of ['partitions', 'subVectors'] as const) {
        const v = options[k];
        if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw new InvalidError(`createIndex: ${k} must be a positive integer, got ${String(v)}`);
      }
      if (options.subVectors !== undefined && field.type.listSize % options.subVectors !== 0) {
        throw new InvalidError(`createIndex: subVectors (${options.subVectors}) must divide the dimension ${field.type.listSize}`);
      }
      return { name, column, type: 'ivf_pq', metric, partitions: options.partitions, subVectors: options.subVectors };
    }
    case 'fts':
      if (field.type.typeId !== Type.Utf8) throw new InvalidError(`createIndex: fts needs a TEXT column; ${column} is ${String(field.type)}`);
      return { name, column, type: 'fts', stem: options.stem ?? true, stopWords: options.stopWords ?? false };
    case 'scalar':
      if (!SCALAR_TYPES.has(field.type.typeId)) throw new InvalidError(`createIndex: scalar indexes cover int, float, text, date, timestamp and boolean columns; ${column} is ${String(field.type)}`);
      return { name, column, type: 'scalar' };
  }
}
