/**
 * Path globs without regular expressions: `*` matches within one path segment (no `/`), `**` any
 * run of characters, `**` followed by `/` nothing or anything ending in `/` (any depth of
 * directories), `?` one character other than `/`; every other character stands for itself.
 *
 * The match simulates the glob's automaton over the path, one character at a time, with the set of
 * glob positions still alive: O(path length × glob length) steps whatever the glob, where a
 * backtracking regular expression can take exponential time on a glob of many stars and a long
 * name (the path is written by the supervised agent). Pure and deterministic: it runs in workflow
 * code too.
 *
 * One quirk is kept from the regular expressions this replaces: `**` does not match a line
 * terminator (`\n`, `\r`, U+2028, U+2029), as `.` does not in a JavaScript regular expression.
 */

type Token =
  | { kind: 'char'; c: string }
  /** `?`: one character other than `/`. */
  | { kind: 'one' }
  /** `*`: any characters other than `/`. */
  | { kind: 'star' }
  /** `**`: any characters but line terminators. */
  | { kind: 'any' }
  /** `**` then `/`, where it starts: either nothing (skip the next token too) or its characters (the next token). */
  | { kind: 'dirs' }
  /** `**` then `/`, once entered: any characters but line terminators, ended by a `/`. */
  | { kind: 'inDirs' };

/** A compiled glob: match it against many paths with globMatch. */
export interface Glob {
  readonly tokens: readonly Token[];
}

export function compileGlob(glob: string): Glob {
  const tokens: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i += 1;
        if (glob[i + 1] === '/') {
          i += 1;
          tokens.push({ kind: 'dirs' }, { kind: 'inDirs' });
        } else tokens.push({ kind: 'any' });
      } else tokens.push({ kind: 'star' });
    } else if (c === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'char', c });
  }
  return { tokens };
}

function lineTerminator(ch: string): boolean {
  return ch === '\n' || ch === '\r' || ch === '\u2028' || ch === '\u2029';
}

/** The glob positions reachable from `live` by matching nothing (a star, `**` or `**`+`/` may be empty). */
function closure(tokens: readonly Token[], live: Uint8Array): void {
  for (let i = 0; i < tokens.length; i++) {
    if (!live[i]) continue;
    const k = tokens[i]!.kind;
    if (k === 'star' || k === 'any') live[i + 1] = 1;
    else if (k === 'dirs') {
      live[i + 1] = 1;
      live[i + 2] = 1;
    }
  }
}

/**
 * Match `path` against a compiled glob, the whole path (anchored at both ends). With `atSlash`,
 * also true when the glob matches the part of the path before one of its `/` (a directory that
 * contains the path).
 */
export function globMatch(glob: Glob, path: string, atSlash = false): boolean {
  const { tokens } = glob;
  const m = tokens.length;
  let live = new Uint8Array(m + 1);
  let next = new Uint8Array(m + 1);
  live[0] = 1;
  closure(tokens, live);
  for (let p = 0; p < path.length; p++) {
    const ch = path[p]!; // UTF-16 code units, as a regular expression without the `u` flag
    if (atSlash && ch === '/' && live[m]) return true;
    next.fill(0);
    for (let i = 0; i < m; i++) {
      if (!live[i]) continue;
      const t = tokens[i]!;
      switch (t.kind) {
        case 'char':
          if (ch === t.c) next[i + 1] = 1;
          break;
        case 'one':
          if (ch !== '/') next[i + 1] = 1;
          break;
        case 'star':
          if (ch !== '/') next[i] = 1;
          break;
        case 'any':
          if (!lineTerminator(ch)) next[i] = 1;
          break;
        case 'dirs':
          break; // consumes nothing itself (closure)
        case 'inDirs':
          if (!lineTerminator(ch)) {
            next[i] = 1;
            if (ch === '/') next[i + 1] = 1;
          }
          break;
      }
    }
    if (!next.includes(1)) return false; // nothing alive: no prefix from here on can match either
    closure(tokens, next);
    [live, next] = [next, live];
  }
  return live[m] === 1;
}

/** A `protect` glob's bounds: its characters, and its `*` (each `**` counts two). */
export const PROTECT_GLOB_MAX_CHARS = 500;
export const PROTECT_GLOB_MAX_STARS = 20;

/** What is wrong with a `protect` glob (empty, too long, too many `*`), or null. */
export function protectGlobProblem(g: string): string | null {
  if (!g) return 'a glob must not be empty';
  if (g.length > PROTECT_GLOB_MAX_CHARS) return `a glob has at most ${PROTECT_GLOB_MAX_CHARS} characters (this one ${g.length})`;
  const stars = g.split('*').length - 1;
  return stars > PROTECT_GLOB_MAX_STARS ? `a glob has at most ${PROTECT_GLOB_MAX_STARS} \`*\` (this one ${stars})` : null;
}

/** The `protect` list's refinement (contract/schemas.ts): each glob's problem, naming `protect.N`. */
export function checkProtectGlobs(globs: string[], ctx: { addIssue(issue: { code: 'custom'; path: number[]; message: string }): void }): void {
  for (const [i, g] of globs.entries()) {
    const wrong = protectGlobProblem(g);
    if (wrong) ctx.addIssue({ code: 'custom', path: [i], message: `protect.${i}: ${wrong}: ${JSON.stringify(g.slice(0, 80))}` });
  }
}
