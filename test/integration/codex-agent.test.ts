/**
 * A real Codex agent driven by warden, end to end on a real dev server: the real `codex` binary
 * runs each turn against a scripted model server on 127.0.0.1 (Responses API).
 *  - The model keeps running the same failing shell command: warden flags SPIRALING, and the
 *    whisper text appears in the next request Codex sends to the model. After two whispers the
 *    agent is escalated and paused, no further turn starts, and `temporal workflow signal --name
 *    resume` lets it continue.
 *  - interrupt during a stalled turn: the codex process is gone within the grace period; the
 *    session resumes on steer.
 *  - stop with a drain timeout: a turn that ends in time completes; one that does not is cancelled.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { agentDirs } from '../../activities/turn.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { inputTexts, message, shellCall, stall, startModelServer, type ModelServer, type RecordedRequest } from '../fixtures/model-server.js';
import { recordHistory } from '../helpers/histories.js';
import { processesWithEnv } from '../helpers/procs.js';
import { eventually, useStack } from '../helpers/stack.js';
import { temporalCli } from '../helpers/temporal-cli.js';
import { waitForStatus, finalStatus } from '../helpers/agents.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const noCredentials = mkdtempSync(join(tmpdir(), 'warden-nocreds-'));
const MODEL = 'warden-test-model';
const noLogin = { login: false };

let model: ModelServer;
beforeAll(async () => {
  model = await startModelServer();
});
afterAll(async () => {
  await model?.close();
});

const stack = useStack();

function codexAgent(agentId: string, task: string, extra: Partial<AgentSpecInput> = {}): AgentSpecInput {
  const workDir = join(process.env.WARDEN_HOME!, 'work', agentId);
  mkdirSync(workDir, { recursive: true });
  return {
    agentId,
    task,
    driver: { kind: 'codex', model: MODEL, config: model.codexOverrides(), credentialsHome: noCredentials },
    supervisor: { idleAfterMs: 0 },
    ...extra,
    driven: { workDir, killGraceMs: 3_000, ...(extra.driven ?? {}) },
  };
}

const lastInputItem = (r: RecordedRequest) => {
  const input = (r.body as { input?: Array<{ type?: string }> } | null)?.input;
  return Array.isArray(input) ? input.at(-1) : undefined;
};
const userTexts = (r: RecordedRequest) => inputTexts(r.body, 'user').join('\n');
/** Requests that start a turn (the last input item is the user's turn input, not a tool result). */
const turnStarts = (task: string) => model.requests.filter((r) => userTexts(r).includes(task) && lastInputItem(r)?.type !== 'function_call_output');

const statusWhere = (agentId: string, pred: (s: AgentStatus) => boolean, what: string, timeoutMs = 60_000) =>
  waitForStatus(stack.warden, agentId, pred, what, timeoutMs);

describe('a spiraling Codex agent', () => {
  test('whispers reach the next model request; escalation pauses it; the temporal CLI resumes it', async () => {
    const task = 'Make the build pass (task S-1207).';
    // Every turn: run the same failing command, then say so.
    model.setScript((r) =>
      lastInputItem(r)?.type === 'function_call_output' ? message('The build failed again; retrying the build.') : shellCall('false', { extra: noLogin }),
    );
    await stack.warden.start(codexAgent('codex-spiral', task, { supervisor: { evalInterval: 3, idleAfterMs: 0 } }));
    const escalated = await statusWhere('codex-spiral', (s) => s.state === 'awaiting-input', 'escalation', 120_000);
    expect(escalated).toMatchObject({ escalationStep: 3, turns: 9, driver: 'codex' });
    expect(escalated.lastVerdict).toMatchObject({ pattern: 'SPIRALING' });

    const starts = turnStarts(task);
    expect(starts).toHaveLength(9);
    const withCorrection = starts.map((r, i) => [i + 1, /\[CORRECTION\] You have run the same failing call/.test(userTexts(r))] as const);
    // Evaluated after turns 3 and 6: the whispers are in the requests that start turns 4 and 7 — and in later
    // requests of the same session, as conversation history — but never before.
    expect(withCorrection.filter(([, has]) => has).map(([n]) => n)[0]).toBe(4);
    expect(userTexts(starts[2]!)).not.toContain('[CORRECTION]');
    expect(userTexts(starts[6]!)).toMatch(/\[CORRECTION\] Warning 2 of 2/);
    expect(userTexts(starts[5]!)).not.toMatch(/Warning 2 of 2/);
    // One session: turn 9's request carries turn 1's task as history.
    expect(userTexts(starts[8]!)).toContain('Your task:\nMake the build pass (task S-1207).');

    // Paused: no further turn starts.
    const count = model.requests.length;
    await new Promise((r) => setTimeout(r, 3_000));
    expect(model.requests.length).toBe(count);

    const cli = await temporalCli(stack.server.address, ['workflow', 'signal', '--workflow-id', 'agent-codex-spiral', '--name', 'resume']);
    expect(cli.exitCode, cli.all).toBe(0);
    await eventually(async () => turnStarts(task).length >= 10, { what: 'turn 10 after resume', timeoutMs: 60_000 });
    expect(userTexts(turnStarts(task)[9]!)).toMatch(/\[ESCALATION\] Still no progress after 2 warnings/);
    await stack.warden.signal('codex-spiral', 'abort', { reason: 'test over' });
    const final = await finalStatus(stack.warden.handle('codex-spiral'));
    expect(final.state).toBe('failed');
    await recordHistory(stack.server.address, stack.warden.handle('codex-spiral'), 'codex-agent-spiral');
  });
});

