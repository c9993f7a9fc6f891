/**
 * Compaction, the ladder's last resort (supervisor.lastResort: compact), on a real dev server:
 *
 *  - an agent that ignores two whispers is compacted instead of escalated: `compacting` while its
 *    compaction turn runs — a fresh context (no session) whose input is warden's handoff — then
 *    `running` in that context; the same problem after it escalates as before;
 *  - an agent that changes course after the compaction is not escalated: its ladder resets and it
 *    ends done;
 *  - a worker SIGKILLed mid-compaction: the compaction turn is retried on a new worker with the same
 *    handoff, finishes once, and the agent runs on in its fresh context.
 *
 * The first two are workflow logic: their driven turns come from a fake `runTurn` activity that
 * plays test/fixtures/agent.py's script in process (`fakeAgent` below), and each compaction turn
 * is held until the test has seen `compacting`. The SIGKILL scenario stays real: worker processes
 * and the Python agent through the `command` driver.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { RunTurnInput, TurnResult } from '../../src/domain/contract/activity-types.js';
import { HANDOFF_HEADER } from '../../src/domain/judgement/handoff.js';
import type { AgentSpecInput } from '../../src/domain/contract/schemas.js';
import type { AgentStatus } from '../../src/domain/contract/status.js';
import { finalStatus, reportWithEvaluations, spiralTurn, waitForEvaluations, waitForStatus } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { running } from '../helpers/procs.js';
import { ROOT, eventually, useStack, useWorkerProcesses, type Stack } from '../helpers/stack.js';

const AGENT = join(ROOT, 'test/fixtures/agent.py');
process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));

interface Input {
  turn: number;
  input: string;
  pid: number;
  compact: boolean;
  session: Record<string, unknown> | null;
}
const inputs = (dir: string): Input[] =>
  existsSync(join(dir, 'inputs.log'))
    ? readFileSync(join(dir, 'inputs.log'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Input)
    : [];

function pythonAgent(agentId: string, task: string): AgentSpecInput & { driven: { workDir: string } } {
  const workDir = mkdtempSync(join(tmpdir(), `warden-${agentId}-`));
  return {
    agentId,
    task,
    driver: { kind: 'command', command: ['python3', AGENT] },
    supervisor: { evalInterval: 3, idleAfterMs: 0, lastResort: 'compact' },
    driven: { workDir, killGraceMs: 2_000 },
  };
}

const edges = (s: AgentStatus) => s.transitions.map((t) => `${t.from}>${t.to}`);

/** What the fake agent received, turn by turn, by agent id (agent.py's inputs.log). */
const received = new Map<string, Input[]>();
/** A compaction turn in progress, by agent id: resolved by the test once it has seen `compacting`. */
const compactionHeld = new Map<string, () => void>();
const releaseCompaction = (agentId: string) => {
  const release = compactionHeld.get(agentId);
  if (!release) throw new Error(`no compaction turn of ${agentId} is running`);
  release();
};

/**
 * agent.py's `spiral` and `spiral learns` scripts as a fake `runTurn` activity: the same turns,
 * the same session bookkeeping (a session starts where the agent gets none: its first turn or a
 * compaction; `context` is the turn number that started it), every input recorded. A compaction
 * turn waits for `releaseCompaction` instead of agent.py's `compact-delay:N` seconds.
 */
async function fakeAgent(req: RunTurnInput): Promise<TurnResult> {
  const log = received.get(req.agentId) ?? [];
  received.set(req.agentId, log);
  log.push({ turn: req.turnNumber, input: req.input, pid: process.pid, compact: req.compact !== undefined, session: req.session });
  const session: Record<string, string | number | boolean | null> = { ...(req.session ?? {}) };
  session.turns = Number(session.turns ?? 0) + 1;
  session.id ??= `fake-${req.agentId}`;
  session.context ??= req.turnNumber;
  if (req.compact) {
    session.compacted = true;
    await new Promise<void>((resolve) => compactionHeld.set(req.agentId, resolve));
    compactionHeld.delete(req.agentId);
  }
  const id = `${req.agentId}-turn-${req.turnNumber}`;
  if (req.task.includes('learns') && session.compacted) {
    const fresh = req.turnNumber - Number(session.context) + 1;
    const done = fresh >= 4;
    const text = done ? `${req.doneMarker}: fixed the cause` : `read the error; fixing its cause, step ${fresh}`;
    return { turn: { id, text, toolCalls: [{ name: 'shell', args: `cat src/step${fresh}.ts`, result: 'ok', ok: true }] }, session, done };
  }
  const turn = {
    id,
    text: 'The build failed again, retrying the build.',
    toolCalls: [{ name: 'shell', args: 'npm run build', result: 'error: build failed', ok: false }],
    tokensIn: 100,
    tokensOut: 10,
  };
  return { turn, session, done: false };
}

