/**
 * Signals as the workflow's handlers take them: each handler's steps (controls.ts `signal`,
 * `unknownSignal`, `cancellationRequested`; rails.ts `receiveChildSpend`; links.ts `applyLink`)
 * carried out by the same executor the shell uses (steps.ts `run`).
 */
import type { SignalName } from '../../src/domain/contract/schemas.js';
import type { AgentContext } from '../../src/domain/agent/context.js';
import * as controls from '../../src/domain/agent/controls.js';
import * as links from '../../src/domain/agent/links.js';
import * as rails from '../../src/domain/agent/rails.js';
import { run } from '../../src/domain/agent/steps.js';

export const signal = <N extends SignalName>(ctx: AgentContext, name: N, raw?: unknown): void => run(ctx, controls.signal(ctx, name, raw));
export const unknownSignal = (ctx: AgentContext, name: string): void => run(ctx, controls.unknownSignal(ctx, name));
export const cancellationRequested = (ctx: AgentContext): void => run(ctx, controls.cancellationRequested(ctx));
export const receiveChildSpend = (ctx: AgentContext, p: Parameters<typeof rails.receiveChildSpend>[1]): void => run(ctx, rails.receiveChildSpend(ctx, p));
export const applyLink = (ctx: AgentContext, raw: unknown) => run(ctx, links.applyLink(ctx, raw));
