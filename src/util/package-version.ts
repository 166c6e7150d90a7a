/**
 * Quiver's own version: from the nearest package.json named quiver above this module, so the
 * same code finds it in a source checkout (src/util/) and in an installed package (dist/src/util/,
 * where a fixed relative path would land in dist/).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function quiverVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'quiver' && pkg.version) return pkg.version;
    } catch {
      // not here: one folder up
    }
  }
  return 'unknown';
}
