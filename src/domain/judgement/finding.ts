/**
 * A finding's signature: what makes two non-OK verdicts "the same finding" — the same detector
 * reporting the same problem again — so that a finding a human dismissed as a false alarm does not
 * advance the ladder when it is found again.
 *
 * The signature is the verdict's pattern plus its message, normalised: case, quotes, whitespace and
 * numbers (counts, turn numbers, temp paths, hashes) do not count. That one rule serves every
 * evaluator:
 *
 * - the heuristic's messages are fixed templates, one per detector, with the repeated thing quoted
 *   in them ("You have run the same failing call 3 times (shell npm run build)…"): the template
 *   names the detector and the quoted call or text names the problem, while the count changes as
 *   the spiral goes on — so the same spiral has the same signature at 3 and at 7 repetitions, and
 *   a different failing command, or another detector, has another;
 * - a model's message is free text: the same finding reworded is another signature (a model is
 *   not suppressed unless it repeats itself).
 */
import { MAX_SIGNATURE_CHARS } from '../contract/limits.js';
import type { Verdict } from '../contract/schemas.js';

/** The message with everything that varies between sightings of one finding taken out. */
export function normaliseMessage(message: string): string {
  return message
    .toLowerCase()
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b/g, '#') // hashes and ids
    .replace(/\d+(?:\.\d+)?/g, '#') // counts, turn numbers, line numbers, temp-path digits
    .replace(/["'`\u2018\u2019\u201c\u201d]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** `PATTERN:normalised message`, at most MAX_SIGNATURE_CHARS characters. */
export function findingSignature(v: Pick<Verdict, 'kind' | 'pattern' | 'message'>): string {
  return `${v.pattern ?? v.kind}:${normaliseMessage(v.message)}`.slice(0, MAX_SIGNATURE_CHARS);
}

/**
 * A short, stable id of a finding's signature (16 hex characters: two FNV-1a hashes): what an
 * action link carries to name the finding it was issued for without putting agent text in a URL.
 * Not a secret and not collision-proof; the link's signature is what makes it unforgeable.
 */
export function findingId(signature: string): string {
  const fnv = (seed: number): string => {
    let h = seed;
    for (let i = 0; i < signature.length; i++) {
      h ^= signature.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return (h >>> 0).toString(16).padStart(8, '0');
  };
  return fnv(0x811c9dc5) + fnv(0x01000193);
}
