/**
 * Action links, the workflow's side: `warden serve` checks a link's signature, agent, action and
 * expiry (src/serve/token.ts), then asks the agent with the `link` update. This file is what the
 * agent does with it:
 *
 * - the validator refuses a token id the agent has already acted on (a replay), an expired one, an
 *   action the agent cannot take now (resume an agent that is running, dismiss with nothing
 *   flagged) and a malformed request — before anything enters history, so a refused link changes
 *   nothing and stays unrecorded;
 * - the handler records the token id, then applies the same control as the signal of that name
 *   (controls.ts), and answers what happened.
 *
 * Why an update rather than the signals with a token field: the validator refuses a replay before
 * it enters history, and `warden serve` gets a synchronous answer to show the human.
 *
 * The ids acted on are carried state (`usedLinks`, across continue-as-new and worker crashes by
 * replay), bounded: an id is kept until its link expires (after that, `warden serve` refuses the
 * link as expired anyway), and at most MAX_USED_LINKS unexpired ones are kept — past that, links
 * are refused until some expire, rather than forgetting one that could then be replayed.
 */
import { z } from 'zod';
import { MAX_WHISPER_TEXT } from '../contract/limits.js';
import { shared } from '../contract/shared.js';
import { describeZodError } from '../contract/schemas.js';
import { isTerminal, transition } from '../contract/states.js';
import type { AgentStatus } from '../contract/status.js';
import { isUndecodable, undecodableReason } from '../contract/undecodable.js';
import type { AgentContext } from './context.js';
import { signal } from './controls.js';
import { dismissProblem } from './dismissal.js';
import { MAX_USED_LINKS, type UsedLink } from './link-state.js';
import type { CarriedState } from './state.js';

export const LinkRequestSchema = shared('agent/links:LinkRequestSchema', () =>
  z
    .object({
      action: z.enum(['resume', 'abort', 'dismiss', 'steer']),
      tokenId: z.string().regex(/^[A-Za-z0-9_-]{22}$/, 'tokenId: 22 base64url characters'),
      expiresAt: z.number().int().positive(),
      text: z.string().min(1).max(MAX_WHISPER_TEXT).optional(),
    })
    .strict()
    .refine((r) => r.action !== 'steer' || r.text !== undefined, { message: 'text: steering needs text', path: ['text'] }),
);
export type LinkRequest = z.output<typeof LinkRequestSchema>;

export interface LinkResult {
  action: LinkRequest['action'];
  /** The control took effect (false: the agent refused it, e.g. it ended in between). */
  applied: boolean;
  state: AgentStatus['state'];
  /** One line on what happened. */
  detail: string;
}

/** A refused link; its `name` becomes the update failure's type, which `warden serve` maps to a page. */
export class LinkRefused extends Error {
  constructor(
    override readonly name: 'LinkInvalid' | 'LinkUsed' | 'LinkExpired' | 'LinkNotApplicable' | 'LinkLimit',
    message: string,
  ) {
    super(message);
  }
}

/** The used ids whose links have not expired at `nowMs`. */
export const unexpired = (used: readonly UsedLink[], nowMs: number): UsedLink[] => used.filter((u) => u.until * 1000 > nowMs);

/** Why the agent, in state `s`, cannot take `action` now, or null. */
export function linkProblem(s: CarriedState, action: LinkRequest['action']): string | null {
  if (action === 'resume' || action === 'abort') {
    const r = transition(s.state, action);
    return r.ok ? null : `the agent is ${s.state}: nothing to ${action}`;
  }
  if (isTerminal(s.state)) return `the agent is ${s.state}`;
  return action === 'dismiss' ? dismissProblem(s) : null;
}

/** The update's validator: throws LinkRefused (the update is rejected, nothing enters history). */
export function validateLink(ctx: AgentContext, raw: unknown): void {
  const { s } = ctx.core;
  if (isUndecodable(raw)) throw new LinkRefused('LinkInvalid', `undecodable link request: ${undecodableReason(raw)}`);
  const r = LinkRequestSchema.safeParse(raw);
  if (!r.success) throw new LinkRefused('LinkInvalid', `invalid link request: ${describeZodError(r.error)}`);
  const req = r.data;
  const now = ctx.ports.now();
  if (s.usedLinks.some((u) => u.id === req.tokenId)) throw new LinkRefused('LinkUsed', 'this link was already used: a link works once');
  if (req.expiresAt * 1000 <= now) throw new LinkRefused('LinkExpired', 'this link has expired');
  if (unexpired(s.usedLinks, now).length >= MAX_USED_LINKS) {
    throw new LinkRefused('LinkLimit', `${MAX_USED_LINKS} links were used on this agent within their lifetime; use the warden CLI until some expire`);
  }
  const problem = linkProblem(s, req.action);
  if (problem) throw new LinkRefused('LinkNotApplicable', problem);
}

/** The update's handler: record the token id, apply the control, say what happened. Never throws. */
export function applyLink(ctx: AgentContext, raw: unknown): LinkResult {
  const { s } = ctx.core;
  const req = LinkRequestSchema.parse(raw); // the validator passed
  s.usedLinks = [...unexpired(s.usedLinks, ctx.ports.now()), { id: req.tokenId, until: req.expiresAt }];
  const before = { state: s.state, refused: s.refused, whispers: s.whisperSeq, dismissals: s.dismissals };
  ctx.ports.log.info('action link used', { agentId: ctx.core.spec.agentId, action: req.action, tokenId: req.tokenId });
  if (req.action === 'resume') signal(ctx, 'resume', { note: 'from an action link' });
  else if (req.action === 'abort') signal(ctx, 'abort', { reason: 'from an action link' });
  else if (req.action === 'dismiss') signal(ctx, 'dismiss', { note: 'from an action link' });
  else signal(ctx, 'steer', { text: req.text });
  const applied =
    req.action === 'steer' ? s.whisperSeq > before.whispers : req.action === 'dismiss' ? s.dismissals > before.dismissals : s.refused === before.refused;
  const detail = !applied
    ? `refused: ${s.refused.at(-1)?.reason ?? 'the agent did not take it'}`
    : req.action === 'steer'
      ? 'steering queued: the agent receives it at its next turn'
      : before.state === s.state
        ? `${req.action} applied (still ${s.state})`
        : `${req.action} applied: ${before.state} → ${s.state}`;
  return { action: req.action, applied, state: s.state, detail };
}
