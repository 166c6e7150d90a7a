/**
 * The `quiver` command line.
 *
 *   quiver sql      [--data … | --connect grpc://host:port] ["<SQL>" | -f file.sql] [--format …]
 *                                                       run SQL; an interactive shell on a terminal
 *   quiver load     <table> <file> [--primary-key col]  load CSV, NDJSON, Arrow IPC or Parquet
 *   quiver tables   [--data …]                          list tables
 *   quiver describe <table>                             columns, keys, indexes, regions
 *   quiver scan     <table> [--format …] [--limit N]    print a table's rows
 *   quiver demo     [--data <dir | s3://bucket/prefix>] write, reopen and scan a demo table
 *   quiver serve  [--data ...] [--host] [--port] [--user --password] [--tls-cert --tls-key]
 *                                                       run the Flight SQL server (src/flight/serve-command.ts)
 *
 * The verbs live in src/cli/ (program.ts wires them). S3 settings come from the environment:
 * QUIVER_S3_ENDPOINT, QUIVER_S3_REGION, QUIVER_S3_ACCESS_KEY, QUIVER_S3_SECRET_KEY (path-style
 * addressing when an endpoint is set).
 */
import { runCli } from './cli/program.js';

async function main(argv: string[]): Promise<number> {
  // `serve` parses its own options and reports its own usage errors; loaded only when used.
  if (argv[0] === 'serve') return (await import('./flight/serve-command.js')).runServe(argv.slice(1));
  return runCli(argv);
}

// A reader that stops early (`| head`) closes the pipe: that ends the command, quietly.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Let standard output drain before leaving; a server (serve) or a shell has closed itself.
    process.stdout.write('', () => process.exit(code));
  },
  (e) => {
    console.error(`quiver: internal: ${(e as Error)?.stack ?? String(e)}`);
    process.exit(1);
  },
);
