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

/** A whole number above 0 (`--budget-turns 20`). */
export const positiveInt = (name: string) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`${name} must be a whole number above 0, got ${JSON.stringify(v)}`);
  return n;
};

/** A number above 0, at most `max` (`--budget-cost-usd 2.50`). */
export const positiveNumber = (name: string, max: number) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0) throw new UsageError(`${name} must be a number above 0, e.g. 2.50, got ${JSON.stringify(v)}`);
  if (n > max) throw new UsageError(`${name} must be at most ${max}, got ${JSON.stringify(v)}`);
  return n;
};

/** A share strictly between 0 and 1 (`--budget-warn-at 0.8`). */
export const fraction = (name: string) => (v: string) => {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || n >= 1)
    throw new UsageError(`${name} must be a number above 0 and below 1, e.g. 0.8, got ${JSON.stringify(v)}`);
  return n;
};

/** A duration above 0 (`--budget-wall-clock 2h`): 45s, 90m, 2h, or a number of ms; 0 is refused. */
export const positiveDuration = (name: string) => (v: string) => {
  let ms: number;
  try {
    ms = duration(name)(v);
  } catch {
    ms = Number.NaN;
  }
  if (!(ms > 0) || !Number.isSafeInteger(ms)) throw new UsageError(`${name} must be a duration above 0 like 45s, 90m or 2h, got ${JSON.stringify(v)}`);
  return ms;
};
