/**
 * The peer engines live in the sub-package bench/peers (its own package.json and lock, installed
 * by `npm run bench:setup`, never by the main `npm ci`), so LanceDB keeps its own apache-arrow 18
 * beside Quiver's 21. Modules are required from there by path; when the sub-package is not
 * installed a suite skips that peer with a printed line instead of failing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { log } from './machine.js';
import type { SuiteReport } from './report.js';

export const PEERS_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'peers');

const peerRequire = createRequire(path.join(PEERS_DIR, 'package.json'));

export function peerInstalled(name: string): boolean {
  return existsSync(path.join(PEERS_DIR, 'node_modules', name, 'package.json'));
}

/** A CommonJS require of a bench/peers dependency (LanceDB checks `instanceof` against the Arrow it requires). */
export function requirePeer<T>(name: string): T {
  return peerRequire(name) as T;
}

export function peerVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(path.join(PEERS_DIR, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** Records and prints that a peer is left out of this run, and why. */
export function skipPeer(report: SuiteReport, peer: string, why: string): void {
  const line = `${peer}: ${why}`;
  report.skipped.push(line);
  log(`skipping ${line}`);
}

export const NOT_INSTALLED = 'bench/peers is not installed (run `npm run bench:setup`)';
