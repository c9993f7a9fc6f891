/**
 * `warden install claude --user` with the built CLI (dist/): the hook endpoint's token goes into
 * the user's settings file and the endpoint file, and nowhere else — never on stdout, in the text
 * or --json, install or uninstall, dry run or not; the settings file that holds it is made 0600
 * when others could read it, and install says so; a bad --endpoint is exit 2 naming the flag.
 * Needs no server: nothing here runs a hook.
 */
import { execa } from 'execa';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
const ROOT = join(import.meta.dirname, '..', '..');
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const scratch = mkdtempSync(join(tmpdir(), 'warden-install-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function home(name: string) {
  const h = join(scratch, name);
  mkdirSync(h, { recursive: true });
  return {
    home: h,
    settings: join(h, '.claude', 'settings.json'),
    endpointFile: join(h, '.warden', 'hook-endpoint.json'),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: h },
  };
}

const warden = (args: string[], env: Record<string, string>) =>
  execa(process.execPath, [WARDEN, ...args], { env, extendEnv: false, reject: false, timeout: 60_000, stdin: 'ignore' });

const token = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { token: string }).token;
const mode = (file: string) => statSync(file).mode & 0o777;

describe('the endpoint token is written, never printed', () => {
  test('install, install again, a dry run, --json, uninstall: the token is in the files only', async () => {
    const h = home('never-printed');
    mkdirSync(join(h.home, '.claude'));
    writeFileSync(h.settings, '{\n  "model": "opus"\n}\n', { mode: 0o600 });
    const outputs: string[] = [];
    const run = async (args: string[]) => {
      const r = await warden(args, h.env);
      expect(r.exitCode, r.stderr).toBe(0);
      outputs.push(r.stdout, r.stderr);
      return r;
    };
    const dry = await run(['install', 'claude', '--user', '--dry-run']);
    expect(dry.stdout).toContain(`would create ${h.endpointFile} (http://127.0.0.1:8788, a new token)`);
    expect(dry.stdout).toMatch(/^\+ +"Authorization": "Bearer <token hidden>",$/m);
    expect(existsSync(join(h.home, '.warden')), 'a dry run writes no endpoint file').toBe(false);

    const first = await run(['install', 'claude', '--user']);
    const t = token(h.endpointFile);
    expect(mode(h.endpointFile)).toBe(0o600);
    expect(readFileSync(h.settings, 'utf8').match(new RegExp(`Bearer ${t}`, 'g'))).toHaveLength(3);
    expect(first.stdout).toContain(`created ${h.endpointFile} (http://127.0.0.1:8788, a new token)`);
    expect(first.stdout).toMatch(/^\+ +"Authorization": "Bearer <token hidden>",$/m);
    expect(first.stdout).toContain('What runs where:');
    expect(first.stdout).toContain(`logging to ${join(h.home, '.warden', 'serve.log')}`);

    const json = JSON.parse((await run(['install', 'claude', '--user', '--json', '--address', 'temporal.example:7233'])).stdout);
    expect(json).toMatchObject({ changed: true, endpoint: 'http://127.0.0.1:8788', endpointFile: h.endpointFile });
    expect(json.command).toMatch(/(?:\/dist\/src\/hooks\/forward\.js'?|^warden-hook) claude --address temporal\.example:7233$/);
    expect(json.diff).toContain('Bearer <token hidden>');
    expect(JSON.parse(readFileSync(h.settings, 'utf8')).hooks.PreToolUse[0].hooks[0].url).toBe(
      'http://127.0.0.1:8788/hooks/claude?address=temporal.example%3A7233',
    );
    const again = JSON.parse((await run(['install', 'claude', '--user', '--json', '--address', 'temporal.example:7233'])).stdout);
    expect(again).toMatchObject({ changed: false, actions: ['already installed; nothing to change'], diff: '' });
    // A new port: the token is kept, the http hooks follow.
    const moved = await run(['install', 'claude', '--user', '--endpoint', '127.0.0.1:9911']);
    expect(moved.stdout).toContain(`set ${h.endpointFile} to http://127.0.0.1:9911 (the token kept)`);
    expect(token(h.endpointFile)).toBe(t);
    expect(JSON.parse(readFileSync(h.settings, 'utf8')).hooks.PostToolUse[0].hooks[0].url).toBe('http://127.0.0.1:9911/hooks/claude');
    await run(['uninstall', 'claude', '--user', '--dry-run']);
    await run(['uninstall', 'claude', '--user', '--json']);
    expect(readFileSync(h.settings, 'utf8')).toBe('{\n  "model": "opus"\n}\n');
    for (const o of outputs) expect(o).not.toContain(t);
  });

  test('a project install writes no token: the forwarder on every event', async () => {
    const h = home('project');
    const project = join(h.home, 'app');
    mkdirSync(project);
    const r = await warden(['install', 'claude', '--project', project], h.env);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = readFileSync(join(project, '.claude', 'settings.json'), 'utf8');
    expect(text).not.toContain(token(h.endpointFile));
    expect(text).not.toContain('"http"');
    expect(text.match(/forward\.js'? claude"|"warden-hook claude"/g)).toHaveLength(12);
    expect(text.match(/ claude <&3 >\/dev\/null 2>&1 & \} 3<&0"/g), 'StopFailure, in the background').toHaveLength(1);
    expect(r.stdout).toMatch(
      /^ {2}Every hook runs (?:`warden-hook claude`|the forwarder \(`\S+ \S+\/hooks\/forward\.js'? claude`\)), which hands the event to warden's hook endpoint at http:\/\/127\.0\.0\.1:8788\.$/m,
    );
  });
});

describe('the settings file that holds the token is made 0600', () => {
  test('a 0644 file with other settings: made 0600 on install, and install says so; a 0600 file is left as it is', async () => {
    const h = home('tighten');
    mkdirSync(join(h.home, '.claude'));
    writeFileSync(h.settings, '{}\n');
    chmodSync(h.settings, 0o644);
    const dry = await warden(['install', 'claude', '--user', '--dry-run'], h.env);
    expect(dry.stdout).toContain("would make the file mode 0600 (it was 0644, readable by others): it holds the hook endpoint's token");
    expect(mode(h.settings)).toBe(0o644);
    const r = await warden(['install', 'claude', '--user'], h.env);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("made the file mode 0600 (it was 0644, readable by others): it holds the hook endpoint's token");
    expect(mode(h.settings)).toBe(0o600);
    // Loosened again by hand, nothing else changed: only the mode is fixed.
    chmodSync(h.settings, 0o640);
    const bytes = readFileSync(h.settings, 'utf8');
    const again = JSON.parse((await warden(['install', 'claude', '--user', '--json'], h.env)).stdout);
    expect(again).toMatchObject({
      changed: false,
      actions: ['the hooks were already installed', "made the file mode 0600 (it was 0640, readable by others): it holds the hook endpoint's token"],
    });
    expect(mode(h.settings)).toBe(0o600);
    expect(readFileSync(h.settings, 'utf8')).toBe(bytes);
    const quiet = JSON.parse((await warden(['install', 'claude', '--user', '--json'], h.env)).stdout);
    expect(quiet.actions).toEqual(['already installed; nothing to change']);
  });

  test('a new user settings file is created 0600; a project file keeps the usual mode', async () => {
    const h = home('new-file');
    expect((await warden(['install', 'claude', '--user'], h.env)).exitCode).toBe(0);
    expect(mode(h.settings)).toBe(0o600);
    const project = join(h.home, 'app');
    mkdirSync(project);
    expect((await warden(['install', 'claude', '--project', project], h.env)).exitCode).toBe(0);
    expect(mode(join(project, '.claude', 'settings.json'))).toBe(0o644 & ~process.umask());
  });
});

test('--endpoint: a bad value is exit 2 naming the flag, and nothing is written', async () => {
  const h = home('bad-endpoint');
  for (const bad of ['8788', '0.0.0.0:8788', 'localhost:99999']) {
    const r = await warden(['install', 'claude', '--user', '--endpoint', bad], h.env);
    expect(r.exitCode, bad).toBe(2);
    expect(r.stderr, bad).toMatch(/^warden: --endpoint: /);
  }
  expect(existsSync(h.settings)).toBe(false);
  expect(existsSync(join(h.home, '.warden'))).toBe(false);
  // Uninstall takes the flag too (an install command line works as an uninstall one), checked the same way.
  const un = await warden(['uninstall', 'claude', '--user', '--endpoint', '0.0.0.0:8788'], h.env);
  expect(un.exitCode).toBe(2);
  expect(un.stderr).toMatch(/^warden: --endpoint: /);
  expect((await warden(['uninstall', 'claude', '--user', '--endpoint', '127.0.0.1:1'], h.env)).exitCode).toBe(0);
  expect(existsSync(join(h.home, '.warden', 'hook-endpoint.json'))).toBe(false);
});
