/**
 * How the command line reports an error on standard error: `quiver: <kind>: <message>`, the
 * kind being one of Quiver's error kinds (`invalid`, `not_found`, …) so scripts and people can
 * tell a bad statement from a storage outage. An error without a kind is a bug: its stack is
 * printed under the `internal` kind.
 */
import { isQuiverError } from '../errors.js';

export function errorKind(e: unknown): string {
  return isQuiverError(e) ? e.kind : 'internal';
}

export function describeError(e: unknown, context?: string): string {
  const where = context ? ` (${context})` : '';
  if (isQuiverError(e)) return `${e.kind}: ${e.message}${where}`;
  const err = e as Error | undefined;
  return `internal: ${err?.stack ?? String(e)}${where}`;
}
