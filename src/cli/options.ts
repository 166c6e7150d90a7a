/**
 * Options shared by the verbs: where to connect (`--data` embedded, or `--connect` a Flight SQL
 * server with `--user/--password`), S3 settings from the environment, `--param` values, and the
 * usage error that exits with code 2.
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { ConnectOptions } from '../database.js';
import { EmbeddedSession, type Session } from './session.js';

/** Bad usage: exit code 2. */
export class UsageError extends Error {}

export interface ConnectionFlags {
  data: string;
  connect?: string;
  user?: string;
  password?: string;
  tlsCa?: string;
}

export function addConnectionOptions(cmd: Command, { remote = true } = {}): Command {
  cmd.option('--data <dir | s3://bucket/prefix>', 'database location (embedded)', './quiver-data');
  if (remote) {
    cmd
      .option('--connect <grpc://host:port>', 'a Flight SQL server instead (grpc:// or grpc+tls://)')
      .option('--user <name>', 'user name for --connect')
      .option('--password <secret>', 'password for --connect (or QUIVER_PASSWORD)')
      .addOption(new Option('--tls-ca <file>', 'PEM certificate(s) to trust for grpc+tls:// (default: the system roots)'));
  }
  return cmd;
}

/** S3 settings: QUIVER_S3_ENDPOINT, QUIVER_S3_REGION, QUIVER_S3_ACCESS_KEY, QUIVER_S3_SECRET_KEY. */
export function connectOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ConnectOptions {
  if (!env.QUIVER_S3_ENDPOINT && !env.QUIVER_S3_ACCESS_KEY) return {};
  return {
    s3: {
      endpoint: env.QUIVER_S3_ENDPOINT,
      region: env.QUIVER_S3_REGION ?? 'us-east-1',
      accessKeyId: env.QUIVER_S3_ACCESS_KEY,
      secretAccessKey: env.QUIVER_S3_SECRET_KEY,
      forcePathStyle: env.QUIVER_S3_ENDPOINT ? true : undefined,
    },
  };
}

/** Opens the session the flags name; `--connect` wins over `--data`. */
export async function openSession(flags: ConnectionFlags, extra: ConnectOptions = {}): Promise<Session> {
  if (flags.connect) {
    const url = flags.connect;
    if (!/^grpc(\+tls|\+tcp)?:\/\/[^/]+/.test(url)) throw new UsageError(`--connect takes grpc://host:port or grpc+tls://host:port, got ${url}`);
    const password = flags.password ?? process.env.QUIVER_PASSWORD;
    if ((flags.user === undefined) !== (password === undefined)) throw new UsageError('--user and --password go together');
    const { RemoteSession } = await import('./remote-session.js');
    return RemoteSession.open(url, {
      user: flags.user,
      password,
      rootCerts: flags.tlsCa ? readFileSync(flags.tlsCa) : undefined,
    });
  }
  return EmbeddedSession.open(flags.data, { ...connectOptionsFromEnv(), ...extra });
}

/**
 * A `--param` value: JSON when it parses as JSON (`42`, `1.5`, `true`, `null`, `"42"` for the
 * text 42, `[0.1, 0.2]` for a vector), integers beyond 2^53 as exact bigints, anything else the
 * text as given (`--param hello`).
 */
export function parseParam(text: string): unknown {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) {
    const n = Number(t);
    return Number.isSafeInteger(n) ? n : BigInt(t);
  }
  try {
    const v = JSON.parse(t) as unknown;
    if (Array.isArray(v)) return v.every((x) => typeof x === 'number') ? v : text;
    return v;
  } catch {
    return text;
  }
}

export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
