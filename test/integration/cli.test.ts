/**
 * The `warden` command as a user runs it: `warden dev` (the README's first command) brings up the
 * embedded stack with its Web UI and demo and shuts down on Ctrl-C; the verbs work with --json;
 * `warden evaluate` works offline.
 */
import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { freePorts, isPortFree } from '../../src/devserver/ports.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';
import { spiralTurn } from '../helpers/agents.js';

const MAIN = join(ROOT, 'dist/src/cli/main.js');
const tmp = mkdtempSync(join(tmpdir(), 'warden-cli-'));

test('warden dev: dev server + Web UI + worker + demo reaching escalation; Ctrl-C stops everything', async () => {
  const [port, uiPort] = await freePorts(2);
  const dev = execa('node', [MAIN, 'dev', '--port', String(port), '--ui-port', String(uiPort), '--db', join(tmp, 'dev/temporal.db')], {
    reject: false,
    all: true,
  });
  let out = '';
  dev.all!.on('data', (c: Buffer) => (out += c.toString()));
  await eventually(async () => out.includes('Ctrl-C stops'), { timeoutMs: 90_000, what: `warden dev to come up; output so far:\n${out}` });
  expect(out).toContain(`Temporal at 127.0.0.1:${port}`);
  expect(out).toContain(`Web UI: http://127.0.0.1:${uiPort}/namespaces/default/workflows`);
  expect(out).toMatch(/turn 6: warden whispers \[CORRECTION\]/);
  expect(out).toMatch(/turn 11: warden whispers \[CORRECTION\] Warning 2/);
  expect(out).toMatch(/queued for the next turn: \[ESCALATION\]/);
  expect(out).toMatch(/is awaiting-input .*escalation step 3\/3/);
  expect(out).toMatch(/temporal workflow signal --address 127\.0\.0\.1:\d+ --workflow-id agent-demo-\d+ --name resume/);
  const ui = await fetch(`http://127.0.0.1:${uiPort}/`);
  expect(ui.status).toBe(200);

  dev.kill('SIGINT');
  const r = await dev;
  expect(r.exitCode, out).toBe(0);
  expect(out).toContain('stopped.');
  expect(await isPortFree(port)).toBe(true);
  expect(await isPortFree(uiPort)).toBe(true);
});

describe('verbs against a running stack', () => {
  const stack = useStack();
  const cli = (args: string[], input?: string) => execa('node', [MAIN, '--address', stack.server.address, ...args], { reject: false, input });


  test('start (config file + flags), report, steer, status, list — all with --json', async () => {
    const config = join(tmp, 'warden.yaml');
    writeFileSync(config, 'supervisor:\n  eval_interval: 3\n  window_size: 10\n  idle_after: 0\n');
    const start = await cli(['start', 'cli-agent', '--task', 'Fix the flaky test', '--config', config, '--escalation-threshold', '4', '--json']);
    expect(start.exitCode, start.stderr).toBe(0);
    expect(JSON.parse(start.stdout)).toMatchObject({
      workflowId: 'agent-cli-agent',
      searchAttributes: true,
      spec: { supervisor: { evalInterval: 3, windowSize: 10, escalationThreshold: 4, idleAfterMs: 0 } },
    });

    const turnFile = join(tmp, 'turn.json');
    writeFileSync(turnFile, JSON.stringify(spiralTurn(1)));
    expect((await cli(['report', 'cli-agent', '--file', turnFile, '--json'])).exitCode).toBe(0);
    const second = await cli(['report', 'cli-agent', '--json'], JSON.stringify(spiralTurn(2)));
    expect(JSON.parse(second.stdout)).toMatchObject({ accepted: true, duplicate: false, state: 'running' });
    expect((await cli(['report', 'cli-agent'], JSON.stringify(spiralTurn(3)))).exitCode).toBe(0);

    const steer = await cli(['steer', 'cli-agent', 'Look', 'at', 'the', 'seed', '--json']);
    expect(JSON.parse(steer.stdout)).toMatchObject({ signal: 'steer', payload: { text: 'Look at the seed' }, sent: true });

    const status = await eventually(async () => {
      const r = await cli(['status', 'cli-agent', '--json']);
      const s = JSON.parse(r.stdout);
      return s.evaluations.total === 1 && s.pendingWhispers === 2 ? s : null;
    });
    expect(status).toMatchObject({ agentId: 'cli-agent', state: 'running', turns: 3, escalationStep: 1 });

    const human = await cli(['report', 'cli-agent'], JSON.stringify(spiralTurn(4)));
    expect(human.stdout).toMatch(/^turn recorded; state running/);
    expect(human.stdout).toMatch(/\[CORRECTION\] You have run the same failing call/);
    expect(human.stdout).toMatch(/\[steering\] Look at the seed/);

    const text = await cli(['status', 'cli-agent']);
    expect(text.stdout).toMatch(/agent cli-agent: running/);
    expect(text.stdout).toMatch(/escalation step 1\/4/);

    const listed = await eventually(async () => {
      const r = await cli(['list', '--query', "WardenEscalationStep = 1", '--json']);
      const rows = JSON.parse(r.stdout) as { agentId: string }[];
      return rows.some((x) => x.agentId === 'cli-agent') ? rows : null;
    });
    expect(listed.find((x) => x.agentId === 'cli-agent')).toMatchObject({ status: 'RUNNING', state: 'running', escalationStep: 1, paused: false });

    const pause = await cli(['pause', 'cli-agent', '--reason', 'review']);
    expect(pause.exitCode).toBe(0);
    const stop = await cli(['stop', 'cli-agent', '--drain-timeout', '0', '--json']);
    expect(JSON.parse(stop.stdout)).toMatchObject({ signal: 'stop', payload: { drainTimeoutMs: 0 } });
  });
});

