/** A whisper as the agent reads it: its label, then its text. Pure. */
import type { Whisper } from './schemas.js';

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
