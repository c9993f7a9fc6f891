/**
 * `blocked` on a real dev server: a driven agent (a real process through the `command` driver)
 * whose model is rate-limited for its first three calls. The agent shows `blocked` with the reason
 * and the retry time while it waits on a workflow timer, then runs again and finishes; three
 * rate-limited turns with `maxRestarts: 1` would have opened the circuit as ordinary failures.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { finalStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { ROOT, useStack } from '../helpers/stack.js';

const AGENT = join(ROOT, 'test/fixtures/rate-limited-agent.sh');
process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

describe('a rate-limited model blocks the agent', () => {
  const stack = useStack();

  test('blocked with the reason and retry time during the 429s, then running and done; restart intensity untouched', async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'warden-ratelimited-'));
    await stack.warden.start({
      agentId: 'rl-agent',
      task: 'finish despite the rate limit',
      driver: { kind: 'command', command: ['sh', AGENT, '3'] },
      safety: { maxRestarts: 1, restartWindowMs: 600_000 },
      driven: { workDir, killGraceMs: 2_000 },
    });
    // Poll the status: every blocked answer names the rate limit and when the turn is retried.
    const seen: AgentStatus[] = [];
    const handle = stack.warden.handle('rl-agent');
    let done = false;
    const final = finalStatus(handle).finally(() => (done = true));
    while (!done) {
      try {
        seen.push(await stack.warden.status('rl-agent'));
      } catch {
        /* the run may be between tasks; the next poll answers */
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    const end = await final;
    const blocked = seen.filter((s) => s.state === 'blocked');
    expect(blocked.length, `states seen: ${[...new Set(seen.map((s) => s.state))].join(', ')}`).toBeGreaterThan(0);
    for (const s of blocked) expect(s.stateReason).toMatch(/^model rate-limited \(agent command exited 75\); retrying at \d\d:\d\d:\d\d UTC \(attempt [123]\)$/);
    expect(new Set(blocked.map((s) => s.stateReason!.match(/attempt (\d)/)![1])).size).toBeGreaterThan(1);

    expect(end).toMatchObject({ state: 'done', turns: 1, restarts: 0 });
    expect(readFileSync(join(workDir, 'calls.log'), 'utf8').trim().split('\n')).toHaveLength(4);
    const moves = end.transitions.map((t) => `${t.from}->${t.to}`);
    expect(moves.filter((m) => m === 'running->blocked')).toHaveLength(3);
    expect(moves.filter((m) => m === 'blocked->running')).toHaveLength(3);
    expect(moves.at(-1)).toBe('running->done');
    expect(moves).not.toContain('running->failed');
    await recordHistory(stack.server.address, handle, 'driven-rate-limited-blocked');
  });
});
