/**
 * Arrow type equality as Quiver means it: same type id, same printed form (width, unit, list
 * size...) and, recursively, the same child types. Field names and nullability of children do not
 * count: a WAL entry or a generation file matches the table's stored schema if its columns hold
 * the same kinds of values.
 */
import type { DataType } from 'apache-arrow';

export function sameType(a: DataType, b: DataType): boolean {
  if (a.typeId !== b.typeId || String(a) !== String(b)) return false;
  const ac = a.children ?? [];
  const bc = b.children ?? [];
  if (ac.length !== bc.length) return false;
  return ac.every((f, i) => sameType(f.type, bc[i].type));
}
