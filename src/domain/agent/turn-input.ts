/**
 * What a driven agent is told at the start of a turn: the whispers and steering queued since the
 * last turn, marked and all together, then the task (first turn) or a continuation.
 */
import type { Whisper } from '../contract/schemas.js';

export function whisperLabel(w: Pick<Whisper, 'type'>): string {
  return w.type === 'STEERING' ? '[steering]' : `[${w.type}]`;
}

/** One whisper as a line: its label, then its text (a VERIFY whisper's text carries its own label). */
export function whisperLine(w: Pick<Whisper, 'type' | 'text'>): string {
  const label = whisperLabel(w);
  return w.text.startsWith(label) ? w.text : `${label} ${w.text}`;
}

/** `[CORRECTION] …` / `[steering] …`, one per line, in the order they were queued. */
export function renderWhispers(whispers: readonly Pick<Whisper, 'type' | 'text'>[]): string {
  return whispers.map((w) => whisperLine(w)).join('\n');
}

export function turnInput(args: { task: string; turnNumber: number; whispers: readonly Pick<Whisper, 'type' | 'text'>[]; doneMarker: string }): string {
  const parts: string[] = [];
  if (args.whispers.length) parts.push(`Messages from your supervisor (warden):\n${renderWhispers(args.whispers)}`);
  parts.push(args.turnNumber === 1 ? `Your task:\n${args.task}` : 'Continue working on your task.');
  parts.push(`When the task is complete, start your final message with "${args.doneMarker}".`);
  return parts.join('\n\n');
}
