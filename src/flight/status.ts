/**
 * Errors on the wire: every failure a handler sees becomes a gRPC status with a code a client
 * can act on and a one-line message; never a stack trace (DESIGN.md, Flight SQL surface).
 *
 *   invalid -> INVALID_ARGUMENT   not_found -> NOT_FOUND     already_exists -> ALREADY_EXISTS
 *   unavailable -> UNAVAILABLE    cancelled -> CANCELLED     (no / bad credentials) -> UNAUTHENTICATED
 *   anything else (storage, fenced, closed, data, internal, a bug) -> INTERNAL
 */
import { Metadata, status as Status, type ServiceError } from '@grpc/grpc-js';
import { isQuiverError, type ErrorKind } from '../errors.js';

/** An error that already knows its gRPC code (raised by the Flight layer itself). */
export class FlightError extends Error {
  constructor(
    readonly code: Status,
    message: string,
  ) {
    super(message);
    this.name = 'FlightError';
  }
}

export const unauthenticated = (message: string) => new FlightError(Status.UNAUTHENTICATED, message);
export const unimplemented = (message: string) => new FlightError(Status.UNIMPLEMENTED, message);
export const invalidArgument = (message: string) => new FlightError(Status.INVALID_ARGUMENT, message);
export const notFound = (message: string) => new FlightError(Status.NOT_FOUND, message);
export const cancelled = (message: string) => new FlightError(Status.CANCELLED, message);
export const resourceExhausted = (message: string) => new FlightError(Status.RESOURCE_EXHAUSTED, message);

const KIND_CODES: Partial<Record<ErrorKind, Status>> = {
  invalid: Status.INVALID_ARGUMENT,
  not_found: Status.NOT_FOUND,
  already_exists: Status.ALREADY_EXISTS,
  unavailable: Status.UNAVAILABLE,
  cancelled: Status.CANCELLED,
  unauthenticated: Status.UNAUTHENTICATED,
};

/** Longest message sent to a client (a huge SQL echo in an error stays bounded). */
const MAX_MESSAGE = 4000;

/** The gRPC status for any thrown value. `log` receives the failures that are not the client's fault. */
export function toServiceError(e: unknown, log?: (message: string, error: unknown) => void): Partial<ServiceError> {
  let code: Status;
  let message: string;
  if (e instanceof FlightError) {
    code = e.code;
    message = e.message;
  } else if (isQuiverError(e)) {
    code = KIND_CODES[e.kind] ?? Status.INTERNAL;
    message = e.message ?? e.kind;
    if (code === Status.INTERNAL) message = `${e.kind} error: ${message}`;
  } else if (typeof (e as { code?: unknown })?.code === 'number' && (e as { details?: unknown }).details !== undefined) {
    // Already a gRPC status (e.g. a cancelled call's error).
    code = (e as { code: Status }).code;
    message = String((e as { details: unknown }).details);
  } else {
    code = Status.INTERNAL;
    message = `internal error: ${(e as Error)?.message ?? String(e)}`;
  }
  if (code === Status.INTERNAL) log?.(message, e);
  if (message.length > MAX_MESSAGE) message = `${message.slice(0, MAX_MESSAGE)}…`;
  // The message only: a SQL error's caret display may span lines, a stack trace never goes out.
  return { code, details: message, message, metadata: new Metadata() };
}
