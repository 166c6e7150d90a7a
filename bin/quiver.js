#!/usr/bin/env node
// The `quiver` command. In a source checkout (src/ is there) it runs src/cli.ts through tsx, so
// edits need no build; an installed package ships only the compiled dist/ and runs that.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import('../dist/src/cli.js');
}
