/** Shapes returned by the status query and the reportTurn update. */
import type { AgentState, AgentEvent } from './states.js';
import type { Verdict, Whisper } from './schemas.js';
import type { EvaluatorSpend } from './evaluation.js';

export interface TransitionRecord {
  from: AgentState;
  to: AgentState;
  event: AgentEvent;
  cause: string;
  at: string;
}

export interface RefusalRecord {
  what: string;
  reason: string;
  at: string;
}

/** A whisper the agent got, with when it was queued and when it was delivered (before turn `beforeTurn`). */
export interface DeliveredWhisperRecord {
  id: string;
  type: string;
  text: string;
  createdAt: string;
  deliveredAt: string;
  beforeTurn: number;
}

/**
 * A notification the agent sent (an alert to its channels): when, which event and why, the
 * channels (`webhook <host>`, `irc <channel>`), and its delivery id, the same on every channel and
 * every retry (`Idempotency-Key`, `deliveryId`; docs/using/notifications.md). `incident`: an
 * escalation that went to its incident (one alert for one cause); `deliveryId` is then the id it
 * has if it goes out alone, and when it was grouped it goes out under the incident's delivery id.
 */
export interface NotificationRecord {
  at: string;
  event: string;
  reason: string;
  channels: string[];
  deliveryId: string | null;
  incident: boolean;
}

export interface AgentStatus {
  agentId: string;
  state: AgentState;
  stateReason: string | null;
  paused: boolean;
  pauseReason: string | null;
  /** awaiting-input because its own CLI waits for its human (a permission or idle prompt; stateReason says which). */
  waitingForHuman: boolean;
  /** blocked because its own CLI's turn ended on a rate-limited or overloaded model (its next tool call, prompt or turn ends it). Absent otherwise. */
  blockedByCli?: boolean;
  /** Its CLI's session ended (a hook said so): when the agent ends `done` unless the session resumes first. */
  sessionEndsAt?: string;
  /** A `block` signal holds it: when the hold runs out and the agent awaits a human (safety.maxHeldMs). */
  heldUntil?: string;
  escalationStep: number;
  escalationThreshold: number;
  escalations: number;
  turns: number;
  evaluations: { total: number; ok: number; flagged: number; skipped: number };
  lastVerdict: (Verdict & { at: string }) | null;
  lastSkipReason: string | null;
  pendingWhispers: number;
  whispersDelivered: number;
  tokens: { in: number; out: number; total: number };
  costUsd: number;
  /**
   * What the evaluator's model calls cost, apart from the agent's own `tokens`/`costUsd`: calls made,
   * calls that failed, tokens (a codex call reports only a total), dollars where the evaluator
   * reports them, and how many verdicts each tier decided (src/domain/judgement/tiered.ts).
   */
  evaluatorSpend: EvaluatorSpend;
  subagents?: {
    /** Sub-agents its CLI ran (Claude Code's SubagentStart/SubagentStop hooks): how many run now, and every one seen. */
    running: number;
    seen: number;
    /** The newest ones (running first kept): id and type as its CLI named them. */
    list: Array<{ id: string; type: string; startedAt: string; stoppedAt: string | null }>;
    /**
     * What they spent, read from each one's transcript when it stopped (`counted`: how many), apart
     * from the agent's own `tokens`/`costUsd`; it counts toward the budgets. Absent on older agents.
     */
    spend?: { tokens: { in: number; out: number; total: number }; costUsd: number; counted: number };
  };
  /**
   * The working tree as the newest turn that carried its fingerprint saw it (hooked and driven
   * agents in a git tree): HEAD (null before the first commit), paths that differ from HEAD, and
   * for how many turns it has been so (`atLeast`: since the oldest turn of the window). Absent
   * when no turn of the window carries one.
   */
  tree?: { head: string | null; files: number; partial?: boolean; unchangedTurns: number; atLeast: boolean };
  lastTurnAt: string | null;
  lastHeartbeatAt: string | null;
  stopRequested: boolean;
  transitions: TransitionRecord[];
  refused: RefusalRecord[];
  invalidSignals: number;
  runs: number;
  /** Driven mode: the driver's kind; null for an agent that reports its own turns. */
  driver: string | null;
  /** Driven mode: a turn is running now. */
  turnRunning: boolean;
  /** Spend against each budget (limit null: no budget); a limit a human raised is the raised one. */
  budgets: Record<'tokens' | 'costUsd' | 'turns' | 'wallClockMs', { used: number; limit: number | null }>;
  /** The agent's labels (its groups: `warden group status key=value`); absent without any. */
  labels?: Record<string, string>;
  /** The budgets whose warning (budgets.warnAt) was sent, and not re-armed by a raise since. */
  budgetWarnings: ('tokens' | 'costUsd' | 'turns' | 'wallClockMs')[];
  /** A budget was reached: the agent is paused until a human raises it (`warden budget`). */
  budgetPaused: boolean;
  /** Raises of the budgets (`warden budget`), newest last: who, when, each budget from what to what. */
  budgetRaises: { at: string; by: string; changes: Partial<Record<'tokens' | 'costUsd' | 'turns' | 'wallClockMs', { from: number | null; to: number }>> }[];
  /** What supervision costs: hours supervised, and the evaluator's dollars and tokens per agent-hour (null in its first minute). */
  supervision: { hours: number; costUsdPerHour: number | null; tokensPerHour: number | null };
  /** Failed turns inside the restart window. */
  restarts: number;
  /** Driven mode: why the last turn failed, until a turn succeeds. */
  lastTurnError: string | null;
  /** The task's first 500 characters (the roster's one-line intent). */
  task: string;
  /** The agent's model, where warden knows it (a driven codex or claude agent's `model`). */
  model: string | null;
  /** The tool of the agent's latest turn while it is running, else null. */
  currentTool: string | null;
  /** Spend per minute over the last hour, oldest first (the burn-rate sparkline). */
  spend: { bucketMs: number; buckets: { at: string; tokens: number; costUsd: number }[] };
  /** The newest agent generation seen. */
  generation: number;
  /** Delegation: who delegated to this agent, its children, its allowed tools and its checked result. */
  parent: string | null;
  children: { agentId: string; state: string; reason: string | null }[];
  toolAllowlist: string[];
  result: { inline?: unknown; ref?: { sha256: string; bytes: number; path: string } } | null;
  /** How many times a human dismissed a finding as a false alarm (`warden dismiss`), and the last time. */
  dismissals: number;
  lastDismissal: { at: string; note: string | null; pattern: string | null; message: string } | null;
  /** Verdicts that repeated a dismissed finding (counted as skipped: no whisper, no step). */
  suppressed: number;
  /** Flagged windows remembered for `warden cases export`, and how many a human has decided. */
  cases: { kept: number; decided: number };
  /** The last check of a done-claim, and whether one is waiting or running now. */
  lastVerification: LastVerification | null;
  verifying: boolean;
  /** The spec has `verify` or `protect`: a done-claim is checked (the hooks claim done at a Stop only then). */
  checksDone: boolean;
  /** `supervisor.lastResort`: what the ladder does the first time it reaches its threshold. */
  lastResort: 'compact' | 'none';
  /** How many times the agent was compacted, and the last compaction (its handoff; done once its fresh context took a turn). */
  compactions: number;
  lastCompaction: { at: string; reason: string; handoff: string; done: boolean; doneAt: string | null } | null;
  /** The newest delivered whispers (at most 20, newest last), each with when it was queued and delivered. Absent from older workers. */
  deliveredWhispers?: DeliveredWhisperRecord[];
  /** The newest notifications the agent sent (at most 20, newest last). Absent from older workers. */
  notifications?: NotificationRecord[];
}