describe('interrupt and stop a Codex agent', () => {
  test('interrupt a stalled turn: codex is gone within the grace period; the session resumes on steer', async () => {
    const task = 'Refactor the parser (task I-5531).';
    let stalled = true;
    model.setScript((r) => {
      if (stalled) return stall();
      return userTexts(r).includes('[steering] Use the small approach.') ? message('TASK COMPLETE — done the small way.') : message('hmm');
    });
    await stack.warden.start(codexAgent('codex-int', task));
    await eventually(async () => turnStarts(task).length >= 1, { what: 'turn 1 reached the model' });
    const home = agentDirs('codex-int').homeDir;
    await eventually(async () => processesWithEnv(`CODEX_HOME=${home}`).length > 0, { what: 'codex running' });
    const t0 = Date.now();
    await stack.warden.signal('codex-int', 'interrupt', { reason: 'taking too long' });
    await statusWhere('codex-int', (s) => s.state === 'awaiting-input' && !s.turnRunning, 'interrupted');
    expect(Date.now() - t0).toBeLessThan(3_000 + 4_000);
    expect(processesWithEnv(`CODEX_HOME=${home}`)).toEqual([]);
    stalled = false;
    await stack.warden.signal('codex-int', 'steer', { text: 'Use the small approach.' });
    const done = await finalStatus(stack.warden.handle('codex-int'));
    expect(done).toMatchObject({ state: 'done', turns: 2 });
    const starts = turnStarts(task);
    expect(starts).toHaveLength(2);
    // The same session: the resumed request still carries turn 1's input.
    expect(userTexts(starts[1]!)).toContain('Refactor the parser (task I-5531).');
    expect(userTexts(starts[1]!)).toContain('[steering] Use the small approach.');
  });

  test('stop: a turn that ends within the drain timeout completes; one that does not is cancelled', async () => {
    const quick = 'Quick job (task Q-1).';
    model.setScript((r) => (lastInputItem(r)?.type === 'function_call_output' ? message('Finished the quick job.') : shellCall('sleep 1', { extra: noLogin })));
    await stack.warden.start(codexAgent('codex-drain', quick));
    await eventually(async () => turnStarts(quick).length >= 1, { what: 'turn 1 started' });
    await stack.warden.signal('codex-drain', 'stop', { reason: 'end of shift', drainTimeoutMs: 60_000 });
    const drained = await finalStatus(stack.warden.handle('codex-drain'));
    expect(drained).toMatchObject({ state: 'done', stateReason: 'stopped: end of shift', turns: 1 });

    const slow = 'Slow job (task Q-2).';
    model.setScript(() => stall());
    await stack.warden.start(codexAgent('codex-late', slow));
    await eventually(async () => turnStarts(slow).length >= 1, { what: 'turn 1 started' });
    const home = agentDirs('codex-late').homeDir;
    await stack.warden.signal('codex-late', 'stop', { drainTimeoutMs: 1_500 });
    const ended = await finalStatus(stack.warden.handle('codex-late'));
    expect(ended.state).toBe('done');
    expect(ended.stateReason).toMatch(/drain timeout/);
    expect(processesWithEnv(`CODEX_HOME=${home}`)).toEqual([]);
  });
});
