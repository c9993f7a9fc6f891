/**
 * Flag parsers the command definitions (src/cli/verbs/) share. They run while commander parses the
 * command line, before the command's implementation is loaded, so they depend on nothing heavy.
 */
import { parseDuration } from '../domain/contract/duration.js';
import { UsageError } from './errors.js';

/** A repeatable flag: every value, in order. */
export const collect = (v: string, prev: string[] = []) => [...prev, v];

/** A whole number (`--window-size 20`). */
export const int = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n)) throw new UsageError(`${name} must be an integer, got ${JSON.stringify(v)}`);
  return n;
};

/** Milliseconds, or a duration like 30s, 10m. */
export const duration = (name: string) => (v: string) => {
  if (/^\d+$/.test(v)) return Number(v);
  try {
    return parseDuration(v);
  } catch {
    throw new UsageError(`${name} must be a duration like 30s, 10m or a number of ms, got ${JSON.stringify(v)}`);
  }
};

/** A TCP port. */
export const port = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new UsageError(`${name} must be a port number, got ${JSON.stringify(v)}`);
  return n;
};

/** `--sample-ok`: a fraction from 0 to 1. */
export function sampleOkFlag(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new UsageError(`--sample-ok must be a fraction from 0 to 1 (e.g. 0.05), got ${JSON.stringify(v)}`);
  return n;
}
