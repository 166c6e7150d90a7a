/**
 * Colour for terminal output: on only when the stream is a terminal and `NO_COLOR` is not set
 * (https://no-color.org); `FORCE_COLOR` (non-empty, not `0`) turns it on for a pipe.
 */
import { styleText } from 'node:util';

export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
}

export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  return !!stream.isTTY;
}

export function makeStyle(enabled: boolean): Style {
  // styleText itself checks nothing about the stream on Node 20, so the decision is ours.
  const apply = (format: 'bold' | 'dim' | 'red') => (text: string) => (enabled ? styleText(format, text) : text);
  return { enabled, bold: apply('bold'), dim: apply('dim'), red: apply('red') };
}

export const plainStyle = makeStyle(false);