describe('with an in-process worker and a fake agent (the runTurn activity)', () => {
  const stack: Stack = useStack({}, { runTurn: fakeAgent });
  const statusWhere = (agentId: string, pred: (s: AgentStatus) => boolean, what: string) => waitForStatus(stack.warden, agentId, pred, what, 90_000);

  test('an agent that ignores two whispers is compacted (a fresh context holding the handoff), then escalated because the problem persists', async () => {
    const spec = pythonAgent('cmp-spiral', 'spiral make npm run build pass (task C-311)');
    await stack.warden.start(spec);

    // Evaluated after turns 3, 6 and 9: two whispers, then the compaction instead of an escalation.
    const compacting = await statusWhere('cmp-spiral', (s) => s.state === 'compacting' && compactionHeld.has('cmp-spiral'), 'compacting');
    expect(compacting).toMatchObject({ escalationStep: 3, escalations: 0, compactions: 1, paused: false, lastResort: 'compact', turns: 9 });
    expect(compacting.lastCompaction).toMatchObject({ done: false, doneAt: null });
    expect(compacting.stateReason).toMatch(/^compacting \(last resort before escalation\): SPIRALING/);
    expect(compacting.turnRunning).toBe(true);
    const handoff = compacting.lastCompaction!.handoff;
    releaseCompaction('cmp-spiral');

    // Its fresh context's first turn comes back: running again, then judged on what it does there.
    const escalated = await statusWhere('cmp-spiral', (s) => s.state === 'awaiting-input', 'escalation after the compaction');
    expect(escalated).toMatchObject({ escalationStep: 3, escalations: 1, compactions: 1, turns: 12, paused: true });
    expect(escalated.lastCompaction).toMatchObject({ done: true, handoff });
    expect(edges(escalated)).toEqual(['spawning>running', 'running>compacting', 'compacting>running', 'running>awaiting-input']);
    expect(escalated.pauseReason).toMatch(/escalated: SPIRALING/);

    const seen = received.get('cmp-spiral')!;
    expect(seen.map((x) => x.turn)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(seen.filter((x) => x.compact).map((x) => x.turn)).toEqual([10]);
    // The compaction turn: no session (a fresh context) and the handoff as its whole input.
    const c = seen[9]!;
    expect(c.session).toBeNull();
    expect(c.input).toBe(handoff);
    expect(c.input.startsWith(HANDOFF_HEADER)).toBe(true);
    expect(c.input).toContain('Your task:\nspiral make npm run build pass (task C-311)');
    expect(c.input).toMatch(/turns 1–9, 9 times the same: said "The build failed again, retrying the build\.", ran shell npm run build \(failed\)/);
    expect(c.input).toMatch(
      /Corrections you were given and did not act on:\n- \[CORRECTION\] You have run the same failing call 3 times[\s\S]*\n- \[CORRECTION\] Warning 2 of 2/,
    );
    expect(c.input).toMatch(/What you must do next:\n[\s\S]*change your approach/);
    // Before it, one session all along; after it, the fresh one the compaction turn started.
    expect(seen[8]!.session).toMatchObject({ context: 1, turns: 8 });
    expect(seen[10]!.session).toMatchObject({ context: 10, turns: 1, compacted: true });
    expect(seen[10]!.input).toContain('Continue working on your task.');

    // The escalation after a compaction says so; it reaches the agent after a resume.
    const whispers = await stack.warden.pendingWhispers('cmp-spiral');
    expect(whispers.map((w) => w.type)).toEqual(['ESCALATION']);
    expect(whispers[0]!.text).toMatch(/Still no progress after 2 warnings and a fresh context/);

    await stack.warden.signal('cmp-spiral', 'abort', { reason: 'test over' });
    const final = await finalStatus(stack.warden.handle('cmp-spiral'));
    expect(final.state).toBe('failed');
    await recordHistory(stack.server.address, stack.warden.handle('cmp-spiral'), 'compaction-spiral-escalated');
  });

  test('an agent that changes course in its fresh context is not escalated: the ladder resets and it ends done', async () => {
    const spec = pythonAgent('cmp-learns', 'spiral learns make npm run build pass');
    await stack.warden.start(spec);
    await statusWhere('cmp-learns', (s) => s.state === 'compacting' && compactionHeld.has('cmp-learns'), 'compacting');
    releaseCompaction('cmp-learns');
    const final = await finalStatus(stack.warden.handle('cmp-learns'));
    expect(final).toMatchObject({ state: 'done', escalations: 0, compactions: 1, escalationStep: 0, turns: 13 });
    expect(final.lastVerdict).toMatchObject({ kind: 'OK' }); // judged on turns 10–12: the fresh context
    expect(edges(final)).toEqual(['spawning>running', 'running>compacting', 'compacting>running', 'running>done']);
    const seen = received.get('cmp-learns')!;
    expect(seen.filter((x) => x.compact).map((x) => x.turn)).toEqual([10]);
    expect(seen.map((x) => x.turn)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });
});

describe('an agent that reports its own turns', () => {
  const stack: Stack = useStack();

  test('the reply carries the handoff (again for a re-sent report); the next turn it reports is its fresh context first; the same problem there escalates', async () => {
    const agentId = 'cmp-reported';
    await stack.warden.start({ agentId, task: 'Make `npm run build` pass.', supervisor: { idleAfterMs: 0, lastResort: 'compact' } });
    // Evaluated after turns 5, 10 and 15: two whispers, then the compaction.
    await reportWithEvaluations(
      stack.warden,
      agentId,
      Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
    );
    const s = await stack.warden.status(agentId);
    expect(s).toMatchObject({ state: 'compacting', compactions: 1, escalations: 0, turns: 15, pendingWhispers: 0 });
    const handoff = s.lastCompaction!.handoff;
    expect(handoff).toMatch(/turns 1–15, 15 times the same/);

    const carrying = await stack.warden.reportTurn(agentId, spiralTurn(16));
    expect(carrying).toMatchObject({ accepted: true, state: 'compacting', compact: { handoff } });
    // A re-sent report (same id) gets the same answer (Temporal's stored update outcome, or the workflow's recent ids).
    const again = await stack.warden.reportTurn(agentId, spiralTurn(16));
    expect(again).toMatchObject({ state: 'compacting', compact: { handoff } });
    expect((await stack.warden.status(agentId)).turns).toBe(16);
    const fresh = await stack.warden.reportTurn(agentId, { id: 'fresh-1', text: 'Starting over from the handoff: reading the TS2307 error.' });
    expect(fresh).toMatchObject({ accepted: true, state: 'running' });
    expect(fresh.compact).toBeUndefined();

    // The same spiral in the fresh context: judged on turns 17–21 only, and escalated.
    for (let i = 17; i <= 20; i++) await stack.warden.reportTurn(agentId, spiralTurn(i));
    await waitForEvaluations(stack.warden, agentId, 4);
    const escalated = await waitForStatus(stack.warden, agentId, (x) => x.state === 'awaiting-input', 'escalation after the compaction');
    expect(escalated).toMatchObject({ escalations: 1, compactions: 1, turns: 21, lastCompaction: { done: true, handoff } });
    expect(edges(escalated)).toEqual(['spawning>running', 'running>compacting', 'compacting>running', 'running>awaiting-input']);
    await stack.warden.signal(agentId, 'abort', {});
    await finalStatus(stack.warden.handle(agentId));
  });
});

describe('a worker SIGKILLed in the middle of the compaction', () => {
  const stack = useWorkerProcesses({ WARDEN_HOME: process.env.WARDEN_HOME! });

  test('the compaction turn is retried on a new worker with the same handoff, finishes once, and the agent runs on in its fresh context', async () => {
    // The first attempt of the compaction turn is a quiet 30 s: the worker dies under it.
    const spec = {
      ...pythonAgent('cmp-crash', 'spiral learns compact-quiet:30 make npm run build pass'),
      driven: { workDir: '', killGraceMs: 2_000, heartbeatTimeoutMs: 3_000 },
    };
    spec.driven.workDir = mkdtempSync(join(tmpdir(), 'warden-cmp-crash-'));
    let worker = stack.spawnWorker();
    await stack.warden.start(spec);
    const first = await eventually(async () => inputs(spec.driven.workDir).find((x) => x.compact), { what: 'the compaction turn started', timeoutMs: 120_000 });
    const during = await stack.warden.status('cmp-crash');
    expect(during).toMatchObject({ state: 'compacting', turnRunning: true, compactions: 1 });
    await stack.kill(worker);

    worker = stack.spawnWorker();
    const final = await finalStatus(stack.warden.handle('cmp-crash'));
    const attempts = inputs(spec.driven.workDir).filter((x) => x.compact);
    // Retried once (the dead worker's process killed first), with exactly the same input: nothing lost, nothing run twice.
    expect(attempts).toHaveLength(2);
    expect(attempts[1]!.turn).toBe(first.turn);
    expect(attempts[1]!.input).toBe(first.input);
    expect(attempts[1]!.session).toBeNull();
    expect(running(first.pid)).toBe(false);
    expect(final).toMatchObject({ state: 'done', compactions: 1, escalations: 0, turns: 13 });
    expect(final.lastCompaction).toMatchObject({ done: true, handoff: first.input });
    expect(edges(final).filter((e) => e.includes('compacting'))).toEqual(['running>compacting', 'compacting>running']);
    // The turns after it run in the session the retried compaction turn started.
    const after = inputs(spec.driven.workDir).filter((x) => x.turn > first.turn);
    expect(after.map((x) => x.session?.context)).toEqual([first.turn, first.turn, first.turn]);
    await recordHistory(stack.server.address, stack.warden.handle('cmp-crash'), 'compaction-worker-sigkill');
    await stack.kill(worker);
  });
});
