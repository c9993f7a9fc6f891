/**
 * Working-tree evidence for a hooked agent: the real Claude Code binary (`claude -p`), offline
 * against the scripted Anthropic Messages API, runs real shell commands in a real git repository;
 * its hooks are the real forwarder (dist/src/hooks/forward.js), which starts the resident endpoint
 * (`warden serve`) that reads the tree's fingerprint on each tool call's hook; a real dev server and
 * worker judge the turns with the offline heuristic.
 *
 *  - A test that fails six times with a different error each time while nothing in the tree changes:
 *    the transcript alone reads changing errors as someone fixing things (no flag), the tree shows
 *    nothing was fixed: SPIRALING, with the tree in the verdict and in `warden status`.
 *  - The same error under four commands (a spiral the transcript alone flags), then a fix that
 *    changes the tree, and the first command passes: progress, not flagged.
 */
import { execa } from 'execa';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { startAnthropicServer, text, toolUse, type AnthropicReply, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { reportedTurns, waitForStatus } from '../helpers/agents.js';
import { claudeBinary, offlineClaudeEnv } from '../helpers/claude.js';
import { endpointUser, serveOf } from '../helpers/endpoint.js';
import { shellWord } from '../helpers/hooks.js';
import { ROOT, cleanup, useStack } from '../helpers/stack.js';

const stack = useStack();
const FORWARD = join(ROOT, 'dist/src/hooks/forward.js');
const WARDEN = join(ROOT, 'dist/src/cli/main.js');

let scratch: string;
let model: AnthropicServer | null = null;
const homes: string[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-tree-hooks-'));
});
afterEach(async () => {
  await model?.close();
  model = null;
  for (const home of homes.splice(0)) for (const pid of serveOf(home)) process.kill(pid, 'SIGKILL');
});
afterAll(() => cleanup(scratch));

/**
 * A user of their own whose project is a git repository with one commit (`files`, and Claude
 * Code's project settings: every hook the forwarder, naming the agent).
 */
async function gitProject(name: string, agentId: string, files: Record<string, string>) {
  const dir = join(scratch, name);
  const u = await endpointUser(dir, name, stack.server);
  homes.push(u.env.WARDEN_HOME);
  const hookLog = join(dir, 'hook-stderr.log');
  writeFileSync(hookLog, '');
  const forwarder = `${shellWord(process.execPath)} ${shellWord(FORWARD)} claude --agent ${shellWord(agentId)} 2>>${shellWord(hookLog)}`;
  const hook = [{ type: 'command', command: forwarder, timeout: 30 }];
  mkdirSync(join(u.project, '.claude'), { recursive: true });
  writeFileSync(
    join(u.project, '.claude/settings.json'),
    JSON.stringify({
      hooks: {
        UserPromptSubmit: [{ hooks: hook }],
        PreToolUse: [{ matcher: '*', hooks: hook }],
        PostToolUse: [{ matcher: '*', hooks: hook }],
        PostToolUseFailure: [{ matcher: '*', hooks: hook }],
        Stop: [{ hooks: hook }],
      },
    }),
  );
  for (const [f, body] of Object.entries(files)) writeFileSync(join(u.project, f), body);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: u.project, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } }).trim();
  git('init', '-q');
  git('config', 'user.email', 't@example.com');
  git('config', 'user.name', 't');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  // The endpoint reads the tree under this machine's load (shared with other test runs): a roomier limit than a hook's 200 ms.
  const env = { ...u.env, WARDEN_TREE_TIMEOUT_MS: '5000' };
  return { ...u, env, head: git('rev-parse', 'HEAD'), hookLog: () => readFileSync(hookLog, 'utf8') };
}

type Project = Awaited<ReturnType<typeof gitProject>>;

async function runClaude(p: Project, server: AnthropicServer, prompt: string) {
  const r = await execa(claudeBinary(), ['-p', prompt, '--output-format', 'json', '--allowedTools', 'Bash'], {
    cwd: p.project,
    extendEnv: false,
    env: { ...p.env, ...offlineClaudeEnv(server.url, { configDir: join(p.home, '.claude') }) },
    stdin: 'ignore',
    all: true,
    reject: false,
    timeout: 120_000,
  });
  return { exitCode: r.exitCode, output: `${String(r.all)}\n--- hook stderr ---\n${p.hookLog()}` };
}

/** The scripted model: these shell commands in turn, then a closing text for every request after them. */
const commands =
  (name: string, cmds: string[]) =>
  (_req: unknown, i: number): AnthropicReply =>
    i < cmds.length ? toolUse('Bash', { command: cmds[i]!, description: 'Run it' }, { id: `toolu_${name}_${i}` }) : text('Done for now.');

/** Six tool calls, then the evaluation (evalInterval 6) with the offline heuristic. */
const supervisor = { evalInterval: 6, idleAfterMs: 0 };

