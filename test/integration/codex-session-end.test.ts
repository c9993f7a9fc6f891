/**
 * A codex session that ends, with the real `codex` binary (0.169) against the scripted Responses
 * API, hooked by `warden install codex` (auto-start, no `warden start`): codex runs the SessionEnd
 * hook when `codex exec` exits (reason `other`), so the agent gets a deadline
 * (`supervisor.sessionEndGraceMs`); `codex exec resume` continues the same session — its first
 * prompt cancels the deadline — and when that run ends too and nothing more comes, the agent ends
 * `done`. Codex allows a SessionEnd hook 3 s, which is what install gives it.
 */
import { execa } from 'execa';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { message, startModelServer } from '../fixtures/model-server.js';
import { waitForStatus } from '../helpers/agents.js';
import { codexExecArgs, execCodex, offlineCodexEnv } from '../helpers/codex.js';
import { cmdline, processesWithEnv } from '../helpers/procs.js';
import { ROOT, cleanup, eventually, useStack } from '../helpers/stack.js';
import { freePort } from '../../src/devserver/ports.js';

const stack = useStack();
const WARDEN = join(ROOT, 'dist/src/cli/main.js');
const scratch = mkdtempSync(join(tmpdir(), 'warden-cx-end-'));
afterAll(() => {
  // The hook endpoint the session's first hook started (detached): found by this test's HOME.
  for (const pid of processesWithEnv(`HOME=${join(scratch, 'home')}`)) if (cmdline(pid).includes('serve')) process.kill(pid, 'SIGKILL');
  cleanup(scratch);
});

test('codex exec ends its session: a deadline; exec resume cancels it; the last end ends the agent done', async () => {
  const work = join(scratch, 'cxend');
  const codexHome = join(scratch, 'codex-home');
  const home = join(scratch, 'home');
  for (const d of [work, codexHome, home]) mkdirSync(d, { recursive: true });
  writeFileSync(join(work, 'warden.yaml'), 'supervisor:\n  eval_interval: 1000\n  idle_after: 0\n  session_end_grace: 30s\n');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, CODEX_HOME: codexHome, WARDEN_CACHE_DIR: join(home, 'cache') };
  // The hooks' endpoint on a port of this test's own (a `warden serve` their first hook starts).
  const endpoint = `127.0.0.1:${await freePort()}`;
  const inst = await execa(process.execPath, [WARDEN, 'install', 'codex', '--user', '--endpoint', endpoint], {
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  expect(inst.exitCode, inst.stderr).toBe(0);
  // The project's warden.yaml configures its sessions once the user trusts it.
  const trust = await execa(process.execPath, [WARDEN, 'trust', work], { env, extendEnv: false, reject: false, stdin: 'ignore' });
  expect(trust.exitCode, trust.stderr).toBe(0);
  expect(JSON.parse(readFileSync(join(codexHome, 'hooks.json'), 'utf8')).hooks.SessionEnd).toEqual([
    { hooks: [{ type: 'command', command: expect.stringMatching(/(?:forward\.js|warden-hook) codex$/), timeout: 3 }] },
  ]);

  let agentId = '';
  const seenInResumedRun: Array<{ state: string; sessionEndsAt?: string }> = [];
  const model = await startModelServer({
    script: async () => {
      if (!agentId) return message('First answer.');
      // The resumed run's request: its prompt hook has already told warden the session goes on.
      const s = await stack.warden.status(agentId);
      seenInResumedRun.push({ state: s.state, ...(s.sessionEndsAt ? { sessionEndsAt: s.sessionEndsAt } : {}) });
      return message('Second answer.');
    },
  });
  try {
    const args = codexExecArgs(model, work);
    const codexEnv = offlineCodexEnv(home, codexHome, {
      WARDEN_CACHE_DIR: env.WARDEN_CACHE_DIR,
      TEMPORAL_ADDRESS: stack.server.address,
      TEMPORAL_NAMESPACE: stack.server.namespace,
    });
    const run = (more: string[]) => execCodex([...args, ...more], { cwd: work, env: codexEnv });

    const first = await run(['First question.']);
    expect(first.exitCode, String(first.all)).toBe(0);
    expect(String(first.all), 'install gives SessionEnd no more than codex allows').not.toMatch(/clamping SessionEnd hook timeout/);
    const thread = /"thread_id":"([^"]+)"/.exec(String(first.stdout))?.[1];
    expect(thread, String(first.all)).toMatch(/^[0-9a-f-]{36}$/);
    agentId = `cxend-${thread!.replace(/-/g, '').slice(-12)}`;
    // The hook ran before codex exited: the agent knows its session ended.
    const ended = await waitForStatus(stack.warden, agentId, (s) => s.sessionEndsAt !== undefined || s.state !== 'running', 'a session deadline');
    expect(ended.state).toBe('running');
    expect(ended.sessionEndsAt, 'codex exec ended the session').toBeDefined();
    expect(ended.turns).toBe(1);

    const second = await run(['resume', thread!, 'Second question.']);
    expect(second.exitCode, String(second.all)).toBe(0);
    expect(seenInResumedRun, 'the resumed session cancelled the deadline before the model answered').toEqual([{ state: 'running' }]);
    // The same agent: one per session.
    const mine = (await stack.warden.list({ limit: 1000 })).filter((a) => a.agentId.startsWith('cxend-'));
    expect(mine.map((a) => a.agentId)).toEqual([agentId]);

    // This run ended the session again; nothing more comes, so the agent ends done after the grace period.
    const done = await eventually(
      async () => {
        const s = await stack.warden.status(agentId);
        return s.state === 'done' ? s : null;
      },
      { what: `${agentId} done after its session ended`, timeoutMs: 180_000 },
    );
    expect(done.stateReason).toMatch(/its session ended \(other\) and did not resume within 30 s/);
    expect(done.turns).toBe(2);
  } finally {
    await model.close();
  }
}, 300_000);
