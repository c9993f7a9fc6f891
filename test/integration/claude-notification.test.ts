/**
 * Waiting for a human, end to end with the real Claude Code (2.1.330) against the scripted
 * Messages API: installed with `warden install claude` (auto-start, no `warden start`), run
 * interactively in a tmux pane with `--permission-mode default`, it asks its human to allow a Bash
 * command and fires its `Notification` hook (`permission_prompt`, "Claude needs your permission",
 * some seconds after the dialog shows): the agent is `awaiting-input` with the command read from
 * the transcript. The human answers Yes (Enter in the pane): the command runs, and the agent is
 * `running` again.
 *
 * Not in `claude -p`: there a tool call that needs permission fires `PermissionRequest` and is
 * denied at once (nobody is asked), and no `Notification` comes.
 */
import { execa } from 'execa';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startAnthropicServer, text, toolUse, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { reportedTurns, waitForStatus } from '../helpers/agents.js';
import { claudeBinary, offlineClaudeEnv } from '../helpers/claude.js';
import { cmdline, processesWithEnv } from '../helpers/procs.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';
import { freePort } from '../../src/devserver/ports.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const SOCK = `warden-claude-notification-${process.pid}`;
const tmux = (...args: string[]) => execa('tmux', ['-L', SOCK, ...args], { reject: false });
const scratch = mkdtempSync(join(tmpdir(), 'warden-claude-notification-'));
let model: AnthropicServer | null = null;
afterAll(async () => {
  await tmux('kill-server');
  // The hook endpoint the session's first hook started (detached): found by this test's HOME.
  for (const pid of processesWithEnv(`HOME=${join(scratch, 'home')}`)) if (cmdline(pid).includes('serve')) process.kill(pid, 'SIGKILL');
  await model?.close();
  cleanup(scratch);
});

test('interactive Claude Code asks to run a command: its Notification makes the agent awaiting-input; Yes makes it running', async () => {
  const work = join(scratch, 'notifproj');
  const home = join(scratch, 'home');
  const config = join(home, '.claude');
  mkdirSync(work, { recursive: true });
  mkdirSync(config, { recursive: true });
  writeFileSync(join(work, 'warden.yaml'), 'supervisor:\n  eval_interval: 1000\n  idle_after: 0\n');
  // A first run of Claude Code asks about the theme, the API key and trusting the folder: answered here.
  writeFileSync(
    join(config, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      customApiKeyResponses: { approved: ['test'], rejected: [] },
      projects: { [work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
    }),
  );
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, WARDEN_CACHE_DIR: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config') };
  // The hooks' endpoint on a port of this test's own (a `warden serve` their first hook starts).
  const endpoint = `127.0.0.1:${await freePort()}`;
  const inst = await execa(process.execPath, [WARDEN, 'install', 'claude', '--project', work, '--endpoint', endpoint], {
    env: base,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  expect(inst.exitCode, inst.stderr).toBe(0);
  // The project's warden.yaml configures its sessions once the user trusts it.
  const trust = await execa(process.execPath, [WARDEN, 'trust', work], { env: base, extendEnv: false, reject: false, stdin: 'ignore' });
  expect(trust.exitCode, trust.stderr).toBe(0);

  model = await startAnthropicServer({
    script: async (_req, i) =>
      i === 0 ? toolUse('Bash', { command: 'touch marker.txt', description: 'Create the marker' }, { id: 'toolu_notif_1' }) : text('done'),
  });
  const sessionId = randomUUID();
  const agentId = `notifproj-${sessionId.replace(/-/g, '').slice(-12)}`;
  const env = {
    ...base,
    TERM: 'xterm-256color',
    TEMPORAL_ADDRESS: stack.server.address,
    TEMPORAL_NAMESPACE: stack.server.namespace,
    ...offlineClaudeEnv(model.url, { configDir: config }),
  };
  const started = await tmux(
    'new-session',
    '-d',
    '-s',
    'claude',
    '-x',
    '160',
    '-y',
    '50',
    '-c',
    work,
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    claudeBinary(),
    '--permission-mode',
    'default',
    '--session-id',
    sessionId,
    'Create the marker file.',
  );
  expect(started.exitCode, started.stderr).toBe(0);
  const screen = async () => (await tmux('capture-pane', '-p', '-t', 'claude')).stdout;

  // Claude asks its human; its Notification hook tells warden.
  await eventually(async () => (/Do you want to proceed\?/.test(await screen()) ? true : null), { what: 'the permission dialog', timeoutMs: 90_000 }).catch(
    async (err) => {
      throw new Error(`${(err as Error).message}\n${await screen()}`);
    },
  );
  const waiting = await waitForStatus(stack.warden, agentId, (s) => s.state === 'awaiting-input', 'awaiting-input from the Notification hook', 90_000);
  expect(waiting).toMatchObject({
    waitingForHuman: true,
    paused: false,
    stateReason: 'waiting for permission: Bash touch marker.txt',
    task: 'Create the marker file.',
  });
  expect(existsSync(join(work, 'marker.txt')), 'the command waits for its human').toBe(false);

  // The human allows it: the command runs, and the agent runs again.
  await tmux('send-keys', '-t', 'claude', 'Enter');
  const after = await waitForStatus(
    stack.warden,
    agentId,
    (s) => s.state === 'running' && s.turns >= 2,
    'running again, the tool call and the answer reported',
    90_000,
  );
  expect(after.waitingForHuman).toBe(false);
  expect(existsSync(join(work, 'marker.txt'))).toBe(true);
  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns[0]!.toolCalls?.[0]).toMatchObject({ name: 'Bash', args: 'touch marker.txt', ok: true });
  expect(turns.at(-1)!.text).toBe('done');
  await tmux('kill-session', '-t', 'claude');
  await stack.warden.signal(agentId, 'abort', {});
}, 300_000);
