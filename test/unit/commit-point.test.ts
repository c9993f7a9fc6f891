/**
 * One commit point (src/domain/agent/visibility.ts `commit`): the agent core's rules change state
 * and never publish it; the workflow shell (workflows/) publishes at the end of every handler, once
 * per main-loop step and before every wait inside a step. The mesh is built the same way: its core
 * (src/domain/mesh/) only changes state, its shell (workflows/mesh/) commits with `commit(sh)`. A rule that published itself again, or a
 * shell that grew commits here and there, fails this test.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

/** The most `commit(ctx)` calls the agent's shell may make (today: 12, listed below). */
const MAX_COMMIT_SITES = 12;
/**
 * The most `commit(sh)` calls the mesh's shell may make (today: 10: once per loop step, the
 * handlers' wrapper, before validation, the waits for a human and for apply, the alerts,
 * continue-as-new, a carried run's start and completion).
 */
const MAX_MESH_COMMIT_SITES = 10;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every call of `commit(` or `publish(` (not a definition, not a method `.commit(`), as file:line, comments left out. */
function calls(files: string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .map((line, i) => ({ line: line.replace(/\/\/.*$/, ''), at: `${relative(ROOT, file)}:${i + 1}` }))
      .filter(({ line }) => !/^\s*\*/.test(line) && /(?<![.\w])(?:commit|publish)\(/.test(line) && !/function (?:commit|publish)\(/.test(line))
      .map(({ at }) => at),
  );
}

const shellFiles = () => sources(join(ROOT, 'workflows'));
const agentShell = () => shellFiles().filter((f) => !f.includes('/workflows/mesh/'));
const meshShell = () => sources(join(ROOT, 'workflows/mesh'));

describe('one commit point', () => {
  it('no code under src/ publishes: the agent core, the mesh core and the rest only change state', () => {
    expect(calls(sources(join(ROOT, 'src')))).toEqual([]);
  });

  it(`the agent's shell commits at no more than ${MAX_COMMIT_SITES} sites, all in workflows/`, () => {
    const sites = calls(agentShell());
    expect(sites.length).toBeGreaterThan(0);
    expect(sites.length, sites.join('\n')).toBeLessThanOrEqual(MAX_COMMIT_SITES);
  });

  it('the commit sites are the handlers, the loop and the waits inside a step', () => {
    const files = new Set(calls(agentShell()).map((at) => at.split(':')[0]));
    expect([...files].sort()).toEqual(['workflows/agent.ts', 'workflows/children.ts', 'workflows/loop.ts', 'workflows/turn.ts', 'workflows/verify.ts']);
  });

  it(`the mesh's shell commits at no more than ${MAX_MESH_COMMIT_SITES} sites`, () => {
    const sites = calls(meshShell());
    expect(sites.length).toBeGreaterThan(0);
    expect(sites.length, sites.join('\n')).toBeLessThanOrEqual(MAX_MESH_COMMIT_SITES);
  });

  it("the mesh's commit sites are its handlers, its loop, its ending steps and the wait for a human", () => {
    const files = new Set(calls(meshShell()).map((at) => at.split(':')[0]));
    expect([...files].sort()).toEqual([
      'workflows/mesh/end.ts',
      'workflows/mesh/integrate.ts',
      'workflows/mesh/loop.ts',
      'workflows/mesh/shell.ts',
      'workflows/mesh/workflow.ts',
    ]);
  });

  it('the detector sees a call and ignores definitions, methods and comments', () => {
    const probe = join(mkdtempSync(join(tmpdir(), 'warden-commit-point-')), 'probe.ts');
    const text = [
      '  commit(ctx);',
      '  git.commit(message);',
      'export function commit(ctx: C): void {}',
      '  // commit(ctx) here',
      ' * publish(ctx)',
      "  if (x) publish(sh, 'ready');",
    ];
    writeFileSync(probe, text.join('\n'));
    expect(calls([probe]).map((at) => at.split(':').at(-1))).toEqual(['1', '6']);
  });
});
