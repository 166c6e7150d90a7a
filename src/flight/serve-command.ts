/**
 * `quiver serve`: runs the Flight SQL server over a database until SIGINT / SIGTERM.
 *
 * Once listening it prints one line holding the address (`grpc://HOST:PORT`, or `grpc+tls://`),
 * so scripts can wait for it, then how to connect. On SIGINT / SIGTERM it stops accepting calls,
 * lets running ones finish (up to --grace seconds, then cancels them), closes the database
 * (flushing MemTables and releasing the writers: nothing acknowledged needs a replay after a
 * clean stop) and exits 0. A second signal exits at once.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connect, type ConnectOptions } from '../database.js';
import { FlightSqlServer } from './server.js';

export const SERVE_USAGE = `usage: quiver serve [options]
  --data <dir | s3://bucket/prefix>   database location (default ./quiver-data)
  --host <address>                    interface to listen on (default 127.0.0.1)
  --port <n>                          port (default 50051; 0 picks a free one)
  --user <name> --password <secret>   require these credentials (Basic, or a bearer token from Handshake)
  --token-ttl <seconds>               lifetime of bearer tokens (default 43200)
  --tls-cert <file> --tls-key <file>  serve over TLS (PEM files)
  --max-message-mb <n>                largest request message accepted (default 64)
  --grace <seconds>                   on SIGINT/SIGTERM, time given to running calls (default 10)
  --s3-endpoint, --s3-region, --s3-access-key, --s3-secret-key
                                      S3 settings (default: QUIVER_S3_ENDPOINT, QUIVER_S3_REGION,
                                      QUIVER_S3_ACCESS_KEY, QUIVER_S3_SECRET_KEY)
  -h, --help                          this help`;

export class ServeUsageError extends Error {}

/** Runs `quiver serve`; resolves with the exit code once stopped (2 for a usage error). */
export async function runServe(argv: string[], out: (line: string) => void = (l) => console.log(l)): Promise<number> {
  try {
    return await serve(argv, out);
  } catch (e) {
    if (e instanceof ServeUsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`quiver serve: ${(e as Error).message}\n${SERVE_USAGE}`);
      return 2;
    }
    throw e;
  }
}

async function serve(argv: string[], out: (line: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: 'string', default: './quiver-data' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '50051' },
      user: { type: 'string' },
      password: { type: 'string' },
      'token-ttl': { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'max-message-mb': { type: 'string' },
      grace: { type: 'string', default: '10' },
      's3-endpoint': { type: 'string' },
      's3-region': { type: 'string' },
      's3-access-key': { type: 'string' },
      's3-secret-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    out(SERVE_USAGE);
    return 0;
  }
  if (positionals.length) throw new ServeUsageError(`serve takes no arguments, got ${positionals.join(' ')}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ServeUsageError(`--port must be 0..65535, got ${values.port}`);
  if ((values.user === undefined) !== (values.password === undefined)) throw new ServeUsageError('--user and --password go together');
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) throw new ServeUsageError('--tls-cert and --tls-key go together');
  const ttl = values['token-ttl'] === undefined ? undefined : Number(values['token-ttl']);
  if (ttl !== undefined && !(ttl > 0)) throw new ServeUsageError(`--token-ttl must be a positive number of seconds`);
  const maxMb = values['max-message-mb'] === undefined ? undefined : Number(values['max-message-mb']);
  if (maxMb !== undefined && !(maxMb > 0)) throw new ServeUsageError('--max-message-mb must be positive');
  const grace = Number(values.grace);
  if (!(grace >= 0)) throw new ServeUsageError('--grace must be a number of seconds >= 0');

  const data = values.data!;
  const db = await connect(data, s3Options(values));
  const server = new FlightSqlServer(db, {
    host: values.host,
    port,
    auth: values.user !== undefined ? { users: { [values.user]: values.password! }, tokenTtlMs: ttl === undefined ? undefined : ttl * 1000 } : undefined,
    tls: values['tls-cert'] ? { cert: readFileSync(values['tls-cert']), key: readFileSync(values['tls-key']!) } : undefined,
    maxMessageBytes: maxMb === undefined ? undefined : Math.floor(maxMb * 1024 * 1024),
  });
  let address;
  try {
    address = await server.listen();
  } catch (e) {
    await db.close().catch(() => {});
    throw e;
  }
  out(`Quiver Flight SQL server listening on ${address.url}`);
  out(`  data: ${data}${values.user !== undefined ? `; authentication: user ${values.user}` : '; no authentication'}`);
  out(`  connect: pyarrow.flight.connect("${address.url}"), @influxdata/influxdb3-client with host ${address.url.replace(/^grpc\+tls:/, 'https:').replace(/^grpc:/, 'http:')}, or any Flight SQL client`);
  out('  stop with Ctrl-C (SIGINT) or SIGTERM');

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        out(`quiver serve: ${signal} again, exiting now`);
        process.exit(1);
      }
      stopping = true;
      out(`quiver serve: ${signal}, stopping`);
      (async () => {
        await server.close(grace * 1000);
        await db.close();
      })().then(
        () => {
          out('quiver serve: stopped; MemTables flushed');
          resolve(0);
        },
        (e) => {
          console.error(`quiver serve: error while stopping: ${(e as Error).message}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
}

function s3Options(values: Record<string, string | boolean | undefined>): ConnectOptions {
  const e = process.env;
  const endpoint = (values['s3-endpoint'] as string | undefined) ?? e.QUIVER_S3_ENDPOINT;
  const accessKeyId = (values['s3-access-key'] as string | undefined) ?? e.QUIVER_S3_ACCESS_KEY;
  const secretAccessKey = (values['s3-secret-key'] as string | undefined) ?? e.QUIVER_S3_SECRET_KEY;
  const region = (values['s3-region'] as string | undefined) ?? e.QUIVER_S3_REGION;
  if (!endpoint && !accessKeyId && !region) return {};
  return { s3: { endpoint, region: region ?? 'us-east-1', accessKeyId, secretAccessKey, forcePathStyle: endpoint ? true : undefined } };
}
