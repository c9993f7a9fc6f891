/**
 * `warden install|uninstall claude|codex` on real files, and what it is for: the real Claude Code
 * and Codex binaries, against the scripted model servers, in a project where install put the hooks
 * — with no `warden start` — are supervised from their first prompt (auto-start): their turns are
 * reported to an agent named after the project and the session, and a whisper reaches them.
 *
 *  - install merges into existing settings, a second run changes nothing, --dry-run writes nothing,
 *    uninstall gives back the file byte for byte (or removes the file install created); a settings
 *    file that is not JSON is refused (exit 2) and left alone;
 *  - hooks of one new session racing each other: one agent, every hook exits 0 and its report counts;
 *  - Temporal unreachable: the hook exits 0 and says once per session that supervision is off.
 */
import { execa } from 'execa';
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startAnthropicServer, messageTexts, text, toolUse, type AnthropicServer } from '../fixtures/anthropic-server.js';
import { inputTexts, message, shellCall, startModelServer, type ModelServer } from '../fixtures/model-server.js';
import { reportedTurns, waitForStatus } from '../helpers/agents.js';
import { claudeBinary, offlineClaudeEnv } from '../helpers/claude.js';
import { codexExecArgs, execCodex, threadIdOf } from '../helpers/codex.js';
import { freePort } from '../../src/devserver/ports.js';
import { cmdline, processesWithEnv } from '../helpers/procs.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
/** The hook command install writes: the forwarder, by its name or (not on PATH) by its full path. */
const FORWARDER_CLAUDE = /(?:warden-hook|\/hooks\/forward\.js'?) claude\b/;
const forwarders = (text: string) => text.match(new RegExp(FORWARDER_CLAUDE.source, 'g'));

let scratch: string;
let anthropic: AnthropicServer | null = null;
let responses: ModelServer | null = null;
/** The warden homes of this file's scenarios: a hook endpoint a hook started under one is stopped after the test. */
const homes: string[] = [];

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'warden-install-'));
});
afterEach(async () => {
  await anthropic?.close();
  await responses?.close();
  anthropic = responses = null;
  for (const wardenHome of homes.splice(0))
    for (const pid of processesWithEnv(`WARDEN_HOME=${wardenHome}`)) if (cmdline(pid).includes('serve')) process.kill(pid, 'SIGKILL');
});
afterAll(() => cleanup(scratch));

/** A home of its own for one scenario: install's records and the hook's markers land there. */
function home(name: string) {
  const dir = join(scratch, name);
  const h = join(dir, 'home');
  mkdirSync(h, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: h,
    WARDEN_HOME: join(h, '.warden'),
    WARDEN_CACHE_DIR: join(h, 'cache'),
    XDG_CONFIG_HOME: join(h, 'config'),
  };
  homes.push(env.WARDEN_HOME);
  return { dir, home: h, env };
}

const warden = (args: string[], env: Record<string, string>, input?: string) =>
  execa(process.execPath, [WARDEN, ...args], {
    env,
    extendEnv: false,
    reject: false,
    timeout: 60_000,
    ...(input !== undefined ? { input } : { stdin: 'ignore' as const }),
  });

/** The Temporal connection a hook inherits from the agent it runs in. */
const temporalEnv = () => ({ TEMPORAL_ADDRESS: stack.server.address, TEMPORAL_NAMESPACE: stack.server.namespace });

/** Agents whose id starts with `prefix`, every run of each. */
const agentsLike = async (prefix: string) => (await stack.warden.list({ limit: 1000 })).filter((a) => a.agentId.startsWith(prefix));

