/**
 * Mesh test helpers: a real git repository in a temp dir, a mesh input driven by the fixture worker,
 * the steers a workflow was sent, and the built CLI against a test stack.
 */
import { execFileSync } from 'node:child_process';
import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MeshInput, MeshTaskInput, TunablesInput } from '../../src/domain/mesh/config.js';
import { ROOT, type Stack } from './stack.js';

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

/** The `steer` signals sent to workflow `workflowId`, their text, oldest first. */
export async function steersTo(stack: Stack, workflowId: string): Promise<string[]> {
  const history = await stack.warden.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? [])
    .map((e) => e.workflowExecutionSignaledEventAttributes)
    .filter((a) => a?.signalName === 'steer')
    .map((a) => (JSON.parse(Buffer.from(a!.input!.payloads![0]!.data!).toString('utf8')) as { text: string }).text);
}

/** Runs the built `warden` CLI against `stack`'s server (never rejects: look at the exit code). */
export const wardenCli =
  (stack: Stack) =>
  (...args: string[]) =>
    execa('node', [join(ROOT, 'dist/src/cli/main.js'), '--address', stack.server.address, '--namespace', stack.server.namespace, ...args], {
      reject: false,
      env: { WARDEN_LOG_LEVEL: 'warn' },
    });
