import type { Session } from './session.js';
export class RemoteSession {
  static async open(_url: string, _o: { user?: string; password?: string; rootCerts?: Buffer }): Promise<Session> {
    throw new Error('not yet');
  }
}