describe('install and uninstall on real files', () => {
  const EXISTING = `{
    // the team's settings
    "model": "claude-opus",
    "hooks": {
        "PreToolUse": [
            { "matcher": "Bash", "hooks": [{ "type": "command", "command": "./lint.sh", "timeout": 5 }] }
        ],
        "Notification": [{ "hooks": [{ "type": "command", "command": "notify-send claude" }] }]
    },
    "permissions": { "allow": ["Bash(npm test)"] }
}`; // no final newline, on purpose

  test('claude --project: merged, idempotent, --dry-run writes nothing, uninstall restores the bytes', async () => {
    const h = home('files-claude');
    const project = join(h.dir, 'app');
    const settings = join(project, '.claude', 'settings.json');
    mkdirSync(join(project, '.claude'), { recursive: true });
    writeFileSync(settings, EXISTING);

    const dry = await warden(['install', 'claude', '--project', project, '--dry-run'], h.env);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`--- ${settings}`);
    expect(dry.stdout).toMatch(/^\+.*(?:warden-hook|\/hooks\/forward\.js'?) claude/m);
    expect(readFileSync(settings, 'utf8')).toBe(EXISTING);
    expect(existsSync(join(h.home, '.warden')), 'a dry run keeps no record').toBe(false);

    const first = await warden(['install', 'claude', '--project', project], h.env);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain("added warden's hook to PreToolUse (after the 1 already there)");
    expect(first.stdout).toContain('/hooks');
    const installed = readFileSync(settings, 'utf8');
    // The user's part is there, byte for byte, up to where warden's group starts.
    expect(installed.startsWith(EXISTING.slice(0, EXISTING.indexOf(']') - '\n        '.length + 1).trimEnd())).toBe(true);
    expect(installed).toContain("// the team's settings");
    expect(installed).toContain('"permissions": { "allow": ["Bash(npm test)"] }');
    expect(forwarders(installed)).toHaveLength(13);
    expect(installed, 'a project file: no http hook, no token').not.toMatch(/"http"|Bearer/);
    for (const e of ['PreCompact', 'PostCompact', 'SessionEnd', 'Notification', 'StopFailure', 'PermissionDenied', 'SubagentStart', 'SubagentStop'])
      expect(installed, `a hook on ${e}`).toMatch(new RegExp(`"${e}": \\[`));

    const second = await warden(['install', 'claude', '--project', project, '--json'], h.env);
    expect(JSON.parse(second.stdout)).toMatchObject({ changed: false, diff: '', actions: ['already installed; nothing to change'] });
    expect(readFileSync(settings, 'utf8')).toBe(installed);

    const un = await warden(['uninstall', 'claude', '--project', project], h.env);
    expect(un.exitCode, un.stderr).toBe(0);
    expect(un.stdout).toContain('restored the file as it was before warden install');
    expect(readFileSync(settings, 'utf8')).toBe(EXISTING);
    const again = await warden(['uninstall', 'claude', '--project', project, '--json'], h.env);
    expect(JSON.parse(again.stdout)).toMatchObject({ changed: false });
  });

  test('a settings file that is a symlink (dotfiles) stays one: install and uninstall write where it points', async () => {
    const h = home('files-link');
    const project = join(h.dir, 'app');
    const dotfiles = join(h.dir, 'dotfiles');
    mkdirSync(join(project, '.claude'), { recursive: true });
    mkdirSync(dotfiles, { recursive: true });
    writeFileSync(join(dotfiles, 'settings.json'), '{\n  "model": "opus"\n}\n');
    symlinkSync(join(dotfiles, 'settings.json'), join(project, '.claude', 'settings.json'));
    expect((await warden(['install', 'claude', '--project', project], h.env)).exitCode).toBe(0);
    expect(lstatSync(join(project, '.claude', 'settings.json')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dotfiles, 'settings.json'), 'utf8')).toMatch(FORWARDER_CLAUDE);
    expect((await warden(['uninstall', 'claude', '--project', project], h.env)).exitCode).toBe(0);
    expect(lstatSync(join(project, '.claude', 'settings.json')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dotfiles, 'settings.json'), 'utf8')).toBe('{\n  "model": "opus"\n}\n');
  });

  test('a settings file that is not JSON is refused with exit 2 and left alone', async () => {
    const h = home('files-bad');
    const project = join(h.dir, 'app');
    mkdirSync(join(project, '.claude'), { recursive: true });
    const broken = '{ "hooks": { "Stop": [ }\n';
    writeFileSync(join(project, '.claude', 'settings.json'), broken);
    const r = await warden(['install', 'claude', '--project', project], h.env);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/settings\.json is not valid JSON \(.* at line 1, column \d+\)/);
    expect(readFileSync(join(project, '.claude', 'settings.json'), 'utf8')).toBe(broken);
    const both = await warden(['install', 'claude', '--project', project, '--user'], h.env);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/--project and --user: choose one/);
    const other = await warden(['install', 'cursor'], h.env);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toMatch(/claude or codex/);
  });

  test('codex --user: hooks.json in CODEX_HOME created, idempotent, removed again; the trust step is printed', async () => {
    const h = home('files-codex');
    const codexHome = join(h.dir, 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    const toml = 'model = "gpt-5"\n\n[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = "command"\ncommand = "motd"\n';
    writeFileSync(join(codexHome, 'config.toml'), toml);
    const env = { ...h.env, CODEX_HOME: codexHome };
    const first = await warden(['install', 'codex', '--user'], env);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain(`install codex: ${join(codexHome, 'hooks.json')}`);
    expect(first.stdout).toMatch(/trust warden's hooks/);
    expect(first.stdout).toMatch(/--dangerously-bypass-hook-trust/);
    expect(first.stdout).toMatch(/config\.toml has \[hooks\] tables too/);
    const hooks = JSON.parse(readFileSync(join(codexHome, 'hooks.json'), 'utf8'));
    expect(Object.keys(hooks)).toEqual(['hooks']);
    expect(Object.keys(hooks.hooks)).toEqual([
      'UserPromptSubmit',
      'PreToolUse',
      'PermissionRequest',
      'PostToolUse',
      'Stop',
      'PreCompact',
      'PostCompact',
      'SubagentStart',
      'SubagentStop',
      'SessionEnd',
    ]);
    expect(hooks.hooks.SessionEnd[0].hooks[0].timeout, 'codex allows SessionEnd 3 s').toBe(3);
    expect(readFileSync(join(codexHome, 'config.toml'), 'utf8'), 'config.toml is never touched').toBe(toml);
    const bytes = readFileSync(join(codexHome, 'hooks.json'), 'utf8');
    expect((await warden(['install', 'codex', '--user'], env)).stdout).toContain('already installed');
    expect(readFileSync(join(codexHome, 'hooks.json'), 'utf8')).toBe(bytes);
    const un = await warden(['uninstall', 'codex', '--user'], env);
    expect(un.stdout).toContain('removed the file (warden install created it)');
    expect(existsSync(join(codexHome, 'hooks.json'))).toBe(false);
    expect(readdirSync(codexHome)).toEqual(['config.toml']);
  });

  test('claude --user: an old `warden hook claude` install is upgraded in place (http hooks on the tool events), idempotent, restored by uninstall', async () => {
    const h = home('files-user-upgrade');
    const config = join(h.dir, 'claude-config');
    mkdirSync(config, { recursive: true });
    const env = { ...h.env, CLAUDE_CONFIG_DIR: config };
    const settings = join(config, 'settings.json');
    // An install from before warden hooked StopFailure, PermissionDenied and the sub-agent events: the upgrade adds them.
    const events = ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'Notification', 'Stop', 'PreCompact', 'PostCompact', 'SessionEnd'];
    const old = `${JSON.stringify(
      {
        model: 'opus',
        hooks: Object.fromEntries(
          events.map((e) => [
            e,
            [{ ...(/ToolUse/.test(e) ? { matcher: '*' } : {}), hooks: [{ type: 'command', command: 'warden hook claude', timeout: 30 }] }],
          ]),
        ),
      },
      null,
      2,
    )}\n`;
    writeFileSync(settings, old, { mode: 0o600 });
    const r = await warden(['install', 'claude', '--user'], env);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const e of events) expect(r.stdout).toContain(`updated an older warden hook on ${e}`);
    for (const e of ['PermissionDenied', 'StopFailure', 'SubagentStart', 'SubagentStop']) expect(r.stdout).toContain(`added warden's hook to ${e}`);
    const token = JSON.parse(readFileSync(join(h.home, '.warden', 'hook-endpoint.json'), 'utf8')).token as string;
    expect(r.stdout).not.toContain(token);
    const s = JSON.parse(readFileSync(settings, 'utf8'));
    expect(s.model).toBe('opus');
    for (const e of events) {
      const [handler, ...more] = s.hooks[e][0].hooks;
      expect(more, e).toEqual([]);
      if (/ToolUse/.test(e))
        expect(handler, e).toMatchObject({
          type: 'http',
          url: 'http://127.0.0.1:8788/hooks/claude',
          headers: { Authorization: `Bearer ${token}` },
          timeout: 30,
        });
      else expect(handler.command, e).toMatch(/^(?:warden-hook|\S+ \S*\/dist\/src\/hooks\/forward\.js'?) claude$/);
    }
    const bytes = readFileSync(settings, 'utf8');
    const again = await warden(['install', 'claude', '--user', '--json'], env);
    expect(JSON.parse(again.stdout)).toMatchObject({ changed: false, diff: '' });
    expect(readFileSync(settings, 'utf8')).toBe(bytes);
    const un = await warden(['uninstall', 'claude', '--user'], env);
    expect(un.exitCode, un.stderr).toBe(0);
    expect(un.stdout).toContain('restored the file as it was before warden install (with the warden hooks it had then)');
    expect(un.stdout).not.toContain(token);
    expect(readFileSync(settings, 'utf8')).toBe(old);
  });
});