/** The last check of a done-claim (AgentSpec.verify / protect). */
export interface LastVerification {
  /** The verify command; null when only protected paths were checked. */
  command: string | null;
  passed: boolean;
  exitCode: number | null;
  outputTail: string;
  at: string;
  /** The verification could not run (activity failed or timed out): not a pass. */
  skipped?: string;
  timedOut?: boolean;
  /** Changes to protected paths since the agent's start commit, one line each. */
  protectedChanges?: string[];
  /** The claim was refused as reward hacking (protected files deleted or weakened). */
  rewardHacking?: string;
}

export interface ReportTurnResult {
  accepted: boolean;
  duplicate: boolean;
  /** The report came from an older generation of the agent and was dropped. */
  stale?: boolean;
  whispers: Whisper[];
  paused: boolean;
  stop: boolean;
  interrupt: boolean;
  state: AgentState;
  /** A done-claim waits for warden's check; its outcome comes with a later reply (a VERIFY whisper) or as state `done`. */
  verifying?: boolean;
  /**
   * Compaction, the ladder's last resort: drop your context and start a fresh one from `handoff`
   * (the task, your progress, the corrections you were given, what to do next). The next turn you
   * report is taken as the fresh context's first.
   */
  compact?: { handoff: string };
}

/** The raiseBudget update's answer. */
export interface RaiseBudgetResult {
  /** The raise was recorded (false only for a payload refused in replay). */
  applied: boolean;
  /** The agent was paused at a budget and runs again. */
  resumed: boolean;
  state: AgentStatus['state'];
  budgets: AgentStatus['budgets'];
  /** One line on what happened. */
  detail: string;
}
