/** Bounds that keep workflow history small. Text past a bound is cut and marked. */
export const MAX_TURN_TEXT = 8_000;
export const MAX_TOOL_FIELD = 4_000;
export const MAX_WHISPER_TEXT = 2_000;
export const MAX_TASK_TEXT = 8_000;
export const MAX_REASON_TEXT = 1_000;
export const MAX_TOOL_CALLS = 50;
export const TRUNCATION_MARKER = '…[truncated by warden]';

/** Cut `text` to at most `max` characters, ending with a visible marker when cut. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const keep = Math.max(0, max - TRUNCATION_MARKER.length);
  return text.slice(0, keep) + TRUNCATION_MARKER;
}
