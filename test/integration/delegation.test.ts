/**
 * Delegation (seed 002's parent–child contract) on a real dev server: children are child workflows
 * with a structured task spec; `tight` runs them one at a time (the second is `queued`, visibly);
 * a result that violates its JSON Schema fails the child; a grandchild spawn at depth 1 is refused;
 * a parent's budget covers its subtree; large results are stored content-addressed.
 */
import { WardenEvaluatorCostUsd } from '../../src/domain/contract/search-attributes.js';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { TaskSpecInput } from '../../src/domain/contract/schemas.js';
import { recordHistory } from '../helpers/histories.js';
import { eventually, useStack } from '../helpers/stack.js';
import { finalStatus } from '../helpers/agents.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const stack = useStack();

const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: true };
const task = (childId: string, result: unknown, extra: Partial<TaskSpecInput> = {}): TaskSpecInput => ({
  childId,
  objective: `Compute the answer for ${childId}.`,
  resultSchema: schema,
  definitionOfDone: 'the answer is computed and returned as JSON',
  toolAllowlist: ['shell'],
  driver: {
    kind: 'scripted',
    turns: [{ text: 'working', toolCalls: [{ name: 'shell', args: 'make answer', ok: true }] }, { text: 'TASK COMPLETE' }],
    turnDelayMs: 800,
    result,
  },
  ...extra,
});
const childStatus = (id: string) => stack.warden.status(id);
const result = (id: string) => finalStatus(stack.warden.handle(id));

test('tight: two children run one at a time (the second is queued); valid results come back inline', async () => {
  await stack.warden.start({ agentId: 'boss', task: 'Coordinate two computations.', supervisor: { idleAfterMs: 0 } });
  const a = await stack.warden.delegate('boss', task('a', { answer: 42 }));
  const b = await stack.warden.delegate('boss', task('b', { answer: 7, note: 'fine' }));
  expect(a).toEqual({ childAgentId: 'boss.a', workflowId: 'agent-boss.a', queued: false });
  expect(b).toMatchObject({ childAgentId: 'boss.b', queued: true });
  const queued = await childStatus('boss.b');
  expect(queued.state).toBe('queued');
  expect(queued).toMatchObject({ parent: 'boss', toolAllowlist: ['shell'], turns: 0 });
  const running = await childStatus('boss.a');
  expect(['spawning', 'running']).toContain(running.state);

  const doneA = await result('boss.a');
  expect(doneA).toMatchObject({ state: 'done', turns: 2, result: { inline: { answer: 42 } } });
  const doneB = await result('boss.b');
  expect(doneB).toMatchObject({ state: 'done', result: { inline: { answer: 7, note: 'fine' } } });
  expect(doneB.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['queued>spawning', 'spawning>running', 'running>done']);
  // b started only after a had finished.
  const aEnd = Date.parse(doneA.transitions.at(-1)!.at);
  const bStart = Date.parse(doneB.transitions[0]!.at);
  expect(bStart).toBeGreaterThanOrEqual(aEnd);

  const boss = await eventually(
    async () => {
      const st = await stack.warden.status('boss');
      return st.children.every((c) => c.state === 'done') ? st : null;
    },
    { what: 'parent sees both children done' },
  );
  expect(boss.children.map((c) => c.agentId)).toEqual(['boss.a', 'boss.b']);
  const subtree = await eventually(
    async () => {
      const rows = await stack.warden.list({ query: `WardenParent = 'boss'` });
      return rows.length === 2 ? rows : null;
    },
    { what: 'children listed by WardenParent' },
  );
  expect(subtree.map((r) => r.agentId).sort()).toEqual(['boss.a', 'boss.b']);
  // The parent started with the search attributes added later, so its children do too (and publish them).
  for (const id of ['boss.a', 'boss.b']) {
    const d = await stack.warden.handle(id).describe();
    expect(d.typedSearchAttributes.get(WardenEvaluatorCostUsd), id).toBe(0);
  }
  await stack.warden.signal('boss', 'abort', {});
  await result('boss');
  await recordHistory(stack.server.address, stack.warden.handle('boss'), 'delegation-tight');
});

