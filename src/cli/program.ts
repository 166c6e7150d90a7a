/**
 * The `quiver` command's verbs and options (commander): each verb's action lives in its own
 * file; this one wires them, and turns outcomes into exit codes — 0 success, 1 an error (the
 * message on standard error names its kind), 2 bad usage (commander's own errors included).
 */
import { Command, CommanderError, Option } from 'commander';
import { addConnectionOptions, collect, connectOptionsFromEnv, UsageError } from './options.js';
import { FORMATS } from './output.js';
import { describeError } from './errors.js';
import { terminalOutput, type Terminal } from './terminal.js';
import { quiverVersion } from '../util/package-version.js';

const formatOption = (choices: readonly string[] = FORMATS) =>
  new Option('--format <format>', 'output format').choices(choices).default('table');

function buildProgram(terminal: Terminal, setCode: (code: number) => void): Command {
  const program = new Command('quiver')
    .description('Quiver: a streaming, Arrow-native query engine. Run a verb with --help for its options.')
    .version(quiverVersion(), '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s), writeOut: (s) => process.stdout.write(s) });

  addConnectionOptions(
    program
      .command('sql')
      .summary('run SQL: a statement, a script (-f or standard input), or an interactive shell')
      .description(
        'Runs SQL embedded (--data) or against a Flight SQL server (--connect).\n' +
          'With a statement: runs it. With -f file.sql or piped standard input: runs each statement (separated by ;).\n' +
          'With neither, on a terminal: an interactive shell (.help lists its commands).\n' +
          '--param values bind $1, $2, …: JSON when they parse as JSON (42, 1.5, true, null, "text", [0.1,0.2]),\n' +
          'otherwise the text as given; integers beyond 2^53 are exact.',
      )
      .argument('[statement]', 'SQL to run (several separated by ;)')
      .option('-f, --file <file.sql>', 'read statements from a file (- for standard input)')
      .option('-p, --param <value>', 'a parameter ($1, $2, … in order); repeat for more', collect)
      .addOption(formatOption()),
  ).action(async (statement: string | undefined, flags) => {
    setCode(await (await import('./sql.js')).runSql(statement, flags, terminal));
  });

  addConnectionOptions(
    program
      .command('load')
      .summary('load a CSV, NDJSON, Arrow IPC or Parquet file into a table')
      .description(
        'Streams a file into a table in batches: a new table (created with --primary-key and the\n' +
          "file's columns, types inferred or given with --schema) or an existing one (rows upserted by primary key).\n" +
          'Progress goes to standard error (a bar on a terminal, a line every few seconds otherwise), the summary to standard output.',
      )
      .argument('<table>', 'table to load into')
      .argument('<file>', 'input file (- for standard input, with --input-format)')
      .addOption(new Option('--input-format <format>', 'input format (default: from the file extension)').choices(['csv', 'ndjson', 'arrow', 'parquet']))
      .option('--primary-key <columns>', 'primary key of a new table (comma-separated)')
      .option('--schema <columns>', 'column types, e.g. "id BIGINT, body TEXT, embedding FLOAT4[8]" (CSV/NDJSON; default: inferred)')
      .addOption(new Option('--on-error <mode>', 'a bad row: fail the load, or skip and count it').choices(['fail', 'skip']).default('fail'))
      .option('--batch-rows <n>', 'rows per write', '65536')
      .option('--delimiter <char>', 'CSV field delimiter', ',')
      .option('-q, --quiet', 'no progress output'),
  ).action(async (table: string, file: string, flags) => {
    setCode(await (await import('./load.js')).runLoad(table, file, flags, terminal));
  });

  addConnectionOptions(program.command('tables').description('list the tables')).action(async (flags) => {
    setCode(await (await import('./tables.js')).runTables(flags, terminal));
  });

  addConnectionOptions(
    program
      .command('describe')
      .description('columns, types, primary key, indexes, regions and rows per MemTable / generation of a table')
      .argument('<table>')
      .addOption(formatOption(['table', 'json'])),
  ).action(async (table: string, flags) => {
    setCode(await (await import('./describe.js')).runDescribe(table, flags, terminal));
  });

  addConnectionOptions(
    program
      .command('scan')
      .description('print the live rows of a table (Table.scan, no SQL; with --connect a SELECT on the server)')
      .argument('<table>')
      .addOption(formatOption())
      .option('--limit <n>', 'at most this many rows')
      .option('--columns <a,b>', 'only these columns'),
  ).action(async (table: string, flags) => {
    setCode(await (await import('./scan.js')).runScan(table, flags, terminal));
  });

  addConnectionOptions(program.command('demo').description('write, reopen and scan a demo table'), { remote: false }).action(async (flags) => {
    const { runDemo } = await import('../demo.js');
    await runDemo(flags.data, connectOptionsFromEnv(), (line) => console.log(line));
    setCode(0);
  });

  // `quiver serve` is dispatched before this program is built (src/cli.ts); listed here for --help.
  program
    .command('serve')
    .description('run the Flight SQL server (quiver serve --help for its options)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_flags, cmd: Command) => {
      void cmd;
      throw new UsageError('serve is dispatched by the quiver entry point (src/cli.ts)');
    });

  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function runCli(argv: string[], terminal: Terminal = terminalOutput()): Promise<number> {
  let code = 0;
  const program = buildProgram(terminal, (c) => (code = c));
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return 2;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // --help and --version end through here too, with exit code 0.
      return e.exitCode === 0 ? 0 : 2;
    }
    if (e instanceof UsageError) {
      terminal.error(`quiver: ${e.message}`);
      return 2;
    }
    terminal.error(`quiver: ${describeError(e)}`);
    return 1;
  }
}
