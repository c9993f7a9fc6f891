import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  buildCodexArgs,
  CODEX_QUIET_OVERRIDES,
  credentialsSource,
  mcpServerOverrides,
  PROJECT_CODEX_CANDIDATES,
  resolveCodexBinary,
} from '../../activities/evaluators/codex.js';
import { cleanup, ROOT } from '../helpers/stack.js';

const dir = mkdtempSync(join(tmpdir(), 'warden-codex-args-'));
afterAll(() => cleanup(dir));

describe('buildCodexArgs', () => {
  const args = buildCodexArgs({
    model: 'gpt-5.4',
    lastMessageFile: '/tmp/x/last.txt',
    workDir: '/tmp/x/work',
    derivedOverrides: ['mcp_servers.fs.enabled=false'],
    overrides: ['model_provider="mine"', 'features.plugins=true'],
  });

  test('codex exec, read-only, the model, no git check, ephemeral, the last message to a file, prompt on stdin', () => {
    expect(args[0]).toBe('exec');
    expect(args.join(' ')).toContain('--sandbox read-only');
    expect(args.join(' ')).toContain('-m gpt-5.4');
    expect(args).toContain('--skip-git-repo-check');
    expect(args).toContain('--ephemeral');
    expect(args.join(' ')).toContain('--output-last-message /tmp/x/last.txt');
    expect(args.join(' ')).toContain('-C /tmp/x/work');
    expect(args.at(-1)).toBe('-');
  });

  test('never --full-auto nor a sandbox bypass', () => {
    expect(args).not.toContain('--full-auto');
    expect(args.join(' ')).not.toMatch(/bypass|danger/);
  });

  test('the quiet overrides first, then those derived from config.toml, then the spec’s own, each after -c', () => {
    const cs = args.flatMap((a, i) => (args[i - 1] === '-c' ? [a] : []));
    expect(cs).toEqual([...CODEX_QUIET_OVERRIDES, 'mcp_servers.fs.enabled=false', 'model_provider="mine"', 'features.plugins=true']);
    expect(cs).toContain('analytics.enabled=false');
    expect(cs).toContain('features.plugins=false');
    // the spec's override comes later, so it wins
    expect(cs.lastIndexOf('features.plugins=true')).toBeGreaterThan(cs.indexOf('features.plugins=false'));
  });
});

describe('mcpServerOverrides', () => {
  test('one enabled=false per declared server, sub-tables and quoted names included, no duplicates', () => {
    const toml = [
      'model = "o3"',
      '[mcp_servers.docs]',
      'command = "docs-mcp"',
      '[mcp_servers.docs.env]',
      'X = "1"',
      '  [ mcp_servers."my server" ]',
      'url = "https://example.invalid"',
      "[mcp_servers.'other']",
      '[not_mcp_servers.x]',
      '# [mcp_servers.commented]',
    ].join('\n');
    expect(mcpServerOverrides(toml)).toEqual(['mcp_servers.docs.enabled=false', 'mcp_servers."my server".enabled=false', 'mcp_servers.other.enabled=false']);
  });

  test('nothing for a config without MCP servers', () => {
    expect(mcpServerOverrides('model = "o3"\n[model_providers.x]\nname = "x"\n')).toEqual([]);
  });
});

describe('resolveCodexBinary', () => {
  const fakeBin = join(dir, 'bin');
  const fakeCodex = join(fakeBin, 'codex');
  test('config.codexPath, then WARDEN_CODEX_PATH, then codex on PATH, then the project’s own', () => {
    // set up a PATH entry holding an executable `codex`
    mkdirSync(fakeBin, { recursive: true });
    writeFileSync(fakeCodex, '#!/bin/sh\n');
    chmodSync(fakeCodex, 0o755);
    const env = { PATH: `/nonexistent:${fakeBin}`, WARDEN_CODEX_PATH: '/opt/codex-from-env' };
    expect(resolveCodexBinary({ codexPath: '/opt/codex-from-config' }, env)).toBe('/opt/codex-from-config');
    expect(resolveCodexBinary({}, env)).toBe('/opt/codex-from-env');
    expect(resolveCodexBinary({}, { PATH: env.PATH })).toBe(fakeCodex);
    expect(resolveCodexBinary({}, { PATH: '/nonexistent' })).toBe(join(ROOT, 'node_modules/.bin/codex'));
  });

  test('a non-executable `codex` on PATH is skipped', () => {
    const d = join(dir, 'noexec');
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'codex'), 'not a program');
    chmodSync(join(d, 'codex'), 0o644);
    expect(resolveCodexBinary({}, { PATH: d })).toBe(join(ROOT, 'node_modules/.bin/codex'));
  });

  test('the project’s own codex is found from the source and from the compiled dist/ layout', async () => {
    expect(PROJECT_CODEX_CANDIDATES).toContain(join(ROOT, 'node_modules/.bin/codex'));
    const compiled = (await import(join(ROOT, 'dist/activities/evaluators/codex.js'))) as { PROJECT_CODEX_CANDIDATES: string[] };
    expect(compiled.PROJECT_CODEX_CANDIDATES).toContain(join(ROOT, 'node_modules/.bin/codex'));
  });

  test('no codex anywhere: a clear error', () => {
    expect(() => resolveCodexBinary({}, { PATH: '/nonexistent' }, ['/nonexistent/codex'])).toThrow(/codex binary not found.*WARDEN_CODEX_PATH/);
  });
});

describe('credentialsSource', () => {
  test('credentialsHome, then $CODEX_HOME, then ~/.codex', () => {
    expect(credentialsSource({ credentialsHome: '/a' }, { CODEX_HOME: '/b' })).toBe('/a');
    expect(credentialsSource({}, { CODEX_HOME: '/b' })).toBe('/b');
    expect(credentialsSource({}, {})).toBe(join(homedir(), '.codex'));
  });
});
