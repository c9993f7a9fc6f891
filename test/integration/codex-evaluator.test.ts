/**
 * The codex evaluator with the real `codex` binary (the project's devDependency) against a scripted
 * Responses API server on 127.0.0.1: the evaluation activity called directly, the same through the
 * workflow on a real dev server, and a model that never answers (deadline, kill, cleanup).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pino, type Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { makeEvaluate } from '../../activities/evaluate.js';
import type { EvaluateInput } from '../../src/domain/contract/activity-types.js';
import type { EvaluatorConfig, Turn } from '../../src/domain/contract/schemas.js';
import { inputTexts, message, stall, startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { cleanup, eventually, useStack } from '../helpers/stack.js';
import { cmdline, processesWithEnv, running } from '../helpers/procs.js';

// The strict answer (src/domain/judgement/verdict.ts): one JSON object citing evidence turns.
const VERDICT_LINE = JSON.stringify({ verdict: 'CORRECTION', pattern: 'SPIRALING', message: 'stop retrying npm run build', evidence: [2] });
const TASK = 'Make the CI build pass for the billing service (task marker T-4711)';
const MODEL = 'warden-test-model';

const failingBuild = { name: 'shell', args: 'npm run build', result: 'Error: exit code 2', ok: false };
const turns = (n: number): Turn[] =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, text: `trying the build again, attempt ${i + 1}`, toolCalls: [failingBuild] }));

let scratch: string;
let emptyCredentials: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-codex-test-'));
  // Never copy the developer's real ~/.codex into a test run.
  emptyCredentials = join(scratch, 'no-credentials');
  mkdirSync(emptyCredentials);
});
afterAll(() => cleanup(scratch));

// ---------- helpers ----------

interface LogRecord {
  msg: string;
  codexHome?: string;
  pid?: number;
  [k: string]: unknown;
}

/** A pino logger writing JSON records into an array. */
function captureLog(): { log: Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void records.push(JSON.parse(s) as LogRecord) });
  return { log, records };
}

function codexConfig(model: ModelServer, extra: Partial<Extract<EvaluatorConfig, { kind: 'codex' }>> = {}): EvaluatorConfig {
  return { kind: 'codex', config: model.codexOverrides(), credentialsHome: emptyCredentials, ...extra };
}

function input(model: ModelServer, over: Partial<EvaluateInput> = {}): EvaluateInput {
  return {
    agentId: 'codex-direct',
    task: TASK,
    turns: turns(3),
    reason: 'interval',
    evaluator: codexConfig(model),
    model: MODEL,
    timeoutMs: 60_000,
    ...over,
  };
}

const started = (records: LogRecord[]) => records.find((r) => r.msg === 'codex exec started');

// ---------- 1. the activity, directly ----------