test('a result that violates its schema is a failure, not a success', async () => {
  await stack.warden.start({ agentId: 'boss2', task: 'x', supervisor: { idleAfterMs: 0 } });
  await stack.warden.delegate('boss2', task('liar', { answer: 'forty-two' }));
  const failed = await result('boss2.liar');
  expect(failed.state).toBe('failed');
  expect(failed.stateReason).toMatch(/result does not match its schema: result\/answer must be number/);
  const boss = await eventually(
    async () => {
      const st = await stack.warden.status('boss2');
      return st.children[0]?.state === 'failed' ? st : null;
    },
    { what: 'parent sees the failure' },
  );
  expect(boss.children[0]!.reason).toMatch(/does not match its schema/);
  await stack.warden.signal('boss2', 'abort', {});
});

test('a grandchild spawn at depth 1 is refused; solo mode refuses delegation; bad specs name the field', async () => {
  await stack.warden.start({ agentId: 'boss3', task: 'x', supervisor: { idleAfterMs: 0 } });
  await stack.warden.delegate('boss3', task('slow', { answer: 1 }, { driver: { kind: 'scripted', turns: [{ text: 'thinking' }], turnDelayMs: 30_000 } }));
  await expect(stack.warden.delegate('boss3.slow', task('grandchild', { answer: 2 }))).rejects.toThrow(
    /spawn depth: agent boss3\.slow runs at depth 1 \(max 1\); it may not delegate/,
  );
  // The same delegation again (a retry) is the same child: idempotent by childId.
  expect(await stack.warden.delegate('boss3', task('slow', { answer: 3 }))).toMatchObject({ childAgentId: 'boss3.slow', queued: false });
  expect((await stack.warden.status('boss3')).children).toHaveLength(1);
  // Through a raw update with a new update id, the validator refuses a second child of the same id.
  await expect(stack.warden.handle('boss3').executeUpdate('delegate', { args: [task('slow', { answer: 3 })] })).rejects.toThrow();
  expect((await stack.warden.status('boss3')).refused).toBeDefined();
  await expect(stack.warden.delegate('boss3', { ...task('bad', {}), objective: '' })).rejects.toThrow(/objective/);

  await stack.warden.start({ agentId: 'loner', task: 'x', delegation: { mode: 'solo' }, supervisor: { idleAfterMs: 0 } });
  await expect(stack.warden.delegate('loner', task('c', { answer: 1 }))).rejects.toThrow(/mode solo/);

  // Aborting the parent stops its subtree.
  await stack.warden.signal('boss3', 'abort', { reason: 'enough' });
  const child = await result('boss3.slow');
  expect(child.state, child.stateReason ?? '').toBe('done');
  expect(child.stateReason).toMatch(/parent boss3: it ended failed/);
  await stack.warden.signal('loner', 'abort', {});
});

test("a parent's budget covers its subtree: the child's spend pauses the parent and stops the child", async () => {
  await stack.warden.start({ agentId: 'thrifty', task: 'x', budgets: { tokens: 500 }, supervisor: { idleAfterMs: 0 } });
  const turns = Array.from({ length: 10 }, (_, i) => ({ text: `step ${i}`, tokensIn: 200 }));
  await stack.warden.delegate('thrifty', task('spender', { answer: 1 }, { driver: { kind: 'scripted', turns, turnDelayMs: 300 } }));
  const parent = await eventually(
    async () => {
      const s = await stack.warden.status('thrifty');
      return s.state === 'paused-by-user' ? s : null;
    },
    { what: 'the parent paused at its budget' },
  );
  expect(parent.pauseReason).toMatch(/budget exhausted: tokens 600 of 500/);
  expect(parent.turns).toBe(0);
  const child = await result('thrifty.spender');
  expect(child.state, child.stateReason ?? '').toBe('done');
  expect(child.stateReason).toMatch(/parent thrifty: budget exhausted/);
  expect(child.turns).toBeLessThan(10);
  await stack.warden.control('thrifty', 'abort', { reason: 'test done' });
});

test('a large deliverable is stored content-addressed and referenced, not copied into history', async () => {
  const big = { answer: 1, report: 'x'.repeat(10_000) };
  await stack.warden.start({ agentId: 'boss4', task: 'x', supervisor: { idleAfterMs: 0 } });
  await stack.warden.delegate('boss4', task('writer', big));
  const done = await result('boss4.writer');
  expect(done.state).toBe('done');
  const ref = done.result!.ref!;
  const json = JSON.stringify(big);
  expect(ref.sha256).toBe(createHash('sha256').update(json).digest('hex'));
  expect(ref.bytes).toBe(Buffer.byteLength(json));
  expect(existsSync(ref.path)).toBe(true);
  expect(readFileSync(ref.path, 'utf8')).toBe(json);
  expect(done.result!.inline).toBeUndefined();
  await stack.warden.signal('boss4', 'abort', {});
});

