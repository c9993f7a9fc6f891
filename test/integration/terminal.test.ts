/**
 * Terminal injection: agents, their tools and drivers write text that warden shows an operator. In a
 * real tmux pane, against a real dev server and worker, the human output of `warden status`, `warden
 * list`, `warden report`, `warden mesh status` and the live `warden top` (roster and focus pane) is
 * recorded byte for byte with `tmux pipe-pane` — what the program wrote to the terminal, before the
 * terminal interpreted it. Hostile payloads in the task, turn text, tool names, arguments and
 * results, steer text, an interrupt reason and a driver's stderr must reach the terminal only in
 * their visible forms (`␛]52;…`, `␍`, `\x9b`), never as sequences it would act on: an OSC 52
 * clipboard write, a window-title set, an OSC 8 hyperlink, a screen clear, a lone carriage return,
 * an 8-bit CSI, a bidi override. (Ink itself draws with CSI sequences for cursor and colour, so the
 * assertions name the hostile payloads, each between markers only agent text carries.)
 */
import { execa } from 'execa';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, expect as vitestExpect, test } from 'vitest';
import { cancelMesh, meshStatus, startMesh, waitForMesh } from '../../src/client/mesh.js';
import { waitForStatus } from '../helpers/agents.js';
import { gitRepo, meshInput } from '../helpers/mesh.js';
import { eventually, ROOT, useStack } from '../helpers/stack.js';

const tmp = mkdtempSync(join(tmpdir(), 'warden-term-'));
process.env.WARDEN_HOME = join(tmp, 'warden-home');
const stack = useStack();
const MAIN = join(ROOT, 'dist/src/cli/main.js');
const SOCK = `warden-term-test-${process.pid}`;
const tmux = (...args: string[]) => execa('tmux', ['-L', SOCK, ...args], { reject: false });

// One idle session holds the tmux server up for the whole file: otherwise killing a pane's session
// (the only one) makes the server exit, and the next `new-session` can meet the exiting server
// ("server exited unexpectedly").
beforeAll(async () => {
  const keep = await tmux('new-session', '-d', '-s', 'keep', 'sleep 3600');
  expect(keep.exitCode, keep.stderr).toBe(0);
});

afterAll(async () => {
  await tmux('kill-server');
});

// Each payload sits between markers (A…B) that only agent text carries.
const ESC = '\x1b';
const P = {
  clip: `${ESC}]52;c;aGVsbG8=\x07`,
  title: `${ESC}]0;pwned\x07`,
  link: `${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`,
  clear: `<<${ESC}[2J>>`,
  cr: 'all green\rFAKE',
  csi8: '\x9b2J',
  bidi: 'rev\u202eersed',
};
const hostile = (tag: string) => `${tag}:${P.clip}${P.title}${P.link}${P.clear}${P.cr} ${P.csi8} ${P.bidi}`;

/**
 * What the raw bytes written to the pane must never contain, and the visible forms they show instead.
 * Soft assertions: a run reports every verb that leaks, not only the first.
 */
function expectSafe(raw: string, what: string, opts: { visible?: boolean } = {}) {
  const at = (needle: string) => raw.indexOf(needle);
  const expect = vitestExpect.soft;
  expect(at(`${ESC}]52`), `${what}: an OSC 52 clipboard write reached the terminal`).toBe(-1);
  expect(at(`${ESC}]0;pwned`), `${what}: a window-title set reached the terminal`).toBe(-1);
  expect(at(`${ESC}]8;`), `${what}: an OSC 8 hyperlink reached the terminal`).toBe(-1);
  expect(at(`<<${ESC}[2J>>`), `${what}: a screen clear from agent text reached the terminal`).toBe(-1);
  expect(at('green\rFAKE'), `${what}: a lone carriage return from agent text reached the terminal`).toBe(-1);
  expect(at('\x9b'), `${what}: an 8-bit CSI reached the terminal`).toBe(-1);
  expect(at('\u202e'), `${what}: a bidi override reached the terminal`).toBe(-1);
  if (opts.visible === false) return;
  expect(raw, `${what}: the visible forms`).toContain('␛]52;c;aGVsbG8=␇');
  expect(raw).toContain('␛]0;pwned␇');
  expect(raw).toContain('␛]8;;https://evil.example/␛\\click');
  expect(raw).toContain('<<␛[2J>>');
  expect(raw).toContain('green␍FAKE');
  expect(raw).toContain('\\x9b2J');
  expect(raw).toContain('rev\\u202eersed');
}

const env = () => `TEMPORAL_ADDRESS=${stack.server.address} TEMPORAL_NAMESPACE=${stack.server.namespace}`;

/**
 * Run `warden <args>` in a fresh tmux pane whose output is piped, raw, to a file from before the
 * program starts (the pane waits for a key). `drive` may interact with the pane while it runs.
 * Returns the raw bytes as text (UTF-8).
 */
