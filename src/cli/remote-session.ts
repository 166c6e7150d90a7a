/**
 * `--connect grpc://host:port`: a session over a Flight SQL server. Not written yet (issue 10
 * leaves it open): the Flight SQL client (src/flight/client.ts) it needs does not exist, so the
 * option fails with a clear error instead of pretending.
 */
import { InvalidError } from '../errors.js';
import type { Session } from './session.js';

export interface RemoteOptions {
  user?: string;
  password?: string;
  rootCerts?: Buffer;
}

export class RemoteSession {
  static async open(url: string, _options: RemoteOptions): Promise<Session> {
    throw new InvalidError(`--connect ${url}: the Flight SQL client is not implemented yet; use --data <dir> (embedded) for now`);
  }
}
