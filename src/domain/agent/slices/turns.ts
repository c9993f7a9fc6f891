/**
 * The turns slice of the carried state: the turns seen (count, window, recent ids), when the agent
 * was last heard from, its generation, and the idle watchdog's clock. The only functions that
 * assign these fields (docs/developing/architecture.md, "State slices").
 */
import type { Turn } from '../../contract/schemas.js';

export interface TurnsSlice {
  window: Turn[];
  recentIds: string[];
  turns: number;
  lastTurnAt: number | null;
  lastHeartbeatAt: number | null;
  /** The idle watchdog already evaluated this silence; it re-arms with the next turn or resume. */
  idleChecked: boolean;
  /** Silence counts from here at the earliest: a resume (time spent paused is not idleness). */
  idleFrom: number | null;
  /** The newest agent generation seen; older reports are stale. */
  generation: number;
}

export const freshTurns = (): TurnsSlice => ({
  window: [],
  recentIds: [],
  turns: 0,
  lastTurnAt: null,
  lastHeartbeatAt: null,
  idleChecked: false,
  idleFrom: null,
  generation: 0,
});

/** A turn was reported at `now`: the idle watchdog re-arms. */
export function turnReportedAt(s: TurnsSlice, now: number): void {
  s.lastTurnAt = now;
  s.idleChecked = false;
}

/** A heartbeat came at `now`. */
export function heartbeatAt(s: TurnsSlice, now: number): void {
  s.lastHeartbeatAt = now;
}

/** A report or heartbeat of this (not older) generation. */
export function seeGeneration(s: TurnsSlice, generation: number): void {
  s.generation = generation;
}

/** A turn happened: counted, its id remembered (`recentIds`: already bounded by the caller). */
export function countTurn(s: TurnsSlice, recentIds: string[] | null): void {
  if (recentIds) s.recentIds = recentIds;
  s.turns += 1;
}

/** The window of recent turns, as the caller bounded it. */
export function setWindow(s: TurnsSlice, window: Turn[]): void {
  s.window = window;
}

/** Silence counts from `now` (a resume, the end of a wait): the idle watchdog re-arms. */
export function restartIdleClock(s: TurnsSlice, now: number): void {
  s.idleFrom = now;
  s.idleChecked = false;
}

/** The idle watchdog evaluated this silence (false: it re-arms). */
export function markIdleChecked(s: TurnsSlice, checked: boolean): void {
  s.idleChecked = checked;
}
