/**
 * `quiver scan <table>`: every live row of a table through `Table.scan` (no SQL), in any output
 * format, optionally only some columns and at most `--limit` rows. With `--connect` there is no
 * Table.scan over Flight SQL: it runs `SELECT <columns> FROM <table> [LIMIT n]` on the server.
 */
import { openSession, UsageError, type ConnectionFlags } from './options.js';
import { resultWriter, type OutputFormat } from './output.js';
import { EmbeddedSession } from './session.js';
import { printStatement } from './print-statement.js';
import { quoteIdent } from './load/infer.js';
import type { Terminal } from './terminal.js';

export interface ScanFlags extends ConnectionFlags {
  format: OutputFormat;
  limit?: string;
  columns?: string;
}

export async function runScan(name: string, flags: ScanFlags, terminal: Terminal): Promise<number> {
  const limit = flags.limit === undefined ? Infinity : Number(flags.limit);
  if (!(limit >= 0)) throw new UsageError(`--limit must be a number >= 0, got ${flags.limit}`);
  if (flags.connect) {
    const remote = await openSession(flags);
    try {
      const cols = flags.columns ? flags.columns.split(',').map((c) => quoteIdent(c.trim())).join(', ') : '*';
      const sql = `SELECT ${cols} FROM ${quoteIdent(name)}${Number.isFinite(limit) ? ` LIMIT ${Math.floor(limit)}` : ''}`;
      await printStatement(remote, sql, [], flags.format, terminal.sink, { style: terminal.style, width: terminal.width });
      return 0;
    } finally {
      await remote.close();
    }
  }
  const session = await openSession({ data: flags.data });
  if (!(session instanceof EmbeddedSession)) throw new UsageError('scan reads a database directly (--data)');
  try {
    const table = await session.database.openTable(name);
    const columns = flags.columns?.split(',').map((c) => c.trim());
    const writer = resultWriter(flags.format, terminal.sink, { style: terminal.style, width: terminal.width });
    await writer.begin(columns ? table.schema.select(columns) : table.schema);
    let rows = 0;
    for await (const batch of table.scan({ columns })) {
      if (rows >= limit) break;
      const take = Math.min(batch.numRows, limit - rows);
      await writer.batch(take === batch.numRows ? batch : batch.slice(0, take));
      rows += take;
    }
    await writer.end();
    return 0;
  } finally {
    await session.close();
  }
}
