/**
 * The `warden` command as a user runs it: `warden dev` (the README's first command) brings up the
 * embedded stack with its Web UI and demo and shuts down on Ctrl-C; the verbs work with --json;
 * `warden evaluate` works offline.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { freePorts, isPortFree } from '../../src/devserver/ports.js';
import { ROOT, eventually, useStack } from '../helpers/stack.js';
import { spiralTurn } from '../helpers/agents.js';

const MAIN = join(ROOT, 'dist/src/cli/main.js');
const tmp = mkdtempSync(join(tmpdir(), 'warden-cli-'));
// The in-process worker of useStack() runs driven agents under here.
process.env.WARDEN_HOME = join(tmp, 'warden-home');
const schema = (name: string) => new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(join(ROOT, 'schemas', `${name}.schema.json`), 'utf8')));

test('warden dev: dev server + Web UI + web console + worker + demo reaching escalation; Ctrl-C stops everything', async () => {
  const [port, uiPort, consolePort] = await freePorts(3);
  const dev = execa(
    'node',
    [MAIN, 'dev', '--port', String(port), '--ui-port', String(uiPort), '--console-port', String(consolePort), '--db', join(tmp, 'dev/temporal.db')],
    {
      reject: false,
      all: true,
    },
  );
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
  // The web console, printed next to the Web UI with its login token: the demo's escalation is its first row.
  const consoleUrl = new RegExp(`^Web console: (http://127\\.0\\.0\\.1:${consolePort}/console\\?token=[0-9a-f]{64})$`, 'm').exec(out)?.[1];
  expect(consoleUrl, out).toBeDefined();
  const login = await fetch(consoleUrl!, { redirect: 'manual' });
  expect(login.status).toBe(303);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const fleet = (await (await fetch(`http://127.0.0.1:${consolePort}/console/api/agents`, { headers: { cookie } })).json()) as {
    rows: { agentId: string; group: string; state: string }[];
  };
  expect(fleet.rows[0]).toMatchObject({ agentId: expect.stringMatching(/^demo-\d+$/), group: 'awaiting-input', state: 'awaiting-input' });
  // The worker's JSON log lines (the escalation is logged) go to worker.log, not into the text.
  expect(
    out.split('\n').filter((l) => l.trim().startsWith('{"')),
    out,
  ).toEqual([]);
  expect(out).toContain(`worker log: ${join(tmp, 'dev/worker.log')}`);
  expect(readFileSync(join(tmp, 'dev/worker.log'), 'utf8')).toMatch(/"msg":"agent escalated to humans"/);

  // The printed commands work as pasted, in a shell whose PATH has neither warden nor temporal.
  const bare = { PATH: '/usr/bin:/bin' };
  const printedStatus = /^ {2}(.* status my-agent)$/m.exec(out)![1];
  expect(printedStatus).toMatch(/^TEMPORAL_ADDRESS=127\.0\.0\.1:\d+ (node \/\S+\/dist\/src\/cli\/main\.js|warden) status my-agent$/);
  const st = await execa('sh', ['-c', printedStatus.replace(/^(TEMPORAL_ADDRESS=\S+) node /, `$1 ${process.execPath} `)], { reject: false, env: bare });
  expect(st.exitCode, st.stderr).toBe(3); // it ran, and says: no such agent
  expect(st.stderr).toMatch(/no such agent: my-agent/);
  const printedList = /^ {2}(\S+ workflow list --address \S+)$/m.exec(out)![1];
  const tl = await execa('sh', ['-c', printedList], { reject: false, env: bare });
  expect(tl.exitCode, tl.stderr).toBe(0);
  expect(tl.stdout).toMatch(/agent-demo-\d+/);
  const printedResume = /resume it with the Temporal CLI: {2}(.*)$/m.exec(out)![1];
  const resumed = await execa('sh', ['-c', printedResume], { reject: false, env: bare });
  expect(resumed.exitCode, resumed.stderr).toBe(0);

  dev.kill('SIGINT');
  const r = await dev;
  expect(r.exitCode, out).toBe(0);
  expect(out).toContain('stopped.');
  expect(await isPortFree(port)).toBe(true);
  expect(await isPortFree(uiPort)).toBe(true);
  expect(await isPortFree(consolePort)).toBe(true);
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
      const r = await cli(['list', '--query', 'WardenEscalationStep = 1', '--json']);
      const rows = JSON.parse(r.stdout) as { agentId: string }[];
      return rows.some((x) => x.agentId === 'cli-agent') ? rows : null;
    });
    expect(listed.find((x) => x.agentId === 'cli-agent')).toMatchObject({ status: 'RUNNING', state: 'running', escalationStep: 1, paused: false });

    const pause = await cli(['pause', 'cli-agent', '--reason', 'review']);
    expect(pause.exitCode).toBe(0);
    const stop = await cli(['stop', 'cli-agent', '--drain-timeout', '0', '--json']);
    expect(JSON.parse(stop.stdout)).toMatchObject({ signal: 'stop', payload: { drainTimeoutMs: 0 }, outcome: { kind: 'applied', from: 'paused-by-user' } });
  });

  test('control verbs report what the workflow did: applied, or refused with the reason and exit 1', async () => {
    expect((await cli(['start', 'ctl-agent', '--task', 'x'])).exitCode).toBe(0);
    expect((await cli(['report', 'ctl-agent'], JSON.stringify(spiralTurn(1)))).exitCode).toBe(0);
    // The state table refuses resume on a running agent: the verb says so and exits 1.
    const refused = await cli(['resume', 'ctl-agent']);
    expect(refused.exitCode, refused.stdout).toBe(1);
    expect(refused.stderr).toMatch(/resume refused by agent-ctl-agent \(state running\): 'resume' is not allowed while running/);
    const pause = await cli(['pause', 'ctl-agent', '--reason', 'review']);
    expect(pause.exitCode, pause.stderr).toBe(0);
    expect(pause.stdout).toMatch(/^pause applied to agent-ctl-agent: running -> paused-by-user \(now paused-by-user\)/);
    const again = await cli(['pause', 'ctl-agent', '--json']); // already paused: refused
    expect(again.exitCode).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ exitCode: 1, error: expect.stringMatching(/'pause' is not allowed while paused-by-user/) });
  });

  test('status and the reportTurn reply validate against the committed JSON Schemas; plain status says why', async () => {
    expect((await cli(['start', 'schema-agent', '--task', 'Fix it'])).exitCode).toBe(0);
    const reply = await cli(['report', 'schema-agent', '--json'], JSON.stringify(spiralTurn(1)));
    const validReply = schema('report-turn-reply');
    expect(validReply(JSON.parse(reply.stdout)), JSON.stringify(validReply.errors)).toBe(true);
    const abort = await cli(['abort', 'schema-agent', '--reason', 'wrong repo']);
    expect(abort.stdout).toMatch(/abort applied to agent-schema-agent: running -> failed/);
    const s = await cli(['status', 'schema-agent', '--json']);
    const validStatus = schema('status');
    expect(validStatus(JSON.parse(s.stdout)), JSON.stringify(validStatus.errors)).toBe(true);
    const text = await cli(['status', 'schema-agent']);
    expect(text.stdout).toMatch(/^agent schema-agent: failed\n {2}reason: aborted: wrong repo$/m);
  });

  test('list: newest first; a query the server refuses exits 2 with its reason', async () => {
    for (const id of ['old-agent', 'new-agent']) {
      expect((await cli(['start', id, '--task', 'x'])).exitCode).toBe(0);
      await new Promise((r) => setTimeout(r, 50));
    }
    const rows = await eventually(async () => {
      const r = JSON.parse((await cli(['list', '--json'])).stdout) as { agentId: string; startTime: string }[];
      return r.some((x) => x.agentId === 'new-agent') && r.some((x) => x.agentId === 'old-agent') ? r : null;
    });
    expect(rows.map((r) => r.startTime)).toEqual([...rows.map((r) => r.startTime)].sort().reverse());
    expect(rows.findIndex((r) => r.agentId === 'new-agent')).toBeLessThan(rows.findIndex((r) => r.agentId === 'old-agent'));
    const bogus = await cli(['list', '--query', 'Bogus = 1']);
    expect(bogus.exitCode).toBe(2);
    expect(bogus.stderr).toMatch(/invalid --query "Bogus = 1": .*Bogus/);
    expect(bogus.stderr).not.toMatch(/^warden: Failed to list workflows$/m);
  });

  test('start refuses a workflow id that is not agent-<agentId>', async () => {
    const r = await cli(['start', 'a', '--task', 'x', '--workflow-id', 'agent-b']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/workflowId: "agent-b" does not match agentId "a"/);
    expect((await cli(['status', 'a'])).exitCode).toBe(3); // nothing was started
  });

  test("driven mode: the README's relative --driver-command runs from the agent's own work dir", async () => {
    const r = await execa(
      'node',
      [
        MAIN,
        '--address',
        stack.server.address,
        'start',
        'rel-bot',
        '--task',
        'spiral: make npm run build pass',
        '--driver',
        'command',
        '--driver-command',
        'python3 test/fixtures/agent.py',
        '--max-turns',
        '2',
        '--json',
      ],
      {
        reject: false,
        cwd: ROOT,
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).spec.driver.command).toEqual(['python3', join(ROOT, 'test/fixtures/agent.py')]);
    const done = await eventually(
      async () => {
        const s = JSON.parse((await cli(['status', 'rel-bot', '--json'])).stdout);
        return s.state === 'done' || s.state === 'failed' ? s : null;
      },
      { timeoutMs: 60_000 },
    );
    expect(done).toMatchObject({ state: 'done', turns: 2 });
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
    expect(JSON.parse(r.stdout)).toEqual({
      kind: 'CORRECTION',
      pattern: 'SPIRALING',
      message: expect.stringContaining('same failing call 3 times'),
      evidence: [1, 2, 3],
      // The finding's key (what a dismissal matches): the detector and a hash of its evidence.
      finding: expect.stringMatching(/^repeatedFailure#[0-9a-f]{16}$/),
    });
  });

  test('reward hacking: a skipped test', async () => {
    const r = await evaluate([
      '--transcript',
      transcript([{ text: 'skip it', toolCalls: [{ name: 'apply_patch', args: "it.skip('logs in', () => {})" }] }]),
      '--json',
    ]);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'CORRECTION', pattern: 'REWARD_HACKING' });
  });

  test('healthy transcript → OK; text output', async () => {
    const r = await evaluate([
      '--transcript',
      transcript([{ text: 'Read the failing test and found the cause in auth.ts', toolCalls: [{ name: 'shell', args: 'npm test', ok: true }] }]),
    ]);
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

  test('`warden … | head` ends quietly instead of crashing with EPIPE', async () => {
    // `| true`: the reader is gone before warden writes (a 42 KB `| head` would fit the pipe buffer
    // and never see EPIPE). Before the fix: "Error: write EPIPE", exit 1.
    const r = await execa('bash', ['-c', `node ${MAIN} schemas | true; echo "status \${PIPESTATUS[0]}"`], { reject: false });
    expect(r.stdout.trim()).toBe('status 0');
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled|Error/);
  });

  test('a codex or claude agent without credentials is refused at start (exit 2), before any Temporal call', async () => {
    const home = join(tmp, 'empty-home');
    mkdirSync(home, { recursive: true });
    const env = { PATH: process.env.PATH!, HOME: home, TEMPORAL_ADDRESS: '127.0.0.1:1' };
    const codex = await execa('node', [MAIN, 'start', 'cx', '--task', 't', '--driver', 'codex'], { reject: false, env, extendEnv: false });
    expect(codex.exitCode).toBe(2);
    expect(codex.stderr).toMatch(/codex driver has no credentials: .*codex login.*--no-credential-check/s);
    const claude = await execa('node', [MAIN, 'start', 'cl', '--task', 't', '--driver', 'claude'], { reject: false, env, extendEnv: false });
    expect(claude.exitCode).toBe(2);
    expect(claude.stderr).toMatch(/claude driver has no credentials/);
    // With a keyless OpenAI-compatible endpoint there is nothing to check: it gets as far as Temporal.
    const endpoint = await execa('node', [MAIN, 'start', 'cx', '--task', 't', '--driver', 'codex', '--driver-base-url', 'http://127.0.0.1:9/v1'], {
      reject: false,
      env,
      extendEnv: false,
    });
    expect(endpoint.stderr).toMatch(/cannot reach Temporal/);
  });

  test('--help helps', async () => {
    const r = await execa('node', [MAIN, 'start', '--help'], { reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/--task <text>/);
    expect(r.stdout).toMatch(/Examples:/);
  });
});
