/**
 * A finding's signature: what makes two non-OK verdicts "the same finding" — the same detector
 * reporting the same problem again — so that a finding a human dismissed as a false alarm does not
 * advance the ladder when it is found again.
 *
 * Two kinds, by where the verdict came from:
 *
 * - A heuristic detector's verdict carries `finding`: the detector's id and a hash of the whole
 *   evidence it rests on (heuristic/index.ts) — the full failing command as the detector groups it,
 *   the sorted list of paths, the repeated text — with counts left out. The signature is
 *   `PATTERN:finding`. So the same spiral has the same signature at 3 and at 7 repetitions (the count
 *   is not part of it), while two long commands that share their first hundred characters, or
 *   `tests/test1.js` and `tests/test2.js`, have different ones: the message quotes a clipped
 *   command and folds digits, the key does neither.
 * - Any other verdict (a model's) is signed on its pattern plus its message, normalised: case,
 *   quotes, whitespace and numbers (counts, turn numbers, temp paths, hashes) do not count, and the
 *   signature is cut to MAX_SIGNATURE_CHARS. A model's message is free text: the same finding
 *   reworded is another signature (a model is not suppressed unless it repeats itself).
 *
 * Signatures recorded before heuristic verdicts carried `finding` are message-based: isDismissed
 * (agent/dismissal.ts) still honours such a dismissal by matching a keyed verdict's message-based
 * signature too (legacySignature), so what a human dismissed then stays dismissed.
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

/**
 * A stable 64-bit hash of `text` as 16 hex digits (two 32-bit multiply-xor lanes, cyrb53-style):
 * not for security, for telling evidence apart in a bounded signature. Pure and deterministic, so it
 * is the same in a workflow's replay as in an activity.
 */
export function evidenceHash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
  return `${hex(h2)}${hex(h1)}`;
}

/** A detector's finding key: `<detector id>#<hash of its evidence>`. */
export function findingKey(detector: string, evidence: string): string {
  return `${detector}#${evidenceHash(evidence)}`;
}

/** The message-based signature: `PATTERN:normalised message`, at most MAX_SIGNATURE_CHARS characters. */
export function legacySignature(v: Pick<Verdict, 'kind' | 'pattern' | 'message'>): string {
  return `${v.pattern ?? v.kind}:${normaliseMessage(v.message)}`.slice(0, MAX_SIGNATURE_CHARS);
}

/** `PATTERN:<detector>#<hash>` for a detector's verdict, else the message-based signature. */
export function findingSignature(v: Pick<Verdict, 'kind' | 'pattern' | 'message' | 'finding'>): string {
  if (v.finding) return `${v.pattern ?? v.kind}:${v.finding}`.slice(0, MAX_SIGNATURE_CHARS);
  return legacySignature(v);
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
