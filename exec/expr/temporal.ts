/**
 * Calendar arithmetic for DATE and TIMESTAMP literals, shared by the filter evaluator and the
 * scalar index so that both turn `'2024-01-31'` into exactly the same stored value.
 *
 * Every temporal value is first brought to one exact scale — nanoseconds since the Unix epoch as
 * a bigint — and only then to a column's storage unit (days for Date32, milliseconds for Date64,
 * the Timestamp's unit). A literal finer than the unit (a TIMESTAMP with seconds compared with a
 * Date32 column, microseconds against a Timestamp(ms)) is not rounded silently: callers get the
 * exact rational and decide per operator (see `exactQuotient`).
 *
 * Literals without a UTC offset are read as UTC, which is also how Arrow stores both zoned and
 * zone-less timestamps (as UTC epoch counts).
 */
import { type DataType, DateUnit, Type, TimeUnit } from 'apache-arrow';

export const NANOS_PER_DAY = 86_400_000_000_000n;
const NANOS_PER_MS = 1_000_000n;

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

const DATE_RE = /^\s*(\d{4})-(\d{2})-(\d{2})\s*$/;
const TIMESTAMP_RE =
  /^\s*(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?\s*$/;

/** `YYYY-MM-DD` → days since the epoch; undefined when the text is not a valid date. */
export function parseDate(text: string): number | undefined {
  const m = DATE_RE.exec(text);
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  return daysFromCivil(y, mo, d);
}

/**
 * An ISO-8601 / SQL timestamp → nanoseconds since the epoch; undefined when invalid.
 * Accepts `YYYY-MM-DD`, then optionally `T` or a space, `HH:MM[:SS[.fraction up to 9 digits]]`
 * and an offset `Z`, `+HH`, `+HHMM` or `+HH:MM`. No offset means UTC.
 */
export function parseTimestampNanos(text: string): bigint | undefined {
  const m = TIMESTAMP_RE.exec(text);
  if (!m) return undefined;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return undefined;
  const hh = m[4] === undefined ? 0 : Number(m[4]);
  const mi = m[5] === undefined ? 0 : Number(m[5]);
  const ss = m[6] === undefined ? 0 : Number(m[6]);
  if (hh > 23 || mi > 59 || ss > 59) return undefined;
  const frac = m[7] === undefined ? 0n : BigInt(m[7].padEnd(9, '0'));
  let offsetMinutes = 0;
  const tz = m[8];
  if (tz !== undefined && tz !== 'Z' && tz !== 'z') {
    const sign = tz[0] === '-' ? -1 : 1;
    const digits = tz.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = sign * (oh * 60 + om);
  }
  const seconds = daysFromCivil(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss - offsetMinutes * 60;
  return BigInt(seconds) * 1_000_000_000n + frac;
}

/** A JS Date → nanoseconds since the epoch (millisecond precision). */
export function dateObjectNanos(d: Date): bigint | undefined {
  const ms = d.getTime();
  return Number.isFinite(ms) ? BigInt(ms) * NANOS_PER_MS : undefined;
}

/** Nanoseconds in one stored unit of a Date32 / Date64 / Timestamp type; undefined otherwise. */
export function temporalUnitNanos(type: DataType): bigint | undefined {
  switch (type.typeId) {
    case Type.Date:
      return (type as unknown as { unit: DateUnit }).unit === DateUnit.DAY ? NANOS_PER_DAY : NANOS_PER_MS;
    case Type.Timestamp:
      switch ((type as unknown as { unit: TimeUnit }).unit) {
        case TimeUnit.SECOND:
          return 1_000_000_000n;
        case TimeUnit.MILLISECOND:
          return NANOS_PER_MS;
        case TimeUnit.MICROSECOND:
          return 1_000n;
        case TimeUnit.NANOSECOND:
          return 1n;
      }
  }
  return undefined;
}

/**
 * `numerator / denominator` as floor plus an exactness flag (floor division, also for negative
 * numerators: -1.5 days has floor -2).
 */
export function exactQuotient(numerator: bigint, denominator: bigint): { floor: bigint; exact: boolean } {
  let q = numerator / denominator;
  const r = numerator % denominator;
  if (r !== 0n && (r < 0n) !== (denominator < 0n)) q -= 1n;
  return { floor: q, exact: r === 0n };
}
