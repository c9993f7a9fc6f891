/**
 * What a driven agent is told at the start of a turn: the whispers and steering queued since the
 * last turn, marked and all together, then the task (first turn) or a continuation.
 */
import type { Whisper } from '../contract/schemas.js';
import { renderWhispers } from '../contract/whisper-text.js';

export { renderWhispers, whisperLabel, whisperLine } from '../contract/whisper-text.js';

export function turnInput(args: { task: string; turnNumber: number; whispers: readonly Pick<Whisper, 'type' | 'text'>[]; doneMarker: string }): string {
  const parts: string[] = [];
  if (args.whispers.length) parts.push(`Messages from your supervisor (warden):\n${renderWhispers(args.whispers)}`);
  parts.push(args.turnNumber === 1 ? `Your task:\n${args.task}` : 'Continue working on your task.');
  parts.push(`When the task is complete, start your final message with "${args.doneMarker}".`);
  return parts.join('\n\n');
}
