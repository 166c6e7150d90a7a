/**
 * Server-side state behind opaque handles: query tickets (issued by GetFlightInfo, redeemed by
 * DoGet) and prepared statements (created by an action, bound by DoPut, executed through
 * GetFlightInfo, closed by an action).
 *
 * Both are bound to the user they were issued to, so a ticket is not a bearer capability: with
 * authentication on, DoGet of another user's ticket is UNAUTHENTICATED. Both expire when unused
 * (clients that never close a statement do not grow the server), and both are capped in number.
 *
 * Binding parameters returns a *new* prepared-statement handle that holds the bound values
 * (DoPutPreparedStatementResult), so two clients executing one statement with different values
 * cannot mix them up (spiceai#5420); the original handle is updated as well, for clients that
 * ignore the reply. A query ticket snapshots the statement and its values when it is issued.
 */
import { randomBytes } from 'node:crypto';
import type { Schema } from 'apache-arrow';
import type { Principal } from './auth.js';
import type { ParamValue } from './params.js';
import { notFound, unauthenticated } from './status.js';

export interface QueryTicket {
  readonly id: string;
  readonly owner: string | null;
  readonly sql: string;
  /** One or more parameter sets; each runs and their results are concatenated. */
  readonly paramSets: readonly (readonly ParamValue[])[];
  expiresAt: number;
  cancelled: boolean;
  /** DoGet calls streaming this ticket right now (CancelFlightInfo aborts them). */
  readonly running: Set<AbortController>;
}

export interface PreparedStatement {
  readonly id: string;
  readonly owner: string | null;
  readonly sql: string;
  readonly isUpdate: boolean;
  readonly parameterCount: number;
  /** The planned result schema, when it could be planned without parameter values. */
  readonly datasetSchema: Schema | null;
  /** Bound parameter sets (null = nothing bound yet). */
  paramSets: (readonly ParamValue[])[] | null;
  /** Handles derived from this one by binding (closed with it). */
  readonly derived: Set<string>;
  readonly parent: string | null;
  expiresAt: number;
}

export interface StatementStoreOptions {
  /** An unredeemed ticket expires after this (default 10 minutes). */
  readonly ticketTtlMs?: number;
  /** An unused prepared statement expires after this (default 1 hour). */
  readonly statementTtlMs?: number;
  readonly maxTickets?: number;
  readonly maxStatements?: number;
  readonly now?: () => number;
}

const newId = () => randomBytes(16).toString('hex');

export class StatementStore {
  private readonly tickets = new Map<string, QueryTicket>();
  private readonly statements = new Map<string, PreparedStatement>();
  private readonly ticketTtl: number;
  private readonly statementTtl: number;
  private readonly maxTickets: number;
  private readonly maxStatements: number;
  private readonly now: () => number;

  constructor(options: StatementStoreOptions = {}) {
    this.ticketTtl = options.ticketTtlMs ?? 10 * 60_000;
    this.statementTtl = options.statementTtlMs ?? 60 * 60_000;
    this.maxTickets = options.maxTickets ?? 100_000;
    this.maxStatements = options.maxStatements ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  get ticketTtlMs(): number {
    return this.ticketTtl;
  }

  issueTicket(owner: Principal, sql: string, paramSets: readonly (readonly ParamValue[])[]): QueryTicket {
    if (this.tickets.size >= this.maxTickets) this.sweep();
    evictOldest(this.tickets, this.maxTickets);
    const t: QueryTicket = { id: newId(), owner: owner.user, sql, paramSets, expiresAt: this.now() + this.ticketTtl, cancelled: false, running: new Set() };
    this.tickets.set(t.id, t);
    return t;
  }

  /** The ticket, checked against its owner; redeeming it extends its life. */
  ticket(id: string, caller: Principal): QueryTicket {
    const t = this.tickets.get(id);
    if (!t || (t.expiresAt <= this.now() && t.running.size === 0)) {
      this.tickets.delete(id);
      throw notFound('ticket not found or expired: call GetFlightInfo again');
    }
    checkOwner(t.owner, caller, 'ticket');
    t.expiresAt = this.now() + this.ticketTtl;
    return t;
  }

  /** Extends a ticket's life (RenewFlightEndpoint). */
  renew(id: string, caller: Principal): QueryTicket {
    return this.ticket(id, caller);
  }

  createStatement(owner: Principal, init: Pick<PreparedStatement, 'sql' | 'isUpdate' | 'parameterCount' | 'datasetSchema'>, parent?: PreparedStatement): PreparedStatement {
    if (this.statements.size >= this.maxStatements) this.sweep();
    evictOldest(this.statements, this.maxStatements);
    const s: PreparedStatement = {
      ...init,
      id: newId(),
      owner: owner.user,
      paramSets: null,
      derived: new Set(),
      parent: parent?.id ?? null,
      expiresAt: this.now() + this.statementTtl,
    };
    this.statements.set(s.id, s);
    parent?.derived.add(s.id);
    return s;
  }

  statement(id: string, caller: Principal): PreparedStatement {
    const s = this.statements.get(id);
    if (!s || s.expiresAt <= this.now()) {
      if (s) this.closeStatement(s);
      throw notFound('prepared statement not found (closed or expired): prepare it again');
    }
    checkOwner(s.owner, caller, 'prepared statement');
    s.expiresAt = this.now() + this.statementTtl;
    return s;
  }

  /** Binds parameter sets: a new handle holding them; the statement itself is rebound too. */
  bind(s: PreparedStatement, caller: Principal, paramSets: (readonly ParamValue[])[]): PreparedStatement {
    s.paramSets = paramSets;
    const root = s.parent ? (this.statements.get(s.parent) ?? s) : s;
    const bound = this.createStatement(caller, s, root);
    bound.paramSets = paramSets;
    return bound;
  }

  closeStatement(s: PreparedStatement): void {
    this.statements.delete(s.id);
    for (const d of s.derived) this.statements.delete(d);
    if (s.parent) this.statements.get(s.parent)?.derived.delete(s.id);
  }

  /** Drops expired entries (called when full, and periodically by the server). */
  sweep(): void {
    const now = this.now();
    for (const [id, t] of this.tickets) if (t.expiresAt <= now && t.running.size === 0) this.tickets.delete(id);
    for (const s of [...this.statements.values()]) if (s.expiresAt <= now) this.closeStatement(s);
  }

  /** Aborts every running DoGet (server shutdown). */
  abortAll(): void {
    for (const t of this.tickets.values()) for (const c of t.running) c.abort();
  }

  get sizes(): { tickets: number; statements: number } {
    return { tickets: this.tickets.size, statements: this.statements.size };
  }
}

function checkOwner(owner: string | null, caller: Principal, what: string): void {
  if (owner !== caller.user) throw unauthenticated(`this ${what} was issued to another user`);
}

function evictOldest<V>(map: Map<string, V>, max: number): void {
  while (map.size >= max) {
    const first = map.keys().next();
    if (first.done) return;
    map.delete(first.value);
  }
}
