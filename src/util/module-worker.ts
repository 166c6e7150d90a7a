/**
 * Starting a worker thread that runs one of these module files (the training and encoding
 * workers), compiled or from source.
 *
 * Compiled (`.js`), the file is the worker's entry. Run from source (`.ts`, e.g.
 * `node --import=tsx`), a worker does not get the parent's TypeScript loader on Node 20 even
 * though it inherits `--import=tsx` (privatenumber/tsx#354, nodejs/node#47747), so a one-line
 * entry registers tsx's ESM hooks in the worker first, then imports the file.
 */
import { Worker } from 'node:worker_threads';

/** A worker running the module at `moduleUrl` (its `import.meta.url`) with `workerData`. */
export function startModuleWorker(moduleUrl: string, workerData: unknown): Worker {
  if (!moduleUrl.endsWith('.ts')) return new Worker(new URL(moduleUrl), { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(moduleUrl)}); });`;
  return new Worker(entry, { workerData, eval: true });
}
