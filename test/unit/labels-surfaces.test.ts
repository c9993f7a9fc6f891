/**
 * Labels on every surface: `warden start --label`, the config file's `labels:`, AgentSpec.labels;
 * and the trust rule: a project's warden.yaml never sets labels, trusted or not (a repository
 * must not move its sessions out of its group's budget).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildSpec } from '../../src/cli/commands/start.js';
import { UsageError } from '../../src/cli/exit.js';
import { buildProgram } from '../../src/cli/program.js';
import { parseConfig, specFromConfig } from '../../src/config/file.js';
import { configDigest, describeConfig, mergeUntrusted, sessionConfig, withTrusted, writeTrustStore } from '../../src/config/trust.js';
import { AgentSpecSchema } from '../../src/domain/contract/schemas.js';

const scratch = mkdtempSync(join(tmpdir(), 'warden-labels-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function startOptions(args: string[]): Record<string, unknown> {
  let got: Record<string, unknown> | undefined;
  const program = buildProgram('start');
  program.commands
    .find((c) => c.name() === 'start')!
    .action((_id: string, o: Record<string, unknown>) => {
      got = o;
    });
  program.parse(['node', 'warden', 'start', 'a', '--task', 't', ...args]);
  return got!;
}

describe('warden start --label', () => {
  test('repeatable, over the config file; a bad one is a usage error naming it', () => {
    const o = startOptions(['--label', 'team=payments', '--label', 'env=ci']);
    expect(AgentSpecSchema.parse(buildSpec('a', { task: 't', ...o })).labels).toEqual({ team: 'payments', env: 'ci' });
    expect(buildSpec('a', { task: 't' }).labels).toBeUndefined();
    expect(() => buildSpec('a', { task: 't', label: ['team'] })).toThrow(UsageError);
    expect(() => buildSpec('a', { task: 't', label: ['team=pay ments'] })).toThrow(/--label label value "pay ments"/);
  });

  test('the config file: labels: maps onto AgentSpec.labels; a bad one names the key', () => {
    expect(specFromConfig(parseConfig('labels:\n  team: payments\n')).labels).toEqual({ team: 'payments' });
    expect(specFromConfig(parseConfig('safety:\n  group_report_interval: 10s\n')).safety).toEqual({ groupReportIntervalMs: 10_000 });
    expect(() => parseConfig('safety:\n  group_report_interval: 10ms\n')).toThrow(/group_report_interval/);
    expect(() => parseConfig('labels:\n  team: "a b"\n')).toThrow(/labels/);
    expect(
      AgentSpecSchema.safeParse({ agentId: 'a', task: 't', labels: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'])) }).success,
    ).toBe(false);
  });
});

describe("a project's labels are never taken", () => {
  test('untrusted: ignored, the user keeps their own', () => {
    const m = mergeUntrusted(parseConfig('labels:\n  team: other\n'), parseConfig('labels:\n  team: payments\n'));
    expect(m.cfg.labels).toEqual({ team: 'payments' });
    expect(m.ignored).toContain('labels');
  });

  test("trusted: still the user's labels, none of the project's", () => {
    const env = { HOME: join(scratch, 'home'), XDG_CONFIG_HOME: join(scratch, 'xdg') };
    mkdirSync(join(scratch, 'xdg', 'warden'), { recursive: true });
    const project = join(scratch, 'repo');
    mkdirSync(project, { recursive: true });
    const text = 'labels:\n  team: other\n  sneaky: yes\n';
    writeFileSync(join(project, 'warden.yaml'), text);
    writeTrustStore(withTrusted([], project, configDigest(text)), env);
    expect(sessionConfig(project, env).cfg?.labels).toBeUndefined();
    writeFileSync(join(scratch, 'xdg', 'warden', 'warden.yaml'), 'labels:\n  team: payments\n');
    expect(sessionConfig(project, env).cfg?.labels).toEqual({ team: 'payments' });
    expect(describeConfig(parseConfig(text))).toContain('labels: not taken from a project (only your own config and --label set them)');
  });
});
