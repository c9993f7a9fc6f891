/**
 * The mesh's strict gates, per attempt:
 *   A ack          the first checkpoint exists by the ack SLA and matches the format
 *   C checkpoint   the checkpoint keeps existing (and is updated when required)
 *   O output       the final message has the deliverable contract's sections
 *   D draft        the patch draft exists and is a unified diff (a `diff --git` line)
 *   P patch        the diff applies cleanly to the integration branch
 *   S scope        touched files are within the task's scope globs (when it has any)
 *   V verification the task's own check passed on its patch before integration (a `verify` command,
 *                  src/domain/mesh/check.ts), or the validation command passed on the integrated result
 * Profiles: analysis-only needs A+O (+V); patch-first needs A+O+D+P (+S if scoped, +V if requested).
 */
import { compileGlob, type Glob, globMatch } from '../glob.js';
import type { MeshTask } from './config.js';

export const GATE_NAMES = ['A', 'C', 'O', 'D', 'P', 'S', 'V'] as const;
export type GateName = (typeof GATE_NAMES)[number];
/** ok passed, fail failed, `--` not run yet, `?` pending an answer, `na` not required. */
export type GateValue = 'ok' | 'fail' | '--' | '?' | 'na';
export type Gates = Record<GateName, GateValue>;

export function initialGates(task: MeshTask, verifyRequested: boolean): Gates {
  const patch = task.mode !== 'analysis-only';
  return {
    A: '--',
    C: '--',
    O: '--',
    D: patch ? '--' : 'na',
    P: patch ? '--' : 'na',
    S: patch && task.scope.length ? '?' : 'na',
    V: verifyRequested ? '--' : 'na',
  };
}

/** `A=ok C=ok O=-- D=ok P=-- S=? V=--` (gates that do not apply print `na`). */
export function formatGates(g: Gates): string {
  return GATE_NAMES.map((n) => `${n}=${g[n]}`).join(' ');
}

/** The gates this task must pass before it counts as done (V is checked mesh-wide, after integration). */
export function requiredGates(task: MeshTask): GateName[] {
  if (task.mode === 'analysis-only') return ['A', 'O'];
  return ['A', 'O', 'D', 'P', ...(task.scope.length ? (['S'] as const) : [])];
}

export function isUnifiedDiff(text: string): boolean {
  return /^diff --git /m.test(text);
}

/**
 * `git apply --numstat -z` output → the files a patch touches (both sides of renames and copies),
 * in order, without duplicates. The file list comes from git itself, which parses every patch
 * form it would apply (quoted names, any prefix, traditional hunks), never from a regex. Records:
 * `added\tdeleted\tpath\0` (`-` counts for binary files), or the two-name form
 * `added\tdeleted\t\0old\0new\0` that `git diff --numstat -z` uses for renames (`git apply`
 * names only the result; warden asks it again with `-R` for the sources). Malformed output is an
 * error, never a shorter list.
 */
export function parseNumstatZ(out: string): { ok: true; files: string[] } | { ok: false; error: string } {
  const files = new Set<string>();
  const parts = out.split('\0');
  if (parts.at(-1) === '') parts.pop();
  for (let i = 0; i < parts.length; i++) {
    const m = /^(\d+|-)\t(\d+|-)\t([\s\S]*)$/.exec(parts[i]!);
    if (!m) return { ok: false, error: `unexpected numstat record ${JSON.stringify(parts[i]!.slice(0, 80))}` };
    if (m[3] !== '') {
      files.add(m[3]!);
      continue;
    }
    const [from, to] = [parts[i + 1], parts[i + 2]];
    if (!from || !to) return { ok: false, error: 'a rename record without both names' };
    files.add(from);
    files.add(to);
    i += 2;
  }
  return { ok: true, files: [...files] };
}

/**
 * Why a path in a patch is not one warden lets into the repository, or null: absolute, empty,
 * climbing out (`..`), or inside a git directory (`.git` in any case, with the trailing dots or
 * spaces some filesystems drop). git refuses most of these itself; this names them before it is asked.
 */
export function unsafePatchPath(path: string): string | null {
  if (!path) return 'an empty path';
  if (path.startsWith('/')) return `${JSON.stringify(path)} is absolute`;
  if (/[\0\\]/.test(path)) return `${JSON.stringify(path)} has a NUL or backslash`;
  const parts = path.split('/');
  if (parts.some((c) => c === '..')) return `${JSON.stringify(path)} leaves the repository`;
  if (parts.some((c) => /^\.git[. ]*$/i.test(c))) return `${JSON.stringify(path)} is inside a .git directory`;
  return null;
}

/**
 * The bytes a patch's binary hunks inflate to (`GIT binary patch` / `literal N` or `delta N`): a
 * patch small enough for its budget can still carry a file of hundreds of megabytes.
 */
