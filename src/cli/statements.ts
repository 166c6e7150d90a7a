/**
 * Splitting SQL text into statements at `;`, the way psql does: a `;` inside a quoted string
 * ('…', "…", $$…$$ / $tag$…$tag$) or a comment (-- … and /* … *\/) does not end a statement.
 * Used for `-f file.sql`, standard input, and by the shell to know when a statement is complete.
 */

export interface Statement {
  text: string;
  /** 1-based line of the statement's first character in the input. */
  line: number;
}

interface Scan {
  statements: Statement[];
  /** Text after the last `;` that is not only blanks and comments. */
  rest: Statement | null;
}

function scan(input: string): Scan {
  const statements: Statement[] = [];
  let start = 0;
  let line = 1;
  let startLine = 1;
  let meaningful = false; // any character outside blanks / comments since `start`
  let firstMeaningful = -1;
  const push = (end: number) => {
    if (meaningful) statements.push({ text: input.slice(firstMeaningful, end).trim(), line: startLine });
    meaningful = false;
    firstMeaningful = -1;
    start = end + 1;
  };
  const mark = (i: number) => {
    if (!meaningful) {
      meaningful = true;
      firstMeaningful = i;
      startLine = line;
    }
  };
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (c === '-' && input[i + 1] === '-') {
      while (i < input.length && input[i] !== '\n') i++;
    } else if (c === '/' && input[i + 1] === '*') {
      const end = input.indexOf('*/', i + 2);
      const stop = end < 0 ? input.length : end + 2;
      for (let k = i; k < stop; k++) if (input[k] === '\n') line++;
      i = stop;
    } else if (c === "'" || c === '"') {
      mark(i);
      i++;
      while (i < input.length) {
        if (input[i] === '\n') line++;
        if (input[i] === c) {
          if (input[i + 1] === c) i += 2; // doubled quote
          else break;
        } else i++;
      }
      i++;
    } else if (c === '$' && /^\$[A-Za-z_]*\$/.test(input.slice(i, i + 64))) {
      mark(i);
      const tag = /^\$[A-Za-z_]*\$/.exec(input.slice(i, i + 64))![0];
      const end = input.indexOf(tag, i + tag.length);
      const stop = end < 0 ? input.length : end + tag.length;
      for (let k = i; k < stop; k++) if (input[k] === '\n') line++;
      i = stop;
    } else if (c === ';') {
      push(i);
      i++;
    } else {
      if (!/\s/.test(c)) mark(i);
      i++;
    }
  }
  void start;
  const rest = meaningful ? { text: input.slice(firstMeaningful).trim(), line: startLine } : null;
  return { statements, rest };
}

/** Every statement of a script; text after the last `;` counts as a statement too. */
export function splitStatements(input: string): Statement[] {
  const { statements, rest } = scan(input);
  return rest ? [...statements, rest] : statements;
}

/** For the shell: the complete statements of a buffer, and whether text is left waiting for `;`. */
export function completeStatements(input: string): { statements: Statement[]; pending: boolean } {
  const { statements, rest } = scan(input);
  return { statements, pending: rest !== null };
}