describe('warden evaluate (offline, no Temporal)', () => {
  const transcript = (turns: unknown[]) => {
    const f = join(tmp, `t-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(f, JSON.stringify({ task: 'Make the login test pass', turns }));
    return f;
  };
  const evaluate = (args: string[]) => execa('node', [MAIN, 'evaluate', ...args], { reject: false, env: { TEMPORAL_ADDRESS: '127.0.0.1:1' } });

  test('spiraling transcript → CORRECTION SPIRALING as JSON', async () => {
    const r = await evaluate(['--transcript', transcript([spiralTurn(1), spiralTurn(2), spiralTurn(3)]), '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ kind: 'CORRECTION', pattern: 'SPIRALING', message: expect.stringContaining('same failing call 3 times'), evidence: [1, 2, 3] });
  });

  test('reward hacking: a skipped test', async () => {
    const r = await evaluate(['--transcript', transcript([{ text: 'skip it', toolCalls: [{ name: 'apply_patch', args: "it.skip('logs in', () => {})" }] }]), '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING' });
  });

  test('healthy transcript → OK; text output', async () => {
    const r = await evaluate(['--transcript', transcript([{ text: 'Read the failing test and found the cause in auth.ts', toolCalls: [{ name: 'shell', args: 'npm test', ok: true }] }])]);
    expect(r.stdout.trim()).toBe('OK');
  });

  test('a command evaluator that answers garbage → {skipped: true, reason}', async () => {
    const r = await evaluate(['--transcript', transcript([spiralTurn(1)]), '--evaluator', 'command', '--evaluator-command', 'echo hmm', '--json']);
    expect(JSON.parse(r.stdout)).toEqual({ skipped: true, reason: expect.stringMatching(/unparseable/) });
  });

  test('bad transcript → exit 2 naming the field', async () => {
    const f = join(tmp, 'bad.json');
    writeFileSync(f, JSON.stringify({ task: 'x', turns: [{ text: 1 }] }));
    const r = await evaluate(['--transcript', f]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/turns\.0\.text/);
    const missing = await evaluate(['--transcript', join(tmp, 'nope.json')]);
    expect(missing.exitCode).toBe(2);
  });

  test('--help helps', async () => {
    const r = await execa('node', [MAIN, 'start', '--help'], { reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/--task <text>/);
    expect(r.stdout).toMatch(/Examples:/);
  });
});
