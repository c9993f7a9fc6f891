/**
 * A payload the worker could not decode (unknown encoding, bytes that are not JSON, binary where a
 * JSON value is expected) arrives in the workflow as this sentinel instead of failing the workflow
 * task (which would retry forever: a wedged agent). See src/converter/payload-converter.ts.
 *
 * It is a *string*, on purpose: every warden signal, update and start argument is an object, so
 * even a handler that does not know about the sentinel rejects it through its schema ("expected
 * object") — recorded and ignored, never applied as an empty `{}` (a bare `pause` or `abort`).
 * Handlers that check `isUndecodable` first can record the precise reason.
 */
export const UNDECODABLE_PREFIX = '__wardenUndecodable__: ';

export function undecodable(reason: string): string {
  return `${UNDECODABLE_PREFIX}${reason}`;
}

export function isUndecodable(x: unknown): x is string {
  return typeof x === 'string' && x.startsWith(UNDECODABLE_PREFIX);
}

/** The reason carried by the sentinel, or null for anything else. */
export function undecodableReason(x: unknown): string | null {
  return isUndecodable(x) ? x.slice(UNDECODABLE_PREFIX.length) : null;
}
