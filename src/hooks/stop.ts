/**
 * A Stop hook as a done-claim, for an agent whose spec has a definition of done (`verify` or
 * `protect`; see src/domain/agent/verification.ts). The final message is reported with
 * `done: true`; the hook then waits, within its `--timeout`, for warden's check:
 *
 *  - passed: the agent ended `done`; the stop goes ahead.
 *  - failed: the `[VERIFY]` whisper (taken with a follow-up turn) blocks the stop as its reason,
 *    so the agent carries on with it. This holds for a stop that a hook already continued
 *    (`stop_hook_active`) too: false claims are bounded by the escalation ladder, which pauses the
 *    agent at its threshold, and a paused agent's stop is never blocked.
 *  - still running at the deadline: the stop goes ahead (the hook never holds the agent past its
 *    timeout); the outcome comes as a whisper with the agent's next turn (its next prompt or session).
 */
import { createHash } from 'node:crypto';
import { MAX_TURN_TEXT, truncate } from '../domain/contract/limits.js';
import type { TurnInput, Whisper } from '../domain/contract/schemas.js';
import type { AgentStatus } from '../domain/contract/status.js';
import { whisperContext, type ClaudeHookInput, type ClaudeHookOutput, type HookClient } from './protocol.js';

/** How long a Stop waits for the check when the caller gives no deadline. */
export const DEFAULT_VERIFY_WAIT_MS = 5_000;
const POLL_MS = 250;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function claimAtStop(
  agentId: string,
  input: ClaudeHookInput,
  id: string,
  text: string,
  c: HookClient,
  waitUntil: number,
  warn: (line: string) => void,
  spent: Pick<TurnInput, 'tokensIn' | 'tokensOut' | 'costUsd'> = {},
): Promise<ClaudeHookOutput | null> {
  const reply = await c.reportTurn(agentId, { id, text, done: true, ...spent });
  const whispers: Whisper[] = [...reply.whispers];
  let s: AgentStatus = await c.status(agentId);
  // Wait for the check while the claim waits and the agent runs (a paused agent's claim waits for a human).
  while (s.verifying && s.state === 'running' && Date.now() + POLL_MS < waitUntil) {
    await sleep(POLL_MS);
    s = await c.status(agentId);
  }
  if (s.verifying && s.state === 'running') {
    warn(`the check of agent ${agentId}'s done-claim is still running; the stop goes ahead, and a failure reaches the agent at its next turn`);
  } else if (s.state === 'running' && s.pendingWhispers > 0) {
    // The check failed (or could not run): its VERIFY whisper is queued; a turn takes it.
    const verdict = s.lastVerification ? (s.lastVerification.passed ? 'passed' : s.lastVerification.skipped ? 'skipped' : 'failed') : 'pending';
    const more = await c.reportTurn(agentId, {
      id: id.length <= 190 ? `${id}-verified` : `verified-${createHash('sha256').update(id).digest('hex').slice(0, 40)}`,
      text: truncate(`warden checked the done-claim: ${verdict}.`, MAX_TURN_TEXT),
    });
    whispers.push(...more.whispers);
    s = { ...s, paused: more.paused, state: more.state };
  }
  if (!whispers.length) return null;
  const context = whisperContext(agentId, whispers)!;
  const verify = whispers.some((w) => w.type === 'VERIFY');
  // A stop already continued by a hook is blocked again only for a failed check of a running agent.
  const block = s.state === 'running' && !s.paused && (!input.stop_hook_active || verify);
  if (!block) return { systemMessage: context };
  return { decision: 'block', reason: `${context}\nAct on this before you finish.` };
}