describe('what install keeps that the user wrote', () => {
  const project = (name: string, settings?: string) => {
    const h = home(name);
    const dir = join(h.dir, 'app');
    mkdirSync(join(dir, '.claude'), { recursive: true });
    if (settings !== undefined) writeFileSync(join(dir, '.claude', 'settings.json'), settings);
    return { ...h, project: dir, settings: join(dir, '.claude', 'settings.json') };
  };

  test('a settings file that is a symlink to nothing is refused, naming the link and its target; the link stays', async () => {
    const p = project('keep-dangling');
    const target = join(p.dir, 'dotfiles', 'claude-settings.json'); // not checked out yet
    symlinkSync(target, p.settings);
    const r = await warden(['install', 'claude', '--project', p.project], p.env);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${p.settings} is a symlink to ${target}, which does not exist`);
    expect(lstatSync(p.settings).isSymbolicLink()).toBe(true);
    expect(existsSync(target)).toBe(false);
    const un = await warden(['uninstall', 'claude', '--project', p.project, '--json'], p.env);
    expect(un.exitCode, un.stderr).toBe(0);
    expect(JSON.parse(un.stdout)).toMatchObject({ changed: false });
    expect(lstatSync(p.settings).isSymbolicLink()).toBe(true);
  });

  test("a hand-tuned Stop hook keeps its timeouts; a handler wrapping warden's hook is left alone by install and uninstall", async () => {
    const tuned = { type: 'command', command: 'warden hook claude --timeout 300000', timeout: 310 };
    const wrapped = { type: 'command', command: '~/bin/audit-log.sh; warden hook claude' };
    const before = `${JSON.stringify({ hooks: { Stop: [{ hooks: [tuned] }], Notification: [{ hooks: [wrapped] }] } }, null, 2)}\n`;
    const p = project('keep-tuned', before);
    const r = await warden(['install', 'claude', '--project', p.project], p.env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("kept your handler on Notification that runs warden's hook inside");
    const s = JSON.parse(readFileSync(p.settings, 'utf8'));
    const stop = s.hooks.Stop[0].hooks[0];
    expect(stop.command).toMatch(/(?:warden-hook|\/hooks\/forward\.js'?) claude --timeout 300000$/);
    expect(stop.timeout).toBe(310);
    expect(s.hooks.Notification).toEqual([{ hooks: [wrapped] }]);
    expect(s.hooks.PreToolUse).toHaveLength(1);
    // With the file changed by hand since (so no record to restore), uninstall takes out only warden's own.
    writeFileSync(p.settings, readFileSync(p.settings, 'utf8').replace('{\n', '{\n  "model": "opus",\n'));
    const un = await warden(['uninstall', 'claude', '--project', p.project], p.env);
    expect(un.exitCode, un.stderr).toBe(0);
    expect(un.stdout).toMatch(/left your handler on Notification as it is/);
    expect(JSON.parse(readFileSync(p.settings, 'utf8'))).toEqual({ model: 'opus', hooks: { Notification: [{ hooks: [wrapped] }] } });
  });

  test("install, a user edit, install again, uninstall: exactly warden's hooks come out, the edit stays", async () => {
    const p = project('keep-edit', '{\n  "permissions": {"allow": ["Bash(npm test)"]}\n}\n');
    expect((await warden(['install', 'claude', '--project', p.project], p.env)).exitCode).toBe(0);
    const edited = JSON.parse(readFileSync(p.settings, 'utf8'));
    edited.model = 'opus';
    delete edited.hooks.Stop; // the user took one of warden's hooks out by hand
    writeFileSync(p.settings, `${JSON.stringify(edited, null, 2)}\n`);
    const again = await warden(['install', 'claude', '--project', p.project], p.env);
    expect(again.stdout).toContain("added warden's hook to Stop");
    expect(forwarders(readFileSync(p.settings, 'utf8'))).toHaveLength(13);
    const un = await warden(['uninstall', 'claude', '--project', p.project], p.env);
    expect(un.exitCode, un.stderr).toBe(0);
    expect(un.stdout).not.toContain('restored');
    expect(un.stdout).toContain("removed warden's hook from Stop");
    const after = readFileSync(p.settings, 'utf8');
    expect(after).not.toMatch(FORWARDER_CLAUDE);
    expect(JSON.parse(after)).toEqual({ permissions: { allow: ['Bash(npm test)'] }, model: 'opus' });
  });

  test('a settings file nested 200,000 deep is refused naming the file (exit 2), not a stack overflow', async () => {
    const n = 200_000;
    const deep = `{"hooks": {"Stop": ${'['.repeat(n)}${']'.repeat(n)}}}`;
    const p = project('keep-deep', deep);
    for (const verb of ['install', 'uninstall']) {
      const r = await warden([verb, 'claude', '--project', p.project], p.env);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${p.settings} nests arrays and objects deeper than 512 levels`);
      expect(r.stderr).not.toMatch(/call stack/);
    }
    expect(readFileSync(p.settings, 'utf8')).toBe(deep);
    const codexHome = join(p.dir, 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(codexHome, 'hooks.json'), deep);
    writeFileSync(join(codexHome, 'config.toml'), `x = ${'['.repeat(n)}${']'.repeat(n)}\n`);
    const cx = await warden(['install', 'codex', '--user'], { ...p.env, CODEX_HOME: codexHome });
    expect(cx.exitCode, cx.stderr).toBe(2);
    expect(cx.stderr).toContain(`${join(codexHome, 'hooks.json')} nests arrays and objects deeper than 512 levels`);
  });
});

