/**
 * `warden top` in a real terminal: tmux runs the built CLI against a real dev server and worker;
 * the test types keys with `send-keys` and reads the screen with `capture-pane`. Agents in several
 * states, including a delegated child: the awaiting-input agent is first, the columns are there,
 * `r` resumes it and its row changes (and `r` again is refused with the state table's reason), `/`
 * filters, `s` delivers a steer that the agent's next `reportTurn` reply carries, Enter opens the
 * focus pane. Also `--once --json` against the same agents.
 */
import { execa } from 'execa';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { eventually, ROOT, useStack } from '../helpers/stack.js';
import { waitForEvaluations, waitForStatus } from '../helpers/agents.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useStack();
const SOCK = `warden-top-test-${process.pid}`;
const SESSION = 'top';
const tmux = (...args: string[]) => execa('tmux', ['-L', SOCK, ...args], { reject: false });
const screen = async () => (await tmux('capture-pane', '-p', '-t', SESSION)).stdout;
const keys = async (...k: string[]) => {
  for (const key of k) {
    await tmux('send-keys', '-t', SESSION, key);
    await new Promise((r) => setTimeout(r, 300));
  }
};
const type = async (text: string) => {
  await tmux('send-keys', '-t', SESSION, '-l', text);
  await new Promise((r) => setTimeout(r, 300));
};
/** Wait until the screen satisfies `pred`; returns that screen (or fails showing the last one). */
async function screenWhere(pred: (s: string) => boolean, what: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    last = await screen();
    if (pred(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting for the screen to show ${what}; last screen:\n${last}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}
/** The roster lines: after the title and the header, up to the roster box's blank padding. */
const rosterLines = (s: string) => {
  const lines = s.split('\n').slice(2);
  const end = lines.findIndex((l) => l.trim() === '');
  return end < 0 ? lines : lines.slice(0, end);
};
const row = (s: string, id: string) => s.split('\n').find((l) => new RegExp(`^\\s*(└ )?${id.replace('.', '\\.')}\\s`).test(l));

afterAll(async () => {
  await tmux('kill-server');
});

const turn = (id: string, text: string) => ({
  id,
  text,
  toolCalls: [{ name: 'shell', args: 'npm test', result: '12 passed', ok: true }],
  tokensIn: 1500,
  tokensOut: 200,
  costUsd: 0.02,
});

/** A `command` evaluator that says OK and reports what its model call cost (a `warden-usage` line on stderr). */
const PAID_JUDGE: { kind: 'command'; command: string[] } = {
  kind: 'command',
  command: [
    process.execPath,
    '-e',
    `process.stdin.resume();process.stdin.on('end',()=>{process.stderr.write('warden-usage {"tokensIn":700,"tokensOut":9,"costUsd":0.0042}\\n');process.stdout.write('{"verdict":"OK"}')})`,
  ],
};

test('warden top in tmux: priority order, columns, resume, refusal, filter, steer, focus', async () => {
  const w = stack.warden;
  const quiet = { supervisor: { idleAfterMs: 0 } };
  // waiter: awaiting input (interrupted after one turn).
  await w.start({ agentId: 'waiter', task: 'Fix the flaky login test', ...quiet });
  await w.reportTurn('waiter', turn('w1', 'looked at the login test'));
  await w.signal('waiter', 'interrupt', { reason: 'needs a decision' });
  // busy: running (will be steered).
  await w.start({ agentId: 'busy', task: 'Write docs for the parser', ...quiet });
  await w.reportTurn('busy', turn('b1', 'drafted the parser overview'));
  // frozen: paused by a human; supervised by a paid evaluator (one evaluation, $0.0042), evaluated before the pause.
  await w.start({ agentId: 'frozen', task: 'Refactor the auth module', supervisor: { idleAfterMs: 0, evalInterval: 1 }, evaluator: PAID_JUDGE });
  await w.reportTurn('frozen', turn('f1', 'split auth into two files'));
  await waitForEvaluations(w, 'frozen', 1);
  await w.signal('frozen', 'pause', {});
  // ended: aborted (failed, finished, dimmed).
  await w.start({ agentId: 'ended', task: 'Try the old migration', ...quiet });
  await w.signal('ended', 'abort', { reason: 'obsolete' });
  // boss with a delegated child that keeps working.
  await w.start({ agentId: 'boss', task: 'Coordinate the release', ...quiet });
  await w.delegate('boss', {
    childId: 'kid',
    objective: 'Compute the release notes.',
    resultSchema: { type: 'object' },
    definitionOfDone: 'notes returned',
    toolAllowlist: ['shell'],
    driver: {
      kind: 'scripted',
      turns: [{ text: 'collecting commits', toolCalls: [{ name: 'shell', args: 'git log', ok: true }] }],
      turnDelayMs: 120_000,
      result: {},
    },
  } as never);
  await waitForStatus(w, 'waiter', (s) => s.state === 'awaiting-input', 'waiter awaiting input');
  await waitForStatus(w, 'frozen', (s) => s.state === 'paused-by-user', 'frozen paused');
  await waitForStatus(w, 'boss.kid', (s) => s.state === 'running' || s.state === 'spawning', 'child running');
  // Visibility is eventually consistent: wait until it lists all six with their states.
  await eventually(
    async () => {
      const rows = await w.list({ limit: 20 });
      return rows.length === 6 && rows.find((r) => r.agentId === 'waiter')?.state === 'awaiting-input' ? rows : null;
    },
    { what: 'visibility lists six agents' },
  );

  const cli = `TEMPORAL_ADDRESS=${stack.server.address} TEMPORAL_NAMESPACE=${stack.server.namespace} exec node ${join(ROOT, 'dist/src/cli/main.js')} top --poll-ms 500 --list-ms 1000`;
  const started = await tmux('new-session', '-d', '-s', SESSION, '-x', '220', '-y', '45', cli);
  expect(started.exitCode).toBe(0);

  // The awaiting-input agent is first; every column is there; the child is indented under its parent.
  // (Rows first come from visibility alone; the status answers fill in tokens and the ladder.)
  let s = await screenWhere(
    (x) =>
      /6 agents/.test(x) &&
      rosterLines(x).length >= 6 &&
      /Fix the flaky/.test(x) &&
      /└ kid/.test(x) &&
      /1\.5k\/200/.test(row(x, 'waiter') ?? '') &&
      /0\/3/.test(row(x, 'ended') ?? '') &&
      /\$0\.004/.test(row(x, 'frozen') ?? ''),
    'roster with six queried rows',
  );
  expect(s).toMatch(/AGENT +STATE +INTENT +MODEL +TOK IN\/OUT +COST +SUPV \$ +SUPV\/H +TOOL +BURN +ELAPSED +ESC/);
  // Supervision's cost beside the agent's own: frozen's evaluator cost $0.0042 (its rate: "—" in its first minute, then $…/h);
  // a heuristic evaluator costs nothing. The title line totals the fleet.
  expect(row(s, 'frozen')).toMatch(/\$0\.020 +\$0\.004 +(—|\$\d+\.\d+\/h) /);
  expect(row(s, 'waiter')).toMatch(/\$0\.020 +\$0\.000 +(—|\$0\.000\/h) /);
  expect(s.split('\n')[0]).toMatch(/6 agents \(5 live\) · agents \$0\.060 · supervision \$0\.004 ·/);
  const lines = rosterLines(s);
  expect(lines[0]).toMatch(/^waiter +‼ awaiting-input +Fix the flaky login test/);
  expect(lines[0]).toMatch(/1\.5k\/200 +\$0\.020/);
  const bossAt = lines.findIndex((l) => /^boss /.test(l));
  expect(lines[bossAt + 1]).toMatch(/^ +└ kid +. (spawning|running) +Compute the release notes/);
  expect(row(s, 'frozen')).toMatch(/⏸ paused-by-user/);
  expect(row(s, 'ended')).toMatch(/✗ failed/);
  expect(lines.at(-1)).toMatch(/^ended/); // finished last
  expect(s).toMatch(/s steer +i interrupt +x stop +p pause +r resume +a abort .*\? help +q quit/);
  const capture = join(mkdtempSync(join(tmpdir(), 'warden-top-')), 'roster.txt');
  writeFileSync(capture, s);

  // r resumes the selected (first) agent: its row changes to running, and the workflow agrees.
  await keys('r');
  s = await screenWhere((x) => /resume sent to waiter/.test(x) && /▶ running/.test(row(x, 'waiter') ?? ''), 'waiter running');
  expect((await w.status('waiter')).state).toBe('running');
  expect(rosterLines(s).join('\n')).not.toMatch(/awaiting-input/);
  // The selection stayed on waiter; r again is refused locally with the state table's reason.
  await keys('r');
  s = await screenWhere((x) => /resume waiter refused/.test(x), 'refusal shown');
  expect(s).toMatch(/'resume' is not allowed while running/);

  // `/` filters (fuzzy): only busy is left.
  await keys('/');
  await type('busy');
  await keys('Enter');
  s = await screenWhere((x) => /filter \/busy/.test(x) && rosterLines(x).length === 1, 'filtered to busy');
  expect(rosterLines(s)[0]).toMatch(/^busy /);
  expect(s).not.toMatch(/^waiter|^frozen|^boss/m);

  // s steers busy; its next reportTurn reply carries the steering whisper.
  await keys('s');
  await screenWhere((x) => /steer busy:/.test(x), 'steer prompt');
  await type('run the parser tests before writing more');
  await keys('Enter');
  await screenWhere((x) => /steer sent to busy/.test(x), 'steer sent');
  const reply = await w.reportTurn('busy', turn('b2', 'wrote the grammar section'));
  expect(reply.whispers.map((x) => [x.type, x.text])).toContainEqual(['STEERING', 'run the parser tests before writing more']);

  // Enter: the focus pane shows the transcript tail with tool calls, verdict, whispers, budgets.
  await keys('Enter');
  // The window and the status are polled separately: wait until both show turn b2.
  s = await screenWhere((x) => /transcript tail/.test(x) && /wrote the grammar section/.test(x) && /budgets: tokens 3400\//.test(x), 'focus pane');
  expect(s).toMatch(/▌busy \[▶ running\] Write docs for the parser/);
  expect(s).toMatch(/⚙ shell npm test → 12 passed/);
  expect(s).toMatch(/last verdict:/);
  expect(s).toMatch(/pending whispers \(0\)/);
  expect(s).toMatch(/budgets: tokens 3400\/∞/);

  // esc closes the pane, esc clears the filter, q quits.
  await keys('Escape', 'Escape');
  await screenWhere((x) => rosterLines(x).length >= 6, 'filter cleared');
  await keys('q');
  await eventually(async () => ((await tmux('has-session', '-t', SESSION)).exitCode !== 0 ? true : null), { what: 'top exits on q', timeoutMs: 15_000 });
  console.log(`roster capture: ${capture}`);
}, 240_000);

test('warden top --once --json prints the same order for scripts', async () => {
  const r = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'top', '--once', '--json'], {
    env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace },
    reject: false,
  });
  expect(r.exitCode).toBe(0);
  const out = JSON.parse(r.stdout) as { agents: number; rows: { agentId: string; depth: number; state: string; priority: string; intent: string | null }[] };
  expect(out.agents).toBe(6);
  const ids = out.rows.map((x) => x.agentId);
  // waiter was resumed by the first test; frozen is still paused; boss.kid directly under boss; ended last.
  expect(ids.at(-1)).toBe('ended');
  expect(ids.indexOf('boss.kid')).toBe(ids.indexOf('boss') + 1);
  expect(out.rows.find((x) => x.agentId === 'boss.kid')).toMatchObject({ depth: 1, intent: 'Compute the release notes.' });
  expect(out.rows.find((x) => x.agentId === 'ended')).toMatchObject({ state: 'failed', priority: 'finished' });
  // Supervision's cost per row and for the fleet (frozen's paid evaluator; the others are heuristic).
  const json = out as unknown as { totals: { supervisionUsd: number }; rows: { agentId: string; supervision: { costUsd: number | null } }[] };
  expect(json.rows.find((x) => x.agentId === 'frozen')!.supervision.costUsd).toBeCloseTo(0.0042, 6);
  expect(json.rows.find((x) => x.agentId === 'waiter')!.supervision.costUsd).toBe(0);
  expect(json.totals.supervisionUsd).toBeCloseTo(0.0042, 6);
  // Without a single status query the figure comes from visibility (WardenEvaluatorCostUsd, published with the pause).
  const listed = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'top', '--once', '--json', '--details', '0'], {
    env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace },
    reject: false,
  });
  expect(listed.exitCode, listed.stderr).toBe(0);
  const vis = JSON.parse(listed.stdout) as typeof json & { statusQueries: number; rows: { detailed: boolean }[] };
  expect(vis.statusQueries).toBe(0);
  expect(vis.rows.find((x) => x.agentId === 'frozen')).toMatchObject({ detailed: false, supervision: { costUsd: 0.0042 } });
  expect(vis.totals.supervisionUsd).toBeCloseTo(0.0042, 6);
  // Bad usage: --json without --once is exit 2.
  const bad = await execa('node', [join(ROOT, 'dist/src/cli/main.js'), 'top', '--json'], { env: { TEMPORAL_ADDRESS: stack.server.address }, reject: false });
  expect(bad.exitCode).toBe(2);
}, 60_000);
