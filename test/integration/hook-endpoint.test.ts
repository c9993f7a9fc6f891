/**
 * The resident hook endpoint (`warden serve`, POST /hooks/claude|codex) and its forwarder
 * (`warden-hook`, dist/src/hooks/forward.js), as real processes against a real dev server and worker:
 *
 *  - the first hook of a session finds no endpoint, starts it (detached) and is answered through it;
 *    the session's agent is auto-started, its tool calls are turns, a whisper reaches the next hook;
 *  - the endpoint SIGKILLed mid-session: the next hook starts it again, and every turn acknowledged
 *    before the kill is in the workflow exactly once;
 *  - a request without the token (or with another), from a web page (Origin) or for another Host is
 *    refused, and reports nothing; a forwarder whose token is stale says so once and answers nothing;
 *  - Temporal unreachable: the hook answers nothing and says so once per session;
 *  - a hook that names its agent (`--agent`) reports to that agent.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { freePort } from '../../src/devserver/ports.js';
import { readEndpoint } from '../../src/hooks/endpoint-file.js';
import { sessionAgentId } from '../../src/hooks/session.js';
import { reportedTurns, waitForStatus } from '../helpers/agents.js';
import { endpointUser, serveOf } from '../helpers/endpoint.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';

const stack = useStack();
const FORWARD = join(ROOT, 'dist/src/hooks/forward.js');

let scratch: string;
const homes: string[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-hook-endpoint-'));
});
afterEach(() => {
  // Every endpoint a test's hooks started (found by the test's own WARDEN_HOME in their environment).
  for (const home of homes.splice(0)) for (const pid of serveOf(home)) process.kill(pid, 'SIGKILL');
});
afterAll(() => cleanup(scratch));

/** A user of their own with an endpoint file on a free port, and a project `proj-<name>`. */
async function user(name: string) {
  const u = await endpointUser(join(scratch, name), `proj-${name}`, stack.server);
  homes.push(u.env.WARDEN_HOME);
  return u;
}

type User = Awaited<ReturnType<typeof user>>;

/** Run the forwarder as a hook does: the event on stdin, in the project. */
async function hook(u: User, agent: 'claude' | 'codex', event: Record<string, unknown>, args: string[] = [], env: Record<string, string> = {}) {
  const r = await execa('node', [FORWARD, agent, ...args], {
    cwd: u.project,
    env: { ...u.env, ...env },
    extendEnv: false,
    input: JSON.stringify({ cwd: u.project, ...event }),
    reject: false,
    timeout: 30_000,
  });
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
}

const endpointPids = (u: User) => serveOf(u.env.WARDEN_HOME);

const toolEvent = (session: string, i: number, event = 'PostToolUse') => ({
  session_id: session,
  hook_event_name: event,
  tool_name: 'Bash',
  tool_input: { command: `make step-${i}` },
  tool_use_id: `toolu_${i}`,
  ...(event === 'PostToolUse' && { tool_response: { stdout: `step ${i} done`, exit_code: 0 } }),
});

test('the first hook starts the endpoint; the session is supervised through it; a whisper reaches the next hook', async () => {
  const u = await user('first');
  expect(endpointPids(u)).toEqual([]);
  const prompt = await hook(u, 'codex', { session_id: 's-first', hook_event_name: 'UserPromptSubmit', prompt: 'Build the thing.' });
  expect(prompt, prompt.stderr).toMatchObject({ exitCode: 0, stderr: '' });
  expect(endpointPids(u)).toHaveLength(1); // started, detached, and still running
  expect(readFileSync(join(u.env.WARDEN_HOME, 'serve.log'), 'utf8')).toContain('answering hook events');

  const agentId = sessionAgentId(u.project, 's-first');
  expect(agentId.startsWith(`${basename(u.project)}-`)).toBe(true);
  await waitForStatus(stack.warden, agentId, (s) => s.state === 'spawning' || s.state === 'running', 'the session agent started');

  const post = await hook(u, 'codex', toolEvent('s-first', 1));
  expect(post, post.stderr).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
  await stack.warden.signal(agentId, 'steer', { text: 'UNIQUE-ENDPOINT-STEER: run the tests next' });
  await waitForStatus(stack.warden, agentId, (s) => s.pendingWhispers === 1, 'a pending whisper');
  const next = await hook(u, 'codex', toolEvent('s-first', 2));
  expect(next.exitCode).toBe(0);
  const out = JSON.parse(next.stdout) as { hookSpecificOutput?: { additionalContext?: string } };
  expect(out.hookSpecificOutput?.additionalContext).toContain('[steering] UNIQUE-ENDPOINT-STEER: run the tests next');

  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.flatMap((t) => t.toolCalls?.map((c) => c.args) ?? [])).toEqual(['make step-1', 'make step-2']);
  expect(endpointPids(u)).toHaveLength(1); // one endpoint served every hook
  await stack.warden.signal(agentId, 'abort', {});
});

