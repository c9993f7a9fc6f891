/** The rule of the architecture: src/domain/ is pure — nothing under it imports @temporalio (or host I/O). */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
const imports = (file: string) => [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)[^;]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);

it('nothing under src/domain/ imports @temporalio, node: modules, pino or execa', () => {
  const offenders = files(join(ROOT, 'src/domain')).flatMap((f) =>
    imports(f)
      .filter((i) => /^(@temporalio\/|node:|pino$|execa$)/.test(i))
      .map((i) => `${relative(ROOT, f)} imports ${i}`),
  );
  expect(offenders).toEqual([]);
});

it('the check sees imports (it would catch one)', () => {
  expect(imports(join(ROOT, 'workflows/agent.ts'))).toContain('@temporalio/workflow');
});

it('workflows/agent.ts is one page of wiring; no workflow or core file over 300 lines', () => {
  const lines = (f: string) => readFileSync(f, 'utf8').split('\n').length;
  expect(lines(join(ROOT, 'workflows/agent.ts'))).toBeLessThan(150);
  const long = [...files(join(ROOT, 'workflows')), ...files(join(ROOT, 'src/domain'))].filter((f) => lines(f) > 300).map((f) => relative(ROOT, f));
  expect(long).toEqual([]);
});

it('the mesh shell is thin: each file in workflows/mesh/ under 150 lines', () => {
  const lines = (f: string) => readFileSync(f, 'utf8').split('\n').length;
  const long = files(join(ROOT, 'workflows/mesh'))
    .filter((f) => lines(f) >= 150)
    .map((f) => `${relative(ROOT, f)}: ${lines(f)} lines`);
  expect(long).toEqual([]);
});

/**
 * Inside src/domain/, arrows point down: contract (schemas, types, limits) is the floor; judgement
 * builds on it, notify (alert texts, causes, incidents) on judgement, and the agent and mesh cores
 * on those. No folder imports one above it or
 * beside it (`import type` included: a type that two layers need lives in the lower one).
 */
const LAYER: Record<string, number> = { contract: 0, glob: 0, judgement: 1, notify: 2, agent: 3, mesh: 3, group: 3 };
const folderOf = (file: string) =>
  relative(join(ROOT, 'src/domain'), file)
    .split('/')[0]!
    .replace(/\.(js|ts)$/, '');

it('inside src/domain/ no folder imports from a folder above or beside it', () => {
  const offenders = files(join(ROOT, 'src/domain')).flatMap((f) => {
    const from = folderOf(f);
    return imports(f)
      .filter((i) => i.startsWith('.'))
      .map((i) => folderOf(join(f, '..', i)))
      .filter((to) => to !== from && (LAYER[to] ?? 9) >= (LAYER[from] ?? 9) && LAYER[to] !== 0)
      .map((to) => `${relative(ROOT, f)} (${from}) imports ${to}`);
  });
  expect(offenders).toEqual([]);
  // The rule sees an arrow when there is one.
  expect(folderOf(join(ROOT, 'src/domain/agent/links.ts'))).toBe('agent');
  expect(Object.keys(LAYER).sort()).toEqual(
    readdirSync(join(ROOT, 'src/domain'))
      .map((n) => n.replace(/\.ts$/, ''))
      .sort(),
  );
});
