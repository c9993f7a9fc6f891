/**
 * Two Claude Code hook events no transcript holds:
 *
 *  - StopFailure: the turn ended on an API error instead of an answer. Its `error` is one of
 *    Claude Code's error kinds (2.1.330: authentication_failed, oauth_org_not_allowed,
 *    account_on_hold, verification_required, billing_error, rate_limit, overloaded,
 *    invalid_request, model_not_found, server_error, unknown, max_output_tokens,
 *    cloud_credential_error), `error_details` (or, as 2.1.330 sends it, `last_assistant_message`:
 *    "API Error: Request rejected (429) · …") says more. A rate limit, an overloaded model or a
 *    server error passes by itself: the agent is `blocked` with the reason. Anything else needs its
 *    human (a login, a bill, a model name): the agent awaits its human, with one alert. Either ends
 *    at its next tool call, prompt or turn.
 *  - PermissionDenied: a tool call its CLI denied (2.1.330 runs it for a denial in auto mode only —
 *    by its classifier, or because the classifier is unavailable — not for a `permissions.deny`
 *    rule or `dontAsk`; its `reason` says why). Reported as a failed tool call with `denied: true`, so the
 *    heuristic sees it: the same call denied again and again is SPIRALING (judgement/heuristic/denied.ts).
 */
import type { SignalPayload, TurnInput } from '../domain/contract/schemas.js';
import { sanitize } from './human-wait.js';
import { type ClaudeHookInput, type HookAgent, bounded, toolArgs, turnId } from './protocol.js';

/** The error kinds a rate limit or a passing outage are: the API recovers by itself, no human needed. */
export const TRANSIENT_API_ERRORS: ReadonlySet<string> = new Set(['rate_limit', 'overloaded', 'server_error']);

/** Claude Code's error kinds in a human's words (an unknown kind is shown as it came). */
const ERROR_WORDS: Record<string, string> = {
  rate_limit: 'model rate-limited',
  overloaded: 'model overloaded',
  server_error: 'API server error',
  authentication_failed: 'authentication failed',
  oauth_org_not_allowed: "the account's organisation is not allowed",
  account_on_hold: 'the account is on hold',
  verification_required: 'the account needs verification',
  billing_error: 'billing error',
  invalid_request: 'invalid request',
  model_not_found: 'model not found',
  cloud_credential_error: 'cloud credentials error',
  max_output_tokens: 'the answer ran out of output tokens',
  unknown: 'unknown API error',
};

/**
 * The `humanWait` payload for a StopFailure: kind `rate-limit` (blocked) for a transient error,
 * else kind `api-error` (awaiting its human). A payload without `error` is an unknown error.
 */
export function stopFailureWait(input: ClaudeHookInput & { error_details?: string }): SignalPayload<'humanWait'> {
  const kind = sanitize(input.error ?? '', 64) || 'unknown';
  const words = ERROR_WORDS[kind] ?? `API error ${kind}`;
  // 2.1.330 sends no error_details; its last message is the error as the session shows it.
  const said = input.error_details || input.last_assistant_message;
  const details = said ? sanitize(said) : '';
  const reason = sanitize(`its turn ended on an API error: ${words}${kind in ERROR_WORDS ? ` (${kind})` : ''}${details ? `: ${details}` : ''}`);
  return { phase: 'start', kind: TRANSIENT_API_ERRORS.has(kind) ? 'rate-limit' : 'api-error', reason };
}

/** The turn a PermissionDenied reports: the denied call, failed, with `denied: true` and the reason. */
export function deniedTurn(agent: HookAgent, input: ClaudeHookInput): TurnInput {
  const name = input.tool_name || 'unknown-tool';
  const reason = input.reason ? sanitize(input.reason) : 'permission denied';
  return {
    id: turnId(agent, input, 'denied', input.tool_use_id, name, input.tool_input),
    text: '',
    toolCalls: [{ name, args: toolArgs(name, input.tool_input), result: bounded(`denied: ${reason}`), ok: false, denied: true }],
  };
}
