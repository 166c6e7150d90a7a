/**
 * A table's schema as the write path sees it: validation of the user's schema and primary key,
 * the *stored* schema (what WAL entries, MemTables and generations hold), and normalisation of
 * incoming batches into stored-schema batches.
 *
 * The stored schema is the user's fields, with every non-key field nullable, plus a trailing
 * non-null Bool `_tombstone`. A delete is a row with the key set, `_tombstone = true` and every
 * other field null; that is why non-key fields must be nullable in storage even when the user
 * declared them NOT NULL (the user's declaration is enforced on input instead).
 */
import {
  Bool,
  type DataType,
  Dictionary,
  Field,
  FixedSizeList,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Type,
  Utf8,
  vectorFromArray,
  type Data,
} from 'apache-arrow';
import { InvalidError } from '../errors.js';
import { sameType } from '../util/same-type.js';

export const TOMBSTONE_COLUMN = '_tombstone';
/** Names the engine uses for its own columns; user fields may not take them. */
export const RESERVED_COLUMNS = new Set([TOMBSTONE_COLUMN, '_rowid', '_gen', '_distance', '_score']);

const KEY_TYPES = new Set([Type.Int, Type.Utf8, Type.Date, Type.Timestamp]);

export class TableSchema {
  /** The stored schema: user fields (non-key ones nullable) + `_tombstone`. */
  readonly stored: Schema;
  /** Indexes of the key columns in the user (and stored) schema. */
  readonly keyIndexes: number[];

  constructor(
    readonly user: Schema,
    readonly primaryKey: string[],
  ) {
    validateUserSchema(user, primaryKey);
    this.keyIndexes = primaryKey.map((name) => user.fields.findIndex((f) => f.name === name));
    const keySet = new Set(primaryKey);
    this.stored = new Schema(
      [
        ...user.fields.map((f) => (keySet.has(f.name) || f.nullable ? f : new Field(f.name, f.type, true, f.metadata))),
        new Field(TOMBSTONE_COLUMN, new Bool(), false),
      ],
      user.metadata,
    );
  }

  get tombstoneIndex(): number {
    return this.stored.fields.length - 1;
  }

  /**
   * Checks user input against the table and returns stored-schema batches (zero-copy where the
   * input already has the right shape). Throws InvalidError naming the first problem; nothing is
   * written by the caller when this throws, because it runs before any write.
   */
  normalize(input: RecordBatch | Table | readonly RecordBatch[]): RecordBatch[] {
    const batches = input instanceof Table ? input.batches : input instanceof RecordBatch ? [input] : Array.isArray(input) ? [...input] : undefined;
    if (!batches || batches.some((b) => !(b instanceof RecordBatch))) {
      throw new InvalidError('put: expected an apache-arrow RecordBatch, Table or array of RecordBatches');
    }
    if (batches.length === 0 || batches.every((b) => b.numRows === 0)) {
      throw new InvalidError('put: no rows to write (empty batch)');
    }
    return batches.filter((b) => b.numRows > 0).map((b) => this.normalizeBatch(b));
  }

  private normalizeBatch(batch: RecordBatch): RecordBatch {
    const incoming = new Map(batch.schema.fields.map((f, i) => [f.name, i]));
    const missing = this.user.fields.filter((f) => !incoming.has(f.name)).map((f) => f.name);
    const extra = batch.schema.fields.filter((f) => !this.user.fields.some((u) => u.name === f.name)).map((f) => f.name);
    if (missing.length || extra.length) {
      const parts = [];
      if (missing.length) parts.push(`missing column(s) ${missing.join(', ')}`);
      if (extra.length) parts.push(`unknown column(s) ${extra.join(', ')}`);
      throw new InvalidError(`put: batch does not match the table schema: ${parts.join('; ')}`);
    }
    const children: Data[] = this.user.fields.map((field) => {
      let data = batch.data.children[incoming.get(field.name)!] as Data;
      data = coerce(field, data);
      const keyColumn = this.primaryKey.includes(field.name);
      if (data.nullCount > 0 && (keyColumn || !field.nullable)) {
        throw new InvalidError(
          keyColumn
            ? `put: primary key column ${field.name} contains ${data.nullCount} null value(s)`
            : `put: column ${field.name} is NOT NULL but contains ${data.nullCount} null value(s)`,
        );
      }
      return data;
    });
    children.push(makeData({ type: new Bool(), length: batch.numRows, nullCount: 0, data: new Uint8Array((batch.numRows + 7) >> 3) }));
    return new RecordBatch(this.stored, makeData({ type: new Struct(this.stored.fields), length: batch.numRows, nullCount: 0, children }));
  }
}

function coerce(field: Field, data: Data): Data {
  if (sameType(field.type, data.type)) return data;
  // Dictionary-encoded strings (what tableFromArrays makes) are accepted for Utf8 columns.
  if (field.type.typeId === Type.Utf8 && data.type instanceof Dictionary && data.type.dictionary.typeId === Type.Utf8) {
    const values: (string | null)[] = [];
    const vec = makeVectorOf(data);
    for (let i = 0; i < data.length; i++) values.push(vec.get(i));
    return vectorFromArray(values, new Utf8()).data[0];
  }
  if (field.type instanceof FixedSizeList && data.type instanceof FixedSizeList) {
    if (field.type.listSize !== data.type.listSize) {
      throw new InvalidError(
        `put: column ${field.name} expects vectors of dimension ${field.type.listSize}, got dimension ${data.type.listSize}`,
      );
    }
  }
  throw new InvalidError(`put: column ${field.name} has type ${String(data.type)}, expected ${String(field.type)}`);
}

function makeVectorOf(data: Data): { get(i: number): string | null } {
  // A one-Data vector; imported lazily to keep the common path free of builders.
  return new RecordBatch({ v: data as Data<Dictionary> }).getChild('v') as unknown as { get(i: number): string | null };
}

function validateUserSchema(schema: Schema, primaryKey: string[]): void {
  if (!(schema instanceof Schema)) throw new InvalidError('schema must be an apache-arrow Schema');
  if (schema.fields.length === 0) throw new InvalidError('schema has no fields');
  const seen = new Set<string>();
  for (const f of schema.fields) {
    if (!f.name) throw new InvalidError('schema has a field without a name');
    if (seen.has(f.name)) throw new InvalidError(`schema has duplicate field ${f.name}`);
    if (RESERVED_COLUMNS.has(f.name)) throw new InvalidError(`field name ${f.name} is reserved`);
    seen.add(f.name);
  }
  if (primaryKey.length === 0) throw new InvalidError('a table needs a primary key');
  for (const name of primaryKey) {
    const f = schema.fields.find((x) => x.name === name);
    if (!f) throw new InvalidError(`primary key column ${name} is not in the schema`);
    if (!KEY_TYPES.has(f.type.typeId)) {
      throw new InvalidError(`primary key column ${name} has type ${String(f.type)}; keys must be integer, string, date or timestamp`);
    }
  }
  if (new Set(primaryKey).size !== primaryKey.length) throw new InvalidError('primary key names a column twice');
}
