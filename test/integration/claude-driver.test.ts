/**
 * The claude driver with the real Claude Code binary (the project's dependency) against a scripted
 * Anthropic Messages API on 127.0.0.1 — offline, no mocks:
 *
 *  - the driver called directly: a turn in which Claude really runs the Bash call the model asks
 *    for; a second turn that resumes the session and carries a whisper; a Claude that fails;
 *  - cancellation while the model stalls, and while a tool runs: the turn resolves interrupted
 *    within the grace period, no process of the turn is left, and the next turn resumes the session;
 *  - through the workflow on a real dev server: a driven claude agent ends done after 2 turns.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { claudeDriver, type ClaudeDriverConfig } from '../../activities/drivers/claude.js';
import type { DriverContext, TurnRequest, TurnResult } from '../../activities/drivers/types.js';
import { groupMembers } from '../../activities/process-group.js';
import type { Turn } from '../../src/domain/contract/schemas.js';
import { turnInput } from '../../src/domain/agent/turn-input.js';
import {
  messageTexts,
  stall,
  startAnthropicServer,
  text,
  toolResults,
  toolUse,
  type AnthropicScript,
  type AnthropicServer,
} from '../fixtures/anthropic-server.js';
import { claudeBinary, useOfflineClaude } from '../helpers/claude.js';
import { cleanup, eventually, useStack } from '../helpers/stack.js';
import { finalStatus } from '../helpers/agents.js';
import { processesWithEnv, running } from '../helpers/procs.js';

const wardenHome = mkdtempSync(join(tmpdir(), 'warden-home-'));
process.env.WARDEN_HOME = wardenHome;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MODEL = 'claude-sonnet-4-5';
const DONE = 'TASK COMPLETE';
/** Reaches Claude only through the worker's environment; must never show up in argv. */
const API_KEY = `sk-ant-warden-test-${Math.random().toString(36).slice(2)}`;

let scratch: string;
let model: AnthropicServer | null = null;
let restoreEnv = () => {};

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-claude-driver-'));
  // The worker's environment is what the driver hands on: none of the developer's own Claude or
  // Anthropic settings, only the test's (ANTHROPIC_BASE_URL is set per scripted server).
  restoreEnv = useOfflineClaude(null, { apiKey: API_KEY });
});
afterEach(async () => {
  await model?.close();
  model = null;
});
afterAll(() => {
  cleanup(scratch);
  cleanup(wardenHome);
  restoreEnv();
});

async function scriptedModel(script: AnthropicScript): Promise<AnthropicServer> {
  model = await startAnthropicServer({ script });
  process.env.ANTHROPIC_BASE_URL = model.url;
  return model;
}

// ---------- helpers ----------

interface LogRecord {
  msg: string;
  pid?: number;
  resume?: boolean;
  args?: string[];
  [k: string]: unknown;
}

function context(signal: AbortSignal = new AbortController().signal, killGraceMs = 3_000) {
  const beats: Array<Partial<Turn> | undefined> = [];
  const records: LogRecord[] = [];
  const log: Logger = pino({ level: 'debug' }, { write: (s: string) => void records.push(JSON.parse(s) as LogRecord) });
  const ctx: DriverContext = { signal, killGraceMs, heartbeat: (p) => void beats.push(p), log };
  return { ctx, beats, records };
}

const config = (extra: Partial<ClaudeDriverConfig> = {}): ClaudeDriverConfig => ({
  kind: 'claude',
  claudePath: claudeBinary(),
  model: MODEL,
  args: [],
  ...extra,
});

/** A fresh agent: its working directory and its (not yet created) private home. */
function agentDirs(name: string): { workDir: string; homeDir: string } {
  const workDir = join(scratch, name, 'work');
  mkdirSync(workDir, { recursive: true });
  return { workDir, homeDir: join(scratch, name, 'home') };
}

