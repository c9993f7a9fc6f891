/** Mesh test helpers: a real git repository in a temp dir, and a mesh input driven by the fixture worker. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MeshInput, MeshTaskInput, TunablesInput } from '../../src/domain/mesh/config.js';
import { ROOT } from './stack.js';

export const MESH_AGENT = join(ROOT, 'test/fixtures/mesh-agent.py');

export const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A repository on branch main with one commit of `files`. */
export function gitRepo(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'warden-mesh-repo-'));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'test');
  git(dir, 'config', 'user.email', 'test@example.com');
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'base');
  return dir;
}

export function meshInput(runId: string, repo: string, tasks: MeshTaskInput[], tunables: TunablesInput = {}, extra: Partial<MeshInput> = {}): MeshInput {
  return {
    runId,
    repo,
    tasks,
    tunables: { tickInterval: '1s', ackSla: '6s', patchDraftTimeout: '90s', checkpointInterval: '60s', ...tunables },
    driver: { kind: 'command', command: ['python3', MESH_AGENT] },
    supervisor: { evalInterval: 50, idleAfterMs: 0 },
    ...extra,
  };
}

/** The integration branch's commit subjects, oldest first (without the base). */
export const integrated = (repo: string, runId: string) =>
  git(repo, 'log', '--reverse', '--format=%s', `main..mesh/${runId}/integration`).split('\n').filter(Boolean);
