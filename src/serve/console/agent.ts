/**
 * The agent page's data: one agent's status and its timeline (src/timeline/agent-timeline.ts),
 * with how each of its notifications was delivered.
 *
 * Load: one `status` query per refresh of an agent, shared by every browser that has its page open
 * (at most one refresh in flight per agent; an answer younger than `ttlMs` is served as it is). The
 * `cases`, `window` and `pendingWhispers` queries are asked again only when the status says
 * something they answer changed (a turn, an evaluation, a whisper, a decision, a state change…).
 * A notification's delivery is looked up (its notify workflow: one describe, and its result once
 * it completed) until it is delivered or failed, then kept; one still sending at most every
 * `deliveryIntervalMs`.
 */
import type { WardenClient } from '../../client/index.js';
import type { AgentStatus } from '../../domain/contract/status.js';
import type { Turn, Whisper } from '../../domain/contract/schemas.js';
import type { AgentCases } from '../../domain/judgement/cases.js';
import type { DeliveryReport } from '../../domain/notify/notify.js';
import { agentTimeline, CONSOLE_TIMELINE, type AgentTimeline, type DeliveryOutcome } from '../../timeline/agent-timeline.js';

export interface AgentAnswer {
  at: string;
  status: AgentStatus;
  timeline: AgentTimeline;
}

export interface AgentSourceOptions {
  /** An answer younger than this is served as it is (ms). */
  ttlMs?: number;
  /** A notification still being delivered is looked up again at most this often (ms). */
  deliveryIntervalMs?: number;
  /** At most this many agents are remembered (the oldest asked goes first). */
  maxAgents?: number;
}

/** What in the status tells that the cases, the window or the pending whispers may have changed. */
export function detailKey(s: AgentStatus): string {
  const last = s.transitions.at(-1);
  return [
    s.state,
    s.runs,
    s.turns,
    s.evaluations.total,
    s.escalations,
    s.pendingWhispers,
    s.whispersDelivered,
    s.cases?.kept ?? 0,
    s.cases?.decided ?? 0,
    s.dismissals ?? 0,
    s.transitions.length,
    last?.at ?? '',
    s.compactions ?? 0,
  ].join('|');
}