test('the endpoint SIGKILLed mid-session: the next hook starts it again; nothing acknowledged is lost', async () => {
  const u = await user('killed');
  const session = 's-killed';
  const agentId = sessionAgentId(u.project, session);
  expect((await hook(u, 'claude', { session_id: session, hook_event_name: 'UserPromptSubmit', prompt: 'Go.' })).exitCode).toBe(0);
  for (let i = 1; i <= 3; i++) expect(await hook(u, 'claude', toolEvent(session, i))).toMatchObject({ exitCode: 0, stderr: '' });
  const [first] = endpointPids(u);
  expect(first).toBeDefined();
  process.kill(first!, 'SIGKILL');
  await eventually(async () => !endpointPids(u).includes(first!), { what: 'the endpoint gone' });

  // The session goes on: its next hooks start the endpoint again and are answered.
  for (let i = 4; i <= 5; i++) expect(await hook(u, 'claude', toolEvent(session, i))).toMatchObject({ exitCode: 0, stderr: '' });
  const [second] = endpointPids(u);
  expect(second).toBeDefined();
  expect(second).not.toBe(first);
  // A hook its CLI runs again after a lost answer is the same turn (its id), not a second one.
  expect((await hook(u, 'claude', toolEvent(session, 3))).exitCode).toBe(0);

  const turns = await reportedTurns(stack.warden, agentId);
  const calls = turns.flatMap((t) => t.toolCalls?.map((c) => c.args) ?? []);
  expect(calls.filter((c, i) => calls.indexOf(c) === i)).toEqual(['make step-1', 'make step-2', 'make step-3', 'make step-4', 'make step-5']);
  const s = await stack.warden.status(agentId);
  expect(s.turns).toBe(5); // each tool call once, across the kill and the repeated hook
  await stack.warden.signal(agentId, 'abort', {});
});