describe('auto-start with the real binaries, no `warden start`', () => {
  test('Claude Code: the session is supervised from its first prompt; a whisper reaches it; its warden.yaml applies', async () => {
    const h = home('claude-auto');
    const work = join(h.dir, 'autoproj');
    mkdirSync(work, { recursive: true });
    // The project's config: quiet supervision, and a definition of done checked in the project.
    writeFileSync(join(work, 'warden.yaml'), 'supervisor:\n  eval_interval: 1000\n  idle_after: 0\nverify: test -f marker.txt\n');
    // The hook endpoint on a port of its own (not the default 8788 another test or user may hold).
    const inst = await warden(['install', 'claude', '--project', work, '--endpoint', `127.0.0.1:${await freePort()}`], h.env);
    expect(inst.exitCode, inst.stderr).toBe(0);
    // A project's warden.yaml configures its sessions only once the user trusts it.
    const trust = await warden(['trust', work], h.env);
    expect(trust.exitCode, trust.stderr).toBe(0);

    const sessionId = randomUUID();
    const agentId = `autoproj-${sessionId.replace(/-/g, '').slice(-12)}`;
    anthropic = await startAnthropicServer({
      script: async (_req, i) => {
        if (i === 0) {
          // The first prompt's hook started the agent: a human steers it while the model thinks.
          await waitForStatus(stack.warden, agentId, (s) => s.state === 'spawning', `${agentId} auto-started (spawning: no turn yet)`);
          await stack.warden.signal(agentId, 'steer', { text: 'UNIQUE-AUTO-STEER: write it with printf' });
          await waitForStatus(stack.warden, agentId, (s) => s.pendingWhispers === 1, 'the whisper queued');
          return toolUse('Bash', { command: 'echo hi > marker.txt', description: 'Write the marker' }, { id: 'toolu_auto_1' });
        }
        return text('done');
      },
    });
    const r = await execa(claudeBinary(), ['-p', 'Write the marker file.', '--output-format', 'json', '--allowedTools', 'Bash', '--session-id', sessionId], {
      cwd: work,
      extendEnv: false,
      env: {
        ...h.env,
        ...temporalEnv(),
        ...offlineClaudeEnv(anthropic.url, { configDir: join(h.home, '.claude') }),
      },
      stdin: 'ignore',
      all: true,
      reject: false,
      timeout: 120_000,
    });
    expect(r.exitCode, String(r.all)).toBe(0);
    expect(JSON.parse(String(r.stdout).trim().split('\n').at(-1)!)).toMatchObject({ result: 'done', session_id: sessionId });
    expect(readFileSync(join(work, 'marker.txt'), 'utf8')).toBe('hi\n');

    // The whisper reached Claude's next request, through the tool call's hook.
    const reqs = anthropic.agentRequests();
    expect(reqs).toHaveLength(2);
    expect(messageTexts(reqs[1]!.body).join('\n')).toContain('[steering] UNIQUE-AUTO-STEER: write it with printf');

    // One agent for the session, named after the project and the session, its task the first prompt.
    expect((await agentsLike('autoproj-')).map((a) => a.agentId)).toEqual([agentId]);
    // warden.yaml's verify ran in the project: the Stop claimed done, the check passed, the agent is done.
    const s = await waitForStatus(stack.warden, agentId, (x) => x.state === 'done', `${agentId} done`);
    expect(s.task).toBe('Write the marker file.');
    expect(s.whispersDelivered).toBe(1);
    const turns = await reportedTurns(stack.warden, agentId);
    expect(turns.map((t) => t.toolCalls?.map((c) => c.name) ?? [])).toEqual([['Bash'], []]);
    expect(turns[0]!.id).toBe(`claude-${sessionId}-tool-toolu_auto_1`);
    expect(s.lastVerification).toMatchObject({ passed: true });
  });

  test('Codex: installed in CODEX_HOME, the session is supervised from its first prompt; a whisper reaches it', async () => {
    const h = home('codex-auto');
    const work = join(h.dir, 'autocx');
    const codexHome = join(h.dir, 'codex-home');
    mkdirSync(work, { recursive: true });
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(work, 'warden.yaml'), 'supervisor:\n  eval_interval: 1000\n  idle_after: 0\n');
    const env = { ...h.env, CODEX_HOME: codexHome };
    const inst = await warden(['install', 'codex', '--user', '--endpoint', `127.0.0.1:${await freePort()}`], env);
    expect(inst.exitCode, inst.stderr).toBe(0);
    expect((await warden(['trust', work], env)).exitCode).toBe(0);

    let agentId = '';
    responses = await startModelServer({
      script: (() => {
        let i = 0;
        return async () => {
          if (i++ === 0) {
            const [a] = await eventually(
              async () => {
                const found = await agentsLike('autocx-');
                return found.length ? found : null;
              },
              { what: 'the auto-started codex agent' },
            );
            agentId = a!.agentId;
            await stack.warden.signal(agentId, 'steer', { text: 'UNIQUE-CODEX-AUTO-STEER: use printf' });
            await waitForStatus(stack.warden, agentId, (s) => s.pendingWhispers === 1, 'the whisper queued');
            return shellCall('echo hi', { extra: { login: false }, callId: 'call_auto_1' });
          }
          return message('done');
        };
      })(),
    });
    const r = await execCodex([...codexExecArgs(responses, work), 'Say hi.'], { cwd: work, env: { ...env, ...temporalEnv(), OPENAI_API_KEY: 'test' } });
    expect(r.exitCode, String(r.all)).toBe(0);
    const threadId = threadIdOf(r.stdout);
    expect(threadId, String(r.all)).toMatch(/^[0-9a-f-]{36}$/);
    expect(agentId).toBe(`autocx-${threadId!.replace(/-/g, '').slice(-12)}`);

    const reqs = responses.responsesRequests();
    expect(reqs).toHaveLength(2);
    expect(inputTexts(reqs[1]!.body, 'developer').join('\n')).toContain('[steering] UNIQUE-CODEX-AUTO-STEER: use printf');
    expect((await agentsLike('autocx-')).map((a) => a.agentId)).toEqual([agentId]);
    const s = await stack.warden.status(agentId);
    expect(s.task).toBe('Say hi.');
    expect(s.whispersDelivered).toBe(1);
    expect(s.turns).toBe(2); // the shell call and the final message
    const turns = await reportedTurns(stack.warden, agentId);
    expect(turns[0]!.toolCalls![0]).toEqual({ name: 'Bash', args: 'echo hi', result: 'hi\n', ok: true });
    expect(turns[1]!.text).toBe('done');
    await stack.warden.signal(agentId, 'abort', {});
  });
});

