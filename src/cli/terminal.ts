/**
 * Standard output and error as the verbs see them: a sink that waits for 'drain', the colour
 * style (terminal only, never with NO_COLOR) and the width the table format fits (the
 * terminal's, or `COLUMNS` when standard output is not a terminal, else unlimited).
 */
import { colourEnabled, makeStyle, type Style } from './style.js';
import { streamSink, type Sink } from './output.js';

export interface Terminal {
  sink: Sink;
  style: Style;
  width: number;
  error(line: string): void;
}

export function terminalOutput(stdout: NodeJS.WriteStream = process.stdout, stderr: NodeJS.WriteStream = process.stderr): Terminal {
  const errStyle = makeStyle(colourEnabled(stderr));
  const columns = stdout.isTTY ? stdout.columns : Number(process.env.COLUMNS);
  return {
    sink: streamSink(stdout),
    style: makeStyle(colourEnabled(stdout)),
    width: columns > 0 ? columns : Infinity,
    error: (line) => void stderr.write(`${errStyle.red(line)}\n`),
  };
}
