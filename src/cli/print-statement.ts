/**
 * Running one statement through a session and writing its result in an output format: what
 * `quiver sql`, the shell and `scan` share (kept apart so the shell and the one-shot verb do
 * not import each other).
 */
import { resultWriter, type OutputFormat, type Sink, type WriterOptions } from './output.js';
import type { Session } from './session.js';
import type { ConnectionFlags } from './options.js';

export interface SqlFlags extends ConnectionFlags {
  file?: string;
  param?: string[];
  format: OutputFormat;
}

/** Runs one statement and writes its result; resolves with the number of rows written. */
export async function printStatement(
  session: Session,
  sql: string,
  params: readonly unknown[],
  format: OutputFormat,
  sink: Sink,
  options: WriterOptions,
  signal?: AbortSignal,
): Promise<number> {
  const result = await session.run(sql, params, signal);
  const writer = resultWriter(format, sink, options);
  await writer.begin(result.schema);
  for await (const batch of result.batches) {
    await writer.batch(batch);
    // Pulling batches settles only promises; give I/O (the shell's Ctrl-C keypress) a turn.
    if (signal) await new Promise((resolve) => setImmediate(resolve));
  }
  return writer.end();
}

