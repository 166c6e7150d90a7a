/**
 * One suite's result: its measurements (a contender in a group, with latency percentiles and a
 * throughput), its targets from issue 11 (met or not, with the measured ratio), and notes. The
 * same object is printed as a table, written as JSON (machine-readable) and as Markdown, and
 * drawn as an SVG chart — so the README's tables, the charts and the JSON never disagree.
 *
 * Files: bench/results/peers/<suite>.json|md|svg in full mode, <suite>.quick.* in quick mode.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Table from 'cli-table3';
import { type ChartSpec, renderChart } from './chart.js';
import { machineInfo, type MachineInfo } from './machine.js';
import { MODE, type BenchMode } from './mode.js';
import type { Measurement } from './measurement.js';

export type { Measurement };

export interface TargetVerdict {
  target: string;
  measured: string;
  /** The measured ratio the target is stated in (Quiver over peer, higher is better, unless `measured` says otherwise). */
  ratio: number;
  met: boolean;
}

export interface SuiteReport {
  suite: string;
  title: string;
  mode: BenchMode;
  startedAt: string;
  finishedAt?: string;
  machine: MachineInfo;
  settings: Record<string, unknown>;
  measurements: Measurement[];
  targets: TargetVerdict[];
  notes: string[];
  skipped: string[];
  /** What "speedup vs peer" compares: p50 latency (default) or throughput. */
  ratioBy?: 'latency' | 'throughput';
}

/** BENCH_RESULTS_DIR writes a run elsewhere (a second run to compare, without replacing the reported one). */
export const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ? path.resolve(process.env.BENCH_RESULTS_DIR) : path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'results', 'peers');

export function newReport(suite: string, title: string, settings: Record<string, unknown>): SuiteReport {
  return { suite, title, mode: MODE, startedAt: new Date().toISOString(), machine: machineInfo(), settings, measurements: [], targets: [], notes: [], skipped: [] };
}

/** Peer p50 over contender p50 (how many times faster), or contender's rate over the peer's. */
export function speedup(m: Measurement, peer: Measurement | undefined, by: 'latency' | 'throughput' = 'latency'): number {
  if (!peer) return NaN;
  if (by === 'latency' && m.latency && peer.latency) return peer.latency.p50 / m.latency.p50;
  if (m.throughput && peer.throughput) return m.throughput.value / peer.throughput.value;
  return NaN;
}

export function peerOf(report: SuiteReport, m: Measurement): Measurement | undefined {
  return m.peer === undefined ? undefined : report.measurements.find((x) => x.group === m.group && x.contender === m.peer && x.rows === m.rows);
}

export const fmt = (x: number | undefined, digits = 2): string => (x === undefined || !Number.isFinite(x) ? '—' : x >= 1000 ? Math.round(x).toLocaleString('en-US') : x.toFixed(digits));

function rowsOf(report: SuiteReport): { head: string[]; rows: string[][] } {
  const extras = [...new Set(report.measurements.flatMap((m) => Object.keys(m.extra ?? {})))];
  const withRows = report.measurements.some((m) => m.rows !== undefined);
  const head = [...(withRows ? ['rows'] : []), 'group', 'contender', 'p50 ms', 'p90 ms', 'p99 ms', 'throughput', ...extras, `speedup vs peer (${report.ratioBy ?? 'latency'})`];
  const rows = report.measurements.map((m) => {
    const ratio = speedup(m, peerOf(report, m), report.ratioBy);
    return [
      ...(withRows ? [m.rows?.toLocaleString('en-US') ?? ''] : []),
      m.group,
      m.contender,
      fmt(m.latency?.p50, 3),
      fmt(m.latency?.p90, 3),
      fmt(m.latency?.p99, 3),
      m.throughput ? `${fmt(m.throughput.value, 1)} ${m.throughput.unit}` : '—',
      ...extras.map((e) => {
        const v = m.extra?.[e];
        return typeof v === 'number' ? fmt(v, 3) : (v ?? '');
      }),
      Number.isFinite(ratio) ? `${ratio.toFixed(2)}× vs ${m.peer}` : '',
    ];
  });
  return { head, rows };
}

export function printReport(report: SuiteReport): void {
  const { head, rows } = rowsOf(report);
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r);
  console.log(`\n${report.title} (${report.mode} mode)`);
  console.log(t.toString());
  for (const v of report.targets) console.log(`target ${v.met ? 'MET' : 'NOT MET'}: ${v.target} — ${v.measured}`);
  for (const s of report.skipped) console.log(`skipped: ${s}`);
}

export function markdown(report: SuiteReport, chartFile?: string): string {
  const { head, rows } = rowsOf(report);
  const m = report.machine;
  const L: string[] = [];
  L.push(`# ${report.title}`, '');
  L.push(
    `${report.mode} mode, ${report.startedAt.slice(0, 16).replace('T', ' ')} UTC; ${m.cpus} × ${m.model}, Node ${m.node}, ${m.memGb} GB; load ${m.loadavg.join(' / ')} at start; code ${m.commit}${m.uncommitted.length ? ` + uncommitted ${m.uncommitted.join(', ')}` : ''}.`,
    '',
  );
  L.push(`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`);
  for (const r of rows) L.push(`| ${r.join(' | ')} |`);
  if (report.targets.length) {
    L.push('', '| target (issue 11) | measured | verdict |', '| --- | --- | --- |');
    for (const v of report.targets) L.push(`| ${v.target} | ${v.measured} | ${v.met ? 'met' : '**not met**'} |`);
  }
  if (report.notes.length || report.skipped.length) {
    L.push('');
    for (const n of report.notes) L.push(`- ${n}`);
    for (const s of report.skipped) L.push(`- skipped: ${s}`);
  }
  if (chartFile) L.push('', `![${report.title}](${chartFile})`);
  L.push('', `Settings: \`${JSON.stringify(report.settings)}\``, '');
  return L.join('\n');
}

/** Prints the table and writes <suite>[.quick].json, .md and one .svg per chart. */
export async function writeReport(report: SuiteReport, charts: ChartSpec[]): Promise<void> {
  report.finishedAt = new Date().toISOString();
  await mkdir(RESULTS_DIR, { recursive: true });
  const base = report.mode === 'quick' ? `${report.suite}.quick` : report.suite;
  const svgs: string[] = [];
  for (const [i, chart] of charts.entries()) {
    const file = `${base}${i === 0 ? '' : `-${i + 1}`}.svg`;
    await writeFile(path.join(RESULTS_DIR, file), await renderChart(chart));
    svgs.push(file);
  }
  await writeFile(path.join(RESULTS_DIR, `${base}.json`), JSON.stringify(report, null, 2) + '\n');
  let md = markdown(report, svgs[0]);
  for (const extra of svgs.slice(1)) md += `\n![${report.title}](${extra})\n`;
  await writeFile(path.join(RESULTS_DIR, `${base}.md`), md);
  printReport(report);
  console.log(`wrote ${path.join(RESULTS_DIR, base)}.json, .md${svgs.length ? `, ${svgs.join(', ')}` : ''}`);
}