const TASK = 'Write the marker file (task marker T-4471).';
const LONG_BUILD = 'node -e "setTimeout(() => {}, 300000) // UNIQUE-LONG-BUILD"';
function request(agentId: string, dirs: { workDir: string; homeDir: string }, over: Partial<TurnRequest> = {}): TurnRequest {
  const turnNumber = over.turnNumber ?? 1;
  const input = turnInput({ task: TASK, turnNumber, whispers: over.whispers ?? [], doneMarker: DONE });
  return { agentId, task: TASK, turnNumber, input, whispers: [], session: null, doneMarker: DONE, ...dirs, ...over };
}

const envOf = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter(Boolean);
const cmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

/** The session transcripts Claude keeps under <home>/.claude/projects. */
function sessionFiles(homeDir: string): string[] {
  const dir = join(homeDir, '.claude', 'projects');
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl')).map((f) => f.split(/[\\/]/).at(-1)!);
}

const allText = (body: unknown) => messageTexts(body).join('\n');
const sessionHeader = (r: { headers: Record<string, unknown> }) => r.headers['x-claude-code-session-id'];
const started = (records: LogRecord[]) => records.filter((r) => r.msg === 'claude started');

// ---------- the driver, called directly ----------

describe('the claude driver, called directly', () => {
  const dirs = { workDir: '', homeDir: '' };
  let first: TurnResult;
  let firstModel: AnthropicServer | undefined;
  afterAll(async () => firstModel?.close());

  test('turn 1: Claude runs the Bash call the model asks for; the Turn has the call with its result, usage and cost; a session id comes back', async () => {
    Object.assign(dirs, agentDirs('direct'));
    firstModel = await scriptedModel([
      toolUse(
        'Bash',
        { command: 'echo hi > marker.txt', description: 'Write the marker' },
        { id: 'toolu_warden_cd_1', usage: { input_tokens: 100, output_tokens: 7 } },
      ),
      text('Wrote marker.txt.', { input_tokens: 200, output_tokens: 11 }),
    ]);
    model = null; // keep this server for turn 2 (afterEach would close it); closed after the block
    const { ctx, beats, records } = context();
    const req = request('cd-direct', dirs);
    first = await claudeDriver(config()).runTurn(req, ctx);

    expect(first.interrupted).toBeFalsy();
    expect(first.done).toBe(false);
    expect(readFileSync(join(dirs.workDir, 'marker.txt'), 'utf8')).toBe('hi\n'); // the command really ran, in the work dir
    expect(first.turn.toolCalls).toEqual([{ name: 'Bash', args: 'echo hi > marker.txt', result: expect.any(String), ok: true }]);
    expect(first.turn).toMatchObject({ id: 'cd-direct-turn-1', text: 'Wrote marker.txt.', tokensIn: 300, tokensOut: 18 });
    expect(first.turn.costUsd).toBeGreaterThan(0);

    const sessionId = first.session?.sessionId as string;
    expect(sessionId).toMatch(UUID_RE);
    expect(sessionFiles(dirs.homeDir)).toEqual([`${sessionId}.jsonl`]); // kept in the agent's own home

    const reqs = firstModel.agentRequests();
    expect(reqs).toHaveLength(2);
    expect(reqs.map(sessionHeader)).toEqual([sessionId, sessionId]);
    expect(reqs.map((r) => (r.body as { model?: string }).model)).toEqual([MODEL, MODEL]); // --model
    expect(allText(reqs[0]!.body)).toContain(req.input); // the input went in on stdin
    expect(toolResults(reqs[1]!.body)).toEqual([expect.objectContaining({ toolUseId: 'toolu_warden_cd_1', isError: false })]);
    // The worker's API key reached Claude through the environment.
    expect(reqs.map((r) => r.headers['x-api-key'])).toEqual([API_KEY, API_KEY]);

    // A heartbeat per event, with the partial turn: the Bash call shows up before the turn ends.
    expect(beats.length).toBeGreaterThanOrEqual(4);
    expect(beats.some((b) => b?.toolCalls?.[0]?.name === 'Bash' && b.text === '')).toBe(true);
    expect(started(records)).toEqual([expect.objectContaining({ resume: false, sessionId })]);
  });

  test('turn 2: a whisper in the input reaches the model, in the same conversation (--resume); per-turn cost; done on the marker', async () => {
    expect(first?.session, 'turn 1 ran').toBeTruthy();
    firstModel!.setScript([text(`${DONE}: the marker is written.`, { input_tokens: 50, output_tokens: 5 })]);
    const { ctx, records } = context();
    const whispers = [
      { id: 'w1', type: 'CORRECTION' as const, text: 'UNIQUE-WHISPER-42 check the file before you finish', createdAt: new Date().toISOString() },
    ];
    const req = request('cd-direct', dirs, { turnNumber: 2, whispers, session: first.session });
    expect(req.input).toContain('[CORRECTION] UNIQUE-WHISPER-42');
    const second = await claudeDriver(config()).runTurn(req, ctx);

    const sessionId = first.session!.sessionId;
    const reqs = firstModel!.agentRequests();
    expect(reqs).toHaveLength(3);
    const body = reqs[2]!.body;
    expect(allText(body)).toContain('[CORRECTION] UNIQUE-WHISPER-42 check the file before you finish');
    expect(allText(body)).toContain('Continue working on your task.');
    // The same conversation: turn 1's task, its answer and its tool result are all in the request.
    expect(allText(body)).toContain('T-4471');
    expect(allText(body)).toContain('Wrote marker.txt.');
    expect(toolResults(body).map((t) => t.toolUseId)).toEqual(['toolu_warden_cd_1']);
    expect(sessionHeader(reqs[2]!)).toBe(sessionId);
    expect(started(records)).toEqual([expect.objectContaining({ resume: true, sessionId })]);

    expect(second.done).toBe(true);
    expect(second.session?.sessionId).toBe(sessionId);
    expect(second.turn).toMatchObject({ id: 'cd-direct-turn-2', text: `${DONE}: the marker is written.`, toolCalls: [], tokensIn: 50, tokensOut: 5 });
    // Claude reports the session's running total; the turn carries only its own share.
    expect(second.turn.costUsd).toBeGreaterThan(0);
    expect(second.turn.costUsd!).toBeLessThan(first.turn.costUsd!);
    expect(second.session?.totalCostUsd as number).toBeCloseTo(first.turn.costUsd! + second.turn.costUsd!, 10);
    expect(sessionFiles(dirs.homeDir)).toEqual([`${sessionId}.jsonl`]);
  });

  test('a failing Claude: a non-zero exit throws with the stderr tail, or with the API error Claude reports', async () => {
    // Every request is refused (Claude may retry a 400 once in another shape).
    await scriptedModel(() => ({
      kind: 'error',
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'UNIQUE-BAD-REQUEST' } },
    }));
    const bad = agentDirs('bad');
    await expect(claudeDriver(config({ args: ['--no-such-flag-warden'] })).runTurn(request('cd-bad', bad), context().ctx)).rejects.toThrow(
      /claude exited with code \d+: .*no-such-flag-warden/s,
    );
    await expect(claudeDriver(config()).runTurn(request('cd-bad', bad), context().ctx)).rejects.toThrow(/claude exited with code 1:[\s\S]*UNIQUE-BAD-REQUEST/);
    expect(model!.agentRequests().length).toBeGreaterThanOrEqual(1); // the second run reached the model; the first never started
  });
});