async function inPane(name: string, args: string, drive?: (session: string) => Promise<void>): Promise<string> {
  const file = join(tmp, `${name}.raw`);
  writeFileSync(file, '');
  const cmd = `read _; ${env()} node ${MAIN} ${args}; echo __END__; sleep 120`;
  const started = await tmux('new-session', '-d', '-s', name, '-x', '220', '-y', '50', 'sh', '-c', cmd);
  expect(started.exitCode, started.stderr).toBe(0);
  const piped = await tmux('pipe-pane', '-o', '-t', name, `cat >> ${file}`);
  expect(piped.exitCode, piped.stderr).toBe(0);
  await tmux('send-keys', '-t', name, 'Enter');
  if (drive) await drive(name);
  await eventually(async () => (readFileSync(file, 'utf8').includes('__END__') ? true : null), { what: `${name} to finish`, timeoutMs: 60_000 });
  await tmux('kill-session', '-t', name);
  return readFileSync(file, 'utf8');
}

test('status, list, report and top show hostile agent text visibly: the raw bytes carry no escape sequence from it', async () => {
  const w = stack.warden;
  const quiet = { supervisor: { idleAfterMs: 0 } };

  // An externally reported agent: hostile task, turn text, tool name, args and result; a hostile
  // interrupt reason (its state reason); then a hostile steer, queued for the next turn.
  await w.start({ agentId: 'hostile', task: hostile('task'), ...quiet });
  await w.reportTurn('hostile', {
    id: 'h1',
    text: hostile('turn'),
    toolCalls: [{ name: `sh${P.title}`, args: hostile('args'), result: hostile('result'), ok: false }],
    tokensIn: 10,
    tokensOut: 5,
  });
  await w.signal('hostile', 'steer', { text: hostile('steer') });
  await waitForStatus(w, 'hostile', (s) => s.pendingWhispers >= 1, 'the steer queued');
  await w.signal('hostile', 'interrupt', { reason: hostile('reason') });
  await waitForStatus(w, 'hostile', (s) => s.state === 'awaiting-input' && s.pendingWhispers >= 1, 'hostile awaiting input, the steer still queued');

  // A driven agent whose command fails with hostile stderr (the driver's error is in its status).
  const crash = join(tmp, 'crash.sh');
  const octal = (s: string) =>
    [...Buffer.from(s, 'utf8')]
      .map((b) => (b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c && b !== 0x25 ? String.fromCharCode(b) : `\\${b.toString(8).padStart(3, '0')}`))
      .join('');
  writeFileSync(crash, `#!/bin/sh\ncat >/dev/null\nprintf '${octal(hostile('stderr'))}' >&2\nexit 1\n`);
  chmodSync(crash, 0o755);
  await w.start({
    agentId: 'crasher',
    task: 'crash',
    driver: { kind: 'command', command: [crash] },
    safety: { maxRestarts: 0, restartWindowMs: 60_000 },
    ...quiet,
  } as never);
  const crashed = await waitForStatus(w, 'crasher', (s) => !!s.lastTurnError, 'the driver error recorded');
  expect(crashed.lastTurnError).toContain(P.clip); // stored as the agent wrote it; shown visibly below

  // The values are stored raw (JSON escapes them for programs).
  const json = await execa('node', [MAIN, 'status', 'hostile', '--json'], {
    env: { TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace },
    reject: false,
  });
  expect(json.exitCode, json.stderr).toBe(0);
  expect(json.stdout).not.toContain(ESC);
  expect(json.stdout).toContain('\\u001b]52;c;aGVsbG8=\\u0007');
  expect(JSON.parse(json.stdout).stateReason).toBe(hostile('reason'));

  // warden status: the state reason (interrupt) and the driver's stderr.
  const status = await inPane('status', 'status hostile');
  expectSafe(status, 'warden status hostile');
  expect(status).toContain('paused: reason:');
  const statusC = await inPane('statusc', 'status crasher');
  expectSafe(statusC, 'warden status crasher');
  expect(statusC).toContain('last turn error: agent command exited with code 1: stderr:');

  // warden list.
  const list = await inPane('list', 'list');
  expectSafe(list, 'warden list', { visible: false });
  expect(list).toMatch(/hostile +running|hostile +\w/);

  // warden top: the roster (intent = the task, the current tool), Enter opens the focus pane (turn
  // text, tool call, pending steer, the reason), q quits.
  const top = await inPane('top', 'top --poll-ms 500 --list-ms 1000', async (s) => {
    const screen = async () => (await tmux('capture-pane', '-p', '-t', s)).stdout;
    await eventually(async () => ((await screen()).includes('hostile') ? true : null), { what: 'top to show the hostile agent', timeoutMs: 60_000 });
    // The hostile agent is first (awaiting input); open its focus pane.
    await tmux('send-keys', '-t', s, 'Enter');
    // (Where hostile sequences reach the terminal, they can wreck the screen: then the pane never
    // shows; that is a failure too, and the raw bytes below say which sequences got through.)
    const shown = await eventually(
      async () => {
        const x = await screen();
        return x.includes('transcript tail') && x.includes('turn:') && x.includes('args:') && x.includes('steer:') ? true : null;
      },
      { what: 'the focus pane with the turn, the tool call and the pending steer', timeoutMs: 30_000 },
    ).catch((err: unknown) => String(err));
    expect.soft(shown, 'the focus pane showed').toBe(true);
    await tmux('send-keys', '-t', s, 'q');
  });
  expectSafe(top, 'warden top');
  for (const tag of ['task', 'turn', 'args', 'result', 'steer', 'reason']) expect.soft(top, `top shows the ${tag}`).toContain(`${tag}:␛]52;c;aGVsbG8=␇`);

  // warden report: the reply carries the hostile steer as a whisper.
  const turnFile = join(tmp, 'turn.json');
  writeFileSync(turnFile, JSON.stringify({ id: 'h2', text: 'next turn' }));
  const report = await inPane('report', `report hostile --file ${turnFile}`);
  expectSafe(report, 'warden report');
  expect(report).toContain('[steering] steer:');

  // warden top --once (text) prints the same cells.
  const once = await inPane('once', 'top --once --width 220');
  expectSafe(once, 'warden top --once', { visible: false });
  expect.soft(once).toContain('task:␛]52');
}, 300_000);

