/**
 * Continue-as-new forced early (dynamic config limit.historyCount.suggestContinueAsNew): the
 * ladder, the pause, pending whispers, counters and recent turn ids cross the boundary, and
 * signals and updates sent while the workflow switches runs are neither lost nor doubled.
 */
import { expect, test } from 'vitest';
import type { Whisper } from '../../src/domain/contract/schemas.js';
import { chatMessage, startChatServer } from '../fixtures/chat-server.js';
import { productiveTurns, reportWithEvaluations, spiralTurn } from '../helpers/agents.js';
import { recordHistory } from '../helpers/histories.js';
import { eventually, useStack } from '../helpers/stack.js';

const stack = useStack({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 60 } });

test('state, pending whispers and signals sent during the switch survive continue-as-new', async () => {
  const agentId = 'longlived';
  await stack.warden.start({ agentId, task: 'Make `npm run build` pass.' });
  const received: Whisper[] = [];
  const replies = await reportWithEvaluations(
    stack.warden,
    agentId,
    Array.from({ length: 15 }, (_, i) => spiralTurn(i + 1)),
  );
  for (const r of replies) received.push(...r.whispers);
  const escalated = await stack.warden.status(agentId);
  expect(escalated).toMatchObject({ state: 'awaiting-input', escalationStep: 3, escalations: 1, turns: 15, pendingWhispers: 1 });
  expect(escalated.runs).toBeGreaterThanOrEqual(2); // the ladder itself already crossed a boundary

  // A barrage of signals and updates, racing the continue-as-new switches.
  const steers = Array.from({ length: 25 }, (_, i) => `steer-${i + 1}`);
  const signalling = (async () => {
    for (const text of steers) await stack.warden.signal(agentId, 'steer', { text });
  })();
  const reporting = (async () => {
    for (let i = 1; i <= 25; i++) {
      const r = await stack.warden.reportTurn(agentId, { id: `paused-${i}`, text: `waiting for a human (${i})` });
      expect(r.paused).toBe(true);
      received.push(...r.whispers);
    }
  })();
  await Promise.all([signalling, reporting]);
  const final = await stack.warden.reportTurn(agentId, { id: 'last', text: 'still waiting' });
  received.push(...final.whispers);
  received.push(...(await stack.warden.pendingWhispers(agentId)));

  const s = await stack.warden.status(agentId);
  expect(s.runs).toBeGreaterThanOrEqual(3);
  expect(s).toMatchObject({ state: 'awaiting-input', paused: true, escalationStep: 3, escalations: 1, turns: 41 });
  expect(s.evaluations).toMatchObject({ total: 3, flagged: 3 });
  expect(s.tokens.in).toBe(15_000);

  // Every whisper exactly once: two corrections, the escalation, and all 25 steers in order.
  const ids = received.map((w) => w.id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(received.filter((w) => w.type === 'CORRECTION')).toHaveLength(2);
  expect(received.filter((w) => w.type === 'ESCALATION')).toHaveLength(1);
  expect(received.filter((w) => w.type === 'STEERING').map((w) => w.text)).toEqual(steers);

  // Turn ids from an earlier run are still recognised.
  const dup = await stack.warden.reportTurn(agentId, spiralTurn(1));
  expect(dup).toMatchObject({ accepted: false, duplicate: true });
  expect((await stack.warden.status(agentId)).turns).toBe(41);

  await stack.warden.signal(agentId, 'resume', {});
  await eventually(async () => (await stack.warden.status(agentId)).state === 'running');
  const info = await stack.warden.handle(agentId).describe();
  expect(info.status.name).toBe('RUNNING');
  await recordHistory(stack.server.address, stack.warden.handle(agentId), 'continue-as-new-carried');
  await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
});

test('the evaluator spend is carried across continue-as-new', async () => {
  // A tiered evaluator that samples every OK window: one model call per evaluation (each answer: 110 tokens).
  const chat = await startChatServer({ script: () => chatMessage('{"verdict":"OK"}') });
  try {
    const agentId = 'tiered-longlived';
    await stack.warden.start({
      agentId,
      task: 'Refactor the modules one by one.',
      evaluator: { kind: 'tiered', model: { kind: 'openai', baseUrl: chat.baseUrl }, sampleOk: 1 },
      supervisor: { evalInterval: 5, windowSize: 5, idleAfterMs: 0 },
    });
    await reportWithEvaluations(stack.warden, agentId, productiveTurns(1, 20));
    const s = await stack.warden.status(agentId);
    expect(s.runs).toBeGreaterThanOrEqual(2);
    expect(chat.requests).toHaveLength(4);
    expect(s.evaluatorSpend).toEqual({ calls: 4, failed: 0, tokens: { in: 400, out: 40, total: 440 }, costUsd: 0, decided: { heuristic: 0, model: 4 } });
    await stack.warden.signal(agentId, 'abort', { reason: 'test over' });
  } finally {
    await chat.close();
  }
});
