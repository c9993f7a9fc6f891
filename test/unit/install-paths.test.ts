/**
 * Where `warden install` writes (per agent and scope, following CLAUDE_CONFIG_DIR and CODEX_HOME),
 * the hook command it writes — which must always be one it recognises as its own — the --endpoint
 * flag, the http hook's URL, and the token hidden in what install prints.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { hideTokens, hookCommand, httpHookUrl, parseEndpoint, settingsPath } from '../../src/cli/commands/install.js';
import { exitCodeFor, UsageError } from '../../src/cli/exit.js';
import { isForwarderCommand, isOnlyWardenHookCommand } from '../../src/hooks/install/settings.js';

const scratch = mkdtempSync(join(tmpdir(), 'warden-install-paths-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test('settings files per agent and scope', () => {
  const env = { HOME: '/home/me' };
  expect(settingsPath('claude', { user: true }, env)).toBe('/home/me/.claude/settings.json');
  expect(settingsPath('claude', { user: true }, { ...env, CLAUDE_CONFIG_DIR: '/cfg/claude' })).toBe('/cfg/claude/settings.json');
  expect(settingsPath('codex', { user: true }, env)).toBe('/home/me/.codex/hooks.json');
  expect(settingsPath('codex', { user: true }, { ...env, CODEX_HOME: '/cfg/codex' })).toBe('/cfg/codex/hooks.json');
  expect(settingsPath('claude', { project: scratch }, env)).toBe(join(scratch, '.claude/settings.json'));
  expect(settingsPath('codex', {}, env, scratch)).toBe(join(scratch, '.codex/hooks.json')); // default: here
  expect(() => settingsPath('claude', { project: scratch, user: true }, env)).toThrow(/choose one/);
  expect(() => settingsPath('claude', { project: join(scratch, 'nope') }, env)).toThrow(/no such directory/);
  writeFileSync(join(scratch, 'a-file'), '');
  expect(() => settingsPath('claude', { project: join(scratch, 'a-file') }, env)).toThrow(/no such directory/);
});

test('the hook command: the forwarder, `warden-hook` when that and `warden` on PATH are this CLI, else its full path; always recognised', () => {
  const dist = join(scratch, 'my tools', 'dist', 'src');
  mkdirSync(join(dist, 'cli'), { recursive: true });
  mkdirSync(join(dist, 'hooks'), { recursive: true });
  const main = join(dist, 'cli', 'main.js');
  const forward = join(dist, 'hooks', 'forward.js');
  writeFileSync(main, '');
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  symlinkSync(main, join(bin, 'warden'));
  // Only `warden` linked (a hand-made symlink, not an npm install): `warden-hook` is not there yet.
  expect(() => hookCommand('claude', {}, { PATH: bin }, main)).toThrow(/no hook forwarder at .*forward\.js/);
  writeFileSync(forward, '');
  const q = (p: string) => (/^[A-Za-z0-9_./:@=+,-]+$/.test(p) ? p : `'${p}'`);
  expect(hookCommand('claude', {}, { PATH: bin }, main)).toBe(`${q(process.execPath)} '${forward}' claude`);
  symlinkSync(forward, join(bin, 'warden-hook'));

  const onPath = hookCommand('claude', {}, { PATH: bin }, main);
  expect(onPath).toBe('warden-hook claude');
  const elsewhere = hookCommand('codex', {}, { PATH: '/usr/bin' }, main);
  expect(elsewhere).toBe(`${q(process.execPath)} '${forward}' codex`);
  const flags = hookCommand('claude', { address: 'temporal.example:7233', namespace: 'team a', taskQueue: 'q' }, { PATH: bin }, main);
  expect(flags).toBe("warden-hook claude --address temporal.example:7233 --namespace 'team a' --task-queue q");
  // Another CLI's warden-hook on PATH: this one's full path.
  const other = join(scratch, 'other-bin');
  mkdirSync(other);
  writeFileSync(join(other, 'warden-hook'), '');
  expect(hookCommand('claude', {}, { PATH: [other, bin].join(':') }, main)).toBe(`${q(process.execPath)} '${forward}' claude`);
  for (const [c, agent] of [
    [onPath, 'claude'],
    [elsewhere, 'codex'],
    [flags, 'claude'],
  ] as const) {
    expect(isOnlyWardenHookCommand(c, agent), c).toBe(true);
    expect(isForwarderCommand(c, agent), c).toBe(true);
  }
});

test('--endpoint: host:port on this machine, else exit 2 naming the flag', () => {
  expect(parseEndpoint('127.0.0.1:9000')).toBe('127.0.0.1:9000');
  expect(parseEndpoint(' localhost:8788 ')).toBe('localhost:8788');
  expect(parseEndpoint('[::1]:8788')).toBe('[::1]:8788');
  for (const [bad, why] of [
    ['8788', /not host:port/],
    ['127.0.0.1', /not host:port/],
    ['127.0.0.1:70000', /not host:port/],
    ['http://127.0.0.1:8788', /not host:port/],
    ['127.0.0.1:0', /port 0/],
    ['0.0.0.0:8788', /not on this machine/],
    ['example.com:8788', /not on this machine/],
    ['[::]:8788', /not on this machine/],
  ] as const) {
    let err: unknown;
    try {
      parseEndpoint(bad);
    } catch (e) {
      err = e;
    }
    expect(err, bad).toBeInstanceOf(UsageError);
    expect(exitCodeFor(err)).toBe(2);
    expect((err as Error).message, bad).toMatch(/^--endpoint: /);
    expect((err as Error).message, bad).toMatch(why);
  }
});

test("the http hook's URL: the endpoint's route, connection flags in the query string only when given", () => {
  expect(httpHookUrl('http://127.0.0.1:8788', 'claude', {})).toBe('http://127.0.0.1:8788/hooks/claude');
  expect(httpHookUrl('http://[::1]:9', 'claude', { address: 'temporal.example:7233', namespace: 'team a', taskQueue: 'q&r' })).toBe(
    'http://[::1]:9/hooks/claude?address=temporal.example%3A7233&namespace=team+a&task_queue=q%26r',
  );
  expect(httpHookUrl('http://127.0.0.1:8788', 'claude', { taskQueue: 'q' })).toBe('http://127.0.0.1:8788/hooks/claude?task_queue=q');
});

test('tokens are hidden in what install prints', () => {
  const t = 'ab'.repeat(32);
  const old = 'cd'.repeat(32);
  expect(hideTokens(`-  "Authorization": "Bearer ${old}",\n+  "Authorization": "Bearer ${t}",\n x ${t}`, [t])).toBe(
    '-  "Authorization": "Bearer <token hidden>",\n+  "Authorization": "Bearer <token hidden>",\n x <token hidden>',
  );
});