test('a driven child that used a tool outside its allowlist: the call is recorded as refused and corrected in its next turn', async () => {
  await stack.warden.start({ agentId: 'boss5', task: 'x', supervisor: { idleAfterMs: 0 } });
  await stack.warden.delegate(
    'boss5',
    task(
      'rogue',
      { answer: 5 },
      {
        driver: {
          kind: 'scripted',
          turns: [{ text: 'cleaning up', toolCalls: [{ name: 'rm', args: '-rf build', ok: true }] }, { text: 'TASK COMPLETE' }],
          result: { answer: 5 },
        },
      },
    ),
  );
  const done = await result('boss5.rogue');
  expect(done.state).toBe('done');
  expect(done.refused.map((r) => r.reason)).toContain('tool call outside the allowlist: rm (allowed: shell)');
  expect(done.whispersDelivered).toBe(1);
  await stack.warden.signal('boss5', 'abort', {});
});

test('restart intensity: when a parent opens its circuit, its subtree is stopped', async () => {
  await stack.warden.start({
    agentId: 'fragile',
    task: 'x',
    // Slow to fail, so the child is started before the circuit opens.
    driver: { kind: 'command', command: ['sh', '-c', 'cat >/dev/null; sleep 1; echo "tool crashed" >&2; exit 1'] },
    safety: { maxRestarts: 1, restartWindowMs: 60_000 },
    supervisor: { idleAfterMs: 0 },
  });
  await stack.warden.delegate('fragile', task('worker', { answer: 1 }, { driver: { kind: 'scripted', turns: [{ text: 'long work' }], turnDelayMs: 60_000 } }));
  const parent = await result('fragile');
  expect(parent.state).toBe('failed');
  expect(parent.stateReason).toMatch(/^circuit open: 2 failed turns/);
  const child = await result('fragile.worker');
  expect(child.state).toBe('done');
  expect(child.stateReason).toMatch(/parent fragile: it ended failed/);
});

test("a child with verify: its result is held until warden's check passes; a failed check keeps it working", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-child-verify-'));
  // Fails the first time (and leaves ok.txt behind), passes from then on: deterministic, no race with the test.
  const command = "test -f ok.txt || { touch ok.txt; echo 'ok.txt missing'; exit 1; }";
  await stack.warden.start({ agentId: 'boss7', task: 'x', supervisor: { idleAfterMs: 0 } });
  await stack.warden.delegate('boss7', task('checked', { answer: 9 }, { verify: { command, cwd: dir } }));
  const child = await stack.warden.status('boss7.checked');
  expect(child.checksDone).toBe(true);
  const done = await result('boss7.checked');
  expect(done.state).toBe('done');
  expect(done.result).toEqual({ inline: { answer: 9 } });
  expect(done.lastVerification).toMatchObject({ command, passed: true, exitCode: 0 });
  // The first claim failed: the child got the VERIFY whisper and worked on (a third turn, at least).
  expect(done.turns).toBeGreaterThanOrEqual(3);
  expect(done.whispersDelivered).toBeGreaterThanOrEqual(1);
  const boss = await eventually(
    async () => {
      const st = await stack.warden.status('boss7');
      return st.children[0]?.state === 'done' ? st : null;
    },
    { what: 'parent sees the verified child done' },
  );
  expect(boss.children[0]!.agentId).toBe('boss7.checked');
  await stack.warden.signal('boss7', 'abort', {});
});

test('a child whose check never passes never delivers its result', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-child-verify-'));
  await stack.warden.start({ agentId: 'boss8', task: 'x', supervisor: { idleAfterMs: 0 } });
  await stack.warden.delegate('boss8', task('never', { answer: 1 }, { verify: { command: 'exit 3', cwd: dir } }));
  // Three false claims climb the ladder to escalation: the child is paused, its result not taken.
  const escalated = await eventually(
    async () => {
      const st = await stack.warden.status('boss8.never');
      return st.escalations > 0 && st.paused ? st : null;
    },
    { what: 'the child escalated after repeated false claims', timeoutMs: 120_000 },
  );
  expect(escalated.state).not.toBe('done');
  expect(escalated.result).toBeNull();
  expect(escalated.lastVerification).toMatchObject({ passed: false, exitCode: 3 });
  await stack.warden.signal('boss8', 'abort', {});
});
