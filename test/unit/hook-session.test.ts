/**
 * Auto-start's pure parts: the agent id of a session (stable, readable, a valid workflow id,
 * bounded), its task, the spec from the config file, and the client that starts the agent when
 * warden does not know it (a recording fake: the real start is in test/integration/install.test.ts).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { AgentNotFoundError } from '../../src/client/index.js';
import { AgentIdSchema, AgentSpecSchema } from '../../src/domain/contract/schemas.js';
import {
  UNREACHABLE_BACKOFF_MS,
  autoStarting,
  markUnreachable,
  planSession,
  sayOnce,
  unreachableRecently,
  type AutoStartClient,
} from '../../src/hooks/auto-start.js';
import { configDigest, withTrusted, writeTrustStore } from '../../src/config/trust.js';
import { autoStartOffByEnv, projectPart, sessionAgentId, sessionPart, sessionTask } from '../../src/hooks/session.js';

const scratch = mkdtempSync(join(tmpdir(), 'warden-hook-session-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the agent id of a session', () => {
  test('project name and the random end of a UUID', () => {
    expect(sessionAgentId('/home/me/src/my-app', '0b9e5f1c-6a3d-4c1e-9f0a-2d8c7e6b5a41')).toBe('my-app-2d8c7e6b5a41');
    expect(sessionAgentId('/home/me/src/my-app/', '0B9E5F1C-6A3D-4C1E-9F0A-2D8C7E6B5A41')).toBe('my-app-2d8c7e6b5a41');
  });

  test('codex thread ids (UUID v7) started in the same millisecond still differ', () => {
    const a = sessionAgentId('/w/app', '019a8f2e-4b1c-7d3e-8f4a-1b2c3d4e5f60');
    const b = sessionAgentId('/w/app', '019a8f2e-4b1c-7d3e-9a4b-6c7d8e9f0a1b');
    expect(a).not.toBe(b);
  });

  test('stable: the same session always gets the same id', () => {
    const ids = new Set(Array.from({ length: 5 }, () => sessionAgentId('/x/proj', 'some session / with spaces')));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^proj-[0-9a-f]{12}$/);
  });

  test('a short plain session id is kept as it is', () => {
    expect(sessionPart('abc123')).toBe('abc123');
  });

  const odd: Array<[string, string]> = [
    ['/', 'project'],
    ['/tmp/my project (copy)', 'my-project-copy'],
    ['/tmp/.hidden', 'hidden'],
    ['/tmp/日本語', 'project'],
    ['/tmp/---', 'project'],
    [`/tmp/${'a'.repeat(300)}`, 'a'.repeat(40)],
    ['C:\\Users\\me\\app', 'C-Users-me-app'],
  ];
  for (const [dir, want] of odd) {
    test(`project ${JSON.stringify(dir.slice(0, 30))} → ${want.slice(0, 12)}`, () => {
      expect(projectPart(dir)).toBe(want);
    });
  }

  test('every derived id is a valid agent id of at most 53 characters', () => {
    const dirs = ['/', '/a', '/tmp/x y', `/${'é'.repeat(90)}`, `/${'z-'.repeat(80)}`, '/tmp/a.b_c-d'];
    const sessions = ['', 'x', 'a'.repeat(500), '0b9e5f1c-6a3d-4c1e-9f0a-2d8c7e6b5a41', '../../etc/passwd', 'ünï cödé', '\u0000\n'];
    for (const d of dirs)
      for (const s of sessions) {
        const id = sessionAgentId(d, s);
        expect(AgentIdSchema.safeParse(id).success, `${d} ${s} → ${id}`).toBe(true);
        expect(id.length).toBeLessThanOrEqual(53);
        expect(`agent-${id}`).toMatch(/^agent-[A-Za-z0-9][A-Za-z0-9._-]*$/);
      }
  });
});

describe('the task and the switch', () => {
  test('the first prompt, bounded', () => {
    expect(sessionTask('claude', '  Fix the build.  ', '/p', 's')).toBe('Fix the build.');
    const long = sessionTask('claude', 'x'.repeat(50_000), '/p', 's');
    expect(long.length).toBeLessThanOrEqual(8_000 + 100);
    expect(AgentSpecSchema.safeParse({ agentId: 'a', task: long }).success).toBe(true);
  });

  test('no prompt yet: what is known', () => {
    expect(sessionTask('codex', undefined, '/w/app', 'sess-1')).toBe('Codex session sess-1 in /w/app (started by a hook before its first prompt)');
  });

  test('WARDEN_AUTO_START turns it off', () => {
    for (const v of ['0', 'false', 'OFF', 'no']) expect(autoStartOffByEnv({ WARDEN_AUTO_START: v })).toBe(true);
    for (const v of [undefined, '1', 'true', '']) expect(autoStartOffByEnv({ WARDEN_AUTO_START: v })).toBe(false);
  });
});

describe('planSession: the spec from the config file', () => {
  const env = (extra: Record<string, string> = {}) => ({ HOME: join(scratch, 'home'), XDG_CONFIG_HOME: join(scratch, 'xdg'), ...extra });
  const input = (cwd: string) => ({
    hook_event_name: 'UserPromptSubmit',
    session_id: '0b9e5f1c-6a3d-4c1e-9f0a-2d8c7e6b5a41',
    cwd,
    prompt: 'Make the tests pass.',
  });

  test('no config file: defaults, the prompt as the task', () => {
    const dir = join(scratch, 'plain');
    mkdirSync(dir, { recursive: true });
    expect(planSession('claude', input(dir), env())).toEqual({
      agentId: 'plain-2d8c7e6b5a41',
      spec: { agentId: 'plain-2d8c7e6b5a41', task: 'Make the tests pass.' },
    });
  });

  test("a trusted project's warden.yaml: evaluator, webhooks, budgets, verify (run in the project)", () => {
    const dir = join(scratch, 'configured');
    mkdirSync(dir, { recursive: true });
    const text = 'supervisor:\n  eval_interval: 3\nevaluator:\n  kind: heuristic\nnotify:\n  webhooks:\n    - url: http://127.0.0.1:9/hook\nverify: npm test\n';
    writeFileSync(join(dir, 'warden.yaml'), text);
    // Untrusted: only the stricter threshold, and what was ignored to say once.
    const u = planSession('claude', input(dir), env());
    expect(u.spec).toEqual({ agentId: 'configured-2d8c7e6b5a41', task: 'Make the tests pass.', supervisor: { evalInterval: 3 } });
    expect(u.untrusted).toBe(
      `${join(dir, 'warden.yaml')} is not trusted, so warden ignored evaluator, notify, verify; to use the whole file, review it and run: warden trust ${dir}`,
    );
    writeTrustStore(withTrusted([], dir, configDigest(text)), env());
    const p = planSession('claude', input(dir), env());
    expect(p.untrusted).toBeUndefined();
    expect(p.spec).toMatchObject({
      supervisor: { evalInterval: 3 },
      evaluator: { kind: 'heuristic' },
      notify: { webhooks: [{ url: 'http://127.0.0.1:9/hook' }] },
      verify: { command: 'npm test', cwd: dir },
    });
    expect(AgentSpecSchema.safeParse(p.spec).success).toBe(true);
    rmSync(join(scratch, 'xdg'), { recursive: true });
  });

  test("the user's config dir when the project has none; auto_start: false there turns it off", () => {
    const dir = join(scratch, 'user-configured');
    mkdirSync(dir, { recursive: true });
    mkdirSync(join(scratch, 'xdg', 'warden'), { recursive: true });
    writeFileSync(join(scratch, 'xdg', 'warden', 'warden.yaml'), 'hooks:\n  auto_start: false\n');
    const p = planSession('codex', input(dir), env());
    expect(p.off).toMatch(/auto-start is off \(hooks.auto_start: false in .*xdg\/warden\/warden.yaml\)/);
    rmSync(join(scratch, 'xdg'), { recursive: true });
  });

  test("Claude's project is CLAUDE_PROJECT_DIR: a `cd` in the session (its event's cwd) is the same agent", () => {
    const dir = join(scratch, 'plain');
    const a = planSession('claude', input(join(dir, 'sub')), env({ CLAUDE_PROJECT_DIR: dir }));
    expect(a.agentId).toBe('plain-2d8c7e6b5a41');
    // Codex has no such variable: its event's cwd is the session's directory.
    expect(planSession('codex', input(dir), env({ CLAUDE_PROJECT_DIR: '/elsewhere' })).agentId).toBe('plain-2d8c7e6b5a41');
  });

  test('WARDEN_AUTO_START=0 turns it off', () => {
    expect(planSession('claude', input(scratch), env({ WARDEN_AUTO_START: '0' })).off).toBe('auto-start is off (WARDEN_AUTO_START)');
  });

  test('a bad user config file is an error naming it; a bad untrusted project file is ignored; no session id is an error', () => {
    const dir = join(scratch, 'bad');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'warden.yaml'), 'evaluator:\n  kind: nonsense\n');
    const p = planSession('claude', input(dir), env());
    expect(p.off).toBeUndefined();
    expect(p.untrusted).toMatch(/warden\.yaml is not trusted, so warden ignored the whole file \(.*evaluator/);
    mkdirSync(join(scratch, 'xdg', 'warden'), { recursive: true });
    writeFileSync(join(scratch, 'xdg', 'warden', 'warden.yaml'), 'evaluator:\n  kind: nonsense\n');
    expect(() => planSession('claude', input(scratch), env())).toThrow(/xdg\/warden\/warden.yaml: .*evaluator/);
    rmSync(join(scratch, 'xdg'), { recursive: true });
    expect(() => planSession('claude', { hook_event_name: 'Stop' }, env())).toThrow(/no session_id/);
    // A session_id that is not a string is an error naming the field, not a crash deeper down.
    expect(() => planSession('claude', { ...input(dir), session_id: { id: 1 } as unknown as string }, env())).toThrow(
      "the hook event's session_id must be a string, not an object",
    );
  });
});

describe('autoStarting: the agent is started when warden does not know it', () => {
  function fake(known: boolean) {
    const calls: string[] = [];
    let exists = known;
    const c: AutoStartClient = {
      async status(agentId) {
        calls.push(`status ${agentId}`);
        if (!exists) throw new AgentNotFoundError(agentId);
        return { agentId, pendingWhispers: 0 } as never;
      },
      async reportTurn(agentId) {
        calls.push(`report ${agentId}`);
        if (!exists) throw new AgentNotFoundError(agentId);
        return { whispers: [] } as never;
      },
      async signal(agentId, name) {
        calls.push(`signal ${name} ${agentId}`);
        if (!exists) throw new AgentNotFoundError(agentId);
      },
      async ensureStarted(spec) {
        calls.push(`start ${spec.agentId}`);
        exists = true;
        return { ended: false };
      },
    };
    return { c, calls };
  }
  const spec = { agentId: 'p-1', task: 't' };

  test('unknown: started once, then the call is made again', async () => {
    const { c, calls } = fake(false);
    const client = await autoStarting(async () => c, spec)();
    await client.status('p-1');
    await client.reportTurn('p-1', { text: 'x' });
    expect(calls).toEqual(['status p-1', 'start p-1', 'status p-1', 'report p-1']);
  });

  test("unknown, first heard of through a signal (the CLI's own compaction): started, then signalled", async () => {
    const { c, calls } = fake(false);
    await (await autoStarting(async () => c, spec)()).signal('p-1', 'compaction', { phase: 'start' });
    expect(calls).toEqual(['signal compaction p-1', 'start p-1', 'signal compaction p-1']);
  });

  test('known: never started', async () => {
    const { c, calls } = fake(true);
    await (await autoStarting(async () => c, spec)()).status('p-1');
    expect(calls).toEqual(['status p-1']);
  });

  test("the SDK's own NOT_FOUND (another hook started it a moment ago) is handled the same way", async () => {
    const { c, calls } = fake(true);
    let first = true;
    const racing: AutoStartClient = {
      ...c,
      async reportTurn(agentId, turn) {
        if (first) {
          first = false;
          calls.push('report (raced)');
          throw Object.assign(new Error('workflow not found for ID: agent-p-1'), { code: 5 });
        }
        return c.reportTurn(agentId, turn);
      },
    };
    await (await autoStarting(async () => racing, spec)()).reportTurn('p-1', { text: 'x' });
    expect(calls).toEqual(['report (raced)', 'start p-1', 'report p-1']);
  });

  test('other errors are not a reason to start', async () => {
    const c = {
      status: async () => Promise.reject(new Error('cannot reach Temporal')),
      reportTurn: async () => ({}),
      ensureStarted: async () => ({ ended: false }),
    } as unknown as AutoStartClient;
    await expect((await autoStarting(async () => c, spec)()).status('p-1')).rejects.toThrow('cannot reach Temporal');
  });
});

test('sayOnce: said once per agent, even by hooks racing', async () => {
  const dir = join(scratch, 'markers');
  const said: string[] = [];
  const results = await Promise.all(Array.from({ length: 8 }, async () => sayOnce(dir, 'p-1', 'off', (l) => said.push(l))));
  expect(results.filter(Boolean)).toHaveLength(1);
  expect(said).toEqual(['off']);
  expect(sayOnce(dir, 'p-2', 'off too', (l) => said.push(l))).toBe(true);
  expect(readdirSync(dir).sort()).toEqual(['p-1.off', 'p-2.off']);
});

test('after Temporal was unreachable, the session skips warden for a minute, then tries again', () => {
  const dir = join(scratch, 'unreachable');
  expect(unreachableRecently(dir, 'p-1')).toBe(false);
  markUnreachable(dir, 'p-1');
  const now = Date.now();
  expect(unreachableRecently(dir, 'p-1', now)).toBe(true);
  expect(unreachableRecently(dir, 'p-2', now)).toBe(false); // per session
  expect(unreachableRecently(dir, 'p-1', now + UNREACHABLE_BACKOFF_MS + 1_000)).toBe(false);
  // The file's time has sub-millisecond digits Date.now() lacks: "just written" may be a fraction ahead.
  const written = statSync(join(dir, 'p-1.unreachable')).mtimeMs;
  expect(unreachableRecently(dir, 'p-1', written - 0.5)).toBe(true);
  expect(unreachableRecently(dir, 'p-1', written - 60_000), 'a note from the future').toBe(false);
});