describe('the hook by itself', () => {
  const event = (sessionId: string, extra: Record<string, unknown>) =>
    JSON.stringify({ session_id: sessionId, cwd: join(scratch, 'raceproj'), transcript_path: '/nonexistent', ...extra });

  test('hooks of one new session racing: one agent, every hook exits 0, every report counts', async () => {
    const h = home('race');
    mkdirSync(join(scratch, 'raceproj'), { recursive: true });
    const sessionId = randomUUID();
    const agentId = `raceproj-${sessionId.replace(/-/g, '').slice(-12)}`;
    const env = { ...h.env, ...temporalEnv() };
    const N = 6;
    const runs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        warden(
          ['hook', 'claude'],
          env,
          event(sessionId, {
            hook_event_name: 'PostToolUse',
            tool_name: 'Bash',
            tool_input: { command: `echo ${i}` },
            tool_response: { stdout: `${i}\n`, stderr: '', interrupted: false },
            tool_use_id: `toolu_race_${i}`,
          }),
        ),
      ),
    );
    for (const r of runs) {
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
    }
    // One workflow ever ran for the session (visibility lists every run of that id).
    const all = await eventually(async () => {
      const found = await stack.warden.list({ query: `WorkflowId = 'agent-${agentId}'` });
      return found.length ? found : null;
    });
    expect(all.map((a) => a.workflowId)).toEqual([`agent-${agentId}`]);
    expect((await stack.warden.status(agentId)).turns).toBe(N);
    await stack.warden.signal(agentId, 'abort', {});
  });

  test('Temporal unreachable: exit 0 in time, no output, and one line per session saying supervision is off', async () => {
    const h = home('dead');
    const env = { ...h.env, TEMPORAL_ADDRESS: '127.0.0.1:1' };
    const sessionId = randomUUID();
    const prompt = event(sessionId, { hook_event_name: 'UserPromptSubmit', prompt: 'hello' });
    const first = await warden(['hook', 'claude', '--timeout', '4000'], env, prompt);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toMatch(/^warden hook: supervision is off for this session \(agent raceproj-[0-9a-f]{12}\): cannot reach Temporal at 127\.0\.0\.1:1/);
    expect(first.stderr.trim().split('\n')).toHaveLength(1);
    const second = await warden(['hook', 'claude', '--timeout', '4000'], env, event(sessionId, { hook_event_name: 'PreToolUse', tool_name: 'Bash' }));
    expect(second.exitCode).toBe(0);
    expect(second.stderr, 'said once per session').toBe('');
    // Another session hears it once too.
    const other = await warden(['hook', 'claude', '--timeout', '4000'], env, event(randomUUID(), { hook_event_name: 'Stop' }));
    expect(other.stderr).toMatch(/supervision is off for this session/);
  });

  test('auto-start off: nothing is started, and the session hears why once', async () => {
    const h = home('off');
    const sessionId = randomUUID();
    const env = { ...h.env, ...temporalEnv(), WARDEN_AUTO_START: '0' };
    const r = await warden(['hook', 'claude'], env, event(sessionId, { hook_event_name: 'UserPromptSubmit', prompt: 'hello' }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/auto-start is off \(WARDEN_AUTO_START\); session .* is not supervised/);
    const again = await warden(['hook', 'claude'], env, event(sessionId, { hook_event_name: 'Stop' }));
    expect(again.stderr).toBe('');
    expect(await agentsLike(`raceproj-${sessionId.replace(/-/g, '').slice(-12)}`)).toEqual([]);
  });

  test("a bad warden.yaml of the user's: nothing is started, the session hears once what is wrong with it", async () => {
    const h = home('badconfig');
    const project = join(h.dir, 'badcfg');
    mkdirSync(project, { recursive: true });
    mkdirSync(join(h.home, 'config', 'warden'), { recursive: true });
    writeFileSync(join(h.home, 'config', 'warden', 'warden.yaml'), 'evaluator:\n  kind: nonsense\n');
    const sessionId = randomUUID();
    const env = { ...h.env, ...temporalEnv() };
    const input = (e: Record<string, unknown>) => JSON.stringify({ session_id: sessionId, cwd: project, ...e });
    const r = await warden(['hook', 'claude'], env, input({ hook_event_name: 'UserPromptSubmit', prompt: 'hello' }));
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/supervision is off for this session \(agent badcfg-[0-9a-f]{12}\): .*warden\.yaml: .*evaluator/);
    const again = await warden(['hook', 'claude'], env, input({ hook_event_name: 'Stop' }));
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toBe('');
    expect(await agentsLike('badcfg-')).toEqual([]);
  });

  test('a bad warden.yaml in an untrusted project: ignored as a whole, said once; the session is supervised', async () => {
    const h = home('badproject');
    const project = join(h.dir, 'badproj');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'warden.yaml'), 'evaluator:\n  kind: nonsense\n');
    const sessionId = randomUUID();
    const env = { ...h.env, ...temporalEnv() };
    const input = (e: Record<string, unknown>) => JSON.stringify({ session_id: sessionId, cwd: project, ...e });
    const r = await warden(['hook', 'claude'], env, input({ hook_event_name: 'UserPromptSubmit', prompt: 'hello' }));
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toMatch(
      /warden\.yaml is not trusted, so warden ignored the whole file \(.*evaluator.*\); to use the whole file, review it and run: warden trust /,
    );
    const again = await warden(['hook', 'claude'], env, input({ hook_event_name: 'Stop' }));
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toBe('');
    const agentId = `badproj-${sessionId.replace(/-/g, '').slice(-12)}`;
    expect((await agentsLike('badproj-')).map((a) => a.agentId)).toEqual([agentId]);
    await stack.warden.signal(agentId, 'abort', {});
  });
});