test('a failing test repeated while the tree does not change: SPIRALING with the tree evidence, shown in status', async () => {
  const agentId = 'tree-stuck';
  const counter = join(scratch, 'stuck-counter'); // outside the tree: the test's errors change, the tree does not
  const errors = [
    'TypeError: weekday is undefined',
    'RangeError: invalid calendar week',
    'AssertionError: expected a leap year',
    'SyntaxError: unexpected token in locale table',
    'ReferenceError: timezone is not defined',
    'KeyError: iso week',
  ];
  const testSh = [
    `n=$(cat ${shellWord(counter)} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${shellWord(counter)}`,
    'case $n in',
    ...errors.map((e, i) => `  ${i + 1}) echo ${shellWord(`FAIL date.test: ${e}`)} >&2 ;;`),
    "  *) echo 'FAIL date.test: KeyError: iso week' >&2 ;;",
    'esac',
    'exit 1',
    '',
  ].join('\n');
  const p = await gitProject('stuck', agentId, { 'test.sh': testSh, 'date.js': 'export const week = () => 52;\n' });
  await stack.warden.start({ agentId, task: 'Make the date test pass (sh test.sh).', supervisor });
  model = await startAnthropicServer({ script: commands('stuck', Array(6).fill('sh test.sh')) });
  const r = await runClaude(p, model, 'Make the date test pass (sh test.sh).');
  expect(r.exitCode, r.output).toBe(0);

  const s = await waitForStatus(stack.warden, agentId, (x) => x.evaluations.total >= 1 && x.tree !== undefined, 'an evaluation', 60_000);
  const turns = await reportedTurns(stack.warden, agentId);
  const tools = turns.filter((t) => t.toolCalls?.length);
  expect(tools.length, r.output).toBeGreaterThanOrEqual(6);
  // Every tool call's turn carries the tree, read by the endpoint in the session's repository: the same each time.
  expect(tools.map((t) => t.tree?.head)).toEqual(tools.map(() => p.head));
  expect(new Set(tools.map((t) => t.tree?.hash)).size).toBe(1);
  expect(s.lastVerdict, r.output).toMatchObject({ kind: 'CORRECTION', pattern: 'SPIRALING' });
  expect(s.lastVerdict?.finding).toMatch(/^unchangedTree#/);
  expect(s.lastVerdict?.message).toContain('the working tree stayed exactly the same');
  expect(s.tree).toMatchObject({ head: p.head, files: 0 });
  expect(s.tree!.unchangedTurns).toBeGreaterThanOrEqual(6);

  const cli = await execa(process.execPath, [WARDEN, 'status', agentId, '--address', stack.server.address, '--namespace', stack.server.namespace], {
    reject: false,
  });
  expect(cli.exitCode, cli.stderr).toBe(0);
  expect(cli.stdout).toMatch(new RegExp(`tree: HEAD ${p.head.slice(0, 8)}, 0 files changed, unchanged for at least \\d+ turns`));
  await stack.warden.signal(agentId, 'abort', {});
});

test('a fix that changes the tree and makes the failing test pass: progress, not flagged', async () => {
  const agentId = 'tree-fixed';
  const testSh = 'v=$(cat value.txt)\nif [ "$v" = 2 ]; then echo PASS; else echo "FAIL: value is $v, expected 2" >&2; exit 1; fi\n';
  const p = await gitProject('fixed', agentId, { 'test.sh': testSh, 'value.txt': '1\n' });
  await stack.warden.start({ agentId, task: 'Make the test pass (bash test.sh).', supervisor });
  // The same error under four commands: the transcript alone calls that a spiral. Then the fix, and a pass.
  model = await startAnthropicServer({
    script: commands('fixed', ['bash test.sh', 'sh test.sh', 'sh -e test.sh', 'bash -e test.sh', 'echo 2 > value.txt', 'bash test.sh']),
  });
  const r = await runClaude(p, model, 'Make the test pass (bash test.sh).');
  expect(r.exitCode, r.output).toBe(0);

  const s = await waitForStatus(stack.warden, agentId, (x) => x.evaluations.total >= 1, 'an evaluation', 60_000);
  const tools = (await reportedTurns(stack.warden, agentId)).filter((t) => t.toolCalls?.length);
  expect(
    tools.map((t) => t.toolCalls![0]!.ok),
    r.output,
  ).toEqual([false, false, false, false, true, true]);
  expect(tools[4]!.tree?.hash).not.toBe(tools[3]!.tree?.hash); // the fix changed the tree
  expect(tools[5]!.tree).toMatchObject({ head: p.head, files: 1 });
  expect(s.evaluations, r.output).toMatchObject({ flagged: 0 });
  expect(s.lastVerdict?.kind).toBe('OK');
  await stack.warden.signal(agentId, 'abort', {});
});
