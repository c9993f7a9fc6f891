/**
 * Action links, the workflow's side: `warden serve` checks a link's signature, agent, action and
 * expiry (src/serve/token.ts), then asks the agent with the `link` update. This file is what the
 * agent does with it:
 *
 * - the validator refuses a token id the agent has already acted on (a replay), an expired one, an
 *   action the agent cannot take now (resume an agent that is running, dismiss with nothing
 *   flagged) and a malformed request — before anything enters history, so a refused link changes
 *   nothing and stays unrecorded;
 * - an escalation's links answer that escalation and no other: each carries the escalation's number
 *   (status's `escalations` count when it escalated) and the id of its finding, and is refused
 *   unless the agent still waits on that very escalation — not once a human answered it (resume,
 *   dismiss or abort from the CLI, IRC, Temporal or another link), nor after it escalated again.
 *   Once one link of an escalation is used, its siblings (the other actions issued with it) are
 *   void too: a steer from a link answers the escalation as much as a resume does;
 * - the handler records the token id and the escalation, then applies the same control as the
 *   signal of that name (controls.ts), and answers what happened.
 *
 * Why an update rather than the signals with a token field: the validator refuses a replay before
 * it enters history, and `warden serve` gets a synchronous answer to show the human.
 *
 * The ids acted on are carried state (`usedLinks`, across continue-as-new and worker crashes by
 * replay), bounded: an id is kept until its link expires (after that, `warden serve` refuses the
 * link as expired anyway), and at most MAX_USED_LINKS unexpired ones are kept — past that, links
 * are refused until some expire, rather than forgetting one that could then be replayed. So is the
 * newest escalation a link acted on (`linkedEscalation`, one number).
 *
 * A request without `escalation` (a link from a warden that did not bind links to escalations)
 * passes the schema, so histories that recorded one still replay, but the validator refuses it.
 */
import { LinkRequestSchema, type LinkRequest } from '../contract/links.js';
import { describeZodError } from '../contract/schemas.js';
import { isTerminal, transition } from '../contract/states.js';
import type { AgentStatus } from '../contract/status.js';
import { isUndecodable, undecodableReason } from '../contract/undecodable.js';
import type { AgentContext } from './context.js';
import { signal } from './controls.js';
import type { Steps } from './steps.js';
import { findingId } from '../judgement/finding.js';
import { dismissProblem, lastFlagged } from './dismissal.js';
import { MAX_USED_LINKS, recordLinkUsed, type UsedLink } from './link-state.js';
import type { CarriedView } from './state.js';

export { LinkRequestSchema, type LinkRequest } from '../contract/links.js';

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
    override readonly name: 'LinkInvalid' | 'LinkUsed' | 'LinkExpired' | 'LinkNotApplicable' | 'LinkLimit' | 'LinkAnswered',
    message: string,
  ) {
    super(message);
  }
}

/** The used ids whose links have not expired at `nowMs`. */
export const unexpired = (used: readonly UsedLink[], nowMs: number): UsedLink[] => used.filter((u) => u.until * 1000 > nowMs);

/** Why the agent, in state `s`, cannot take `action` now, or null. */
export function linkProblem(s: CarriedView, action: LinkRequest['action']): string | null {
  if (action === 'resume' || action === 'abort' || action === 'pause') {
    const r = transition(s.state, action);
    return r.ok ? null : `the agent is ${s.state}: nothing to ${action}`;
  }
  if (isTerminal(s.state)) return `the agent is ${s.state}`;
  return action === 'dismiss' ? dismissProblem(s) : null;
}

/** What `warden serve` and the validator need to know of the agent's escalation (the `linkEscalation` query). */
export interface EscalationView {
  /** Escalations so far (status's `escalations`): the number of the newest. */
  escalations: number;
  /** The agent waits on that escalation: no human has answered it yet. */
  open: boolean;
  /** The newest escalation a link acted on (0: none). */
  linked: number;
  state: AgentStatus['state'];
  /** The finding the newest escalation was raised for (null: none known). Agent-influenced text. */
  finding: { id: string; pattern: string | null; message: string } | null;
}