describe('codex evaluator, activity called directly', () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer();
  });
  afterAll(async () => {
    await model?.close();
  });

  test('a scripted CORRECTION comes back as a verdict; the prompt went in on stdin', async () => {
    // Answer after a moment, so the running codex can be inspected.
    model.setScript([{ kind: 'message', text: VERDICT_LINE, delayMs: 1_500, usage: { input_tokens: 1234, output_tokens: 56 } }]);
    const { log, records } = captureLog();
    const running$ = makeEvaluate(log)(input(model));

    const start = await eventually(async () => started(records), { timeoutMs: 30_000, what: 'codex exec started log' });
    const home = start.codexHome!;
    const pid = start.pid!;
    expect(existsSync(home)).toBe(true);
    await model.waitForRequests(1, 60_000);
    const tree = processesWithEnv(`CODEX_HOME=${home}`);
    expect(tree).toContain(pid);
    const argv = tree.flatMap(cmdline);
    expect(argv).toContain('exec');
    expect(argv.join(' ')).toContain('--sandbox read-only');
    expect(argv.join(' ')).toContain(`-m ${MODEL}`);
    expect(argv).not.toContain('--full-auto');
    expect(cmdline(pid).at(-1)).toBe('-'); // prompt from stdin
    expect(argv.join(' ')).not.toContain('T-4711'); // and not in argv

    const result = await running$;
    expect(result).toMatchObject({
      kind: 'verdict',
      evaluator: 'codex',
      verdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'stop retrying npm run build' },
      tier: 'model',
    });
    // The spend: one call, and the token total codex printed (from the usage the server reported).
    expect(result.spend).toMatchObject({ calls: 1, failed: 0, tokens: 1290 });

    const reqs = model.responsesRequests();
    expect(reqs).toHaveLength(1);
    expect(model.unscripted).toHaveLength(0);
    const body = reqs[0]!.body as { model?: string; stream?: boolean };
    expect(body.model).toBe(MODEL);
    expect(body.stream).toBe(true);
    const userText = inputTexts(body, 'user').join('\n');
    expect(userText).toContain(TASK);
    // a transcript line and its tool call (the formatting belongs to src/domain/judgement/prompt.ts)
    expect(userText).toContain('trying the build again, attempt 3');
    expect(userText).toContain('Error: exit code 2');

    // Gone when evaluate returns: the processes and the throwaway home.
    expect(tree.filter(running)).toEqual([]);
    expect(processesWithEnv(`CODEX_HOME=${home}`)).toEqual([]);
    expect(existsSync(home)).toBe(false);
    expect(existsSync(dirname(home))).toBe(false);
  });

  test('credentials are copied into the throwaway home; user MCP servers stay off', async () => {
    const creds = join(scratch, 'credentials');
    mkdirSync(creds);
    const secret = 'sk-warden-test-secret-0042';
    writeFileSync(join(creds, 'auth.json'), JSON.stringify({ OPENAI_API_KEY: secret }), { mode: 0o600 });
    const mcpMarker = join(scratch, 'mcp-started');
    const mcpScript = join(scratch, 'fake-mcp.sh');
    writeFileSync(mcpScript, `#!/bin/sh\necho started >> '${mcpMarker}'\nsleep 30\n`, { mode: 0o755 });
    writeFileSync(join(creds, 'config.toml'), `developer_instructions = "CONFIG-TOML-MARKER-99"\n\n[mcp_servers.fake]\ncommand = "${mcpScript}"\n`);

    model.setScript([message('{"verdict":"OK"}')]);
    const before = model.requests.length;
    const { log, records } = captureLog();
    const result = await makeEvaluate(log)(
      input(model, {
        evaluator: codexConfig(model, {
          credentialsHome: creds,
          // this provider sends the OpenAI credentials (auth.json) to the model server
          config: [...model.codexOverrides(), 'model_providers.warden-test.requires_openai_auth=true'],
        }),
      }),
    );
    expect(result).toMatchObject({ kind: 'verdict', verdict: { kind: 'OK' } });
    const req = model.requests[before]!;
    expect(req.headers.authorization).toBe(`Bearer ${secret}`); // auth.json was there
    expect(inputTexts(req.body, 'developer').join('\n')).toContain('CONFIG-TOML-MARKER-99'); // config.toml too
    expect(existsSync(mcpMarker)).toBe(false);
    // the originals are untouched; the copies are gone
    expect(readFileSync(join(creds, 'auth.json'), 'utf8')).toContain(secret);
    const home = started(records)!.codexHome!;
    expect(started(records)!.copied).toEqual(['auth.json', 'config.toml']);
    expect(existsSync(home)).toBe(false);
  });

  test('a codex that exits non-zero is a skipped evaluation naming the exit code', async () => {
    const { log } = captureLog();
    const result = await makeEvaluate(log)(input(model, { evaluator: codexConfig(model, { config: ['model_provider="no-such-provider"'] }) }));
    expect(result.kind).toBe('skipped');
    expect(result.kind === 'skipped' && result.reason).toMatch(/codex exec exited with code [1-9]\d*.*stderr: .*no-such-provider/s);
  });
});

// ---------- 2. through the workflow ----------