// ---------- cancellation ----------

test('cancellation: while the model stalls and while a tool runs, the turn ends interrupted within the grace period, nothing is left running, and the session resumes', async () => {
  const killGraceMs = 2_000;
  const slack = 3_000;
  const dirs = agentDirs('cancel');
  const configDir = `CLAUDE_CONFIG_DIR=${join(dirs.homeDir, '.claude')}`;
  const m = await scriptedModel((_req, i) => {
    if (i === 0) return toolUse('Bash', { command: 'echo partial > partial.txt', description: 'Partial work' }, { id: 'toolu_warden_cd_p1' });
    if (i === 1) return stall(); // the model never answers: only cancellation ends this turn
    // (Claude Code blocks a bare `sleep 300`; a long-running program is what a build looks like.)
    if (i === 2) return toolUse('Bash', { command: LONG_BUILD, description: 'A long build' }, { id: 'toolu_warden_cd_p2' });
    return text('Resumed after two interruptions.');
  });
  const driver = claudeDriver(config());

  // Turn 1: cancelled while the model stalls.
  const ac1 = new AbortController();
  const c1 = context(ac1.signal, killGraceMs);
  const turn1 = driver.runTurn(request('cd-cancel', dirs, { input: 'UNIQUE-FIRST-INPUT: write partial.txt' }), c1.ctx);
  await m.waitForAgentRequests(2, 60_000);
  const pid1 = started(c1.records)[0]!.pid!;
  expect(running(pid1)).toBe(true);
  // Nothing secret or long in argv: the key is in the environment, the input went in on stdin.
  const argv = cmdline(pid1).join(' ');
  expect(argv).toContain('--session-id');
  expect(argv).not.toContain(API_KEY);
  expect(argv).not.toContain('UNIQUE-FIRST-INPUT');
  const marker1 = envOf(pid1).find((e) => e.startsWith('WARDEN_TURN_MARKER='))!;
  expect(marker1).toMatch(/^WARDEN_TURN_MARKER=[0-9a-f-]{36}$/);
  expect(processesWithEnv(marker1)).toContain(pid1);
  let t0 = Date.now();
  ac1.abort();
  const r1 = await turn1;
  expect(Date.now() - t0).toBeLessThan(killGraceMs + slack);
  expect(r1.interrupted).toBe(true);
  expect(r1.done).toBe(false);
  expect(r1.turn.toolCalls).toEqual([expect.objectContaining({ name: 'Bash', args: 'echo partial > partial.txt', ok: true })]); // the partial turn
  expect(existsSync(join(dirs.workDir, 'partial.txt'))).toBe(true);
  expect(groupMembers(pid1)).toEqual([]);
  expect(processesWithEnv(marker1)).toEqual([]);
  expect(processesWithEnv(configDir)).toEqual([]);
  const sessionId = r1.session?.sessionId as string;
  expect(sessionId).toMatch(UUID_RE);

  // Turn 2 resumes the interrupted session; cancelled while its Bash tool runs a long build.
  const ac2 = new AbortController();
  const c2 = context(ac2.signal, killGraceMs);
  const turn2 = driver.runTurn(request('cd-cancel', dirs, { turnNumber: 2, input: 'UNIQUE-SECOND-INPUT: run the build', session: r1.session }), c2.ctx);
  const sleeper = await eventually(async () => processesWithEnv(configDir).find((p) => cmdline(p).join(' ').includes('UNIQUE-LONG-BUILD')), {
    what: 'the Bash tool running the long build',
    timeoutMs: 60_000,
  });
  const pid2 = started(c2.records)[0]!.pid!;
  // The tool's processes carry this turn's marker (Claude starts them in a session of their own).
  const marker2 = envOf(pid2).find((e) => e.startsWith('WARDEN_TURN_MARKER='))!;
  expect(marker2).not.toBe(marker1);
  expect(processesWithEnv(marker2)).toContain(sleeper);
  expect(started(c2.records)[0]).toMatchObject({ resume: true, sessionId });
  const resumed = m.agentRequests()[2]!.body;
  expect(allText(resumed)).toContain('UNIQUE-FIRST-INPUT'); // the interrupted turn is part of the conversation
  expect(toolResults(resumed).map((t) => t.toolUseId)).toEqual(['toolu_warden_cd_p1']);
  expect(allText(resumed)).toContain('UNIQUE-SECOND-INPUT');
  t0 = Date.now();
  ac2.abort();
  const r2 = await turn2;
  expect(Date.now() - t0).toBeLessThan(killGraceMs + slack);
  expect(r2).toMatchObject({ interrupted: true, done: false, session: { sessionId } });
  expect(r2.turn.toolCalls).toEqual([expect.objectContaining({ name: 'Bash', args: LONG_BUILD })]);
  expect(running(sleeper)).toBe(false); // the tool's own process went with the turn
  expect(groupMembers(pid2)).toEqual([]);
  expect(processesWithEnv(marker2)).toEqual([]);
  expect(processesWithEnv(configDir)).toEqual([]);

  // Turn 3 resumes again and finishes.
  const r3 = await driver.runTurn(request('cd-cancel', dirs, { turnNumber: 3, session: r2.session }), context().ctx);
  expect(r3.interrupted).toBeFalsy();
  expect(r3.turn.text).toBe('Resumed after two interruptions.');
  expect(r3.session?.sessionId).toBe(sessionId);
  const last = m.agentRequests().at(-1)!;
  expect(sessionHeader(last)).toBe(sessionId);
  expect(allText(last.body)).toContain('UNIQUE-FIRST-INPUT');
  expect(allText(last.body)).toContain('UNIQUE-SECOND-INPUT');
  expect(sessionFiles(dirs.homeDir)).toEqual([`${sessionId}.jsonl`]);
});

