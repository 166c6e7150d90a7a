/**
 * `quiver describe <table>`: columns (SQL type, nullability, primary-key position), the primary
 * key, indexes, the region spec and, per region, the rows of each MemTable and generation (as
 * this process sees them: MemTables of regions another process writes are read from their WAL).
 * Against a server only the columns and the primary key are known (Flight SQL reports no more).
 * `--format json` prints the same as one object.
 */
import Table from 'cli-table3';
import { sqlTypeName } from '../flight/metadata.js';
import { openSession, UsageError, type ConnectionFlags } from './options.js';
import type { TableInfo } from './session.js';
import type { Terminal } from './terminal.js';
import type { Style } from './style.js';

export interface DescribeFlags extends ConnectionFlags {
  format: string;
}

function regionSpecText(info: TableInfo): string | undefined {
  const spec = info.regionSpec;
  if (!spec) return undefined;
  if (spec.kind === 'bucket') return `bucket(${spec.column}, ${spec.buckets})`;
  if (spec.kind === 'identity') return `identity(${spec.column})`;
  return 'unsharded';
}

export function describeJson(info: TableInfo): unknown {
  return {
    table: info.name,
    columns: info.schema.fields.map((f) => ({ name: f.name, type: sqlTypeName(f.type), nullable: f.nullable })),
    primaryKey: info.primaryKey,
    indexes: info.indexes?.map((d) => ({ name: d.name, column: d.column, type: d.type, ...(d.metric ? { metric: d.metric } : {}) })),
    regionSpec: regionSpecText(info),
    regions: info.regions?.map((r, i) => ({
      region: i,
      memtables: r.memtables,
      generations: r.generations,
      rows: [...r.memtables, ...r.generations].reduce((a, b) => a + b, 0),
    })),
  };
}

function box(head: string[], rows: (string | number)[][], style: Style): string {
  const t = new Table({ head: head.map((h) => style.bold(h)), style: { head: [], border: [], compact: true } });
  for (const r of rows) t.push(r.map(String));
  return t.toString();
}

export function describeText(info: TableInfo, style: Style): string {
  const pk = info.primaryKey;
  const lines: string[] = [`table ${style.bold(info.name)}`];
  lines.push(
    box(
      ['column', 'type', 'null', 'key'],
      info.schema.fields.map((f) => [f.name, sqlTypeName(f.type), f.nullable ? 'yes' : 'not null', pk.includes(f.name) ? `PK ${pk.indexOf(f.name) + 1}` : '']),
      style,
    ),
  );
  lines.push(`primary key: (${pk.join(', ')})`);
  if (info.indexes) {
    if (info.indexes.length === 0) lines.push('indexes: none');
    else {
      lines.push('indexes:');
      lines.push(
        box(
          ['name', 'column', 'method', 'options'],
          info.indexes.map((d) => {
            const opts = [d.metric && `metric=${d.metric}`, d.partitions && `partitions=${d.partitions}`, d.subVectors && `sub_vectors=${d.subVectors}`, d.stem !== undefined && `stem=${d.stem}`, d.stopWords !== undefined && `stop_words=${d.stopWords}`, d.type === 'ivf_pq' && `trained=${d.model ? 'yes' : 'not yet'}`].filter(Boolean).join(' ');
            return [d.name, d.column, d.type, opts];
          }),
          style,
        ),
      );
    }
  }
  const spec = regionSpecText(info);
  if (spec) lines.push(`region spec: ${spec}`);
  if (info.regions) {
    const total = info.regions.reduce((a, r) => a + [...r.memtables, ...r.generations].reduce((x, y) => x + y, 0), 0);
    lines.push(`regions: ${info.regions.length} (${total} rows stored, superseded versions and tombstones included)`);
    if (info.regions.length) {
      lines.push(
        box(
          ['region', 'memtables (rows, newest first)', 'generations (rows, newest first)'],
          info.regions.map((r, i) => [i, r.memtables.join(', ') || '-', r.generations.join(', ') || '-']),
          style,
        ),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

export async function runDescribe(name: string, flags: DescribeFlags, terminal: Terminal): Promise<number> {
  if (flags.format !== 'table' && flags.format !== 'json') throw new UsageError(`describe --format is table or json, got ${flags.format}`);
  const session = await openSession(flags);
  try {
    const info = await session.tableInfo(name, true);
    await terminal.sink.write(flags.format === 'json' ? `${JSON.stringify(describeJson(info), null, 2)}\n` : describeText(info, terminal.style));
    return 0;
  } finally {
    await session.close();
  }
}