describe('codex evaluator, through agentWorkflow on a dev server', () => {
  const stack = useStack();
  let model: ModelServer;

  beforeAll(async () => {
    model = await startModelServer();
  });
  afterAll(async () => {
    await model?.close();
  });

  test('the verdict comes back and is applied: lastVerdict, step 1, a whisper with the model message', async () => {
    model.setScript([message(VERDICT_LINE)]);
    await stack.warden.start({
      agentId: 'codex-wf',
      task: TASK,
      evaluator: codexConfig(model),
      supervisor: { evalInterval: 2, evalTimeoutMs: 20_000, model: MODEL },
    });
    for (const t of turns(2)) await stack.warden.reportTurn('codex-wf', t);

    const st = await eventually(
      async () => {
        const s = await stack.warden.status('codex-wf');
        return s.evaluations.total >= 1 ? s : null;
      },
      { timeoutMs: 60_000, what: 'an evaluation' },
    );
    expect(st.evaluations).toEqual({ total: 1, ok: 0, flagged: 1, skipped: 0 });
    expect(st.lastSkipReason).toBeNull();
    expect(st.lastVerdict).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING', message: 'stop retrying npm run build' });
    expect(st.escalationStep).toBe(1);
    expect(st.pendingWhispers).toBe(1);
    const [w] = await stack.warden.pendingWhispers('codex-wf');
    expect(w).toMatchObject({ type: 'CORRECTION' });
    expect(w!.text).toContain('stop retrying npm run build');

    const reqs = model.responsesRequests();
    expect(reqs).toHaveLength(1);
    const userText = inputTexts(reqs[0]!.body, 'user').join('\n');
    expect(userText).toContain(TASK);
    expect(userText).toContain('trying the build again, attempt 2');

    const reply = await stack.warden.reportTurn('codex-wf', { id: 't3', text: 'ok, reading the error instead' });
    expect(reply.whispers.map((x) => x.text)).toEqual([w!.text]);
  });
});

// ---------- 3. a model that never answers ----------

describe('codex evaluator, a model that never answers', () => {
  let model: ModelServer;
  beforeAll(async () => {
    model = await startModelServer({ script: [stall()] });
  });
  afterAll(async () => {
    await model?.close();
  });

  test('skipped at the deadline; codex and its home are gone when evaluate returns', async () => {
    const timeoutMs = 6_000; // the evaluator's budget is 1 s less
    const { log, records } = captureLog();
    const t0 = Date.now();
    const running$ = makeEvaluate(log)(input(model, { agentId: 'codex-stall', timeoutMs }));

    const start = await eventually(async () => started(records), { timeoutMs: 5_000, what: 'codex exec started log' });
    const home = start.codexHome!;
    await model.waitForRequests(1, 5_000); // codex is now waiting on the model
    // codex starts short-lived helpers too; the processes seen twice 300 ms apart are the long-lived ones.
    const first = processesWithEnv(`CODEX_HOME=${home}`);
    await new Promise((r) => setTimeout(r, 300));
    const second = processesWithEnv(`CODEX_HOME=${home}`);
    const stable = first.filter((p) => second.includes(p));
    expect(stable).toContain(start.pid!);
    expect(stable.length).toBeGreaterThanOrEqual(2); // the npm wrapper and the native codex under it
    const tree = [...new Set([...first, ...second])];

    const result = await running$;
    const elapsed = Date.now() - t0;
    expect(result.kind).toBe('skipped');
    expect(result.kind === 'skipped' && result.reason).toBe(`evaluator did not answer within ${timeoutMs - 1_000} ms`);
    expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 1_000);
    expect(elapsed).toBeLessThan(timeoutMs + 500); // the budget, SIGTERM and cleanup

    expect(tree.filter(running)).toEqual([]);
    expect(processesWithEnv(`CODEX_HOME=${home}`)).toEqual([]);
    expect(existsSync(home)).toBe(false);
    expect(existsSync(dirname(home))).toBe(false);
    expect(model.responsesRequests()).toHaveLength(1);
  });
});
