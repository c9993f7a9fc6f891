/**
 * Byte budgets inside the core: nothing an agent sends may grow the window, an evaluation's input
 * or the continue-as-new input near the server's 2 MB payload limit (src/domain/contract/limits.ts says
 * why each number is what it is). The oldest detail goes first, and a marker says what went.
 */
import { CARRIED_STATE_MAX_BYTES, WINDOW_MAX_BYTES, jsonBytes } from '../contract/limits.js';
import { capWindow, checkCarriedBudget } from '../contract/window-budget.js';
import type { Turn } from '../contract/schemas.js';
import type { AgentContext } from './context.js';
import type { CarriedState } from './state.js';
import { capCase } from '../judgement/cases.js';

/** The window after a new turn: the last `size` turns, within WINDOW_MAX_BYTES. */
export function boundedWindow(turns: Turn[], maxBytes = WINDOW_MAX_BYTES): Turn[] {
  return capWindow(turns, maxBytes).turns;
}

/**
 * What continue-as-new carries: the state as it is when it fits CARRIED_STATE_MAX_BYTES; otherwise
 * queued evaluations, the window and the remembered flagged windows (cases) are squeezed (older detail dropped) until it does, and the
 * squeeze is logged. The agent itself never notices.
 */
export function carriedForContinueAsNew(ctx: AgentContext, specInput: unknown): CarriedState {
  const { s, spec } = ctx.core;
  // The new run starts with this run's search attributes (the server copies them, not the details text).
  const { details: _details, ...published } = ctx.core.run.published;
  const carried: CarriedState = { ...s, publishedAtContinue: published };
  if (!checkCarriedBudget(specInput, carried)) return carried;
  const before = jsonBytes(carried);
  for (const share of [4, 8, 16, 64]) {
    carried.evalQueue = s.evalQueue.map((j) => ({ ...j, turns: boundedWindow(j.turns, Math.floor(CARRIED_STATE_MAX_BYTES / share)) }));
    carried.window = boundedWindow(s.window, Math.floor(CARRIED_STATE_MAX_BYTES / (share / 2)));
    // The remembered flagged windows share what a quarter of the budget leaves.
    carried.cases = s.cases.map((c) => capCase(c, Math.floor(CARRIED_STATE_MAX_BYTES / (share * 4 * Math.max(1, s.cases.length)))));
    if (!checkCarriedBudget(specInput, carried)) break;
  }
  ctx.ports.log.warn('carried state over its byte budget: older detail dropped before continue-as-new', {
    agentId: spec.agentId,
    bytesBefore: before,
    bytesAfter: jsonBytes(carried),
    limit: CARRIED_STATE_MAX_BYTES,
  });
  return carried;
}
