/**
 * Quiver's public error kinds.
 *
 * Callers mostly need one answer from an error: does retrying help? So there are few kinds,
 * each with a fixed `retryable` flag, and the detail lives in the message (the SlateDB style).
 *
 * - `invalid`        the request is wrong (bad schema, bad SQL, bad argument); retrying the same
 *                    request fails the same way.
 * - `not_found`      a table, column or object does not exist.
 * - `already_exists` a create-if-absent target exists (tables, objects).
 * - `unavailable`    a transient condition (storage hiccup, backpressure timeout); retry later.
 * - `storage`        the storage refused the operation for a reason a retry will not fix:
 *                    permission denied, read-only file system, I/O error, S3 access denied or
 *                    bucket missing. Fix the storage, then retry.
 * - `fenced`         a newer writer owns the region; this writer is finished.
 * - `closed`         the database, table or writer was closed.
 * - `cancelled`      the caller cancelled the query (an aborted signal); nothing was changed.
 * - `unauthenticated` a Flight SQL server refused the credentials (none, wrong, or an expired
 *                    token); retrying with the same ones fails the same way.
 * - `data`           stored data is corrupt or inconsistent.
 * - `internal`       a bug or an unexpected failure.
 *
 * The classes below are Quiver's own, but `isQuiverError` goes by shape, not class: any thrown
 * object with a `kind` from this list (and, if it has one, the matching boolean `retryable`)
 * counts. That is how a custom `ObjectStore` reports "not found" or "try again" without
 * importing these classes (see storage/object-store.ts).
 */
export type ErrorKind =
  | 'invalid'
  | 'not_found'
  | 'already_exists'
  | 'unavailable'
  | 'storage'
  | 'fenced'
  | 'closed'
  | 'cancelled'
  | 'unauthenticated'
  | 'data'
  | 'internal';

export class QuiverError extends Error {
  readonly kind: ErrorKind;
  /** True when the same request may succeed if retried later. */
  readonly retryable: boolean;

  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.retryable = kind === 'unavailable';
    this.name = ERROR_NAMES[kind];
  }
}

const ERROR_NAMES: Record<ErrorKind, string> = {
  invalid: 'InvalidError',
  not_found: 'NotFoundError',
  already_exists: 'AlreadyExistsError',
  unavailable: 'UnavailableError',
  storage: 'StorageError',
  fenced: 'FencedError',
  closed: 'ClosedError',
  cancelled: 'CancelledError',
  unauthenticated: 'UnauthenticatedError',
  data: 'DataError',
  internal: 'InternalError',
};

export class InvalidError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid', message, options);
  }
}
export class NotFoundError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('not_found', message, options);
  }
}
export class AlreadyExistsError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('already_exists', message, options);
  }
}
export class UnavailableError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unavailable', message, options);
  }
}
export class StorageError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('storage', message, options);
  }
}
export class FencedError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('fenced', message, options);
  }
}
export class ClosedError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('closed', message, options);
  }
}
export class CancelledError extends QuiverError {
  constructor(message = 'query cancelled', options?: { cause?: unknown }) {
    super('cancelled', message, options);
  }
}
export class UnauthenticatedError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('unauthenticated', message, options);
  }
}
export class DataError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('data', message, options);
  }
}
export class InternalError extends QuiverError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('internal', message, options);
  }
}

/**
 * The documented error shape `isQuiverError` recognises. A QuiverError has every field; an error
 * from elsewhere (a custom ObjectStore) needs only `kind`, and its retryability follows from it.
 */
export interface QuiverErrorLike {
  readonly kind: ErrorKind;
  readonly retryable?: boolean;
  readonly message?: string;
  readonly name?: string;
}

/** True for a QuiverError, or any object of the documented shape (see the header), of `kind` if given. */
export function isQuiverError(e: unknown, kind?: ErrorKind): e is QuiverErrorLike {
  if (e instanceof QuiverError) return kind === undefined || e.kind === kind;
  if (typeof e !== 'object' || e === null) return false;
  const { kind: k, retryable } = e as { kind?: unknown; retryable?: unknown };
  if (typeof k !== 'string' || !Object.hasOwn(ERROR_NAMES, k)) return false;
  // A `retryable` that contradicts the kind means the object is not following this contract.
  if (retryable !== undefined && retryable !== (k === 'unavailable')) return false;
  return kind === undefined || k === kind;
}

/**
 * The same failure as a QuiverError: itself when it is one, a QuiverError of its kind when it has
 * the documented shape (a custom store's error), `internal` otherwise — never a guessed
 * `unavailable`, which would make callers retry a permanent failure.
 */
export function toQuiverError(e: unknown, what: string): QuiverError {
  if (e instanceof QuiverError) return e;
  const message = `${what}: ${(e as Error)?.message ?? String(e)}`;
  if (isQuiverError(e)) return new QuiverError(e.kind, message, { cause: e });
  return new InternalError(message, { cause: e });
}
