/**
 * Charts of a suite's measurements as SVG, rendered headless: a Vega-Lite spec compiled to Vega
 * and drawn by vega's `toSVG` (no canvas, no browser). Two shapes cover every suite:
 * - `bars`: one panel per group, a bar per contender at its p50 latency (a tick at p90) or at its
 *   throughput, coloured by engine, labelled with the value;
 * - `lines`: scaling curves, p50 latency against rows (log–log), one panel per group.
 */
import { logger, None, parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Measurement } from './measurement.js';

export interface ChartSpec {
  kind: 'bars' | 'lines';
  title: string;
  measurements: Measurement[];
  /** bars: what the bar length is (default latency). */
  metric?: 'latency' | 'throughput';
}

/** The engine a contender belongs to: its first word (Quiver, LanceDB, DuckDB, …). */
function engineOf(contender: string): string {
  return contender.split(/[\s(,]/)[0];
}

/** Panels in the order the suite measured them (a facet sorts by name otherwise). */
function groupsInOrder(c: ChartSpec): string[] {
  return [...new Set(c.measurements.map((m) => m.group))];
}

function barsSpec(c: ChartSpec): TopLevelSpec {
  const throughput = c.metric === 'throughput';
  const values = c.measurements
    .filter((m) => (throughput ? m.throughput : m.latency))
    .map((m) => {
      const v = throughput ? m.throughput!.value : m.latency!.p50;
      return { group: m.group, contender: m.contender, engine: engineOf(m.contender), value: v, p90: throughput ? null : m.latency!.p90, label: throughput ? `${v.toFixed(1)} ${m.throughput!.unit}` : `${v < 10 ? v.toFixed(2) : v.toFixed(0)} ms` };
    });
  const y = { field: 'contender', type: 'nominal', title: null, sort: null, axis: { labelLimit: 320 } } as const;
  const xTitle = throughput ? 'throughput (higher is better)' : 'p50 latency, ms (tick: p90; lower is better)';
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: c.title,
    data: { values },
    facet: { row: { field: 'group', type: 'nominal', title: null, sort: groupsInOrder(c), header: { labelAngle: 0, labelAlign: 'left', labelFontWeight: 'bold', labelLimit: 400 } } },
    spec: {
      width: 360,
      layer: [
        { mark: 'bar', encoding: { y, x: { field: 'value', type: 'quantitative', title: xTitle }, color: { field: 'engine', type: 'nominal', title: 'engine' } } },
        ...(throughput ? [] : [{ mark: { type: 'tick', color: 'black', thickness: 1 }, encoding: { y, x: { field: 'p90', type: 'quantitative' } } } as const]),
        { mark: { type: 'text', align: 'left', dx: 4, fontSize: 10 }, encoding: { y, x: { field: 'value', type: 'quantitative' }, text: { field: 'label' } } },
      ],
    },
    resolve: { scale: { x: 'independent', y: 'independent' } },
    config: { axis: { labelLimit: 400 } },
  } as TopLevelSpec;
}

function linesSpec(c: ChartSpec): TopLevelSpec {
  const values = c.measurements.filter((m) => m.rows !== undefined && m.latency).map((m) => ({ group: m.group, contender: m.contender, rows: m.rows, p50: m.latency!.p50 }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: c.title,
    data: { values },
    facet: { column: { field: 'group', type: 'nominal', title: null, sort: groupsInOrder(c) } },
    spec: {
      width: 220,
      height: 200,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'rows', type: 'quantitative', scale: { type: 'log' }, title: 'rows' },
        y: { field: 'p50', type: 'quantitative', scale: { type: 'log' }, title: 'p50 latency, ms' },
        color: { field: 'contender', type: 'nominal', legend: { orient: 'bottom', columns: 2, labelLimit: 400 } },
      },
    },
    resolve: { scale: { y: 'independent' } },
  } as TopLevelSpec;
}

/** Vega-Lite warns about facets with independent scales, which is what these charts want. */
const QUIET = logger(None);

export async function renderChart(c: ChartSpec): Promise<string> {
  const vl = c.kind === 'bars' ? barsSpec(c) : linesSpec(c);
  const view = new View(parse(compile(vl, { logger: QUIET }).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
