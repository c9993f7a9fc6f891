/**
 * Compaction (supervisor.lastResort: compact) with the real agent CLIs, end to end on a real dev
 * server: the real `codex` binary against a scripted Responses API, and the real Claude Code
 * against a scripted Messages API, both on 127.0.0.1. Each agent runs the same failing command every
 * turn; after two ignored whispers warden compacts it — the compaction turn starts a NEW session of
 * the CLI (no resume) whose first input is the handoff, which the model server sees — and, the
 * problem persisting in the fresh context, escalates. The drivers, called directly, start a new
 * session on a compaction even when handed the old one. And the CLIs compacting their own context
 * (Claude Code's `/compact`, codex's auto-compaction) are seen through their PreCompact /
 * PostCompact hooks: `compacting`, then `running`.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { pino } from 'pino';
import { claudeDriver } from '../../activities/drivers/claude.js';
import { codexDriver } from '../../activities/drivers/codex.js';
import type { DriverContext } from '../../activities/drivers/types.js';
import { HANDOFF_HEADER } from '../../src/domain/judgement/handoff.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { messageTexts, startAnthropicServer, text, toolUse, type AnthropicRequest } from '../fixtures/anthropic-server.js';
import { inputTexts, message, shellCall, startModelServer, type ModelServer, type RecordedRequest } from '../fixtures/model-server.js';
import { finalStatus, waitForStatus } from '../helpers/agents.js';
import { findClaudeBinary, offlineClaudeEnv, useOfflineClaude } from '../helpers/claude.js';
import { codexExecArgs, codexHooksToml, execCodex, offlineCodexEnv } from '../helpers/codex.js';
import { wardenHookCommand } from '../helpers/hooks.js';
import { useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const noCredentials = mkdtempSync(join(tmpdir(), 'warden-nocreds-'));
const stack = useStack();
const edges = (s: AgentStatus) => s.transitions.map((t) => `${t.from}>${t.to}`);
const statusWhere = (agentId: string, pred: (s: AgentStatus) => boolean, what: string) => waitForStatus(stack.warden, agentId, pred, what, 240_000);
const supervisor = { evalInterval: 3, idleAfterMs: 0, lastResort: 'compact' as const };

describe('a spiraling Codex agent', () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer();
  });
  afterAll(async () => {
    await model?.close();
  });

  test('is compacted after two whispers: codex starts a new session whose first request carries the handoff; the problem persists, so it is escalated', async () => {
    const task = 'Make the build pass (task CX-5120).';
    const lastInput = (r: RecordedRequest) => ((r.body as { input?: Array<{ type?: string }> } | null)?.input ?? []).at(-1);
    const users = (r: RecordedRequest) => inputTexts(r.body, 'user').join('\n');
    const isHandoffStart = (r: RecordedRequest) => users(r).includes(HANDOFF_HEADER) && inputTexts(r.body, 'assistant').length === 0;
    // Every turn: the same failing command, then say so. The fresh context's first reply is slow, so `compacting` is seen.
    model.setScript((r) =>
      lastInput(r)?.type === 'function_call_output'
        ? message('The build failed again; retrying the build.')
        : shellCall('false', { extra: { login: false }, ...(isHandoffStart(r) ? { delayMs: 3_000 } : {}) }),
    );
    const workDir = join(process.env.WARDEN_HOME!, 'work', 'cx-compact');
    mkdirSync(workDir, { recursive: true });
    const spec: AgentSpecInput = {
      agentId: 'cx-compact',
      task,
      driver: { kind: 'codex', model: 'warden-test-model', config: model.codexOverrides(), credentialsHome: noCredentials },
      supervisor,
      driven: { workDir, killGraceMs: 3_000 },
    };
    await stack.warden.start(spec);
    const compacting = await statusWhere('cx-compact', (s) => s.state === 'compacting', 'compacting');
    expect(compacting).toMatchObject({ turns: 9, escalations: 0, compactions: 1 });
    const handoff = compacting.lastCompaction!.handoff;

    const escalated = await statusWhere('cx-compact', (s) => s.state === 'awaiting-input', 'escalation after the compaction');
    expect(escalated).toMatchObject({ turns: 12, escalations: 1, compactions: 1, lastCompaction: { done: true } });
    expect(edges(escalated)).toEqual(['spawning>running', 'running>compacting', 'compacting>running', 'running>awaiting-input']);

    // Requests that start a turn: the last input item is the user's input, not a tool result.
    const starts = model.requests.filter((r) => lastInput(r)?.type === 'message' && /Your task:|Continue working|\[COMPACTED\]/.test(users(r)));
    expect(starts).toHaveLength(12);
    const fresh = starts[9]!;
    // A new session: no earlier conversation at all, and the handoff, word for word, as its input.
    expect(inputTexts(fresh.body, 'assistant')).toEqual([]);
    expect(users(fresh)).toContain(handoff);
    expect(handoff).toMatch(/\[CORRECTION\] You have run the same failing call 3 times[\s\S]*\[CORRECTION\] Warning 2 of 2/);
    expect(users(fresh)).not.toContain('Continue working on your task.');
    // The old session had it all: turn 9 carried turn 1's task as history.
    expect(inputTexts(starts[8]!.body, 'assistant')).toHaveLength(8); // one reply of each of turns 1–8
    // Turns 11 and 12 resume the fresh session: the handoff is their history, the old turns are not.
    expect(users(starts[11]!)).toContain(HANDOFF_HEADER);
    expect(users(starts[11]!)).not.toContain(`Your task:\n${task}\n\nWhen the task`);
    await stack.warden.signal('cx-compact', 'abort', { reason: 'test over' });
    expect((await finalStatus(stack.warden.handle('cx-compact'))).state).toBe('failed');
  });

  test("the codex driver asked to compact starts a new session even when handed the old one, and counts only the new session's tokens", async () => {
    model.setScript([
      message('Turn one done.', { input_tokens: 500, output_tokens: 50 }),
      message('Read the handoff; starting over.', { input_tokens: 120, output_tokens: 12 }),
    ]);
    const workDir = join(process.env.WARDEN_HOME!, 'work', 'cx-direct');
    mkdirSync(workDir, { recursive: true });
    const dirs = { workDir, homeDir: join(process.env.WARDEN_HOME!, 'agents', 'cx-direct', 'home') };
    const driver = codexDriver({
      kind: 'codex',
      model: 'warden-test-model',
      config: model.codexOverrides(),
      sandbox: 'workspace-write',
      credentialsHome: noCredentials,
    });
    const ctx: DriverContext = { signal: new AbortController().signal, killGraceMs: 3_000, heartbeat: () => {}, log: pino({ level: 'silent' }) };
    const base = { agentId: 'cx-direct', task: 'T', whispers: [], doneMarker: 'TASK COMPLETE', ...dirs };
    const first = await driver.runTurn({ ...base, turnNumber: 1, input: 'Begin (old-context marker Q-4410).', session: null }, ctx);
    const handoff = `${HANDOFF_HEADER} (direct driver test)`;
    const before = model.requests.length;
    const second = await driver.runTurn({ ...base, turnNumber: 2, input: handoff, session: first.session, compact: { handoff } }, ctx);
    expect(second.session?.sessionId).toBeTruthy();
    expect(second.session?.sessionId).not.toBe(first.session?.sessionId);
    const req = model.requests.slice(before).find((r) => inputTexts(r.body, 'user').join('\n').includes(handoff))!;
    expect(inputTexts(req.body).join('\n')).not.toContain('Q-4410');
    expect(inputTexts(req.body, 'assistant')).toEqual([]);
    // The new session's totals start from zero: not the old session's subtracted.
    expect(second.turn).toMatchObject({ tokensIn: 120, tokensOut: 12 });
    expect(second.session).toMatchObject({ inputTokensTotal: 120, outputTokensTotal: 12 });
  });
});

describe('a spiraling Claude Code agent', () => {
  let restoreEnv = () => {};
  afterAll(() => restoreEnv());

  test.skipIf(findClaudeBinary() === null)(
    'is compacted after two whispers: Claude starts a new session (a new session id) from the handoff; the problem persists, so it is escalated',
    async () => {
      const lastIsToolResult = (r: AnthropicRequest) => {
        const messages = (r.body as { messages?: Array<{ content?: unknown }> }).messages ?? [];
        const content = messages.at(-1)?.content;
        return Array.isArray(content) && content.some((c: { type?: string }) => c?.type === 'tool_result');
      };
      const sessionOf = (r: AnthropicRequest) => r.headers['x-claude-code-session-id'] as string;
      let calls = 0;
      const model = await startAnthropicServer({
        script: (r) => {
          if (lastIsToolResult(r)) return text('The build failed again; retrying the build.');
          calls += 1;
          const fresh = messageTexts(r.body, 'user').some((t) => t.includes(HANDOFF_HEADER)) && messageTexts(r.body, 'assistant').length === 0;
          return { ...toolUse('Bash', { command: 'false', description: 'Build' }, { id: `toolu_warden_cmp_${calls}` }), ...(fresh ? { delayMs: 3_000 } : {}) };
        },
      });
      try {
        // The worker's driver starts claude with this process's environment (restored after the block).
        restoreEnv = useOfflineClaude(model.url, { apiKey: 'sk-ant-warden-test-compaction' });
        await stack.warden.start({
          agentId: 'cc-compact',
          task: 'Make the build pass (task CC-7781).',
          driver: { kind: 'claude', claudePath: findClaudeBinary()!, model: 'claude-sonnet-4-5' },
          supervisor,
          driven: { killGraceMs: 2_000 },
        });
        const compacting = await statusWhere('cc-compact', (s) => s.state === 'compacting', 'compacting');
        expect(compacting).toMatchObject({ turns: 9, compactions: 1 });
        const handoff = compacting.lastCompaction!.handoff;
        const escalated = await statusWhere('cc-compact', (s) => s.state === 'awaiting-input', 'escalation after the compaction');
        expect(escalated).toMatchObject({ turns: 12, escalations: 1, compactions: 1 });
        expect(edges(escalated)).toEqual(['spawning>running', 'running>compacting', 'compacting>running', 'running>awaiting-input']);

        const reqs = model.agentRequests();
        const sessions = [...new Set(reqs.map(sessionOf))];
        expect(sessions).toHaveLength(2); // the old session, then the fresh one
        const firstFresh = reqs.find((r) => sessionOf(r) === sessions[1])!;
        const freshUser = messageTexts(firstFresh.body, 'user').join('\n');
        expect(freshUser).toContain(handoff);
        expect(messageTexts(firstFresh.body, 'assistant')).toEqual([]);
        // The old session never saw the handoff; every later request of the fresh one carries it.
        expect(reqs.filter((r) => sessionOf(r) === sessions[0]).some((r) => messageTexts(r.body).join('\n').includes(HANDOFF_HEADER))).toBe(false);
        expect(reqs.filter((r) => sessionOf(r) === sessions[1]).every((r) => messageTexts(r.body, 'user').join('\n').includes(HANDOFF_HEADER))).toBe(true);
        await stack.warden.signal('cc-compact', 'abort', { reason: 'test over' });
        expect((await finalStatus(stack.warden.handle('cc-compact'))).state).toBe('failed');
      } finally {
        await model.close();
      }
    },
  );
});

describe('the claude driver asked to compact', () => {
  test.skipIf(findClaudeBinary() === null)(
    'starts a new session (a new session id) even when handed the old one; the old conversation is not in it',
    async () => {
      const model = await startAnthropicServer({ script: [text('Turn one done.'), text('Read the handoff; starting over.')] });
      const restoreEnv = useOfflineClaude(model.url, { apiKey: 'sk-ant-warden-test-direct' });
      try {
        const workDir = join(process.env.WARDEN_HOME!, 'work', 'cc-direct');
        mkdirSync(workDir, { recursive: true });
        const dirs = { workDir, homeDir: join(process.env.WARDEN_HOME!, 'agents', 'cc-direct', 'home') };
        const driver = claudeDriver({ kind: 'claude', claudePath: findClaudeBinary()!, model: 'claude-sonnet-4-5', args: [] });
        const ctx: DriverContext = { signal: new AbortController().signal, killGraceMs: 2_000, heartbeat: () => {}, log: pino({ level: 'silent' }) };
        const base = { agentId: 'cc-direct', task: 'T', whispers: [], doneMarker: 'TASK COMPLETE', ...dirs };
        const first = await driver.runTurn({ ...base, turnNumber: 1, input: 'Begin (old-context marker Q-7715).', session: null }, ctx);
        const handoff = `${HANDOFF_HEADER} (direct driver test)`;
        const second = await driver.runTurn({ ...base, turnNumber: 2, input: handoff, session: first.session, compact: { handoff } }, ctx);
        expect(second.session?.sessionId).not.toBe(first.session?.sessionId);
        const reqs = model.agentRequests();
        const last = reqs.at(-1)!;
        expect(last.headers['x-claude-code-session-id']).toBe(second.session?.sessionId);
        expect(messageTexts(last.body).join('\n')).toContain(handoff);
        expect(messageTexts(last.body).join('\n')).not.toContain('Q-7715');
      } finally {
        restoreEnv();
        await model.close();
      }
    },
  );
});

describe('Claude Code compacting its own context, seen through its hooks', () => {
  test.skipIf(findClaudeBinary() === null)(
    '`/compact` in a hooked Claude Code session: PreCompact makes the agent compacting, PostCompact running again',
    async () => {
      const agentId = 'cc-own-compact';
      await stack.warden.start({ agentId, task: 'Say hello, then compact (task CC-2290).', supervisor: { evalInterval: 1000, idleAfterMs: 0 } });
      let calls = 0;
      // The first request is the agent's answer; the second is Claude Code's own summary, slow enough to be seen.
      const model = await startAnthropicServer({
        isAgentRequest: () => true,
        script: () =>
          ++calls === 1 ? text('Hello there.') : { kind: 'message', content: [{ type: 'text', text: '<summary>We said hello.</summary>' }], delayMs: 3_000 },
      });
      try {
        const dir = mkdtempSync(join(tmpdir(), 'warden-cc-own-compact-'));
        const work = join(dir, 'work');
        const home = join(dir, 'home');
        mkdirSync(join(work, '.claude'), { recursive: true });
        mkdirSync(home, { recursive: true });
        const command = wardenHookCommand('claude', agentId, stack.server, ['--strict']);
        const hook = [{ hooks: [{ type: 'command', command, timeout: 30 }] }];
        writeFileSync(join(work, '.claude/settings.json'), JSON.stringify({ hooks: { Stop: hook, PreCompact: hook, PostCompact: hook } }));
        const env = {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home,
          ...offlineClaudeEnv(model.url, { configDir: join(home, '.claude') }),
        };
        const session = '5a1e0c6e-7d3b-4c55-9a61-2f0b8e4d7c19';
        const run = (args: string[]) =>
          execa(findClaudeBinary()!, ['-p', ...args, '--output-format', 'json'], {
            cwd: work,
            env,
            extendEnv: false,
            reject: false,
            stdin: 'ignore',
            all: true,
            timeout: 90_000,
          });
        const hello = await run(['Say hello.', '--session-id', session]);
        expect(hello.exitCode, String(hello.all)).toBe(0);
        await statusWhere(agentId, (s) => s.state === 'running' && s.turns === 1, 'the Stop hook reported the first turn');

        const compact = run(['/compact', '--resume', session]);
        const during = await statusWhere(agentId, (s) => s.state === 'compacting', 'compacting while Claude Code summarises');
        expect(during.stateReason).toBe("the agent's own CLI is compacting its context (manual)");
        const done = await compact;
        expect(done.exitCode, String(done.all)).toBe(0);
        const after = await statusWhere(
          agentId,
          (s) => s.state === 'running' && s.transitions.some((t) => t.event === 'compacted'),
          'running after PostCompact',
        );
        expect(after.transitions.slice(-2).map((t) => `${t.from}>${t.to}: ${t.cause}`)).toEqual([
          "running>compacting: the agent's own CLI is compacting its context (manual)",
          "compacting>running: the agent's own CLI finished compacting its context (manual)",
        ]);
        expect(after.compactions).toBe(0); // not the ladder's compaction
        await stack.warden.signal(agentId, 'abort', {});
        await finalStatus(stack.warden.handle(agentId));
      } finally {
        await model.close();
      }
    },
  );
});

describe('codex compacting its own context, seen through its hooks', () => {
  test('auto-compaction in a hooked codex session: PreCompact makes the agent compacting, PostCompact running again', async () => {
    const agentId = 'cx-own-compact';
    await stack.warden.start({ agentId, task: 'Answer twice (task CX-3303).', supervisor: { evalInterval: 1000, idleAfterMs: 0 } });
    let calls = 0;
    // Every answer reports a huge context, so codex compacts (model_auto_compact_token_limit) before
    // the next turn; the second request is its compaction, slow enough to be seen.
    const model = await startModelServer({
      script: () => {
        calls += 1;
        return {
          kind: 'message',
          text: calls === 2 ? 'Summary: we answered once.' : `Answer ${calls}.`,
          usage: { input_tokens: 50_000, output_tokens: 10 },
          ...(calls === 2 ? { delayMs: 3_000 } : {}),
        };
      },
    });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'warden-cx-own-compact-'));
      const work = join(dir, 'work');
      const home = join(dir, 'codex-home');
      mkdirSync(work, { recursive: true });
      mkdirSync(home, { recursive: true });
      const command = wardenHookCommand('codex', agentId, stack.server, ['--strict']);
      writeFileSync(join(home, 'config.toml'), codexHooksToml(command, ['Stop', 'PreCompact', 'PostCompact']));
      const args = codexExecArgs(model, work, ['model_auto_compact_token_limit=1000']);
      const run = (more: string[]) => execCodex([...args, ...more], { cwd: work, env: offlineCodexEnv(dir, home), timeoutMs: 90_000 });
      const first = await run(['First question.']);
      expect(first.exitCode, String(first.all)).toBe(0);
      const thread = /"thread_id":"([^"]+)"/.exec(String(first.stdout))?.[1];
      expect(thread).toBeTruthy();
      await statusWhere(agentId, (s) => s.state === 'running' && s.turns === 1, 'the Stop hook reported the first turn');

      const second = run(['resume', thread!, 'Second question.']);
      const during = await statusWhere(agentId, (s) => s.state === 'compacting', 'compacting while codex summarises');
      expect(during.stateReason).toBe("the agent's own CLI is compacting its context (auto)");
      const done = await second;
      expect(done.exitCode, String(done.all)).toBe(0);
      const after = await statusWhere(agentId, (s) => s.turns === 2, 'the second turn');
      expect(after.state).toBe('running');
      expect(after.transitions.filter((t) => t.from === 'compacting' || t.to === 'compacting').map((t) => `${t.from}>${t.to}: ${t.cause}`)).toEqual([
        "running>compacting: the agent's own CLI is compacting its context (auto)",
        "compacting>running: the agent's own CLI finished compacting its context (auto)",
      ]);
      await stack.warden.signal(agentId, 'abort', {});
      await finalStatus(stack.warden.handle(agentId));
    } finally {
      await model.close();
    }
  });
});
