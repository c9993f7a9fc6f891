/**
 * The codex driver with the real `codex` binary (the project's dependency) against a scripted
 * Responses API server on 127.0.0.1, the driver called directly (no Temporal): a turn in which
 * codex really runs the commands the model asks for, a second turn that resumes the session, a
 * codex that fails, and a turn cancelled while the model stalls — then resumed.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CODEX_CREDENTIALS_STAMP, codexDriver, type CodexDriverConfig } from '../../activities/drivers/codex.js';
import type { DriverContext, TurnRequest, TurnResult } from '../../activities/drivers/types.js';
import type { Turn } from '../../src/domain/contract/schemas.js';
import { functionCallOutputs, functionCalls, inputTexts, message, shellCall, stall, startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { cleanup, eventually } from '../helpers/stack.js';
import { cmdline, processesWithEnv, running } from '../helpers/procs.js';

const MODEL = 'warden-test-model';
const TASK = 'List the files of the project and report (task marker T-8812)';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Commands run without a login shell: the host's profile scripts stay out of the output. */
const noLogin = { login: false };

let scratch: string;
let emptyCredentials: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-codex-driver-'));
  // Never copy the developer's real ~/.codex into a test run.
  emptyCredentials = join(scratch, 'no-credentials');
  mkdirSync(emptyCredentials);
});
afterAll(() => cleanup(scratch));

// ---------- helpers ----------

interface LogRecord {
  msg: string;
  pid?: number;
  [k: string]: unknown;
}

function captureLog(): { log: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void records.push(JSON.parse(s) as LogRecord) });
  return { log, records };
}

function context(signal: AbortSignal = new AbortController().signal, killGraceMs = 3_000) {
  const beats: Array<Partial<Turn> | undefined> = [];
  const { log, records } = captureLog();
  const ctx: DriverContext = { signal, killGraceMs, heartbeat: (p) => void beats.push(p), log };
  return { ctx, beats, records };
}

function driverConfig(model: ModelServer, extra: Partial<CodexDriverConfig> = {}): CodexDriverConfig {
  return { kind: 'codex', model: MODEL, config: model.codexOverrides(), sandbox: 'workspace-write', credentialsHome: emptyCredentials, ...extra };
}

/** A fresh agent: its working directory (with a file to find) and its (not yet created) home. */
function agentDirs(name: string): { workDir: string; homeDir: string } {
  const workDir = join(scratch, name, 'work');
  mkdirSync(workDir, { recursive: true });
  writeFileSync(join(workDir, `MARKER-${name}.txt`), 'hello\n');
  return { workDir, homeDir: join(scratch, name, 'home') };
}

function request(agentId: string, dirs: { workDir: string; homeDir: string }, over: Partial<TurnRequest> = {}): TurnRequest {
  return { agentId, task: TASK, turnNumber: 1, input: TASK, whispers: [], session: null, doneMarker: 'TASK COMPLETE', ...dirs, ...over };
}

/** The session files codex keeps under CODEX_HOME/sessions. */
function sessionFiles(home: string): string[] {
  const dir = join(home, 'sessions');
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.jsonl'));
}

const allText = (body: unknown) => inputTexts(body).join('\n');

// ---------- 1. two turns of one session ----------

