/**
 * JSON nested far too deep, in each JSON input of the CLI, against a real server: every one is
 * refused with a message naming the input (the hook: one line on stderr, exit 0), never
 * "Maximum call stack size exceeded" from whatever recursed over it after `JSON.parse`.
 */
import { execa } from 'execa';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT, cleanup, useStack } from '../helpers/stack.js';

const stack = useStack();
const scratch = mkdtempSync(join(tmpdir(), 'warden-deep-'));
afterAll(() => cleanup(scratch));

const N = 200_000;
const DEEP = `${'['.repeat(N)}${']'.repeat(N)}`;
/** `value` as JSON, with the string "DEEP" in it replaced by 200,000 nested arrays. */
const withDeep = (value: unknown) => JSON.stringify(value).replace('"DEEP"', DEEP);
const TOO_DEEP = /nests arrays and objects deeper than 512 levels \(at line 1, column \d+\); warden reads JSON nested at most 512 deep/;

const cli = (args: string[], input?: string) => {
  const home = join(scratch, 'home');
  mkdirSync(home, { recursive: true });
  return execa(process.execPath, [join(ROOT, 'dist/src/cli/main.js'), ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      WARDEN_CACHE_DIR: join(home, 'cache'),
      XDG_CONFIG_HOME: join(home, 'config'),
      TEMPORAL_ADDRESS: stack.server.address,
      TEMPORAL_NAMESPACE: stack.server.namespace,
    },
    extendEnv: false,
    reject: false,
    timeout: 60_000,
    ...(input !== undefined ? { input } : { stdin: 'ignore' as const }),
  });
};

const file = (name: string, text: string) => {
  const p = join(scratch, name);
  writeFileSync(p, text);
  return p;
};

describe('JSON nested 200,000 deep', () => {
  // An agent to send the turn and the task spec to: what is refused must be the input, not the agent.
  beforeAll(async () => {
    await stack.warden.start({ agentId: 'deep-target', task: 'Receive deep input.' });
  });
  afterAll(async () => {
    await stack.warden.signal('deep-target', 'abort', {});
  });

  test('a hook event on stdin: the hook exits 0 and says what is wrong once, for a session and for a named agent', async () => {
    const event = (sessionId: string) =>
      withDeep({
        session_id: sessionId,
        cwd: scratch,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: 'DEEP',
        tool_response: { stdout: '' },
        tool_use_id: 'toolu_deep',
      });
    const session = await cli(['hook', 'claude'], event(randomUUID()));
    expect(session.exitCode).toBe(0);
    expect(session.stdout).toBe('');
    expect(session.stderr).toMatch(/^warden hook: the hook input on stdin nests arrays and objects deeper than 512 levels/);
    await stack.warden.start({ agentId: 'deep-hook', task: 'Take deep input.' });
    const named = await cli(['hook', 'claude', '--agent', 'deep-hook'], event(randomUUID()));
    expect(named.exitCode).toBe(0);
    expect(named.stderr).toMatch(/the hook input on stdin nests arrays and objects deeper than 512 levels/);
    expect((await stack.warden.status('deep-hook')).turns).toBe(0);
    await stack.warden.signal('deep-hook', 'abort', {});
  });

  const refused: Array<[string, () => string[], string]> = [
    [
      'warden report --file',
      () => ['report', 'deep-target', '--file', file('turn.json', withDeep({ id: 't1', text: 'x', toolCalls: [{ name: 'a', args: 'DEEP' }] }))],
      'the turn',
    ],
    [
      'warden delegate --spec',
      () => [
        'delegate',
        'deep-target',
        '--spec',
        file(
          'spec.json',
          withDeep({
            childId: 'kid',
            objective: 'x',
            resultSchema: { type: 'object', properties: { x: 'DEEP' } },
            definitionOfDone: 'x',
            driver: { kind: 'scripted', turns: [{ text: 'x' }] },
          }),
        ),
      ],
      'the task spec',
    ],
    [
      'warden start --script',
      () => [
        'start',
        'deep-start',
        '--task',
        'x',
        '--driver',
        'scripted',
        '--script',
        file('script.json', withDeep([{ id: 't1', text: 'x', toolCalls: 'DEEP' }])),
      ],
      '--script',
    ],
    [
      'warden evaluate --cases',
      () => ['evaluate', '--cases', file('cases.jsonl', `${withDeep({ task: 't', turns: [{ id: 'a', text: 'DEEP' }], label: 'OK' })}\n`)],
      'cases.jsonl',
    ],
    ['warden evaluate --transcript', () => ['evaluate', '--transcript', file('transcript.json', withDeep({ task: 't', turns: 'DEEP' }))], 'transcript'],
  ];
  for (const [what, args, names] of refused) {
    test(`${what}: refused (exit 2), naming the input`, async () => {
      const r = await cli(args());
      expect(r.stderr).not.toMatch(/call stack/);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(TOO_DEEP);
      expect(r.stderr).toContain(names);
    });
  }
});
