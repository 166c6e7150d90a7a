/**
 * The interactive shell (`quiver sql` on a terminal), on node:readline:
 *
 * - a statement may span lines and runs when a line ends it with `;` (outside quotes and
 *   comments); the prompt shows `quiver>` and `     ->` while a statement is open;
 * - Ctrl-C while a statement runs aborts it (the engine ends the stream with a `cancelled`
 *   error) and the shell goes on; Ctrl-C at the prompt drops the open statement; Ctrl-D or
 *   `.quit` leaves;
 * - history is kept across sessions in `$QUIVER_HISTORY` (default `~/.quiver_history`);
 * - dot commands: `.tables`, `.schema <table>`, `.timer on|off`, `.format <format>`, `.help`,
 *   `.quit`.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { isQuiverError } from '../errors.js';
import { describeText } from './describe.js';
import { describeError } from './errors.js';
import { openSession } from './options.js';
import { FORMATS, type OutputFormat } from './output.js';
import { completeStatements } from './statements.js';
import { printStatement, type SqlFlags } from './print-statement.js';
import type { Session } from './session.js';
import type { Terminal } from './terminal.js';

const HISTORY_SIZE = 1000;

const HELP = `Enter SQL ending with ; (it may span lines). Ctrl-C cancels a running statement, Ctrl-D quits.
  .tables              list tables
  .schema <table>      columns, keys, indexes and regions of a table
  .timer on|off        show how long each statement takes
  .format <format>     table, json, ndjson, csv (now: %FORMAT%)
  .maxrows <n>         rows the table format shows (first and last halves; now: %MAXROWS%)
  .help                this text
  .quit                leave (also .exit)`;

function historyFile(): string {
  return process.env.QUIVER_HISTORY || join(homedir(), '.quiver_history');
}

function loadHistory(file: string): string[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  return lines.slice(-HISTORY_SIZE).reverse(); // readline wants the newest first
}

export async function runShell(flags: SqlFlags, terminal: Terminal): Promise<number> {
  const session = await openSession(flags);
  const history = historyFile();
  const rl = createInterface({
    input: process.stdin,
    output: process.stdout,
    terminal: true,
    history: loadHistory(history),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    prompt: 'quiver> ',
  });
  const state = { format: (flags.format === 'arrow' ? 'table' : flags.format) as OutputFormat, timer: false, maxRows: 40 };
  let buffer = '';
  let running: AbortController | null = null;

  const write = (text: string) => process.stdout.write(text);
  const setPrompt = () => rl.setPrompt(buffer ? '     -> ' : 'quiver> ');

  rl.on('SIGINT', () => {
    if (running) {
      running.abort();
      return;
    }
    // At the prompt: drop what was typed, like psql.
    buffer = '';
    write('^C\n');
    setPrompt();
    rl.prompt();
  });

  write(`Quiver shell on ${session.target}. Enter .help for help.\n`);
  setPrompt();
  rl.prompt();
  try {
    for await (const line of rl) {
      if (!buffer && line.trim().startsWith('.')) {
        remember(history, line.trim());
        const keepGoing = await dotCommand(line.trim(), session, state, terminal, write);
        if (!keepGoing) break;
      } else {
        buffer += (buffer ? '\n' : '') + line;
        const { statements, pending } = completeStatements(buffer);
        if (statements.length) {
          remember(history, buffer.replace(/\s*\n\s*/g, ' ').trim());
          buffer = pending ? buffer.slice(buffer.lastIndexOf(';') + 1).trimStart() : '';
          for (const s of statements) {
            const ok = await runOne(s.text);
            if (!ok) break;
          }
        } else if (!pending) buffer = '';
      }
      setPrompt();
      rl.prompt();
    }
  } finally {
    rl.close();
    await session.close();
  }
  return 0;

  async function runOne(sql: string): Promise<boolean> {
    running = new AbortController();
    const started = performance.now();
    try {
      await printStatement(session, sql, [], state.format, terminal.sink, { style: terminal.style, width: process.stdout.columns || terminal.width, maxRows: state.maxRows }, running.signal);
      // A remote stream cut by the cancel may end without an error (the call is cancelled between
      // two messages): the statement was still cancelled, and says so.
      if (running.signal.aborted) {
        terminal.error('cancelled');
        return false;
      }
      return true;
    } catch (e) {
      if (isQuiverError(e, 'cancelled') || running.signal.aborted) terminal.error('cancelled');
      else terminal.error(describeError(e));
      return false;
    } finally {
      running = null;
      if (state.timer) write(`Time: ${(performance.now() - started).toFixed(1)} ms\n`);
    }
  }
}

function remember(file: string, entry: string): void {
  try {
    appendFileSync(file, `${entry}\n`);
  } catch {
    // no history file: the shell works without one
  }
}

async function dotCommand(
  line: string,
  session: Session,
  state: { format: OutputFormat; timer: boolean; maxRows: number },
  terminal: Terminal,
  write: (t: string) => void,
): Promise<boolean> {
  const [command, ...args] = line.split(/\s+/);
  try {
    switch (command) {
      case '.quit':
      case '.exit':
      case '.q':
        return false;
      case '.help':
        write(`${HELP.replace('%FORMAT%', state.format).replace('%MAXROWS%', String(state.maxRows))}\n`);
        return true;
      case '.tables':
        for (const name of await session.tableNames()) write(`${name}\n`);
        return true;
      case '.schema':
        if (!args[0]) {
          terminal.error('usage: .schema <table>');
          return true;
        }
        write(describeText(await session.tableInfo(args[0], true), terminal.style));
        return true;
      case '.timer':
        if (args[0] !== 'on' && args[0] !== 'off') terminal.error('usage: .timer on|off');
        else state.timer = args[0] === 'on';
        return true;
      case '.maxrows': {
        const n = Number(args[0]);
        if (!(n >= 2)) terminal.error('usage: .maxrows <n> (at least 2; the table format shows the first and last halves)');
        else state.maxRows = n;
        return true;
      }
      case '.format':
        if (!FORMATS.includes(args[0] as OutputFormat) || args[0] === 'arrow') terminal.error('usage: .format table|json|ndjson|csv');
        else state.format = args[0] as OutputFormat;
        return true;
      default:
        terminal.error(`unknown command ${command} (.help lists them)`);
        return true;
    }
  } catch (e) {
    terminal.error(describeError(e));
    return true;
  }
}
