/** src/domain/contract/shared: one instance per key, built once; keys unique across the code base. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { shared } from '../../src/domain/contract/shared.js';
import { TurnSchema } from '../../src/domain/contract/schemas.js';

const ROOT = join(import.meta.dirname, '../..');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

it('builds a value once and hands out the same instance for its key', () => {
  let builds = 0;
  const a = shared('test/shared:a', () => ({ n: ++builds }));
  const b = shared('test/shared:a', () => ({ n: ++builds }));
  expect(b).toBe(a);
  expect(builds).toBe(1);
  expect(shared('test/shared:b', () => 2)).toBe(2);
});

it('every shared() key is used once, and names its file and constant', () => {
  const seen = new Map<string, string>();
  const problems: string[] = [];
  for (const f of [...files(join(ROOT, 'src')), ...files(join(ROOT, 'workflows'))]) {
    const rel = relative(ROOT, f);
    for (const m of readFileSync(f, 'utf8').matchAll(/const (\w+)(?:\s*:[^=\n]+)? = shared\('([^']+)'/g)) {
      const [, name, key] = m;
      const expected = `${rel.replace(/^src\/domain\//, '').replace(/\.ts$/, '')}:${name}`;
      if (key !== expected) problems.push(`${rel}: key ${key} should be ${expected}`);
      if (seen.has(key!)) problems.push(`${rel}: key ${key} also used in ${seen.get(key!)}`);
      seen.set(key!, rel);
    }
  }
  expect(problems).toEqual([]);
  expect(seen.size).toBeGreaterThan(30); // the scan sees the schemas (it would catch a duplicate)
});

it('a shared schema validates as before', () => {
  expect(TurnSchema.safeParse({ text: 'hi' }).success).toBe(true);
  expect(TurnSchema.safeParse({ text: 3 }).success).toBe(false);
});

/** Modules the workflow bundle does not include (the CLI and tooling use them): their module scope runs once. */
const NOT_IN_THE_BUNDLE = ['src/domain/contract/output-schemas.ts', 'src/domain/mesh/tasks.ts', 'src/domain/notify/irc.ts'];

it('no zod schema is built at module scope in src/domain (the workflow bundle): each goes through shared()', () => {
  const inBundle = files(join(ROOT, 'src/domain')).filter((f) => !NOT_IN_THE_BUNDLE.includes(relative(ROOT, f)));
  const offenders = inBundle.flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/^(?:export )?const (\w+)(?:\s*:[^=\n]+)? = z(?:$|\.)/gm)].map((m) => `${relative(ROOT, f)}: ${m[1]}`),
  );
  expect(offenders).toEqual([]);
});
