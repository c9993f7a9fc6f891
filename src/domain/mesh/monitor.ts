/**
 * The monitor's slice of a mesh attempt: what the ticks saw of it (its turns, checkpoint, status,
 * patch draft, final message, whether its agent ended or waits for a human) and the strikes and
 * nudges the tick rules (rules.ts) counted. Only this file writes these fields; the tick rules and
 * the shell call the functions below. Pure.
 */

export interface AttemptMonitor {
  lastTickAt: number | null;
  lastSeenAt: number | null;
  lastStatus: string | null;
  statusSeen: number;
  lastPatchStat: string | null;
  patchSeen: number;
  lastCheckpointMtime: number | null;
  /** Workflow time of the tick that last saw the status or the patch draft change (absent in older runs). */
  progressAt?: number | null;
  /** The first edit target: `seen` once a tick saw a real change in the patch draft, `missed` once the rule fired (absent before either). */
  firstEdit?: 'seen' | 'missed' | null;
  checkpointNudgedAt: number | null;
  unrel: number;
  acked: boolean;
  /** The agent's turn count at the last tick (a new turn means the agent was seen). */
  turnsSeen: number;
  /** The patch draft as last seen: its sha and the files it touches. */
  patchSha: string | null;
  patchFiles: string[];
  /** The agent workflow ended (its final state), or null while it runs. */
  agentEnded: string | null;
  /** The agent escalated or was paused (it waits for a human), as its status says; absent or null otherwise. */
  agentNote?: string | null;
  /** The agent's final message as last seen (its last 1,000 characters; absent in older runs). */
  lastOutput?: string | null;
}

/** A tick ran: when, and whether the agent took a turn since the last one. */
export function sawTick(m: AttemptMonitor, now: number, turns: number | null | undefined): void {
  m.lastTickAt = now;
  if (turns !== undefined && turns !== null && turns !== m.turnsSeen) {
    m.turnsSeen = turns;
    m.lastSeenAt = now;
  }
}

/** The first edit target: met (a real change in the patch draft), or missed (the rule fired). */
export function firstEdit(m: AttemptMonitor, how: 'seen' | 'missed'): void {
  m.firstEdit = how;
}

/** The first valid checkpoint: the attempt acked. */
export function sawAck(m: AttemptMonitor): void {
  m.acked = true;
}

/** One more missing-artifact strike; the count so far. */
export function strike(m: AttemptMonitor): number {
  m.unrel += 1;
  return m.unrel;
}

/** The checkpoint's modification time as this tick saw it. */
export function sawCheckpoint(m: AttemptMonitor, mtimeMs: number | null): void {
  if (mtimeMs !== m.lastCheckpointMtime) m.lastCheckpointMtime = mtimeMs;
}

/** The status and patch draft this tick saw: progress when either changed (or on the first look). Returns when progress was last seen. */
export function sawProgress(m: AttemptMonitor, status: string, patchStat: string | null, now: number): number {
  let progressAt = m.progressAt;
  if (progressAt === undefined || progressAt === null || status !== m.lastStatus || patchStat !== m.lastPatchStat) progressAt = m.progressAt = now;
  m.statusSeen = status === m.lastStatus ? m.statusSeen + 1 : 1;
  m.lastStatus = status;
  m.patchSeen = patchStat !== null && patchStat === m.lastPatchStat ? m.patchSeen + 1 : patchStat === null ? 0 : 1;
  m.lastPatchStat = patchStat;
  return progressAt;
}

/** The attempt was asked for a minimal checkpoint. */
export function nudgedCheckpoint(m: AttemptMonitor, now: number): void {
  m.checkpointNudgedAt = now;
}

/** The patch draft and final message as last observed. */
export function sawDraft(m: AttemptMonitor, sha: string | null, files: string[], lastOutput: string | null): void {
  m.patchSha = sha;
  m.patchFiles = files;
  m.lastOutput = lastOutput;
}

/** Whether the agent waits for a human (its note), as its status says; true when that changed. */
export function sawNote(m: AttemptMonitor, note: string | null): boolean {
  if (note === (m.agentNote ?? null)) return false;
  m.agentNote = note;
  return true;
}

/** The agent's workflow ended in `state`. */
export function sawAgentEnd(m: AttemptMonitor, state: string): void {
  m.agentEnded = state;
}
