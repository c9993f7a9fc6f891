/**
 * `warden top` shows every live session, also the ones nobody started: sessions of Claude Code and
 * Codex that started their own agents through the hook path (`warden hook claude|codex` with no
 * agent named, as after `warden install`) — no `warden start` — are in `warden top --once --json`
 * and its text table, and the one whose CLI waits for its human (a Notification) is first.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { waitForStatus } from '../helpers/agents.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const scratch = mkdtempSync(join(tmpdir(), 'warden-top-sessions-'));
afterAll(() => cleanup(scratch));

const project = join(scratch, 'topsess');
mkdirSync(project, { recursive: true });
const home = join(scratch, 'home');
mkdirSync(home, { recursive: true });
// Nothing of the caller's environment (CLAUDE_PROJECT_DIR, WARDEN_AGENT_ID) reaches the hooks.
const env = () => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  WARDEN_CACHE_DIR: join(home, 'cache'),
  TEMPORAL_ADDRESS: stack.server.address,
  TEMPORAL_NAMESPACE: stack.server.namespace,
});

async function hook(agent: 'claude' | 'codex', sessionId: string, event: Record<string, unknown>): Promise<void> {
  const r = await execa(process.execPath, [WARDEN, 'hook', agent, '--strict', '--timeout', '60000'], {
    input: JSON.stringify({ session_id: sessionId, cwd: project, transcript_path: join(scratch, 'none.jsonl'), ...event }),
    env: env(),
    extendEnv: false,
    reject: false,
    timeout: 90_000,
  });
  expect(r.exitCode, r.stderr).toBe(0);
}

interface TopJson {
  agents: number;
  rows: Array<{ agentId: string; state: string; priority: string; why: string; intent: string | null; finished: boolean }>;
}

test('sessions that started their own agents through hooks are all in warden top, the one waiting for its human first', async () => {
  // Session ids chosen so that by id the waiting one would come last.
  const busy = '11111111-1111-4111-8111-aaaaaaaaaaaa';
  const waiting = '22222222-2222-4222-8222-ffffffffffff';
  const cx = '33333333-3333-4333-8333-bbbbbbbbbbbb';
  const ids = { busy: 'topsess-aaaaaaaaaaaa', waiting: 'topsess-ffffffffffff', cx: 'topsess-bbbbbbbbbbbb' };

  await hook('claude', busy, { hook_event_name: 'UserPromptSubmit', prompt: 'Fix the parser.' });
  await hook('claude', busy, {
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'npm test' },
    tool_response: { stdout: 'ok', stderr: '', interrupted: false },
    tool_use_id: 'toolu_busy_1',
  });
  await hook('claude', waiting, { hook_event_name: 'UserPromptSubmit', prompt: 'Deploy the docs.' });
  await hook('claude', waiting, { hook_event_name: 'Notification', notification_type: 'idle_prompt', message: 'Claude is waiting for your input' });
  await hook('codex', cx, { hook_event_name: 'UserPromptSubmit', prompt: 'Rename the module.', turn_id: 't1' });
  await hook('codex', cx, {
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'git mv a b' },
    tool_response: '',
    tool_use_id: 'call_cx_1',
    turn_id: 't1',
  });

  await waitForStatus(stack.warden, ids.busy, (s) => s.state === 'running' && s.turns === 1, 'the busy session running');
  await waitForStatus(stack.warden, ids.waiting, (s) => s.state === 'awaiting-input', 'the waiting session awaiting-input');
  await waitForStatus(stack.warden, ids.cx, (s) => s.state === 'running' && s.turns === 1, 'the codex session running');

  // top lists from visibility, which may lag a moment behind the starts.
  const top = await eventually(
    async () => {
      const r = await execa(process.execPath, [WARDEN, 'top', '--once', '--json'], { env: env(), extendEnv: false, reject: false, timeout: 60_000 });
      expect(r.exitCode, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as TopJson;
      const mine = out.rows.filter((x) => x.agentId.startsWith('topsess-'));
      return mine.length === 3 && mine.every((x) => x.state !== 'spawning') ? out : null;
    },
    { what: 'the three sessions in warden top', timeoutMs: 60_000 },
  );

  expect(top.rows[0]).toMatchObject({ agentId: ids.waiting, state: 'awaiting-input', priority: 'awaiting-input', intent: 'Deploy the docs.', finished: false });
  expect(top.rows[0]!.why).toMatch(/waiting for input: Claude is waiting for your input/);
  const rest = top.rows.slice(1).filter((x) => x.agentId.startsWith('topsess-'));
  expect(rest.map((x) => x.agentId).sort()).toEqual([ids.busy, ids.cx]);
  for (const x of rest) expect(x).toMatchObject({ state: 'running', priority: 'normal', finished: false });
  expect(rest.find((x) => x.agentId === ids.busy)!.intent).toBe('Fix the parser.');
  expect(rest.find((x) => x.agentId === ids.cx)!.intent).toBe('Rename the module.');

  // The text table says the same, the waiting session on the first row.
  const text = await execa(process.execPath, [WARDEN, 'top', '--once', '--width', '200'], { env: env(), extendEnv: false, reject: false, timeout: 60_000 });
  expect(text.exitCode, text.stderr).toBe(0);
  const rows = text.stdout.split('\n').filter((l) => /topsess-/.test(l));
  expect(rows).toHaveLength(3);
  expect(rows[0]).toContain(ids.waiting);
  expect(rows[0]).toMatch(/awaiting-input/);

  for (const id of Object.values(ids)) await stack.warden.signal(id, 'abort', {});
}, 240_000);