// ---------- through the workflow ----------

describe('through the workflow', () => {
  const stack = useStack();

  test('a driven claude agent: turn 2 continues the conversation, and its TASK COMPLETE ends the agent done', async () => {
    const m = await scriptedModel([
      toolUse('Bash', { command: 'echo one > one.txt', description: 'Step one' }, { id: 'toolu_warden_cd_w1' }),
      text('Step one is done.'),
      text(`${DONE}: one.txt is written.`),
    ]);
    const agentId = 'cd-workflow';
    await stack.warden.start({
      agentId,
      task: 'Write one.txt (task marker T-9920).',
      driver: { kind: 'claude', claudePath: claudeBinary(), model: MODEL },
      supervisor: { idleAfterMs: 0 },
      driven: { killGraceMs: 2_000 },
    });
    const final = await finalStatus(stack.warden.handle(agentId));
    expect(final).toMatchObject({ state: 'done', turns: 2, driver: 'claude' });
    expect(final.stateReason).toMatch(/task complete/);
    expect(final.tokens.in).toBeGreaterThan(0);
    expect(final.costUsd).toBeGreaterThan(0);

    const reqs = m.agentRequests();
    expect(reqs).toHaveLength(3);
    const sessionId = sessionHeader(reqs[0]!) as string;
    expect(sessionId).toMatch(UUID_RE);
    expect(reqs.map(sessionHeader)).toEqual([sessionId, sessionId, sessionId]);
    const turn2 = allText(reqs[2]!.body);
    expect(turn2).toContain(turnInput({ task: 'unused', turnNumber: 2, whispers: [], doneMarker: DONE }));
    expect(turn2).toContain('T-9920'); // turn 1's task: the same conversation
    expect(turn2).toContain('Step one is done.');

    const base = join(process.env.WARDEN_HOME!, 'agents', agentId);
    expect(readFileSync(join(base, 'work', 'one.txt'), 'utf8')).toBe('one\n');
    expect(sessionFiles(join(base, 'home'))).toEqual([`${sessionId}.jsonl`]);
    const window = await stack.warden.window(agentId);
    expect(window.map((t) => t.text)).toEqual(['Step one is done.', `${DONE}: one.txt is written.`]);
    expect(window[0]!.toolCalls).toEqual([expect.objectContaining({ name: 'Bash', args: 'echo one > one.txt', ok: true })]);
  });
});
