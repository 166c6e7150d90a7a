/**
 * The interactive shell, driven through a pseudo-terminal (util-linux `script` runs `quiver sql`
 * on a pty; the test types into it and reads the screen): a multi-line statement, .tables,
 * .schema, .timer, Ctrl-C cancelling a long statement without leaving the shell, and history
 * recalled (Up arrow) in a second session.
 */
import test from 'ava';
import { join } from 'node:path';
import { quiver, tempDir } from './quiver-process.js';
import { writeCsv } from './load-data.js';

import { hasScript, Pty } from './pty.js';


test('shell: multi-line statement, .tables, .schema, .timer, Ctrl-C cancels, history is recalled', async (t) => {
  if (!hasScript) return t.pass('util-linux script is not installed');
  const dir = tempDir();
  try {
    const db = join(dir.path, 'db');
    const csv = join(dir.path, 'big.csv');
    await writeCsv(csv, 200_000);
    t.is((await quiver(['load', 'big', csv, '--data', db, '--primary-key', 'id', '-q'])).code, 0);
    const env = { QUIVER_HISTORY: join(dir.path, 'history') };

    const sh = new Pty(['sql', '--data', db], env);
    await sh.expect(/quiver> $/);
    sh.send('SELECT count(*) AS n,\r');
    await sh.expect(/ -> $/);
    sh.send('  max(id) AS top FROM big\r');
    await sh.expect(/ -> $/);
    sh.send(';\r');
    const counted = await sh.expect(/\(1 row\)\nquiver> $/);
    t.regex(counted, /│ +200000 │ +199999 │/);

    sh.send('.tables\r');
    t.regex(await sh.expect(/quiver> $/), /\nbig\n/);
    sh.send('.schema big\r');
    t.regex(await sh.expect(/quiver> $/), /primary key: \(id\)[\s\S]*regions: 1/);
    sh.send('.timer on\r');
    await sh.expect(/quiver> $/);
    sh.send("SELECT 'x' AS y;\r");
    t.regex(await sh.expect(/quiver> $/), /\(1 row\)\nTime: [\d.]+ ms/);

    // A long statement: every row as NDJSON through the terminal, pulled as the pty drains.
    sh.send('.format ndjson\r');
    await sh.expect(/quiver> $/);
    const mark = sh.mark();
    sh.send('SELECT * FROM big;\r');
    await new Promise((r) => setTimeout(r, 150));
    sh.send('\x03');
    await sh.expect(/cancelled\n(Time: [\d.]+ ms\n)?quiver> $/);
    const printed = sh.count(mark, /"id":/g);
    t.log(`${printed} of 200000 rows printed before Ctrl-C took effect`);
    t.true(printed < 200_000, 'the stream stopped before its end');
    // The shell is still there.
    sh.send('.format table\r');
    await sh.expect(/quiver> $/);
    sh.send('SELECT 41 + 1 AS answer;\r');
    t.regex(await sh.expect(/quiver> $/), /│ +42 │/);
    sh.send('.quit\r');
    t.is(await sh.exit(), 0);

    // History across sessions: Up arrow twice recalls the statement before .quit.
    const again = new Pty(['sql', '--data', db], env);
    await again.expect(/quiver> $/);
    again.send('\x1b[A');
    await again.expect(/\.quit/);
    again.send('\x1b[A');
    await again.expect(/SELECT 41 \+ 1 AS answer;/);
    again.send('\r');
    t.regex(await again.expect(/\(1 row\)\nquiver> $/), /│ +42 │/);
    again.send('\x04'); // Ctrl-D
    t.is(await again.exit(), 0);
  } finally {
    dir.remove();
  }
});