test('requests without the token, from a web page or for another Host are refused and report nothing', async () => {
  const u = await user('refused');
  expect((await hook(u, 'claude', { session_id: 's-warm', hook_event_name: 'Notification' })).exitCode).toBe(0); // starts the endpoint
  await eventually(async () => endpointPids(u).length === 1, { what: 'the endpoint running' });
  const url = `${u.endpoint.url}/hooks/claude`;
  const body = JSON.stringify({ ...toolEvent('s-attack', 1), cwd: u.project });
  const post = (headers: Record<string, string>, method = 'POST') =>
    new Promise<{ status: number }>((resolve, reject) => {
      const req = request(url, { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      });
      req.on('error', reject);
      req.end(method === 'POST' ? body : undefined);
    });
  const other = 'f'.repeat(64) === u.endpoint.token ? 'e'.repeat(64) : 'f'.repeat(64);

  expect((await post({})).status).toBe(401);
  expect((await post({ authorization: `Bearer ${other}` })).status).toBe(401);
  expect((await post({ authorization: u.endpoint.token })).status).toBe(401); // not a bearer token
  expect((await post({ authorization: `Bearer ${u.endpoint.token}`, origin: 'https://evil.example' })).status).toBe(403);
  expect((await post({ authorization: `Bearer ${u.endpoint.token}`, host: 'evil.example' })).status).toBe(403);
  expect((await post({ authorization: `Bearer ${u.endpoint.token}`, 'content-type': 'text/plain' })).status).toBe(415);
  expect((await post({ authorization: `Bearer ${u.endpoint.token}` }, 'GET')).status).toBe(405);
  await expect(stack.warden.status(sessionAgentId(u.project, 's-attack'))).rejects.toThrow(/no agent|not found/i);

  // A forwarder whose endpoint file holds a token the endpoint does not know: says so once, answers nothing.
  const file = join(u.env.WARDEN_HOME, 'hook-endpoint.json');
  const endpointRunning = readEndpoint(u.env)!;
  const stale = { ...u.env, WARDEN_HOME: join(u.dir, 'stale-home') };
  mkdirSync(stale.WARDEN_HOME, { recursive: true });
  writeFileSync(join(stale.WARDEN_HOME, 'hook-endpoint.json'), JSON.stringify({ url: endpointRunning.url, token: other }));
  const first = await hook(u, 'claude', toolEvent('s-stale', 1), [], { WARDEN_HOME: stale.WARDEN_HOME });
  const again = await hook(u, 'claude', toolEvent('s-stale', 2), [], { WARDEN_HOME: stale.WARDEN_HOME });
  expect(first).toMatchObject({ exitCode: 0, stdout: '' });
  expect(first.stderr).toMatch(/refused this hook's token/);
  expect(again).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
  expect(readFileSync(file, 'utf8')).toContain(u.endpoint.token); // the user's own file is untouched
});

test('Temporal unreachable: the hook answers nothing and says so once per session', async () => {
  const u = await user('down');
  const dead = `127.0.0.1:${await freePort()}`;
  const ev = (i: number) => toolEvent('s-down', i);
  const first = await hook(u, 'codex', ev(1), ['--address', dead]);
  expect(first).toMatchObject({ exitCode: 0, stdout: '' });
  expect(first.stderr).toMatch(/supervision is off for this session .*cannot reach Temporal/);
  const second = await hook(u, 'codex', ev(2), ['--address', dead]);
  expect(second).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
  // Another session hears it once too.
  expect((await hook(u, 'codex', toolEvent('s-down-2', 1), ['--address', dead])).stderr).toMatch(/supervision is off/);
});

test('an endpoint that cannot start: the hook answers nothing, says so once, and the next hooks do not try again at once', async () => {
  const u = await user('nostart');
  // A link secret that is set but too short: `warden serve` refuses to start (and says why in its log).
  const env = { WARDEN_LINK_SECRET: 'short' };
  const first = await hook(u, 'codex', toolEvent('s-nostart', 1), [], env);
  expect(first).toMatchObject({ exitCode: 0, stdout: '' });
  expect(first.stderr).toMatch(/the hook endpoint at http:\/\/127\.0\.0\.1:\d+ is not running and did not start \(its log: .*serve\.log\)/);
  const log = () => readFileSync(join(u.env.WARDEN_HOME, 'serve.log'), 'utf8');
  expect(log()).toMatch(/refuses to start: WARDEN_LINK_SECRET is too short/);
  const second = await hook(u, 'codex', toolEvent('s-nostart', 2), [], env);
  const other = await hook(u, 'codex', toolEvent('s-nostart-2', 1), [], env);
  expect(second).toMatchObject({ exitCode: 0, stdout: '', stderr: '' }); // said once for the session
  expect(other.stderr).toMatch(/did not start/); // another session hears it once too
  // …and neither started `warden serve` again: its log has the one refusal.
  expect(log().match(/refuses to start/g)).toHaveLength(1);
  expect(endpointPids(u)).toEqual([]);
});

test('a hook that names its agent reports to that agent, through the endpoint', async () => {
  const u = await user('named');
  const agentId = 'endpoint-named';
  await stack.warden.start({ agentId, task: 'Named.', supervisor: { evalInterval: 1000, idleAfterMs: 0 } });
  const r = await hook(u, 'claude', toolEvent('s-named', 1), ['--agent', agentId]);
  expect(r).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
  const turns = await reportedTurns(stack.warden, agentId);
  expect(turns.flatMap((t) => t.toolCalls?.map((c) => c.args) ?? [])).toEqual(['make step-1']);
  await expect(stack.warden.status(sessionAgentId(u.project, 's-named'))).rejects.toThrow(/no agent|not found/i);
  await stack.warden.signal(agentId, 'abort', {});
});
