/**
 * `quiver sql`: one statement from the command line, a script from `-f file.sql` or standard
 * input, or — with none of these and a terminal on standard input — the interactive shell.
 *
 * Statements run in order and stop at the first error (exit code 1, the message naming the
 * statement's number and line when there are several). Each result streams to standard output
 * in the chosen format (see output.ts).
 */
import { readFileSync } from 'node:fs';
import { text as readAll } from 'node:stream/consumers';
import { splitStatements, type Statement } from './statements.js';
import { openSession, UsageError, parseParam } from './options.js';
import { describeError } from './errors.js';
import { terminalOutput, type Terminal } from './terminal.js';
import { printStatement, type SqlFlags } from './print-statement.js';

export type { SqlFlags } from './print-statement.js';
export { printStatement } from './print-statement.js';

export async function runSql(statement: string | undefined, flags: SqlFlags, terminal: Terminal = terminalOutput()): Promise<number> {
  if (statement !== undefined && flags.file !== undefined) throw new UsageError('give a statement or -f file, not both');
  const params = (flags.param ?? []).map(parseParam);
  let statements: Statement[];
  if (statement !== undefined) statements = splitStatements(statement);
  else if (flags.file !== undefined) statements = splitStatements(flags.file === '-' ? await readAll(process.stdin) : readFileSync(flags.file, 'utf8'));
  else if (process.stdin.isTTY) {
    const { runShell } = await import('./shell.js');
    return runShell(flags, terminal);
  } else statements = splitStatements(await readAll(process.stdin));
  if (statements.length === 0) throw new UsageError('no SQL statement given');

  const session = await openSession(flags);
  try {
    for (let i = 0; i < statements.length; i++) {
      const s = statements[i];
      try {
        await printStatement(session, s.text, params, flags.format, terminal.sink, { style: terminal.style, width: terminal.width });
      } catch (e) {
        const context = statements.length > 1 ? `statement ${i + 1} at line ${s.line}` : undefined;
        terminal.error(`quiver: ${describeError(e, context)}`);
        return 1;
      }
    }
    return 0;
  } finally {
    await session.close();
  }
}