describe('codex driver: a turn with real commands, then a resumed turn', () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer();
  });
  afterAll(async () => {
    await model?.close();
  });

  let a: { workDir: string; homeDir: string };
  let creds: string;
  let turn1: TurnResult;

  test('turn 1: codex runs the commands the model asks for; the turn has their real output, exit status, the message, tokens and a session id', async () => {
    a = agentDirs('drv-a');
    creds = join(scratch, 'credentials-a');
    mkdirSync(creds);
    writeFileSync(join(creds, 'auth.json'), JSON.stringify({ OPENAI_API_KEY: 'sk-warden-driver-first' }), { mode: 0o600 });
    model.setScript([
      shellCall('ls', { extra: noLogin, usage: { input_tokens: 100, output_tokens: 10 } }),
      shellCall('false', { extra: noLogin, usage: { input_tokens: 120, output_tokens: 12 } }),
      message('Listed the files. The second command failed, as expected.', { input_tokens: 200, output_tokens: 20 }),
    ]);
    const config = driverConfig(model, {
      credentialsHome: creds,
      // this provider sends the OpenAI credentials (auth.json) to the model server
      config: [...model.codexOverrides(), 'model_providers.warden-test.requires_openai_auth=true'],
    });
    const { ctx, beats } = context();
    turn1 = await codexDriver(config).runTurn(request('drv-a', a), ctx);

    expect(turn1.interrupted).toBeFalsy();
    expect(turn1.done).toBe(false);
    const t = turn1.turn;
    expect(t.id).toBe('drv-a-turn-1');
    expect(t.text).toBe('Listed the files. The second command failed, as expected.');
    expect(t.toolCalls).toHaveLength(2);
    expect(t.toolCalls![0]).toMatchObject({ name: 'shell', args: 'ls', ok: true });
    expect(t.toolCalls![0]!.result).toContain('MARKER-drv-a.txt'); // the real listing of the working directory
    expect(t.toolCalls![1]).toMatchObject({ name: 'shell', args: 'false', ok: false });
    expect(t.tokensIn).toBe(420);
    expect(t.tokensOut).toBe(42);
    expect(turn1.session?.sessionId).toMatch(UUID_RE);

    // heartbeats carried the partial turn as it grew
    expect(beats.some((b) => b?.toolCalls?.some((c) => c.args === 'ls' && c.ok === true))).toBe(true);

    // what the model saw: the task on the first turn, then the commands' real results
    const reqs = model.responsesRequests();
    expect(reqs).toHaveLength(3);
    expect(model.unscripted).toHaveLength(0);
    expect((reqs[0]!.body as { model?: string }).model).toBe(MODEL);
    expect(inputTexts(reqs[0]!.body, 'user')).toContain(TASK);
    expect(reqs[0]!.headers.authorization).toBe('Bearer sk-warden-driver-first');
    expect(
      functionCallOutputs(reqs[1]!.body)
        .map((o) => o.output)
        .join('\n'),
    ).toContain('MARKER-drv-a.txt');
    expect(functionCallOutputs(reqs[2]!.body).at(-1)!.output).toMatch(/exited with code 1\b/);

    // the agent's home is kept: credentials copied once, the session recorded
    expect(existsSync(join(a.homeDir, 'auth.json'))).toBe(true);
    expect(existsSync(join(a.homeDir, CODEX_CREDENTIALS_STAMP))).toBe(true);
    expect(sessionFiles(a.homeDir).some((f) => f.includes(String(turn1.session!.sessionId)))).toBe(true);
  });

  test('turn 2 resumes the same session: the model gets the whole conversation and the new input with the whisper', async () => {
    expect(turn1, 'turn 1 ran').toBeDefined();
    // The credentials source changes; the agent's home keeps the copy made on first use.
    writeFileSync(join(creds, 'auth.json'), JSON.stringify({ OPENAI_API_KEY: 'sk-warden-driver-second' }), { mode: 0o600 });
    model.setScript([message('TASK COMPLETE — the listing is done.', { input_tokens: 30, output_tokens: 3 })]);
    const before = model.requests.length;
    const input = '[CORRECTION] UNIQUE-WHISPER: stop listing and wrap up.\n\nContinue with the task.';
    const config = driverConfig(model, {
      credentialsHome: creds,
      config: [...model.codexOverrides(), 'model_providers.warden-test.requires_openai_auth=true'],
    });
    const { ctx } = context();
    const turn2 = await codexDriver(config).runTurn(request('drv-a', a, { turnNumber: 2, input, session: turn1.session }), ctx);

    expect(turn2.interrupted).toBeFalsy();
    expect(turn2.session?.sessionId).toBe(turn1.session!.sessionId);
    expect(turn2.done).toBe(true);
    expect(turn2.turn).toMatchObject({ id: 'drv-a-turn-2', text: 'TASK COMPLETE — the listing is done.', tokensIn: 30, tokensOut: 3 });
    expect(turn2.turn.toolCalls).toBeUndefined();

    const reqs = model.requests.slice(before);
    expect(reqs).toHaveLength(1);
    const body = reqs[0]!.body;
    // the new input, whisper included
    expect(inputTexts(body, 'user').at(-1)).toBe(input);
    // and turn 1's conversation before it: the task, the commands and their results, the reply
    expect(inputTexts(body, 'user')).toContain(TASK);
    expect(functionCalls(body).map((c) => JSON.parse(c.arguments).cmd)).toEqual(['ls', 'false']);
    expect(
      functionCallOutputs(body)
        .map((o) => o.output)
        .join('\n'),
    ).toContain('MARKER-drv-a.txt');
    expect(allText(body)).toContain('Listed the files. The second command failed, as expected.');
    expect(allText(body).indexOf('Listed the files.')).toBeLessThan(allText(body).indexOf('UNIQUE-WHISPER'));
    expect(reqs[0]!.headers.authorization).toBe('Bearer sk-warden-driver-first');
  });
});

// ---------- 2. a codex that fails ----------

