/** A child agent's result: JSON after the done marker in its final message (codex/claude drivers). */

/** `TASK COMPLETE {"a":1}` or `TASK COMPLETE` followed by a ```json fenced block → the parsed JSON; else undefined. */
export function extractResult(text: string, doneMarker: string): unknown {
  const at = text.indexOf(doneMarker);
  if (at < 0) return undefined;
  const rest = text.slice(at + doneMarker.length);
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(rest);
  const candidate = (fenced ? fenced[1]! : rest).trim().replace(/^[:\-–—\s]+/, '');
  const start = candidate.search(/[[{]/);
  if (start < 0) return undefined;
  try {
    return JSON.parse(candidate.slice(start));
  } catch {
    return undefined;
  }
}
