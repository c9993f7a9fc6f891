/**
 * Noise normalisation: what makes two attempts "the same" although their text differs.
 *
 * - `commandSignature`: a tool call's name and arguments with numbers, temp paths, timestamps,
 *   hashes, quotes, whitespace, flag order and output-trimming pipes (`| tail -n 50`, `2>&1`,
 *   `timeout 60`, a leading `cd dir &&`) taken out, and the order of everything after the program
 *   and its subcommand ignored: `npm test -- --run -t foo 2>&1 | tail -40` and
 *   `npm test -- -t foo --run | tail -n 80` are one approach.
 * - `errorSignature`: the line of a failing result that names the error, with line numbers,
 *   columns, addresses, timestamps, durations and directories taken out, so the same error from
 *   different commands (or on a different line) is recognised. Error codes (TS2304, E0308) stay.
 * - `outputSignature`: a result with only timestamps, durations, addresses and whitespace taken
 *   out; counts and percentages stay, so a poll whose output changes is seen to change.
 */
import { jsonArgs, type Call } from './types.js';

const TIMESTAMP = /\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?\b|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g;
const HEX = /\b0x[0-9a-f]+\b|\b[0-9a-f]{7,64}\b/gi;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const DURATION = /\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds?|m|min|minutes?|h)\b/gi;
const TEMP_PATH = /(?:\/tmp|\/var\/folders|\/private\/var|[A-Za-z]:\\Temp)[^\s'"`]*/g;

/** Text without the noise every signature drops. */
function baseNoise(s: string): string {
  return s.replace(UUID, '<id>').replace(TIMESTAMP, '<time>').replace(TEMP_PATH, '<tmp>').replace(HEX, '<hex>').replace(DURATION, '<dur>');
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The command text of a call's arguments: a shell command field if the args are a JSON object. */
export function commandText(call: Call): string {
  const raw = call.args ?? '';
  const v = jsonArgs(raw);
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of ['command', 'cmd', 'script', 'code', 'input']) if (typeof o[k] === 'string') return o[k] as string;
    if (Array.isArray(o.command)) return (o.command as unknown[]).map(String).join(' ');
    return JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b))));
  }
  return raw; // plain text
}

/** Tokens of one shell command with trimming pipes, redirections, env prefixes and `cd … &&` removed. */
function shellCore(cmd: string): string {
  let s = ` ${cmd} `;
  s = s.replace(/\|\s*(?:tail|head)(?:\s+-[nc]?\s*\d+|\s+-\d+|\s+--lines[= ]\d+)*\s*(?=\||$|;|&&)/g, ' ');
  s = s.replace(/\s\d?>&\d/g, ' ').replace(/\s\d?>\s*\/dev\/null/g, ' ');
  s = s.replace(/^\s*cd\s+\S+\s*&&/, ' ');
  s = s.replace(/(^|\s)timeout\s+\d+[smh]?\s/g, ' ');
  s = s.replace(/(^|\s)[A-Z_][A-Z0-9_]*=\S*(?=\s)/g, ' ');
  return s;
}

export function commandSignature(call: Call): string {
  const core = squash(
    baseNoise(shellCore(commandText(call)))
      .toLowerCase()
      .replace(/["'`]/g, ''),
  );
  const tokens = core
    .split(' ')
    .filter(Boolean)
    .map((t) => t.replace(/\b\d+\b/g, '#'));
  // The program and its subcommand keep their place; the rest (flags, flag values, operands) is a
  // bag: `go test ./pkg -run X` and `go test -run X ./pkg` are one command.
  const n = tokens.length > 1 && !tokens[1]!.startsWith('-') ? 2 : 1;
  const head = tokens.slice(0, n);
  const rest = tokens.slice(n).sort();
  return `${call.name.toLowerCase()} ${[...head, ...rest].join(' ')}`.trim();
}

const CAMEL_ERROR = /[a-z](?:Error|Exception|NotFound)\b/;
const ERROR_LINE =
  /\b(?:error|exception|fail|failed|failure|expected|want|fatal|panic|cannot|can't|could not|unable to|not found|no such file|denied|refused|timed? ?out|undefined|traceback|segmentation fault|assert(?:ion)?)\b/i;
/** Error lines that say nothing about what went wrong; never a signature of their own. */
const GENERIC =
  /^(?:traceback \(most recent call last\):|fail|error:?|failed\.?|failure|npm err! (?:code \S+|a complete log.*|errno.*|command failed|lifecycle.*)|.*exited? with (?:code|status) #.*|.*exit (?:code|status) #.*|command failed.*|error: process completed with exit code #.*|#? ?failed,? #? passed.*|tests?:? +#.*|.*errors? found.*)$/i;

/** A log line's leading step counter or timing (`#9 3.210 `, `[12.5s] `): noise. */
const LOG_PREFIX = /^(?:#\d+\s+)?\[?\d+(?:\.\d+)?s?\]?\s+/;

export function errorSignature(result: string | undefined): string | null {
  if (!result) return null;
  const lines = result
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  let best: string | null = null;
  for (const line of lines) {
    if (!ERROR_LINE.test(line) && !CAMEL_ERROR.test(line)) continue;
    const sig = squash(
      baseNoise(line.replace(LOG_PREFIX, ''))
        .toLowerCase()
        .replace(/(?:[\w.-]*\/)+([\w.-]+)/g, '$1') // directories: keep the file name
        .replace(/\bline \d+\b/g, 'line #')
        .replace(/:\d+(?::\d+)?\b/g, ':#')
        .replace(/\(\d+,\s*\d+\)/g, '(#)')
        .replace(/\bpid \d+\b/g, 'pid #')
        .replace(/\bport \d+\b/g, 'port #'),
    ).slice(0, 200);
    if (GENERIC.test(sig.replace(/\b\d+\b/g, '#'))) continue;
    best = sig; // the last specific error line: where tracebacks and compilers put the cause
  }
  return best;
}

export function outputSignature(result: string | undefined): string {
  return squash(baseNoise(result ?? '').toLowerCase()).slice(0, 2_000);
}

/** Whether a tool call failed: its `ok` flag, else its result reads like a failure. */
export function looksFailed(call: Call): boolean {
  if (call.ok === false) return true;
  if (call.ok === true) return false;
  return /\b(error|failed|failure|exception|traceback|exit code [1-9]|command not found|no such file)\b/i.test(call.result ?? '');
}

/** A turn's text, for comparing messages: case, whitespace and digits do not count. */
export function textSignature(text: string): string {
  return squash(baseNoise(text).toLowerCase().replace(/\d+/g, '#'));
}
