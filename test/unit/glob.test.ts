import { describe, expect, it } from 'vitest';
import { AgentSpecSchema } from '../../src/domain/contract/schemas.js';
import { compileGlob, globMatch, PROTECT_GLOB_MAX_CHARS, PROTECT_GLOB_MAX_STARS } from '../../src/domain/glob.js';
import { matchesProtect } from '../../src/domain/judgement/heuristic/protected.js';
import { inScope } from '../../src/domain/mesh/gates.js';

/** The regular expression the globs were translated to before (backtracking; here only on short inputs). */
function oldRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        i += 1;
        if (glob[i + 1] === '/') {
          i += 1;
          re += '(?:.*/)?';
        } else re += '.*';
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

function oldMatchesProtect(path: string, globs: readonly string[]): boolean {
  const segments = path.split('/');
  return globs.some((g) => {
    const glob = g.replace(/^\.\//, '').replace(/^\//, '').replace(/\/$/, '');
    const re = oldRegExp(glob);
    if (!glob.includes('/')) return segments.some((seg) => re.test(seg));
    return segments.some((_, i) => re.test(segments.slice(0, i + 1).join('/')));
  });
}

function oldInScope(scope: readonly string[], file: string): boolean {
  const re = (glob: string) => {
    let g = glob.replace(/^\.\//, '');
    if (g.endsWith('/')) g += '**';
    return oldRegExp(g);
  };
  if (!scope.length) return true;
  return scope.some((g) => re(g).test(file) || re(`${g.replace(/\/$/, '')}/**`).test(file));
}

/** A small seeded generator (mulberry32), so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function word(next: () => number, alphabet: readonly string[], max: number): string {
  let s = '';
  const n = Math.floor(next() * (max + 1));
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(next() * alphabet.length)]!;
  return s;
}

const GLOB_CHARS = ['a', 'b', '.', '/', '*', '*', '?', '\\', '[', '('];
const PATH_CHARS = ['a', 'b', '.', '/', '/', '\n', '\\', '[', '('];

describe('glob matching (protect, mesh scope)', () => {
  it('agrees with the former regular expressions on random short globs and paths', () => {
    const next = rng(20261128);
    for (let n = 0; n < 20000; n++) {
      const glob = word(next, GLOB_CHARS, 8);
      const path = word(next, PATH_CHARS, 10);
      const label = JSON.stringify({ glob, path });
      expect(globMatch(compileGlob(glob), path), label).toBe(oldRegExp(glob).test(path));
      if (glob) expect(matchesProtect(path, [glob]), label).toBe(oldMatchesProtect(path, [glob]));
      if (glob) expect(inScope([glob], path), label).toBe(oldInScope([glob], path));
    }
  });

  it('keeps the documented cases', () => {
    expect(matchesProtect('test/unit/a.test.ts', ['test/**'])).toBe(true);
    expect(matchesProtect('src/test/a.ts', ['test/**'])).toBe(false);
    expect(matchesProtect('a/b/c.snap', ['*.snap'])).toBe(true);
    expect(matchesProtect('pkg/tests/a_test.go', ['**/tests/*_test.go'])).toBe(true);
    expect(matchesProtect('a_test.go', ['**/*_test.go'])).toBe(true);
    expect(matchesProtect('src/x.ts', ['src/?.ts'])).toBe(true);
    expect(matchesProtect('src/xy.ts', ['src/?.ts'])).toBe(false);
  });

  // A long file name (the agent chooses it) against a glob of a few stars: a backtracking regular
  // expression takes seconds here (minutes to hours with a few more stars); the matcher is linear in each.
  const long = 'a'.repeat(4096);

  it('matches a protect glob of many stars against a 4 KiB name quickly', { timeout: 2000 }, () => {
    expect(matchesProtect(long, ['*a*a*b'])).toBe(false);
    expect(matchesProtect(`x/${long}`, ['x/**a**a**b'])).toBe(false);
    expect(matchesProtect(long, ['*a*a*a'])).toBe(true);
  });

  it('matches a mesh scope glob of many stars against a 4 KiB path quickly', { timeout: 2000 }, () => {
    expect(inScope(['src/*a*a*b'], `src/${long}`)).toBe(false);
  });
});

describe('protect globs at the spec boundary', () => {
  const spec = (protect: unknown) => AgentSpecSchema.safeParse({ agentId: 'a', task: 't', protect });

  it('accepts ordinary globs', () => {
    expect(spec(['test/**', '*.snap', '**/tests/*_test.go']).success).toBe(true);
  });

  it('refuses an empty glob, a too long one and one of too many stars, naming protect.N', () => {
    for (const [globs, want] of [
      [['test/**', ''], /protect\.1: a glob must not be empty/],
      [['x'.repeat(PROTECT_GLOB_MAX_CHARS + 1)], /protect\.0: a glob has at most 500 characters/],
      [['ok', `${'*a'.repeat(PROTECT_GLOB_MAX_STARS + 1)}`], /protect\.1: a glob has at most 20 `\*`/],
    ] as const) {
      const r = spec(globs);
      expect(r.success).toBe(false);
      expect(r.error?.issues.map((i) => i.message).join('\n')).toMatch(want);
      expect(r.error?.issues[0]?.path[0]).toBe('protect');
    }
  });
});
