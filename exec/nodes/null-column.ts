/** An all-NULL column of any Arrow type, built through the type's builder. */
import { type Data, type DataType, makeBuilder } from 'apache-arrow';

export function nullColumn(type: DataType, n: number): Data {
  const b = makeBuilder({ type, nullValues: [null, undefined] });
  for (let i = 0; i < n; i++) b.append(null);
  return b.finish().flush();
}