export function binaryPatchBytes(patch: string): number {
  let total = 0;
  for (const m of patch.matchAll(/^GIT binary patch\n(?:literal|delta) (\d+)$/gm)) total += Number(m[1]);
  return total;
}

/** git's reason for refusing a patch for safety (not a conflict: a rebase cannot fix it), or null. */
export function gitSafetyRefusal(applyError: string): string | null {
  const line = applyError.split('\n').find((l) => /invalid path|beyond a symbolic link|outside (?:the )?repository|unsafe path/i.test(l));
  return line ? line.trim() : null;
}

/** A scope glob: `**` any depth, `*` within one segment, `?` one character; a trailing `/` means the directory (glob.ts: linear, no regular expression). */
function scopeGlob(glob: string): Glob {
  let g = glob.replace(/^\.\//, '');
  if (g.endsWith('/')) g += '**';
  return compileGlob(g);
}

export function inScope(scope: readonly string[], file: string): boolean {
  if (!scope.length) return true;
  return scope.some((g) => globMatch(scopeGlob(g), file) || globMatch(scopeGlob(`${g.replace(/\/$/, '')}/**`), file));
}

export function scopeCheck(scope: readonly string[], files: readonly string[]): { ok: boolean; outside: string[] } {
  const outside = files.filter((f) => !inScope(scope, f));
  return { ok: outside.length === 0, outside };
}

/** The deliverable contract's sections (as the worker prompt templates ask for them), per agent type. */
export const DELIVERABLE_SECTIONS = {
  worker: ['Summary', 'Intended files', 'Patch', 'Commands run', 'Risks'],
  explorer: ['Summary', 'Findings', 'Commands run', 'Risks'],
} as const;

/** Gate O: every required section heading appears (numbered or as a heading; `Questions` is optional). */
export function deliverableCheck(text: string, kind: 'worker' | 'explorer'): { ok: boolean; missing: string[] } {
  const lower = text.toLowerCase();
  const missing = DELIVERABLE_SECTIONS[kind].filter((s) => {
    const re = new RegExp(`^\\s*(?:#+\\s*|\\d+[.)]\\s*|\\*\\*)?${s.toLowerCase().replace(/ /g, '\\s+')}`, 'm');
    return !re.test(lower);
  });
  return { ok: missing.length === 0, missing };
}

/** `git apply` output → the files it could not apply. */
export function conflictingFiles(applyError: string): string[] {
  const out = new Set<string>();
  for (const line of applyError.split('\n')) {
    const m =
      /^error: (?:patch failed: )?(.+?)(?::\d+)?(?:: (?:patch does not apply|already exists in working directory|does not exist in index|No such file or directory))?$/.exec(
        line.trim(),
      );
    if (m && !/^(?:corrupt patch|unrecognized input|No valid patches)/.test(m[1]!)) out.add(m[1]!);
  }
  return [...out];
}

/** The gates' slice of a mesh attempt: each gate's result and whether the attempt may integrate. Only this file writes these fields. */
export interface AttemptGating {
  gates: Gates;
  /** Ticks that found the attempt done but its final message not (yet) in the deliverable format. */
  outputWaits: number;
  /** Workflow time of the first tick that found it done but its final message not in the format (absent in older runs). */
  outputWaitSince?: number | null;
  /** Gates A, O, D and S passed on a finished attempt: it waits for its turn to integrate. */
  ready: boolean;
  /** The sha of the draft whose gates passed: integration applies that draft or refuses (absent in older runs). */
  gatedSha?: string | null;
  /** Gates D, S passed but the final message lacks the deliverable sections: integrated with this warning (absent in older runs). */
  warning?: string | null;
}

export function setGate(a: AttemptGating, gate: GateName, value: GateValue): void {
  a.gates[gate] = value;
}

/** Gates A, O, D and S passed: ready to integrate, with a warning (gate O kept) or without one. */
export function markReady(a: AttemptGating, warning: string | null): void {
  a.ready = true;
  if (warning !== null) a.warning = warning;
  else if (a.warning) a.warning = null;
}

/** The draft whose gates passed: integration applies that one or refuses. */
export function gated(a: AttemptGating, sha: string | null): void {
  a.gatedSha = sha;
}

/** No longer ready (a conflict, or its task's check failed: `forget` drops the gated draft too). */
export function unready(a: AttemptGating, forget = false): void {
  a.ready = false;
  if (forget) a.gatedSha = null;
}

/** Waiting for the final message to come in the deliverable format: since when (the first such tick). */
export function outputWaitStart(a: AttemptGating, now: number): number {
  a.outputWaitSince ??= now;
  return a.outputWaitSince;
}

export function outputWaited(a: AttemptGating): void {
  a.outputWaits += 1;
}