describe('codex driver: a failing codex', () => {
  test('a non-zero exit throws with the exit code and the stderr tail', async () => {
    const model = await startModelServer();
    try {
      const { ctx } = context();
      const config = driverConfig(model, { config: ['model_provider="no-such-provider"'] });
      await expect(codexDriver(config).runTurn(request('drv-b', agentDirs('drv-b')), ctx)).rejects.toThrow(
        /codex exec exited with code [1-9]\d*.*stderr: .*no-such-provider/s,
      );
      expect(model.requests).toHaveLength(0);
    } finally {
      await model.close();
    }
  });
});

// ---------- 3. cancellation ----------

describe('codex driver: a turn cancelled while the model stalls', () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer();
  });
  afterAll(async () => {
    await model?.close();
  });

  test('resolves interrupted with the partial turn within the grace period; nothing of codex is left; the next turn resumes the session', async () => {
    const c = agentDirs('drv-c');
    const killGraceMs = 3_000;
    model.setScript([shellCall('echo PARTIAL-OUTPUT-913', { extra: noLogin, usage: { input_tokens: 50, output_tokens: 5 } }), stall()]);
    const ac = new AbortController();
    const { ctx, records } = context(ac.signal, killGraceMs);
    const input = `${TASK} (first input INTERRUPTED-TURN-INPUT)`;
    const pending = codexDriver(driverConfig(model)).runTurn(request('drv-c', c, { input }), ctx);

    await model.waitForRequests(2, 60_000); // the command ran; codex now waits on a model that never answers
    const started = await eventually(async () => records.find((r) => r.msg === 'codex turn started'), { what: 'codex turn started log' });
    // codex starts short-lived helpers too; the processes seen twice 300 ms apart are the long-lived ones.
    const first = processesWithEnv(`CODEX_HOME=${c.homeDir}`);
    await new Promise((r) => setTimeout(r, 300));
    const second = processesWithEnv(`CODEX_HOME=${c.homeDir}`);
    expect(first.filter((p) => second.includes(p))).toContain(started.pid!);
    const tree = [...new Set([...first, ...second])];
    const argv = cmdline(started.pid!);
    expect(argv.join(' ')).toContain('exec --json --sandbox workspace-write --skip-git-repo-check');
    expect(argv.join(' ')).toContain(`-C ${c.workDir}`);
    expect(argv.join(' ')).toContain(`-m ${MODEL}`);
    expect(argv).not.toContain('resume'); // a new session
    expect(argv.at(-1)).toBe('-'); // the input comes on stdin
    expect(argv.join(' ')).not.toContain('INTERRUPTED-TURN-INPUT');

    await new Promise((r) => setTimeout(r, 700)); // ~1 s into the stall
    const t0 = Date.now();
    ac.abort(new Error('interrupt'));
    const result = await pending;
    const elapsed = Date.now() - t0;

    expect(result.interrupted).toBe(true);
    expect(result.done).toBe(false);
    expect(elapsed).toBeLessThan(killGraceMs + 1_500);
    expect(result.turn.id).toBe('drv-c-turn-1');
    expect(result.turn.toolCalls).toHaveLength(1);
    expect(result.turn.toolCalls![0]).toMatchObject({ name: 'shell', args: 'echo PARTIAL-OUTPUT-913', ok: true });
    expect(result.turn.toolCalls![0]!.result).toContain('PARTIAL-OUTPUT-913');
    const sessionId = result.session?.sessionId;
    expect(sessionId).toMatch(UUID_RE);

    // every process of the turn is gone, also any that left the group
    expect(tree.filter(running)).toEqual([]);
    expect(processesWithEnv(`CODEX_HOME=${c.homeDir}`)).toEqual([]);
    expect(existsSync(c.homeDir)).toBe(true);

    // The next turn resumes the same session.
    model.setScript([message('Picked up where I was cut off.', { input_tokens: 60, output_tokens: 6 })]);
    const before = model.requests.length;
    const next = await codexDriver(driverConfig(model)).runTurn(
      request('drv-c', c, { turnNumber: 2, input: 'CONTINUE-AFTER-INTERRUPT-55', session: result.session }),
      context().ctx,
    );
    expect(next.interrupted).toBeFalsy();
    expect(next.session?.sessionId).toBe(sessionId);
    expect(next.turn.text).toBe('Picked up where I was cut off.');
    // session totals: what the interrupted turn used is counted here
    expect(next.turn.tokensIn).toBe(110);
    expect(next.turn.tokensOut).toBe(11);
    const reqs = model.requests.slice(before);
    expect(reqs).toHaveLength(1);
    const texts = inputTexts(reqs[0]!.body, 'user');
    expect(texts).toContain(input);
    expect(texts.at(-1)).toBe('CONTINUE-AFTER-INTERRUPT-55');
    expect(
      functionCallOutputs(reqs[0]!.body)
        .map((o) => o.output)
        .join('\n'),
    ).toContain('PARTIAL-OUTPUT-913');
  });
});