/** The escalation view of state `s`. */
export function escalationView(s: CarriedView): EscalationView {
  const escalated = [...s.cases].reverse().find((c) => c.escalated);
  const flagged = escalated ? { verdict: escalated.verdict, signature: escalated.signature } : lastFlagged(s);
  return {
    escalations: s.ladder.escalations,
    open: s.state === 'awaiting-input' && s.awaitingCause === 'escalation',
    linked: s.linkedEscalation ?? 0,
    state: s.state,
    finding: flagged ? { id: findingId(flagged.signature), pattern: flagged.verdict.pattern ?? null, message: flagged.verdict.message } : null,
  };
}

/**
 * Why a link issued for escalation `claim.escalation` (finding `claim.finding`) cannot act now, or
 * null: it acts only while the agent waits on that very escalation, and only once per escalation.
 * A link of another alert (escalation 0) is not bound to one.
 */
export function escalationProblem(
  view: EscalationView,
  claim: { escalation: number; finding?: string | null | undefined },
): { kind: 'LinkUsed' | 'LinkAnswered'; message: string } | null {
  const n = claim.escalation;
  if (n === 0) return null;
  if (view.linked >= n)
    return {
      kind: 'LinkUsed',
      message: `a link of escalation #${n} was already used: once one of an escalation's links is used, the others stop working`,
    };
  if (n < view.escalations)
    return {
      kind: 'LinkAnswered',
      message: `this link is for escalation #${n}, and the agent has escalated again since (#${view.escalations}): use the links of the newest notification`,
    };
  if (n > view.escalations || !view.open) return { kind: 'LinkAnswered', message: `escalation #${n} was already answered (the agent is ${view.state})` };
  if (view.finding && claim.finding && view.finding.id !== claim.finding)
    return { kind: 'LinkAnswered', message: `this link is for another finding than the one escalation #${n} waits on` };
  return null;
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
  if (req.escalation === undefined)
    throw new LinkRefused(
      'LinkInvalid',
      'this link does not say which escalation it answers (an older warden issued it): use the newest notification or the warden CLI',
    );
  if (unexpired(s.usedLinks, now).length >= MAX_USED_LINKS) {
    throw new LinkRefused('LinkLimit', `${MAX_USED_LINKS} links were used on this agent within their lifetime; use the warden CLI until some expire`);
  }
  const answered = escalationProblem(escalationView(s), { escalation: req.escalation, finding: req.finding });
  if (answered) throw new LinkRefused(answered.kind, answered.message);
  const problem = linkProblem(s, req.action);
  if (problem) throw new LinkRefused('LinkNotApplicable', problem);
}

/** The update's handler: record the token id, yield the control's steps (controls.ts), say what happened. Never throws. */
export function* applyLink(ctx: AgentContext, raw: unknown): Steps<LinkResult> {
  const { s } = ctx.core;
  const req = LinkRequestSchema.parse(raw); // the validator passed
  // Its siblings are void from now on, whatever the control does.
  recordLinkUsed(s, [...unexpired(s.usedLinks, ctx.ports.now()), { id: req.tokenId, until: req.expiresAt }], req.escalation);
  const before = { state: s.state, refused: s.refused, whispers: s.whisperSeq, dismissals: s.dismissals };
  const meta = { agentId: ctx.core.spec.agentId, action: req.action, tokenId: req.tokenId, escalation: req.escalation ?? null };
  yield [{ kind: 'log', level: 'info', message: 'action link used', meta }];
  if (req.action === 'resume') yield* signal(ctx, 'resume', { note: 'from an action link' });
  else if (req.action === 'abort') yield* signal(ctx, 'abort', { reason: 'from an action link' });
  else if (req.action === 'dismiss') yield* signal(ctx, 'dismiss', { note: 'from an action link' });
  else if (req.action === 'pause') yield* signal(ctx, 'pause', { reason: 'paused from an action link' });
  else yield* signal(ctx, 'steer', { text: req.text });
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
