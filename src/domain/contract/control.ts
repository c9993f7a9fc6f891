/**
 * Did a control signal take effect? A signal is fire-and-forget in Temporal: the sender learns
 * nothing of what the workflow did with it. The client compares the agent's status from before the
 * signal with a later one: a new transition caused by the verb means it was applied, a new refusal
 * of the verb means the state table (or the payload validation) refused it. Pure, so the client
 * can poll and the rule can be tested without a server.
 */

export const CONTROL_VERBS = ['steer', 'interrupt', 'stop', 'pause', 'resume', 'abort'] as const;
export type ControlVerb = (typeof CONTROL_VERBS)[number];

/** The fields of the status query this needs (a subset of AgentStatus). */
export interface ControlSnapshot {
  state: string;
  transitions: { from: string; to: string; event: string; cause: string; at: string }[];
  refused: { what: string; reason: string; at: string }[];
  pendingWhispers: number;
  whispersDelivered: number;
}

export type ControlOutcome =
  | { kind: 'applied'; state: string; from: string | null; detail: string }
  | { kind: 'refused'; state: string; reason: string }
  | { kind: 'pending'; state: string };

/** Entries of `after` that `before` did not have (the lists are bounded, so compare entries, not lengths). */
function added<T>(before: T[], after: T[]): T[] {
  const seen = new Map<string, number>();
  for (const e of before) seen.set(JSON.stringify(e), (seen.get(JSON.stringify(e)) ?? 0) + 1);
  return after.filter((e) => {
    const k = JSON.stringify(e);
    const n = seen.get(k) ?? 0;
    if (n > 0) {
      seen.set(k, n - 1);
      return false;
    }
    return true;
  });
}

export function controlOutcome(verb: ControlVerb, before: ControlSnapshot, after: ControlSnapshot): ControlOutcome {
  const refusal = added(before.refused, after.refused).find((r) => r.what === verb);
  if (refusal) return { kind: 'refused', state: after.state, reason: refusal.reason };
  const t = added(before.transitions, after.transitions).find((x) => x.event === verb || (verb === 'steer' && x.event === 'input'));
  if (t) return { kind: 'applied', state: after.state, from: t.from, detail: `${t.from} -> ${t.to}` };
  if (verb === 'steer' && after.pendingWhispers + after.whispersDelivered > before.pendingWhispers + before.whispersDelivered) {
    return { kind: 'applied', state: after.state, from: null, detail: 'steering queued for the next turn' };
  }
  return { kind: 'pending', state: after.state };
}

/** What `dismissOutcome` reads of the status (agents from before `dismiss` have no `dismissals`). */
export interface DismissSnapshot extends ControlSnapshot {
  dismissals?: number;
}

/**
 * Did a dismiss take effect? Applied when the dismissal count went up (with the resume it caused,
 * when it resumed an escalated agent); refused when the workflow recorded a refusal of `dismiss`
 * (nothing flagged, already dismissed, the agent ended, or a worker too old to know the signal).
 */
export function dismissOutcome(before: DismissSnapshot, after: DismissSnapshot): ControlOutcome {
  const refusal = added(before.refused, after.refused).find((r) => r.what === 'dismiss');
  if (refusal) return { kind: 'refused', state: after.state, reason: refusal.reason };
  if ((after.dismissals ?? 0) > (before.dismissals ?? 0)) {
    const t = added(before.transitions, after.transitions).find((x) => x.event === 'resume');
    return t
      ? { kind: 'applied', state: after.state, from: t.from, detail: `dismissed as a false alarm; the escalation is resumed (${t.from} -> ${t.to})` }
      : { kind: 'applied', state: after.state, from: null, detail: 'dismissed as a false alarm; escalation step back to 0' };
  }
  return { kind: 'pending', state: after.state };
}
