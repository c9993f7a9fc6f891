/**
 * The message definitions in src/messages/agent.ts (and src/messages/mesh.ts) are the one place
 * signal, query and update names and payload types are written. Code outside workflows/ sends through
 * them, so these files must stay safe to load outside the workflow sandbox.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { SIGNAL_SCHEMAS } from '../../src/domain/contract/schemas.js';
import { agentSignals } from '../../src/messages/agent.js';

const ROOT = join(import.meta.dirname, '../..');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
/** Imports that stay in the compiled JavaScript (not `import type`). */
const runtimeImports = (file: string) => [...readFileSync(file, 'utf8').matchAll(/^\s*import\s+(?!type\s)[^;]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);

it('agentSignals has one definition per signal schema, each under its own name', () => {
  expect(Object.keys(agentSignals).sort()).toEqual(Object.keys(SIGNAL_SCHEMAS).sort());
  for (const [key, def] of Object.entries(agentSignals)) {
    expect(def).toEqual({ type: 'signal', name: key });
  }
});

it('the message files load nothing at run time but @temporalio/workflow (safe in the client)', () => {
  for (const f of ['src/messages/agent.ts', 'src/messages/mesh.ts']) {
    expect(runtimeImports(join(ROOT, f))).toEqual(['@temporalio/workflow']);
  }
  // The check sees a runtime import when there is one.
  expect(runtimeImports(join(ROOT, 'workflows/agent.ts')).length).toBeGreaterThan(1);
});

it('outside workflows/, no code signals, queries or updates a workflow by a string name', () => {
  // `handle.signal('steer', …)` restates the payload type by hand; `handle.signal(steerSignal, …)` takes it from the definition.
  const byString = /\.(signal|query|executeUpdate|startUpdate)(<[^()]*>)?\(\s*['"`]/;
  const offenders = ['src', 'activities', 'workers'].flatMap((dir) =>
    files(join(ROOT, dir)).flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, i }))
        .filter(({ line }) => byString.test(line) && !/^\s*(\*|\/\/)/.test(line))
        .map(({ i }) => `${relative(ROOT, f)}:${i + 1}`),
    ),
  );
  expect(offenders).toEqual([]);
  expect(byString.test(`await handle.query<AgentStatus>('status');`)).toBe(true);
  expect(byString.test('await handle.query(statusQuery);')).toBe(false);
});

it('nothing under src/ or activities/ imports from workflows/ (the shell sits above them)', () => {
  const upward = /from\s+['"](\.\.\/)+workflows\//;
  const offenders = ['src', 'activities'].flatMap((dir) =>
    files(join(ROOT, dir))
      .filter((f) => upward.test(readFileSync(f, 'utf8')))
      .map((f) => relative(ROOT, f)),
  );
  expect(offenders).toEqual([]);
  expect(upward.test(`import { statusQuery } from '../../workflows/messages.js';`)).toBe(true);
});
