/** The rolling window of the last N turns, and the turn-id memory used for idempotency. */

export function pushWindow<T>(window: readonly T[], item: T, size: number): T[] {
  const next = [...window, item];
  return next.length > size ? next.slice(next.length - size) : next;
}

/** Remember recent turn ids (bounded) so a re-sent report is recognised as a duplicate. */
export function rememberId(ids: readonly string[], id: string, max = 500): string[] {
  const next = [...ids, id];
  return next.length > max ? next.slice(next.length - max) : next;
}

/** Every `interval` turns, an evaluation is due. */
export function evaluationDue(turnsSinceEval: number, interval: number): boolean {
  return interval > 0 && turnsSinceEval >= interval;
}
