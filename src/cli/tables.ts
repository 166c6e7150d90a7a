/** `quiver tables`: the table names, one a line. */
import { openSession, type ConnectionFlags } from './options.js';
import type { Terminal } from './terminal.js';

export async function runTables(flags: ConnectionFlags, terminal: Terminal): Promise<number> {
  const session = await openSession(flags);
  try {
    const names = await session.tableNames();
    await terminal.sink.write(names.map((n) => `${n}\n`).join(''));
    return 0;
  } finally {
    await session.close();
  }
}
