/**
 * The `table` output format: columns aligned by cli-table3, numbers right-aligned, NULL shown as
 * `NULL` (dimmed on a colour terminal), long vectors abbreviated (`[0.12, -0.03, … 128 values]`),
 * line breaks inside values shown as `↵`, and the whole table fitted to the terminal's width by
 * narrowing the widest columns first (their cells end in `…`).
 */
import Table from 'cli-table3';
import type { Field } from 'apache-arrow';
import type { ColumnReader } from './values.js';
import type { Style } from './style.js';

/** At most this many items of a list are shown before it is abbreviated. */
const LIST_ITEMS_SHOWN = 4;
/** A column is not narrowed below this many characters (or its natural width, if smaller). */
const MIN_COLUMN = 8;

function shortNumber(text: string): string {
  const n = Number(text);
  if (!Number.isFinite(n) || !/[.eE]/.test(text)) return text;
  return String(Number(n.toPrecision(3)));
}

/** A list cell: every value when short, else the first two and how many there are. */
export function listCell(items: readonly string[]): string {
  if (items.length <= LIST_ITEMS_SHOWN) return `[${items.join(', ')}]`;
  return `[${items.slice(0, 2).map(shortNumber).join(', ')}, … ${items.length} values]`;
}

export interface TableCells {
  fields: readonly Field[];
  numeric: boolean[];
  rows: (string | null)[][];
}

export function collectCells(readers: readonly ColumnReader[], numRows: number, into: (string | null)[][]): void {
  for (let r = 0; r < numRows; r++) {
    into.push(
      readers.map((c) => {
        if (c.list) {
          const items = c.list(r);
          return items === null ? null : listCell(items);
        }
        const t = c.text(r);
        return t === null ? null : t.replace(/\r?\n/g, '↵');
      }),
    );
  }
}

/** Column widths (cell content, without padding) that fit `width` characters, widest narrowed first. */
export function fitWidths(natural: readonly number[], width: number): number[] {
  const widths = [...natural];
  const overhead = widths.length * 3 + 1; // "│ " + " " per column, plus the last border
  const floor = natural.map((w) => Math.min(w, MIN_COLUMN));
  let total = widths.reduce((a, b) => a + b, 0) + overhead;
  while (total > width) {
    let widest = -1;
    for (let i = 0; i < widths.length; i++) if (widths[i] > floor[i] && (widest < 0 || widths[i] > widths[widest])) widest = i;
    if (widest < 0) break; // every column at its floor: let the terminal wrap
    widths[widest]--;
    total--;
  }
  return widths;
}

export function renderTable(cells: TableCells, style: Style, width: number): string {
  const names = cells.fields.map((f) => f.name);
  const natural = names.map((n, i) => Math.max(n.length, ...cells.rows.map((row) => (row[i] ?? 'NULL').length), 1));
  const widths = Number.isFinite(width) ? fitWidths(natural, width) : natural;
  const table = new Table({
    head: names.map((n) => style.bold(n)),
    colWidths: widths.map((w) => w + 2),
    colAligns: cells.numeric.map((n) => (n ? 'right' : 'left')),
    wordWrap: false,
    truncate: '…',
    style: { head: [], border: [], compact: true, 'padding-left': 1, 'padding-right': 1 },
  });
  for (const row of cells.rows) table.push(row.map((v) => (v === null ? style.dim('NULL') : v)));
  return table.toString();
}
