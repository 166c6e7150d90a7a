/**
 * The `quiver` command line.
 *
 *   quiver demo   [--data <dir | s3://bucket/prefix>]   write, reopen and scan a demo table
 *   quiver tables [--data ...]                          list tables
 *   quiver scan <table> [--data ...] [--format table|json|ndjson|csv] [--limit N] [--columns a,b]
 *   quiver serve  [--data ...] [--host] [--port] [--user --password] [--tls-cert --tls-key]
 *                                                       run the Flight SQL server (src/flight/serve-command.ts)
 *
 * S3 settings come from the environment: QUIVER_S3_ENDPOINT, QUIVER_S3_REGION,
 * QUIVER_S3_ACCESS_KEY, QUIVER_S3_SECRET_KEY (path-style addressing when an endpoint is set).
 */
import { parseArgs } from 'node:util';
import type { RecordBatch } from 'apache-arrow';
import { connect, type ConnectOptions, isQuiverError } from './quiver.js';
import { runDemo } from './demo.js';
import { formatRows, type OutputFormat } from './format.js';

const USAGE = `usage:
  quiver demo   [--data <dir | s3://bucket/prefix>]
  quiver tables [--data ...]
  quiver scan <table> [--data ...] [--format table|json|ndjson|csv] [--limit N] [--columns a,b]
  quiver serve  [--data ...] [--host] [--port] [--user --password] [--tls-cert --tls-key]  (quiver serve --help)`;

function connectOptions(): ConnectOptions {
  const e = process.env;
  if (!e.QUIVER_S3_ENDPOINT && !e.QUIVER_S3_ACCESS_KEY) return {};
  return {
    s3: {
      endpoint: e.QUIVER_S3_ENDPOINT,
      region: e.QUIVER_S3_REGION ?? 'us-east-1',
      accessKeyId: e.QUIVER_S3_ACCESS_KEY,
      secretAccessKey: e.QUIVER_S3_SECRET_KEY,
      forcePathStyle: e.QUIVER_S3_ENDPOINT ? true : undefined,
    },
  };
}

async function main(argv: string[]): Promise<number> {
  // `serve` parses its own options and reports its own usage errors; loaded only when used.
  if (argv[0] === 'serve') return (await import('./flight/serve-command.js')).runServe(argv.slice(1));
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: 'string', default: './quiver-data' },
      format: { type: 'string', default: 'table' },
      limit: { type: 'string' },
      columns: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  switch (command) {
    case 'demo':
      await runDemo(values.data!, connectOptions(), (line) => console.log(line));
      return 0;
    case 'tables': {
      const db = await connect(values.data, connectOptions());
      try {
        for (const name of await db.tableNames()) console.log(name);
      } finally {
        await db.close();
      }
      return 0;
    }
    case 'scan': {
      if (rest.length !== 1) throw new UsageError('scan needs exactly one table name');
      const format = values.format as OutputFormat;
      if (!['table', 'json', 'ndjson', 'csv'].includes(format)) throw new UsageError(`unknown --format ${format}`);
      const limit = values.limit === undefined ? Infinity : Number(values.limit);
      if (!(limit >= 0)) throw new UsageError(`--limit must be a number >= 0, got ${values.limit}`);
      const db = await connect(values.data, connectOptions());
      try {
        const table = await db.openTable(rest[0]);
        const batches: RecordBatch[] = [];
        let rows = 0;
        for await (const batch of table.scan({ columns: values.columns?.split(',').map((c) => c.trim()) })) {
          if (rows >= limit) break;
          const take = Math.min(batch.numRows, limit - rows);
          batches.push(take === batch.numRows ? batch : batch.slice(0, take));
          rows += take;
        }
        process.stdout.write(formatRows(batches, format));
      } finally {
        await db.close();
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`quiver: ${(e as Error).message}\n${USAGE}`);
      process.exit(2);
    }
    console.error(`quiver: ${isQuiverError(e) ? `${e.name}: ${e.message}` : (e as Error)?.stack ?? String(e)}`);
    process.exit(1);
  },
);
