/**
 * Authentication for the Flight SQL server (flight-sql.md §8).
 *
 * With users configured, every call must carry credentials, in any of the forms real clients
 * send: `authorization: Bearer <token>` (a token from Handshake), `authorization: Basic
 * base64(user:password)` on any call (clients that never keep a token), or the older
 * `auth-token-bin` header. Tokens are random, expire after `tokenTtlMs`, and name the user they
 * were issued to; tickets and prepared statements are bound to that user (server.ts), so a
 * valid token of one user cannot redeem another user's ticket.
 *
 * Without users, every call is accepted, and Handshake still answers with a token because some
 * clients always perform one and insist on reading a token back.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { unauthenticated } from './status.js';

export interface AuthOptions {
  /** user name -> password. */
  readonly users: Readonly<Record<string, string>>;
  /** Lifetime of a bearer token issued by Handshake (default 12 hours). */
  readonly tokenTtlMs?: number;
  /** Clock (tests). */
  readonly now?: () => number;
}

/** Who is calling: a user name, or null when authentication is off. */
export interface Principal {
  readonly user: string | null;
}

export const ANONYMOUS: Principal = Object.freeze({ user: null });

export const DEFAULT_TOKEN_TTL_MS = 12 * 60 * 60 * 1000;
/** Tokens kept at most; the oldest are dropped beyond this (a client that logs in per call). */
const MAX_TOKENS = 100_000;

interface TokenEntry {
  readonly user: string;
  readonly expiresAt: number;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export class Authenticator {
  private readonly users = new Map<string, Buffer>();
  private readonly tokens = new Map<string, TokenEntry>();
  private readonly ttl: number;
  private readonly now: () => number;

  constructor(options?: AuthOptions) {
    for (const [user, password] of Object.entries(options?.users ?? {})) this.users.set(user, digest(password));
    this.ttl = options?.tokenTtlMs ?? DEFAULT_TOKEN_TTL_MS;
    this.now = options?.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.users.size > 0;
  }

  /** Checks a user and password; throws UNAUTHENTICATED when they do not match. */
  checkPassword(user: string, password: string): Principal {
    const expected = this.users.get(user);
    // Compare digests in constant time; an unknown user costs the same as a wrong password.
    const ok = timingSafeEqual(expected ?? digest('\0no such user\0'), digest(password)) && expected !== undefined;
    if (!ok) throw unauthenticated('invalid user name or password');
    return { user };
  }

  /** A new bearer token for a principal (a throwaway one when authentication is off). */
  issueToken(principal: Principal): { token: string; expiresAt: number } {
    const token = randomBytes(24).toString('base64url');
    const expiresAt = this.now() + this.ttl;
    if (principal.user !== null) {
      if (this.tokens.size >= MAX_TOKENS) this.sweep(true);
      this.tokens.set(token, { user: principal.user, expiresAt });
    }
    return { token, expiresAt };
  }

  /** The caller of an RPC, from its headers; throws UNAUTHENTICATED when authentication is on and they do not prove a user. */
  authenticate(metadata: Metadata): Principal {
    if (!this.enabled) return ANONYMOUS;
    const creds = credentialsOf(metadata);
    if (creds.kind === 'basic') return this.checkPassword(creds.user, creds.password);
    if (creds.kind === 'token') return this.checkToken(creds.token);
    throw unauthenticated(creds.kind === 'malformed' ? creds.reason : 'no credentials: send authorization: Bearer <token> (from Handshake) or Basic');
  }

  checkToken(token: string): Principal {
    const entry = this.tokens.get(token);
    if (!entry) throw unauthenticated('invalid bearer token');
    if (entry.expiresAt <= this.now()) {
      this.tokens.delete(token);
      throw unauthenticated('bearer token expired: authenticate again');
    }
    return { user: entry.user };
  }

  /** Drops expired tokens (and, when `force`, the oldest tenth). */
  sweep(force = false): void {
    const now = this.now();
    for (const [t, e] of this.tokens) if (e.expiresAt <= now) this.tokens.delete(t);
    if (force && this.tokens.size >= MAX_TOKENS) {
      let drop = Math.ceil(MAX_TOKENS / 10);
      for (const t of this.tokens.keys()) {
        if (drop-- <= 0) break;
        this.tokens.delete(t);
      }
    }
  }
}

export type Credentials =
  | { kind: 'none' }
  | { kind: 'basic'; user: string; password: string }
  | { kind: 'token'; token: string }
  | { kind: 'malformed'; reason: string };

/** The credentials carried by a call's headers. */
export function credentialsOf(metadata: Metadata): Credentials {
  const auth = metadata.get('authorization')[0];
  if (typeof auth === 'string' && auth.length > 0) {
    const space = auth.indexOf(' ');
    const scheme = (space < 0 ? auth : auth.slice(0, space)).toLowerCase();
    const value = space < 0 ? '' : auth.slice(space + 1).trim();
    if (scheme === 'bearer') return value ? { kind: 'token', token: value } : { kind: 'malformed', reason: 'empty bearer token' };
    if (scheme === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return { kind: 'malformed', reason: 'malformed Basic credentials (expected base64 of user:password)' };
      return { kind: 'basic', user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    }
    return { kind: 'malformed', reason: `unsupported authorization scheme ${scheme}` };
  }
  const legacy = metadata.get('auth-token-bin')[0];
  if (legacy !== undefined && legacy.length > 0) return { kind: 'token', token: Buffer.isBuffer(legacy) ? legacy.toString('utf8') : legacy };
  return { kind: 'none' };
}