test('errors that echo agent text (a hook event, a turn that is not JSON) show it visibly on stderr', async () => {
  // JSON.parse's message quotes the text it could not parse: agent text, on the operator's stderr.
  const bad = join(tmp, 'bad.json');
  // (Node quotes a short input whole: a window-title set.)
  writeFileSync(bad, P.title);
  for (const [name, args, prefix] of [
    ['hook', `hook claude --agent hostile < ${bad}`, 'warden hook: the hook input on stdin is not JSON'],
    ['badturn', `report hostile --file ${bad}`, 'warden: the turn is not valid JSON'],
  ] as const) {
    const raw = await inPane(name, args);
    expectSafe(raw, name, { visible: false });
    expect(raw).toContain(prefix);
    expect.soft(raw).toContain('"␛]0;pwned␇"');
  }
}, 60_000);

test('warden mesh status shows a worker checkpoint visibly: the monitoring log carries no escape sequence from it', async () => {
  // A mesh worker whose checkpoint has a hostile status (one token: no spaces, no CR) and detail.
  // (A checkpoint must be ASCII and its fields single lines, so no 8-bit CSI, bidi override or CR here.)
  const code = `x${P.clip}${P.title}<<${ESC}[2J>>`;
  const detail = `detail:${P.clip}${P.title}${P.link}`;
  const worker = join(tmp, 'mesh-worker.py');
  writeFileSync(
    worker,
    [
      'import json, os, sys, time',
      'req = json.load(sys.stdin)',
      'mesh = req.get("mesh") or {}',
      'cp = mesh.get("checkpoint") or os.environ["WARDEN_MESH_CHECKPOINT"]',
      'patch = mesh.get("patch") or os.environ["WARDEN_MESH_PATCH"]',
      'os.makedirs(os.path.dirname(cp), exist_ok=True)',
      `lines = ["status_code: " + ${JSON.stringify(code)}, "status_detail: " + ${JSON.stringify(detail)}, "plan:", "- a", "- b", "- c", "- d", "- e", "intended_files:", "- a.txt", "blockers:", "- none", "artifacts:", "- " + cp, "- " + patch, ""]`,
      'open(cp, "w").write("\\n".join(lines))',
      'time.sleep(2)',
      'print(json.dumps({"turn": {"text": "working"}}))',
      '',
    ].join('\n'),
  );
  const repo = gitRepo({ 'a.txt': 'a\n' });
  await startMesh(stack.warden, {
    ...meshInput('evil', repo, [{ title: 'edit a', scope: ['a.txt'] }], { ackSla: '60s' }),
    driver: { kind: 'command', command: ['python3', worker] },
  });
  const seen = await waitForMesh(stack.warden, 'evil', (s) => s.log.some((e) => e.text.includes(P.clip)), 60_000).catch(async (err) => {
    throw new Error(
      `${err}; log:\n${(await meshStatus(stack.warden, 'evil')).log
        .slice(0, 4)
        .map((e) => e.text)
        .join('\n')}`,
    );
  });
  expect(seen.log.map((e) => e.text).join('\n')).toContain(`status="${code}: ${detail}"`); // stored as written
  const raw = await inPane('mesh', 'mesh status evil');
  expectSafe(raw, 'warden mesh status', { visible: false });
  expect.soft(raw).toContain('status="x␛]52;c;aGVsbG8=␇␛]0;pwned␇<<␛[2J>>: detail:␛]52;c;aGVsbG8=␇␛]0;pwned␇␛]8;;https://evil.example/␛\\click␛]8;;␛\\"');
  await cancelMesh(stack.warden, 'evil', 'test over');
}, 120_000);
