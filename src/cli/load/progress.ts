/**
 * Load progress on standard error: a cli-progress bar (bytes done of the file, rows, MB/s, ETA)
 * on a terminal; a plain line every few seconds when standard error is not a terminal (logs,
 * CI); nothing with --quiet.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  update(rows: number, bytes: number): void;
  stop(): void;
}

const MB = 1024 * 1024;
const PLAIN_INTERVAL_MS = 2000;

function eta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
}

export function makeProgress(options: { quiet: boolean; totalBytes: number; stream?: NodeJS.WriteStream; colour: boolean; now?: () => number }): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  if (options.quiet) return { update() {}, stop() {} };
  const start = now();
  const total = options.totalBytes;
  const known = Number.isFinite(total) && total > 0;
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: known ? '{bar} {percentage}% | {rows} rows | {mbps} MB/s | ETA {etaText}' : '{rows} rows | {mb} MB | {mbps} MB/s',
        barsize: 30,
        hideCursor: true,
        clearOnComplete: true,
        fps: 10,
        etaBuffer: 50,
        noTTYOutput: false,
        formatValue: (v, _o, type) => String(v ?? (type === 'value' ? 0 : '')),
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(known ? total : 1, 0, { rows: 0, mbps: '0.0', etaText: '?', mb: '0.0' });
    return {
      update(rows, bytes) {
        const seconds = (now() - start) / 1000;
        const rate = seconds > 0 ? bytes / seconds : 0;
        bar.update(known ? Math.min(bytes, total) : 0, {
          rows: rows.toLocaleString('en-US'),
          mbps: (rate / MB).toFixed(1),
          mb: (bytes / MB).toFixed(1),
          etaText: rate > 0 ? eta((total - bytes) / rate) : '?',
        });
      },
      stop() {
        bar.stop();
      },
    };
  }
  let last = start;
  return {
    update(rows, bytes) {
      const t = now();
      if (t - last < PLAIN_INTERVAL_MS) return;
      last = t;
      const seconds = (t - start) / 1000;
      const rate = bytes / seconds;
      const share = known ? ` of ${(total / MB).toFixed(1)} MB (${Math.floor((100 * bytes) / total)}%)` : '';
      const left = known && rate > 0 ? `, ETA ${eta((total - bytes) / rate)}` : '';
      stream.write(`load: ${rows} rows, ${(bytes / MB).toFixed(1)} MB${share}, ${(rate / MB).toFixed(1)} MB/s${left}\n`);
    },
    stop() {},
  };
}
