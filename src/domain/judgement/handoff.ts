/**
 * The handoff: what a compacted agent is told as the first input of its fresh context (the ladder's
 * last resort before escalation, src/domain/judgement/ladder.ts). Built by warden from what it already holds —
 * the task, the window of recent turns, the whispers the agent was given and the verdict — never by
 * the agent's own model, so the corrections it ignored are in it word for word. Pure and bounded:
 * at most HANDOFF_MAX_CHARS characters, the oldest progress lines going first when it is too long.
 */
import { TRUNCATION_MARKER, truncate } from '../contract/limits.js';
import type { Turn, WhisperType } from '../contract/schemas.js';
import { whisperLine } from '../contract/whisper-text.js';

/** The handoff's whole size bound (it goes into history once, and into the agent's first input). */
export const HANDOFF_MAX_CHARS = 8_000;
/** Each turn's line in the progress summary. */
export const HANDOFF_TURN_CHARS = 240;
/** The task as quoted in the handoff. */
export const HANDOFF_TASK_CHARS = 2_000;
/** Each whisper as quoted in the handoff. */
export const HANDOFF_WHISPER_CHARS = 600;
/** At most this many whispers are quoted (the latest). */
export const HANDOFF_MAX_WHISPERS = 6;

/** The first line of every handoff: a driver or a test can recognise one by it. */
export const HANDOFF_HEADER = '[COMPACTED] warden, your supervisor, has moved you to a fresh context.';

export interface HandoffInput {
  task: string;
  /** The window: the agent's most recent turns, oldest first. */
  turns: readonly Turn[];
  /** The number of `turns[0]` over the agent's whole life. */
  firstTurnNumber: number;
  /** The whispers the agent was given (oldest first). */
  whispers: readonly { type: WhisperType; text: string }[];
  /** What it must do next (the ladder's compaction text). */
  next: string;
  doneMarker: string;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** One turn in a line: what the agent said, and the tools it called with how they ended. */
export function summariseTurn(t: Turn): string {
  const calls = (t.toolCalls ?? []).map((c) => {
    const args = c.args ? ` ${oneLine(c.args).slice(0, 80)}` : '';
    const how = c.ok === false ? ' (failed)' : c.ok === true ? ' (ok)' : '';
    return `${c.name}${args}${how}`;
  });
  const said = oneLine(t.text);
  const parts = [said ? `said "${said}"` : null, calls.length ? `ran ${calls.join('; ')}` : null].filter(Boolean);
  return truncate(parts.join(', ') || '(nothing)', HANDOFF_TURN_CHARS);
}

/** The progress lines: one per turn, runs of identical turns folded into one line ("turns 4–9, 6 times: …"). */
export function progressLines(turns: readonly Turn[], firstTurnNumber: number): string[] {
  const lines: string[] = [];
  let i = 0;
  while (i < turns.length) {
    const line = summariseTurn(turns[i]!);
    let j = i + 1;
    while (j < turns.length && summariseTurn(turns[j]!) === line) j += 1;
    const from = firstTurnNumber + i;
    const to = firstTurnNumber + j - 1;
    lines.push(to === from ? `- turn ${from}: ${line}` : `- turns ${from}–${to}, ${to - from + 1} times the same: ${line}`);
    i = j;
  }
  return lines;
}

/** The handoff text (see the module comment). */
export function buildHandoff(h: HandoffInput): string {
  const whispers = h.whispers.slice(-HANDOFF_MAX_WHISPERS).map((w) => `- ${truncate(oneLine(whisperLine(w)), HANDOFF_WHISPER_CHARS)}`);
  const head = [
    `${HANDOFF_HEADER} You kept ignoring its corrections, so your earlier conversation is gone; this message holds everything you need.`,
    `Your task:\n${truncate(h.task, HANDOFF_TASK_CHARS)}`,
  ];
  const tail = [
    whispers.length ? `Corrections you were given and did not act on:\n${whispers.join('\n')}` : null,
    `What you must do next:\n${truncate(h.next, 1_500)}`,
    `When the task is complete, start your final message with "${h.doneMarker}".`,
  ].filter((p): p is string => p !== null);
  let lines = progressLines(h.turns, h.firstTurnNumber);
  const title = (n: number) => `Progress so far (warden's summary of your last ${n} turns, oldest first):`;
  const render = (progress: string[], cut: boolean) =>
    [
      ...head,
      progress.length
        ? `${title(h.turns.length)}\n${cut ? `- ${TRUNCATION_MARKER} (earlier turns left out)\n` : ''}${progress.join('\n')}`
        : 'Progress so far: no turns yet.',
      ...tail,
    ].join('\n\n');
  let text = render(lines, false);
  while (text.length > HANDOFF_MAX_CHARS && lines.length > 1) {
    lines = lines.slice(1);
    text = render(lines, true);
  }
  return truncate(text, HANDOFF_MAX_CHARS);
}

/** A compaction turn's input: the whispers queued since the last turn (steering, …), then the handoff. */
export function compactionInput(handoff: string, whispers: readonly { type: WhisperType; text: string }[]): string {
  if (whispers.length === 0) return handoff;
  return `Messages from your supervisor (warden):\n${whispers.map((w) => whisperLine(w)).join('\n')}\n\n${handoff}`;
}
