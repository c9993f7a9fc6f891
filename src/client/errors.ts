/**
 * Temporal's errors, named. The SDK wraps a refused call in a generic error ("Workflow Update
 * failed", a ServiceError) whose cause chain holds what the server said: a gRPC status code and its
 * details (RESOURCE_EXHAUSTED "…in-flight updates…", "received message larger than max", …), or an
 * ApplicationFailure thrown by the workflow's validator. describeTemporalError digs through that
 * chain and says, in plain words, what happened and whether trying again can help.
 *
 * Pure: no I/O, no SDK import (errors are read by shape), so it is unit-tested with plain objects.
 */

/** gRPC status codes warden tells apart (@grpc/grpc-js `status`). */
export const GRPC = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

const CODE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(GRPC).map(([k, v]) => [v, k]));

export type TemporalErrorKind =
  /** Too many updates in flight on one workflow (the server's per-workflow limit, 10 by default): retry. */
  | 'in-flight-update-limit'
  /** The workflow run has taken all the updates one run may take. */
  | 'total-update-limit'
  /** A request larger than the server's gRPC message limit (4 MiB by default). */
  | 'message-too-large'
  /** A payload over the server's blob size limit (2 MiB by default). */
  | 'payload-too-large'
  /** Rate limits, busy persistence, or another RESOURCE_EXHAUSTED that passes: retry. */
  | 'resource-exhausted'
  /** The workflow refused the update (its validator or handler threw). */
  | 'rejected'
  /** The update was aborted under way (its workflow task failed, the run continued as new): retry. */
  | 'update-aborted'
  /** The server cannot be reached (the SDK has already retried). */
  | 'unavailable'
  | 'permission-denied'
  | 'other';

export interface TemporalErrorInfo {
  kind: TemporalErrorKind;
  /** Trying the same request again (with backoff) can succeed. */
  retryable: boolean;
  /** The gRPC status code found in the cause chain, if any. */
  code?: number;
  /** What the server (or the workflow) said: the innermost useful message. */
  detail: string;
  /** A plain sentence for a person: what happened, Temporal's own words, what to do. */
  message: string;
}

interface ErrorLike {
  name?: string;
  message?: string;
  code?: unknown;
  details?: unknown;
  cause?: unknown;
  constructor?: { name?: string };
}

/** The errors of a cause chain, outermost first (at most 10 deep, cycles stopped). */
export function causeChain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let e: unknown = err;
  while (e && typeof e === 'object' && out.length < 10 && !out.includes(e as ErrorLike)) {
    out.push(e as ErrorLike);
    e = (e as ErrorLike).cause;
  }
  return out;
}

const nameOf = (e: ErrorLike) => (e.name && e.name !== 'Error' ? e.name : (e.constructor?.name ?? e.name ?? 'Error'));

/** Describe any error from a Temporal client call (see the file's comment). */
export function describeTemporalError(err: unknown): TemporalErrorInfo {
  const chain = causeChain(err);
  if (!chain.length) return { kind: 'other', retryable: false, detail: String(err), message: String(err) };
  const grpc = chain.find((e) => typeof e.code === 'number' && (typeof e.details === 'string' || /^\d+ [A-Z_]+:/.test(e.message ?? '')));
  const code = grpc ? (grpc.code as number) : undefined;
  const grpcDetail = grpc ? String(grpc.details ?? grpc.message ?? '').trim() : '';
  const outer = chain[0]!;
  const outerMsg = outer.message || nameOf(outer);
  const innermost = chain[chain.length - 1]!;
  const status = code !== undefined ? (CODE_NAMES[code] ?? `gRPC status ${code}`) : undefined;
  const said = grpcDetail ? `${status}: ${grpcDetail}` : (innermost.message ?? outerMsg);
  const info = (kind: TemporalErrorKind, retryable: boolean, message: string, detail = said): TemporalErrorInfo => ({
    kind,
    retryable,
    ...(code !== undefined && { code }),
    detail,
    message,
  });

  if (code === GRPC.RESOURCE_EXHAUSTED) {
    if (/in-?flight update/i.test(grpcDetail))
      return info(
        'in-flight-update-limit',
        true,
        `${outerMsg}: too many updates in flight for this workflow at once (Temporal said ${said}); send fewer at a time, or retry`,
      );
    if (/received message larger than max|message larger than|larger than max/i.test(grpcDetail))
      return info('message-too-large', false, `${outerMsg}: the request is larger than the Temporal server accepts (Temporal said ${said}); send less`);
    if (/blob.*size|payload.*size|size.*exceed/i.test(grpcDetail))
      return info('payload-too-large', false, `${outerMsg}: a payload is over the Temporal server's size limit (Temporal said ${said}); send less`);
    if (/total.*update|update.*total|maximum.*updates/i.test(grpcDetail))
      return info('total-update-limit', false, `${outerMsg}: this workflow run has taken all the updates one run may take (Temporal said ${said})`);
    return info('resource-exhausted', true, `${outerMsg}: the Temporal server is over a limit (Temporal said ${said}); retry later`);
  }
  if (code === GRPC.INVALID_ARGUMENT && /blob.*size|payload.*size|size.*exceed|too large/i.test(grpcDetail))
    return info('payload-too-large', false, `${outerMsg}: a payload is over the Temporal server's size limit (Temporal said ${said}); send less`);
  if (/workflow update was aborted|workflow is closing/i.test(grpcDetail))
    return info('update-aborted', true, `${outerMsg}: the update was aborted under way (Temporal said ${said}); retry`);
  if (code === GRPC.UNAVAILABLE) return info('unavailable', false, `${outerMsg}: the Temporal server is unavailable (Temporal said ${said}); is it running?`);
  if (code === GRPC.PERMISSION_DENIED || code === GRPC.UNAUTHENTICATED)
    return info('permission-denied', false, `${outerMsg}: the Temporal server refused the credentials (Temporal said ${said})`);
  // The workflow itself refused: its failure (an ApplicationFailure) is the cause.
  const failure = chain.slice(1).find((e) => /Failure$/.test(nameOf(e)) && e.message);
  if (nameOf(outer) === 'WorkflowUpdateFailedError' && failure) return info('rejected', false, failure.message!, failure.message!);
  if (code !== undefined) return info('other', false, `${outerMsg} (Temporal said ${said})`);
  if (chain.length > 1 && innermost.message && innermost.message !== outerMsg)
    return info('other', false, `${outerMsg}: ${innermost.message}`, innermost.message);
  return info('other', false, outerMsg, outerMsg);
}

/** The SDK's own words for the generic wrappers: an error that says only this hides its cause. */
export const GENERIC_SDK_MESSAGES =
  /^(Workflow Update failed|Workflow Update Poll failed|Update-With-Start failed|Unexpected error while making gRPC request)$/;

/**
 * The delay before retry number `attempt` (1-based): exponential from `baseMs`, capped at `capMs`,
 * with "equal jitter" (half fixed, half random) so that a burst of refused callers spreads out
 * instead of coming back together. `random` is injectable for tests.
 */
export function backoffMs(attempt: number, opts: { baseMs: number; capMs: number }, random: () => number = Math.random): number {
  const ceiling = Math.min(opts.capMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
