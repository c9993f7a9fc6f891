/** The activity contract between the workflow (deterministic) and activities/ (side effects). */
import type { EvaluatorConfig, Turn, Verdict, WebhookChannel } from './schemas.js';

export interface EvaluateInput {
  agentId: string;
  task: string;
  turns: Turn[];
  reason: 'interval' | 'idle';
  idleMs?: number;
  evaluator: EvaluatorConfig;
  model: string;
  /** The activity's own deadline; it stops its evaluator a little before this. */
  timeoutMs: number;
}

export type EvaluateResult =
  | { kind: 'verdict'; verdict: Verdict; evaluator: string; durationMs: number }
  | { kind: 'skipped'; reason: string; evaluator: string; durationMs: number };

export const NOTIFICATION_EVENTS = ['escalation'] as const;
export interface NotificationEvent {
  event: (typeof NOTIFICATION_EVENTS)[number];
  agentId: string;
  workflowId: string;
  runId: string;
  task: string;
  step: number;
  verdict: Verdict;
  whisper: string;
  at: string;
}

export interface NotifyWebhookInput {
  channel: WebhookChannel;
  event: NotificationEvent;
}

export interface WardenActivities {
  evaluate(input: EvaluateInput): Promise<EvaluateResult>;
  notifyWebhook(input: NotifyWebhookInput): Promise<{ status: number }>;
}
