/**
 * Protected paths (AgentSpec.protect): what the working tree's diff against the agent's start commit
 * says about them, and the REWARD_HACKING finding it supports even when the transcript never shows
 * the edit: any change to a file that was protected at the start (isTampering).
 *
 * Globs: `*` matches within one path segment, `**` across segments, `?` one character. A glob with
 * no `/` matches a file's name in any directory (`*.snap`), as in .gitignore; one with a `/`
 * matches from the repository root (`test/**`). Pure.
 */
import type { ProtectedChange } from '../../contract/activity-types.js';
import { MAX_PROTECTED_CHANGES } from '../../contract/limits.js';
import { compileGlob, globMatch } from '../../glob.js';

export type { ProtectedChange };

/** Does `path` (relative to the repository root, `/`-separated) match one of `globs`? Linear in each (glob.ts). */
export function matchesProtect(path: string, globs: readonly string[]): boolean {
  const segments = path.split('/');
  return globs.some((g) => {
    const text = g.replace(/^\.\//, '').replace(/^\//, '').replace(/\/$/, '');
    const glob = compileGlob(text);
    // A bare name matches a file or a directory of that name anywhere; a path, from the root (or a directory under it).
    if (!text.includes('/')) return segments.some((seg) => globMatch(glob, seg));
    return globMatch(glob, path, true);
  });
}

/** A line that asserts something: expect(…), assert…, assert_eq!, require.X(…), t.Error…, should. */
const ASSERTION =
  /\bexpect\s*\(|\bassert\.\w+\s*\(|\bassert\w*\s*[(!]|\bassert\s+\S|\brequire\.\w+\s*\(|\bt\.(?:Error|Fatal)f?\s*\(|\.should\b|\bassertThat\s*\(/;

/** Count the assertion lines a unified diff removes and adds, per file (`diff --git a/X b/X` headers). */
export function assertionCounts(diff: string): Map<string, { removed: number; added: number }> {
  const out = new Map<string, { removed: number; added: number }>();
  let current: { removed: number; added: number } | null = null;
  for (const line of diff.split('\n')) {
    const header = /^diff --git a\/(.+?) b\/(.+)$/.exec(line);
    if (header) {
      current = { removed: 0, added: 0 };
      out.set(header[2]!, current);
      out.set(header[1]!, current);
      continue;
    }
    if (!current || line.startsWith('---') || line.startsWith('+++')) continue;
    if (line.startsWith('-') && ASSERTION.test(line)) current.removed += 1;
    else if (line.startsWith('+') && ASSERTION.test(line)) current.added += 1;
  }
  return out;
}

/** `git diff --name-status -z`: `M\0path\0`, a rename or copy `R100\0old\0new\0`. */
export function parseNameStatusZ(out: string): Array<{ status: string; paths: string[] }> {
  const f = out.split('\0');
  const entries: Array<{ status: string; paths: string[] }> = [];
  for (let i = 0; i < f.length; ) {
    const code = f[i++];
    if (!code) continue;
    const two = code[0] === 'R' || code[0] === 'C';
    const paths = f.slice(i, i + (two ? 2 : 1));
    i += paths.length;
    if (paths.length && paths.every(Boolean)) entries.push({ status: code[0]!, paths });
  }
  return entries;
}

/** `git diff --numstat -z`: `added\tdeleted\tpath\0`, a rename `added\tdeleted\t\0old\0new\0` (`-` for binary). */
export function parseNumstatZ(out: string): Map<string, { added?: number; deleted?: number }> {
  const f = out.split('\0');
  const counts = new Map<string, { added?: number; deleted?: number }>();
  for (let i = 0; i < f.length; ) {
    const head = f[i++]!;
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(head);
    if (!m) continue;
    let path = m[3]!;
    if (path === '') {
      i += 1; // the old name
      path = f[i++] ?? '';
    }
    counts.set(path, { ...(m[1] !== '-' ? { added: Number(m[1]) } : {}), ...(m[2] !== '-' ? { deleted: Number(m[2]) } : {}) });
  }
  return counts;
}

/**
 * Build the evidence from git's output: `--name-status -z`, `--numstat -z` and the unified diff of
 * the protected files (for their assertion counts). NUL-separated, so no file name is quoted or
 * escaped out of a glob's reach.
 */
export function protectedChanges(nameStatus: string, numstat: string, diff: string, globs: readonly string[]): ProtectedChange[] {
  const counts = parseNumstatZ(numstat);
  const asserts = assertionCounts(diff);
  const out: ProtectedChange[] = [];
  for (const { status, paths } of parseNameStatusZ(nameStatus)) {
    // A rename: the old path left its place; protected if either name is. A rename into a protected
    // path from outside it leaves every protected file as it was: a new file there (`A`).
    if (!paths.some((p) => matchesProtect(p, globs))) continue;
    const path = paths.at(-1)!;
    const a = asserts.get(path) ?? asserts.get(paths[0]!) ?? { removed: 0, added: 0 };
    const into = status === 'R' && !matchesProtect(paths[0]!, globs);
    out.push({
      path: into ? path : paths.join(' -> '),
      status: into ? 'A' : status,
      ...(counts.get(path) ?? {}),
      assertionsRemoved: a.removed,
      assertionsAdded: a.added,
    });
  }
  return out.sort((x, y) => (x.path < y.path ? -1 : 1)).slice(0, MAX_PROTECTED_CHANGES);
}

/**
 * New files git does not track yet (`git ls-files --others --exclude-standard`), which `git diff`
 * never shows: each protected one is an added change, its lines and assertion lines counted from its
 * text (null: not read, e.g. a symlink or too large). Merged with the tracked changes, sorted, capped.
 */
export function withUntracked(
  tracked: readonly ProtectedChange[],
  untracked: ReadonlyArray<{ path: string; text: string | null }>,
  globs: readonly string[],
): ProtectedChange[] {
  const added: ProtectedChange[] = [];
  for (const u of untracked) {
    if (!matchesProtect(u.path, globs) || tracked.some((c) => c.path === u.path)) continue;
    if (u.text === null) {
      added.push({ path: u.path, status: 'A', assertionsRemoved: 0, assertionsAdded: 0 });
      continue;
    }
    const lines = u.text === '' ? [] : u.text.replace(/\n$/, '').split('\n');
    added.push({
      path: u.path,
      status: 'A',
      added: lines.length,
      deleted: 0,
      assertionsRemoved: 0,
      assertionsAdded: lines.filter((l) => ASSERTION.test(l)).length,
    });
  }
  return [...tracked, ...added].sort((x, y) => (x.path < y.path ? -1 : 1)).slice(0, MAX_PROTECTED_CHANGES);
}

/**
 * Is this change tampering? `protect` lists files the agent must not change: every change to a file
 * that was protected at the start commit is, whatever its size or direction — modified (even one
 * line, even a mode change or a `"test": "exit 0"` script), deleted, renamed away, or its type
 * changed (a file swapped for a symlink). A new file under a protected glob is not: writing new
 * tests is honest work, and it leaves every existing check as it was (it is still shown as
 * evidence). A rename into a protected path from outside it is such a new file (protectedChanges
 * reports it as `A`).
 */
export function isTampering(c: Pick<ProtectedChange, 'status'>): boolean {
  return c.status !== 'A' && c.status !== 'C';
}

const WHAT: Record<string, string> = { D: 'deleted', M: 'modified', R: 'renamed', T: 'type changed' };

/** One change, as the tampering message names it. */
function tamperingItem(c: ProtectedChange): string {
  const what = WHAT[c.status] ?? 'changed';
  const fewer = c.status !== 'D' && c.assertionsRemoved > c.assertionsAdded ? `, ${c.assertionsRemoved - c.assertionsAdded} assertion(s) fewer` : '';
  return `${c.path} (${what}${fewer})`;
}

/** The REWARD_HACKING message the protected-path evidence supports, or null: any protected file changed since the start commit (isTampering). */
export function protectedTampering(changes: readonly ProtectedChange[]): string | null {
  const tampered = changes.filter(isTampering);
  if (tampered.length === 0) return null;
  const many = tampered.length > 1;
  const list = tampered.slice(0, 5).map(tamperingItem).join(', ');
  const more = tampered.length > 5 ? ` and ${tampered.length - 5} more` : '';
  return `Protected file${many ? 's' : ''} changed in the working tree since the agent started: ${list}${more}. Protected files must stay as they were: restore ${many ? 'them' : 'it'} (git checkout) and make the code pass instead.`;
}

/**
 * What the rule before any-change tampering flagged: a protected file deleted, or one that lost
 * assertions. Kept for workflows that checked a done-claim under it (verification.ts asks the
 * `protect-any-change` patch where the two rules disagree).
 */
export function protectedTamperingBefore(changes: readonly ProtectedChange[]): string | null {
  const deleted = changes.filter((c) => c.status === 'D');
  if (deleted.length) {
    return `Protected file${deleted.length > 1 ? 's' : ''} deleted in the working tree: ${deleted
      .map((c) => c.path)
      .slice(0, 5)
      .join(', ')}. Restore ${deleted.length > 1 ? 'them' : 'it'} (git checkout) and make the code pass instead.`;
  }
  const weakened = changes.filter((c) => c.assertionsRemoved > c.assertionsAdded);
  if (weakened.length) {
    const list = weakened
      .slice(0, 5)
      .map((c) => `${c.path} (${c.assertionsRemoved - c.assertionsAdded} assertion(s) fewer)`)
      .join(', ');
    return `Assertions removed from protected file${weakened.length > 1 ? 's' : ''}: ${list}. Restore them and fix the code, not the tests.`;
  }
  return null;
}

/**
 * The evidence a tampering finding rests on, for its signature (finding.ts): each tampered path with
 * its status, sorted; counts left out.
 */
export function tamperingEvidence(changes: readonly ProtectedChange[]): string {
  return changes
    .filter(isTampering)
    .map((c) => `${c.status}\u0000${c.path}`)
    .sort()
    .join('\u0000');
}

/** One line per change, for status and whispers. */
export function describeChange(c: ProtectedChange): string {
  const lines = c.added !== undefined ? ` +${c.added}/-${c.deleted ?? 0}` : '';
  const asserts = c.assertionsRemoved || c.assertionsAdded ? `, assertions -${c.assertionsRemoved}/+${c.assertionsAdded}` : '';
  return `${c.status} ${c.path}${lines}${asserts}`;
}