const hostOnly = (text: string) => text.replace(/\bhttps?:\/\/([^/\s?#]+)[^\s]*/g, '$1');

/**
 * A notification's delivery as the timeline shows it, from its notify workflow's state and report
 * (null: not found). An escalation that went to its incident has no workflow of its own when it
 * was grouped: it went out with the incident's notification.
 */
export function deliveryOutcome(found: { status: string; report: DeliveryReport | null } | null, incident = false): DeliveryOutcome {
  if (!found && incident)
    return { state: 'grouped', untrusted: { detail: "sent with its incident (one alert for one cause), under the incident's delivery id" } };
  if (!found) return { state: 'unknown', untrusted: { detail: 'its delivery workflow is gone (retention) or never started' } };
  if (found.status === 'RUNNING') return { state: 'sending', untrusted: { detail: 'being delivered (retrying, or waiting for the IRC bot)' } };
  if (!found.report) return { state: 'failed', untrusted: { detail: `its delivery workflow ended ${found.status.toLowerCase()}` } };
  const detail = found.report.deliveries
    .map((d) => {
      // The host only: a webhook's path may hold its secret.
      const where = d.channel === 'webhook' ? `webhook ${hostOnly(d.url)}` : `irc ${d.target}`;
      if (!d.ok) return `${where}: failed: ${hostOnly(d.cause).slice(0, 300)}`;
      return d.channel === 'webhook' ? `${where}: HTTP ${d.status}` : `${where}: ${d.lines} lines`;
    })
    .join('; ');
  return { state: found.report.ok ? 'delivered' : 'failed', untrusted: { detail: detail || null } };
}

const FINAL = new Set<DeliveryOutcome['state']>(['delivered', 'failed']);

interface Entry {
  answer: AgentAnswer | null;
  at: number;
  key: string | null;
  cases: AgentCases | null;
  window: Turn[] | null;
  whispers: Whisper[] | null;
  inflight: Promise<AgentAnswer> | null;
}

export class AgentSource {
  private readonly agents = new Map<string, Entry>();
  private readonly deliveries = new Map<string, { outcome: DeliveryOutcome; at: number }>();
  /** Queries made (for tests: status queries, detail rounds, delivery look-ups). */
  readonly counts = { status: 0, details: 0, deliveries: 0 };

  constructor(
    private readonly client: () => Promise<WardenClient>,
    private readonly opts: AgentSourceOptions = {},
  ) {}

  /** The agent now: a fresh answer, or one younger than `ttlMs` shared with the other pages open on it. */
  async answer(agentId: string): Promise<AgentAnswer> {
    let e = this.agents.get(agentId);
    if (!e) {
      e = { answer: null, at: 0, key: null, cases: null, window: null, whispers: null, inflight: null };
      this.agents.set(agentId, e);
      const max = this.opts.maxAgents ?? 200;
      if (this.agents.size > max) this.agents.delete(this.agents.keys().next().value!);
    }
    if (e.answer && Date.now() - e.at < (this.opts.ttlMs ?? 2_000)) return e.answer;
    const entry = e;
    entry.inflight ??= this.refresh(agentId, entry).finally(() => {
      entry.inflight = null;
    });
    return entry.inflight;
  }

  /** Ask again at the next answer (after an action on the agent). */
  invalidate(agentId: string): void {
    const e = this.agents.get(agentId);
    if (e) {
      e.at = 0;
      e.key = null;
    }
  }

  private async refresh(agentId: string, e: Entry): Promise<AgentAnswer> {
    const w = await this.client();
    this.counts.status++;
    const status = await w.status(agentId);
    const key = detailKey(status);
    if (key !== e.key) {
      this.counts.details++;
      [e.cases, e.window, e.whispers] = await Promise.all([
        w.cases(agentId).catch(() => null),
        w.window(agentId).catch(() => null),
        w.pendingWhispers(agentId).catch(() => null),
      ]);
      e.key = key;
    }
    const deliveries = await this.lookUpDeliveries(w, status);
    const answer: AgentAnswer = {
      at: new Date().toISOString(),
      status,
      timeline: agentTimeline({ status, cases: e.cases, window: e.window, pendingWhispers: e.whispers, deliveries }, CONSOLE_TIMELINE),
    };
    e.answer = answer;
    e.at = Date.now();
    return answer;
  }

  private async lookUpDeliveries(w: WardenClient, s: AgentStatus): Promise<Map<string, DeliveryOutcome>> {
    const out = new Map<string, DeliveryOutcome>();
    const due: { id: string; incident: boolean }[] = [];
    for (const n of s.notifications ?? []) {
      if (!n.deliveryId) continue;
      const known = this.deliveries.get(n.deliveryId);
      if (known) out.set(n.deliveryId, known.outcome);
      if (!known || (!FINAL.has(known.outcome.state) && Date.now() - known.at >= (this.opts.deliveryIntervalMs ?? 10_000)))
        due.push({ id: n.deliveryId, incident: n.incident });
    }
    await Promise.all(
      due.map(async ({ id, incident }) => {
        this.counts.deliveries++;
        const outcome = await w.notificationDelivery(id).then(
          (found) => deliveryOutcome(found, incident),
          (err: unknown) => ({
            state: 'unknown' as const,
            untrusted: { detail: `not looked up: ${err instanceof Error ? err.message.slice(0, 200) : String(err)}` },
          }),
        );
        this.deliveries.set(id, { outcome, at: Date.now() });
        out.set(id, outcome);
      }),
    );
    // Bounded: the oldest outcomes go first.
    while (this.deliveries.size > 5_000) this.deliveries.delete(this.deliveries.keys().next().value!);
    return out;
  }
}
