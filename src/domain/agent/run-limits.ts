/**
 * When an agent's run continues as new, and why it waits for a quiet moment.
 *
 * A run continues as new at 250 events or 1 MiB of history, whichever comes first, or at the
 * server's suggestion. Why so short: a worker that restarts replays every cached agent's whole
 * current run before that agent answers again, and replay costs ~2–4 ms per workflow task here
 * (a turn is one task, ~5.8 events; docs/operating/capacity.md). 250 events are ~43 turns:
 * ~0.15 s of replay per agent. A continue-as-new costs one workflow task and a start event
 * carrying the state (the window: ~20 turns), so runs this short add ~6 % history. The byte bound
 * keeps runs of large turns (up to 64 KiB each) as cheap to replay.
 *
 * The quiet moment: the new run's first workflow task goes to the task queue, not the worker's
 * sticky queue, and a worker busy with sticky tasks polls that queue last. A turn that arrives
 * right after the switch waits for that first task: seconds on a saturated worker. So an external
 * agent whose turns arrive back to back (less than `quietGapMs` apart) goes on past `events`
 * until a gap of `quietGapMs` (before its latest turn, or now since it), and continues as new at
 * `busyEvents` at the latest. An agent that thinks between turns (any real one) continues at
 * `events` as before: the switch is done before its next turn arrives.
 *
 * While it waits, the watch wakes when the quiet gap after the latest turn has passed
 * (`quietDueAt`), so the switch happens in that gap, not when the next turn arrives after a pause
 * and then waits for the new run's first task.
 */

export interface RunLimits {
  /** Continue as new from this many events on, at a quiet moment. */
  events: number;
  /** History size in bytes: continue as new at once. */
  bytes: number;
  /** Continue as new at once from this many events on, quiet or not (absent: no waiting for quiet). */
  busyEvents?: number;
  /** Turns this close together (ms) are back to back: not a quiet moment. */
  quietGapMs?: number;
}

export const RUN_LIMITS: RunLimits = { events: 250, bytes: 1024 * 1024, busyEvents: 1_000, quietGapMs: 2_000 };

/** What the shell knows about the run's history. */
export interface HistoryInfo {
  historyLength: number;
  continueAsNewSuggested: boolean;
  /** History size in bytes, as the server last reported it. */
  historySize?: number;
}

/** The turns' timing that tells a quiet moment: when the latest turn came, and the gap before it. */
export interface TurnPace {
  /** When the latest turn arrived (ms), or null before any. */
  lastTurnAt: number | null;
  /** Time between the turn before it and the latest turn (ms), or null when this run saw none. */
  lastGapMs: number | null;
}

/** A quiet moment: no turn yet, the latest turn came after a gap, or silence since it. */
export function quietMoment(limits: RunLimits, pace: TurnPace, now: number): boolean {
  const gap = limits.quietGapMs ?? 0;
  if (pace.lastTurnAt === null || pace.lastGapMs === null) return true;
  return pace.lastGapMs >= gap || now - pace.lastTurnAt >= gap;
}

/**
 * 'no': go on. 'now': continue as new. 'defer': the run is long enough, but turns come back to
 * back; wait for a quiet moment (or `busyEvents`). `waitsForQuiet` is false for agents whose turns
 * nobody waits on (driven agents, agents not running).
 */
export function runLimitDecision(limits: RunLimits, h: HistoryInfo, pace: TurnPace, now: number, waitsForQuiet: boolean): 'no' | 'now' | 'defer' {
  if (h.continueAsNewSuggested || (h.historySize ?? 0) >= limits.bytes) return 'now';
  if (h.historyLength < limits.events) return 'no';
  if (!waitsForQuiet || limits.busyEvents === undefined || h.historyLength >= limits.busyEvents) return 'now';
  return quietMoment(limits, pace, now) ? 'now' : 'defer';
}

/**
 * When a deferred continue-as-new becomes due (ms): the end of the quiet gap after the latest turn,
 * if no turn comes before it. Null unless the decision is 'defer'.
 */
export function quietDueAt(limits: RunLimits, h: HistoryInfo, pace: TurnPace, now: number, waitsForQuiet: boolean): number | null {
  if (runLimitDecision(limits, h, pace, now, waitsForQuiet) !== 'defer' || pace.lastTurnAt === null) return null;
  return pace.lastTurnAt + (limits.quietGapMs ?? 0);
}
