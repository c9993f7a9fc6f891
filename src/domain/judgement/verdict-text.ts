/**
 * A verdict as text people read. Apart from verdict.ts (the answer's schema and parser) so that the
 * agent core can use it without importing a zod schema (the core stays free of validation).
 */
import type { Verdict } from '../contract/schemas.js';

/** A verdict as one human-readable line (status, web UI, notifications). Not a wire format. */
export function formatVerdict(v: Verdict): string {
  if (v.kind === 'OK') return 'OK';
  return `${v.kind}${v.pattern ? ` ${v.pattern}:` : ''} ${v.message}`;
}
