/**
 * The whispers slice of the carried state: the queue, what was delivered and where it landed, and
 * a failed driven turn's whispers kept for its retry. The only functions that assign these fields
 * (docs/developing/architecture.md, "State slices"); the rules are in effects.ts and its callers.
 */
import type { Whisper, WhisperType } from '../../contract/schemas.js';
import { truncate } from '../../contract/limits.js';
import { iso, keepLast } from '../records.js';

/** A whisper reached the agent right before its turn number `beforeTurn`. */
export interface Delivery {
  beforeTurn: number;
  type: WhisperType;
  text: string;
}

/** A whisper the agent got: when it was queued, when it was delivered and before which turn (the status's `deliveredWhispers`). */
export interface DeliveredWhisper {
  id: string;
  type: WhisperType;
  /** Its text, cut to DELIVERED_TEXT_CHARS. */
  text: string;
  createdAt: string;
  deliveredAt: string;
  beforeTurn: number;
}

/** The newest this-many delivered whispers are kept with their times, each text cut to DELIVERED_TEXT_CHARS. */
export const KEEP_DELIVERED_WHISPERS = 20;
export const DELIVERED_TEXT_CHARS = 500;

export interface WhispersSlice {
  pendingWhispers: Whisper[];
  whispersDelivered: number;
  whisperSeq: number;
  deliveries: { turnId: string; whispers: Whisper[] }[];
  /** Whispers delivered to the agent within the window, so evaluators see where each one landed. */
  deliveredAt: Delivery[];
  /** Driven mode: the whispers of a failed turn, delivered again with its retry. */
  retryWhispers: Whisper[] | null;
  /** The newest delivered whispers with when each was queued and delivered (KEEP_DELIVERED_WHISPERS). */
  deliveredWhispers: DeliveredWhisper[];
}

export const freshWhispers = (): WhispersSlice => ({
  pendingWhispers: [],
  whispersDelivered: 0,
  whisperSeq: 0,
  deliveries: [],
  deliveredAt: [],
  retryWhispers: null,
  deliveredWhispers: [],
});

/** Queue a whisper for the agent's next turn boundary (its id numbers it within the agent). */
export function recordWhisperQueued(s: WhispersSlice, agentId: string, type: WhisperType, text: string, now: number): Whisper {
  s.whisperSeq += 1;
  const w: Whisper = { id: `${agentId}-w${s.whisperSeq}`, type, text, createdAt: iso(now) };
  s.pendingWhispers.push(w);
  return w;
}

/**
 * Every queued whisper leaves the queue for delivery before turn `beforeTurn` at `now` (counted as
 * delivered), remembered where it landed while it is within the window (at most `keep`), and with
 * its times among the newest KEEP_DELIVERED_WHISPERS.
 */
export function markDelivered(s: WhispersSlice, beforeTurn: number, windowSize: number, keep: number, now: number): Whisper[] {
  const whispers = s.pendingWhispers;
  s.pendingWhispers = [];
  s.whispersDelivered += whispers.length;
  if (whispers.length > 0) {
    const oldest = beforeTurn - windowSize;
    s.deliveredAt = [...s.deliveredAt.filter((d) => d.beforeTurn >= oldest), ...whispers.map((w) => ({ beforeTurn, type: w.type, text: w.text }))].slice(-keep);
    const deliveredAt = iso(now);
    s.deliveredWhispers = [
      ...s.deliveredWhispers,
      ...whispers.map((w) => ({ id: w.id, type: w.type, text: truncate(w.text, DELIVERED_TEXT_CHARS), createdAt: w.createdAt, deliveredAt, beforeTurn })),
    ].slice(-KEEP_DELIVERED_WHISPERS);
  }
  return whispers;
}

/** Queued whispers that match `withdrawn` leave the queue undelivered; returns them. */
export function withdrawWhispers(s: WhispersSlice, withdrawn: (w: Whisper) => boolean): Whisper[] {
  const out = s.pendingWhispers.filter(withdrawn);
  s.pendingWhispers = s.pendingWhispers.filter((w) => !withdrawn(w));
  return out;
}

/** The reply to turn `turnId` carried these whispers (a re-sent report gets them again). */
export function rememberDelivery(s: WhispersSlice, turnId: string, whispers: Whisper[], keep: number): void {
  s.deliveries = keepLast(s.deliveries, { turnId, whispers }, keep);
}

/** A human judged what came before: no delivery in the window counts any more. */
export function forgetDeliveredAt(s: WhispersSlice): void {
  s.deliveredAt = [];
}

/** Driven: a failed turn's whispers wait for its retry (null: nothing waits). */
export function keepForRetry(s: WhispersSlice, whispers: Whisper[] | null): void {
  s.retryWhispers = whispers;
}
