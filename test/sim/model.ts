/**
 * The model a simulated history is checked against.
 *
 * The workload never has two operations on one key in flight at once, so each key's operations
 * form a sequence (op i+1 is issued after op i settled). Each op ends acknowledged, failed
 * (outcome unknown: it may or may not be stored) or unknown (its process died). Then for a
 * read that began at time T, the value it shows for a key must come from an op no older than the
 * last op acknowledged before T: acknowledged writes are never lost, and an op whose outcome is
 * unknown may show up but never over a newer acknowledged one. A delete shows as "absent".
 */

export type Outcome = 'pending' | 'acked' | 'failed' | 'unknown';

export interface KeyOp {
  kind: 'put' | 'delete';
  /** Unique across the schedule (the value written to the row). */
  version: number;
  outcome: Outcome;
  /** Simulation step at which the ack arrived. */
  ackedAt?: number;
}

/** What a read showed: key -> version, absent keys omitted. */
export type Observation = Map<number, number>;

export class Model {
  readonly ops = new Map<number, KeyOp[]>();
  private readonly inFlight = new Set<number>();
  private readonly byVersion = new Map<number, { key: number; index: number }>();

  isBusy(key: number): boolean {
    return this.inFlight.has(key);
  }

  begin(key: number, kind: 'put' | 'delete', version: number): KeyOp {
    if (this.inFlight.has(key)) throw new Error(`model: key ${key} already has an op in flight`);
    let list = this.ops.get(key);
    if (!list) this.ops.set(key, (list = []));
    const op: KeyOp = { kind, version, outcome: 'pending' };
    this.byVersion.set(version, { key, index: list.length });
    list.push(op);
    this.inFlight.add(key);
    return op;
  }

  settle(key: number, op: KeyOp, outcome: Exclude<Outcome, 'pending'>, at: number): void {
    if (op.outcome !== 'pending') return;
    op.outcome = outcome;
    if (outcome === 'acked') op.ackedAt = at;
    this.inFlight.delete(key);
  }

  /**
   * Checks one read that began at step `startedAt` (Infinity-like for a final read: every ack
   * counts). Returns problems found, empty when the read is consistent with the model.
   */
  checkRead(obs: Observation, startedAt: number, who: string): string[] {
    const problems: string[] = [];
    for (const [key, version] of obs) {
      const where = this.byVersion.get(version);
      if (!where || where.key !== key) problems.push(`${who}: key ${key} shows version ${version}, which was never written to it`);
      else if (this.ops.get(key)![where.index].kind !== 'put') problems.push(`${who}: key ${key} shows the version of a delete`);
    }
    for (const [key, list] of this.ops) {
      let last = -1;
      for (let i = 0; i < list.length; i++) if (list[i].outcome === 'acked' && list[i].ackedAt! < startedAt) last = i;
      const shown = obs.get(key);
      const index = shown === undefined ? undefined : this.byVersion.get(shown)?.index;
      if (shown === undefined) {
        if (last >= 0 && list[last].kind === 'put' && !list.slice(last + 1).some((o) => o.kind === 'delete')) {
          problems.push(`${who}: key ${key} is missing; version ${list[last].version} was acknowledged before the read began`);
        }
      } else if (index !== undefined && index < last) {
        problems.push(`${who}: key ${key} shows version ${shown} (op ${index}, ${list[index].outcome}) over version ${list[last].version} (op ${last}), acknowledged before the read began`);
      }
    }
    return problems;
  }

  /** Index of the op whose version a read showed, for monotonic-read checks. */
  indexOf(version: number): number | undefined {
    return this.byVersion.get(version)?.index;
  }

  /** Whether key has a delete op after `index` (a later read may then show it absent). */
  deletedAfter(key: number, index: number): boolean {
    return (this.ops.get(key) ?? []).slice(index + 1).some((o) => o.kind === 'delete');
  }

  /** Marks every op of a dead process unknown and frees its keys. */
  abandon(entries: Iterable<{ key: number; op: KeyOp }>): void {
    for (const { key, op } of entries) if (op.outcome === 'pending') this.settle(key, op, 'unknown', 0);
  }

  summary(): { acked: number; failed: number; unknown: number } {
    let acked = 0;
    let failed = 0;
    let unknown = 0;
    for (const list of this.ops.values()) {
      for (const op of list) {
        if (op.outcome === 'acked') acked++;
        else if (op.outcome === 'failed') failed++;
        else unknown++;
      }
    }
    return { acked, failed, unknown };
  }
}

/**
 * Tracks what one reader has seen, to check that its reads never go back in time: a read that
 * begins after another read of the same reader completed never shows an older version of a key.
 * (Overlapping reads may complete in either order.)
 */
export class MonotonicReader {
  /** key -> index of the newest op a completed read showed (-1: a read showed it absent). */
  private readonly seen = new Map<number, number>();

  constructor(
    private readonly model: Model,
    readonly name: string,
  ) {}

  /** What the reader had seen when a read began: the read is checked against this. */
  begin(): Map<number, number> {
    return new Map(this.seen);
  }

  check(obs: Observation, baseline: Map<number, number>): string[] {
    const problems: string[] = [];
    for (const [key, beforeIndex] of baseline) {
      if (beforeIndex < 0) continue;
      const now = obs.get(key);
      if (now === undefined) {
        if (!this.model.deletedAfter(key, beforeIndex)) problems.push(`${this.name}: key ${key} vanished after a read showed op ${beforeIndex}`);
      } else if (this.model.indexOf(now)! < beforeIndex) {
        problems.push(`${this.name}: key ${key} went back from op ${beforeIndex} to version ${now} (op ${this.model.indexOf(now)})`);
      }
    }
    for (const [k, v] of obs) this.seen.set(k, Math.max(this.seen.get(k) ?? -1, this.model.indexOf(v)!));
    return problems;
  }
}
