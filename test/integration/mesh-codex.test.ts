/**
 * A mesh worker that is the real `codex` binary, driven by warden against the scripted model
 * server: the model edits a file in the worker's worktree and writes the seed's checkpoint with a
 * shell call; warden drafts the patch from the worktree's diff (the model wrote none), the gates
 * pass on the model's final message, and the patch is integrated.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startMesh, waitForMesh } from '../../src/client/mesh.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { functionCallOutputs, inputTexts, message, shellCall, startModelServer, type ModelServer, type RecordedRequest } from '../fixtures/model-server.js';
import { git, gitRepo, integrated } from '../helpers/mesh.js';
import { useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const noCredentials = mkdtempSync(join(tmpdir(), 'warden-nocreds-'));

let model: ModelServer;
beforeAll(async () => {
  model = await startModelServer();
});
afterAll(async () => {
  await model?.close();
});
const stack = useStack();

const DELIVERABLE = [
  '1) Summary',
  '- uppercased a.txt',
  '2) Intended files touched',
  '- a.txt',
  '3) Patch',
  '(in the patch draft)',
  '4) Commands run + results',
  '- printf: ok',
  '5) Risks / follow-ups',
  '- none',
  '6) Questions',
  '- none',
].join('\n');

function reply(r: RecordedRequest) {
  const user = inputTexts(r.body, 'user').join('\n');
  const cp = /create\/update (\S+\.md) with the required checkpoint format/.exec(user)?.[1];
  if (functionCallOutputs(r.body).length > 0 || !cp)
    return message(functionCallOutputs(r.body).length ? DELIVERABLE : 'Patch drafted; waiting for integration.');
  const checkpoint = [
    'status_code: done',
    'status_detail: a.txt uppercased',
    'plan:',
    '- read',
    '- edit',
    '- diff',
    '- check',
    '- report',
    'intended_files:',
    '- a.txt',
    'blockers:',
    '- none',
    'artifacts:',
    `- ${cp}`,
  ].join('\\n');
  return shellCall(`printf 'A\\n' > a.txt && printf '${checkpoint}\\n' > ${cp}`, { extra: { login: false } });
}

test('a codex worker: edits its worktree, writes its checkpoint; warden drafts the patch and integrates it', async () => {
  model.setScript(reply);
  const repo = gitRepo({ 'a.txt': 'a\n' });
  await startMesh(stack.warden, {
    runId: 'codex',
    repo,
    tasks: [{ title: 'Uppercase the letter in a.txt', slug: 'upper-a', scope: ['a.txt'] }],
    tunables: { tickInterval: '1s', ackSla: '60s', patchDraftTimeout: '120s', stallThreshold: 10 },
    // The checkpoint lives outside the worktree (.mesh/runs/… of the repository): the sandbox must allow it.
    driver: { kind: 'codex', model: 'warden-test-model', config: model.codexOverrides(), credentialsHome: noCredentials, sandbox: 'danger-full-access' },
    supervisor: { evalInterval: 50, idleAfterMs: 0 },
  });
  const done = await waitForMesh(stack.warden, 'codex', (s) => s.phase === 'ready', 180_000);
  if (process.env.WARDEN_MESH_SHOW) console.log(renderDashboard(done, Date.now(), { logLines: 30 }));
  const [t] = done.tasks;
  expect(t!.state).toBe('integrated');
  expect(t!.attempts).toHaveLength(1);
  expect(t!.attempts[0]!.gates).toMatchObject({ A: 'ok', C: 'ok', O: 'ok', D: 'ok', P: 'ok', S: 'ok' });
  expect(done.log.some((l) => /patch=OK .*\(drafted by warden\)/.test(l.text))).toBe(true);
  expect(readFileSync(t!.attempts[0]!.patchPath, 'utf8')).toMatch(
    /^# patch draft written by warden from the worktree diff against [0-9a-f]{40}\ndiff --git a\/a.txt b\/a.txt/,
  );
  expect(integrated(repo, 'codex')).toEqual(['mesh codex: task 1 upper-a (attempt 1)']);
  expect(git(repo, 'show', 'mesh/codex/integration:a.txt')).toBe('A');
  // The model saw warden's worker prompt: the paths and the seed's SLA.
  const first = model.requests.find((r) => inputTexts(r.body, 'user').join('\n').includes('You are a worker in warden mesh run codex'));
  expect(inputTexts(first!.body, 'user').join('\n')).toContain('SLA requirements (non-negotiable):');
});
