/**
 * One alert for one cause, end to end: agents that escalate on the same failing command and error
 * in the same repository and branch give one webhook naming them all; another cause gives its own;
 * a worker SIGKILLed during the grouping window still gives exactly one. All real: a dev server,
 * worker processes (node dist/workers/main.js) with a short grouping window, a git repository,
 * an HTTP listener on 127.0.0.1, agents escalated by the heuristic evaluator on their own turns.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { TurnInput } from '../../src/domain/contract/schemas.js';
import { causeFingerprint, incidentWorkflowId } from '../../src/domain/notify/cause.js';
import type { IncidentReport, IncidentView } from '../../workflows/incident.js';
import { reportWithEvaluations } from '../helpers/agents.js';
import { cleanup, eventually, useWorkerProcesses } from '../helpers/stack.js';
import { startWebhookListener, type WebhookListener } from '../helpers/webhook.js';

const WINDOW_MS = 25_000;
const stack = useWorkerProcesses({ WARDEN_NOTIFY_GROUP_WINDOW: `${WINDOW_MS}ms` });
let hook: WebhookListener;
let repo: string;

beforeAll(async () => {
  hook = await startWebhookListener();
  repo = realpathSync(mkdtempSync(join(tmpdir(), 'warden-incident-')));
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'package.json'), '{}\n');
  git('add', '.');
  git('commit', '-q', '-m', 'start');
});
afterAll(async () => {
  await hook?.close();
  if (repo) cleanup(repo);
});

const COMMAND = 'npm run build';
const ERROR = "error TS2307: Cannot find module './config'";

/** A failing build turn; the error differs between agents only in noise (line numbers, a temp path, a time). */
function failing(agent: number, i: number, error = ERROR): TurnInput {
  const noisy = `src/app.ts(${agent * 10 + i},3): ${error} (log /tmp/build-${agent}-${i}.log, 2026-11-28T14:${10 + i}:1${agent}Z)`;
  return { id: `${agent}-${i}`, text: 'The build failed again, retrying the build.', toolCalls: [{ name: 'shell', args: COMMAND, result: noisy, ok: false }] };
}

async function escalate(agentId: string, agent: number, error = ERROR): Promise<void> {
  await stack.warden.start({
    agentId,
    task: `Make the build pass (${agentId}).`,
    // Where the agent works: warden resolves the repository and branch there.
    verify: { command: 'true', cwd: repo },
    notify: { webhooks: [{ url: hook.url }] },
  });
  // Evaluated every 5 turns: a whisper, a stronger one, then the escalation (the ladder as always).
  const turns = Array.from({ length: 15 }, (_, i) => failing(agent, i + 1, error));
  await reportWithEvaluations(stack.warden, agentId, turns.slice(0, 5));
  await reportWithEvaluations(stack.warden, agentId, turns.slice(5, 10), 5, 1);
  await reportWithEvaluations(stack.warden, agentId, turns.slice(10), 5, 2);
  await eventually(async () => (await stack.warden.status(agentId)).state === 'awaiting-input', { timeoutMs: 60_000, what: `${agentId} escalated` });
}

interface IncidentBody {
  event: string;
  agentId: string;
  escalation?: number;
  deliveryId: string;
  incident?: { id: string; command: string; repo: string; branch: string; total: number; followUp: boolean; agents: { agentId: string; escalation: number }[] };
}
const bodies = () => hook.accepted().map((d) => d.json as IncidentBody);
const incidentOf = (fp: string) => stack.warden.client.workflow.getHandle(incidentWorkflowId(fp));
const fingerprintOf = (error: string) =>
  causeFingerprint({ command: COMMAND, error: failing(0, 1, error).toolCalls![0]!.result as string, repo, branch: 'main' });

test('five agents failing the same command within a minute: one webhook naming five; another cause: its own', { timeout: 300_000 }, async () => {
  const worker = stack.spawnWorker();
  const other = 'error TS2304: Cannot find name "render"';
  const ids = ['same-1', 'same-2', 'same-3', 'same-4', 'same-5'];
  await Promise.all([...ids.map((id, i) => escalate(id, i + 1)), escalate('other-1', 9, other)]);

  const fp = fingerprintOf(ERROR);
  const fpOther = fingerprintOf(other);
  expect(fp).not.toBe(fpOther);
  // Each incident ends one window after its notification, when no agent joined in it.
  const report = (await incidentOf(fp).result()) as IncidentReport;
  const reportOther = (await incidentOf(fpOther).result()) as IncidentReport;
  expect(report).toMatchObject({ fingerprint: fp, agents: 5 });
  expect(report.notifications).toHaveLength(1);
  expect(reportOther).toMatchObject({ fingerprint: fpOther, agents: 1 });
  await eventually(async () => bodies().length >= 2, { timeoutMs: 60_000, what: 'two webhooks' });
  await new Promise((r) => setTimeout(r, 2_000)); // nothing else arrives

  const got = bodies();
  expect(got).toHaveLength(2);
  const same = got.find((b) => b.incident?.id === fp)!;
  expect(same.incident).toMatchObject({ command: COMMAND, repo, branch: 'main', total: 5, followUp: false });
  expect(same.incident!.agents.map((a) => a.agentId).sort()).toEqual(ids);
  expect(same.incident!.agents.every((a) => a.escalation === 1)).toBe(true);
  expect(same.deliveryId).toMatch(new RegExp(`^notify-incident-${fp}-`));
  // The other cause had one agent: its own alert, one window later, as if it were alone.
  const alone = got.find((b) => !b.incident)!;
  expect(alone).toMatchObject({ event: 'escalation', agentId: 'other-1', escalation: 1 });
  expect(alone.deliveryId).toMatch(new RegExp(`^notify-incident-${fpOther}-`));
  // Each agent keeps its own state and ladder.
  for (const id of [...ids, 'other-1']) expect(await stack.warden.status(id)).toMatchObject({ state: 'awaiting-input', escalations: 1, escalationStep: 3 });
  await stack.kill(worker);
});

test('a worker SIGKILLed during the window: still exactly one webhook naming five', { timeout: 300_000 }, async () => {
  hook.deliveries.length = 0;
  const error = "error TS2307: Cannot find module './routes'";
  const fp = fingerprintOf(error);
  let worker = stack.spawnWorker();
  const ids = ['crash-1', 'crash-2', 'crash-3', 'crash-4', 'crash-5'];
  await Promise.all(ids.map((id, i) => escalate(id, i + 1, error)));
  // All five have joined and the window is still open: nothing has gone out yet. The worker dies.
  const view = await eventually(
    async () => {
      const v = await incidentOf(fp)
        .query<IncidentView>('incident')
        .catch(() => null);
      return v && v.joins.length >= 5 ? v : null;
    },
    { timeoutMs: 60_000, what: 'five joins' },
  );
  expect(view.joins.sort()).toEqual(ids.map((id) => `${id}#1`));
  expect(view).toMatchObject({ announced: 0, notifications: [] });
  expect(hook.accepted()).toHaveLength(0);
  await stack.kill(worker);
  worker = stack.spawnWorker();
  const report = (await incidentOf(fp).result()) as IncidentReport;
  expect(report).toMatchObject({ fingerprint: fp, agents: 5 });
  expect(report.notifications).toHaveLength(1);
  await eventually(async () => bodies().length >= 1, { timeoutMs: 60_000, what: 'the webhook' });
  await new Promise((r) => setTimeout(r, 2_000));
  const got = bodies();
  expect(got).toHaveLength(1);
  expect(got[0]!.incident!.agents.map((a) => a.agentId).sort()).toEqual(ids);
  await stack.kill(worker);
});
