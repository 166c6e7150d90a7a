/**
 * VALUES rows → one record batch of declared column types. Each value is a constant expression
 * or a parameter, evaluated once and converted with CAST's rules (so `'2024-01-01'` fills a DATE
 * column, `1` a DOUBLE one, and `'abc'` an INT one fails with PostgreSQL's message); vector
 * columns take a Float32Array / number[] parameter, ARRAY[…] or '[…]'. Values are few (a bulk
 * load goes through `table.put` or Flight ingest), so this builds row by row.
 */
import { type DataType, type Field, makeBuilder, makeData, RecordBatch, type Schema, Struct, Type, Vector } from 'apache-arrow';
import { evaluateValue } from '../expr/index.js';
import { cast, type Expr, type SqlTypeName } from '../expr/expr.js';
import { InvalidError } from '../../src/errors.js';
import { queryVector } from './search-inputs.js';
import { EMPTY_ROW } from './empty-row.js';

/** The SQL type name a CAST to `type` uses, or null when CAST cannot name it. */
export function sqlTypeName(type: DataType): SqlTypeName | null {
  switch (type.typeId) {
    case Type.Int: {
      const bits = (type as unknown as { bitWidth: number }).bitWidth;
      const signed = (type as unknown as { isSigned: boolean }).isSigned;
      if (!signed) return null;
      return bits === 64 ? 'bigint' : bits === 32 ? 'int' : bits === 16 ? 'smallint' : null;
    }
    case Type.Float:
      return (type as unknown as { precision: number }).precision === 2 ? 'double' : (type as unknown as { precision: number }).precision === 1 ? 'real' : null;
    case Type.Utf8:
      return 'text';
    case Type.Bool:
      return 'boolean';
    case Type.Date:
      return 'date';
    case Type.Timestamp:
      return 'timestamp';
    default:
      return null;
  }
}

export function valuesBatch(rows: readonly (readonly Expr[])[], schema: Schema, params: readonly unknown[]): RecordBatch {
  const children = schema.fields.map((field, c) => buildColumn(field, rows.map((r) => r[c]), params));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }));
}

function buildColumn(field: Field, exprs: readonly Expr[], params: readonly unknown[]) {
  const type = field.type;
  const builder = makeBuilder({ type, nullValues: [null, undefined] });
  const isVector = type.typeId === Type.FixedSizeList;
  const target = sqlTypeName(type);
  for (const e of exprs) {
    if (e.kind === 'literal' && e.value === null) {
      builder.append(null);
      continue;
    }
    if (isVector) {
      if (e.kind === 'param' && params[e.index - 1] === null) builder.append(null);
      else builder.append(Array.from(queryVector(e, params, (type as { listSize: number }).listSize, `column ${field.name}`)) as never);
      continue;
    }
    const data = evaluateValue(target ? cast(e, target) : e, EMPTY_ROW, params);
    if (!target && data.type.typeId !== type.typeId) throw new InvalidError(`column ${field.name} is ${String(type)}; the value is ${String(data.type)}`);
    builder.append(new Vector([data]).get(0) as never);
  }
  return builder.finish().flush();
}
