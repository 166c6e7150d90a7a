/**
 * Reading primary-key values out of Arrow data, straight from the typed arrays.
 *
 * A key is a JS value usable in a Map/Set: bigint for 64-bit integers and timestamps, number for
 * narrower integers and dates, string for strings. A composite key becomes one string that joins
 * the parts with a separator that cannot occur in their text forms ("\u0000" plus a type tag),
 * so distinct tuples never collide.
 */
import { type Data, type RecordBatch, Type, type DataType, vectorFromArray } from 'apache-arrow';
import { InvalidError } from '../errors.js';

export type KeyValue = bigint | number | string;
export type KeyReader = (row: number) => KeyValue;

const utf8 = new TextDecoder();

export function columnKeyReader(data: Data): KeyReader {
  const type = data.type as DataType;
  if (type.typeId === Type.Utf8) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    return (row) => utf8.decode(bytes.subarray(offsets[row], offsets[row + 1]));
  }
  const values = data.values as unknown as ArrayLike<number | bigint>;
  if (values instanceof BigInt64Array || values instanceof BigUint64Array) return (row) => values[row] as bigint;
  if (data.stride !== 1) throw new InvalidError(`unsupported key type ${String(type)}`);
  return (row) => values[row] as number;
}

export function batchKeyReader(batch: RecordBatch, keyIndexes: readonly number[]): KeyReader {
  const readers = keyIndexes.map((i) => columnKeyReader(batch.data.children[i] as Data));
  if (readers.length === 1) return readers[0];
  return (row) => readers.map((r) => tagged(r(row))).join('\u0000');
}

function tagged(v: KeyValue): string {
  return typeof v === 'bigint' ? `i${v}` : typeof v === 'number' ? `n${v}` : `s${v}`;
}

/** Key values as the user gives them to `delete`, converted to the key column's Arrow type. */
export function keyVectorData(type: DataType, name: string, values: readonly unknown[]): Data {
  const converted = values.map((v, i) => {
    if (v === null || v === undefined) throw new InvalidError(`delete: key #${i} for ${name} is null`);
    switch (type.typeId) {
      case Type.Utf8:
        if (typeof v !== 'string') throw new InvalidError(`delete: key #${i} for ${name} must be a string, got ${typeof v}`);
        return v;
      case Type.Int:
      case Type.Date:
      case Type.Timestamp: {
        if (typeof v !== 'number' && typeof v !== 'bigint') throw new InvalidError(`delete: key #${i} for ${name} must be a number or bigint, got ${typeof v}`);
        if (typeof v === 'number' && !Number.isInteger(v)) throw new InvalidError(`delete: key #${i} for ${name} must be an integer, got ${v}`);
        const wide = (type as unknown as { bitWidth?: number }).bitWidth === 64 || type.typeId === Type.Timestamp;
        return wide ? BigInt(v) : Number(v);
      }
      default:
        throw new InvalidError(`delete: unsupported key type ${String(type)}`);
    }
  });
  if (type.typeId === Type.Date) {
    // vectorFromArray builds dates from Date objects; key values are raw day/ms numbers.
    return vectorFromArray(converted.map((d) => new Date(Number(d) * 86400000)), type).data[0];
  }
  return vectorFromArray(converted as never[], type).data[0];
}
