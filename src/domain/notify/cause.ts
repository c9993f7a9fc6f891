/**
 * One alert for one cause: what makes several agents' escalations "the same cause", so that one
 * notification names them all (workflows/incident.ts) instead of one each.
 *
 * - `causeOf` reads the cause's evidence from what the escalation already carries: the verdict's
 *   evidence turns (by turn number) in the agent's window, and in them the newest failing tool
 *   call (`ok: false`, not denied) that names a command — that command and its error text. A
 *   verdict without evidence turns (an idle STALLING) looks at the window's last turns. No failing
 *   call, no cause: the agent notifies on its own, as before.
 * - `normaliseCause` takes out what differs between agents hitting the same failure: timestamps,
 *   hashes and ids, paths under a temporary directory, numbers, whitespace.
 * - `causeFingerprint` hashes the normalised command and error with the repository root and branch
 *   (which the activity resolves where the agent works): the same command failing the same way in
 *   the same repository and branch is one cause; any of the four differing makes another.
 *
 * Pure, no zod, no @temporalio: the agent core and the activities share it.
 */
import type { Turn } from '../contract/schemas.js';
import { evidenceHash } from '../judgement/finding.js';

/** The cause's evidence as the agent saw it (raw; normalised only for the fingerprint). */
export interface CauseEvidence {
  command: string;
  error: string;
}

/** The cause with where it happened (the repository's root and branch, resolved by the activity). */
export interface Cause extends CauseEvidence {
  repo: string;
  branch: string;
}

/** At most this many characters of the command and of the error are kept (evidence, not a log). */
export const CAUSE_TEXT_MAX = 500;
/** A verdict without evidence turns looks at this many of the window's last turns. */
const FALLBACK_TURNS = 5;

/** The evidence turns of a verdict in the window (turn numbers → window entries). */
function evidenceTurns(window: readonly Turn[], totalTurns: number, evidence: readonly number[] | undefined): Turn[] {
  const first = totalTurns - window.length + 1;
  if (!evidence?.length) return window.slice(-FALLBACK_TURNS);
  return evidence
    .map((n) => window[n - first])
    .filter((t): t is Turn => t !== undefined)
    .sort((a, b) => window.indexOf(a) - window.indexOf(b));
}

/**
 * The cause of an escalation: the newest failing tool call among the verdict's evidence turns
 * (`totalTurns` is the agent's turn count, so the window's last turn has that number). Null when
 * no evidence turn has a failing call with a command.
 */
export function causeOf(window: readonly Turn[], totalTurns: number, evidence: readonly number[] | undefined): CauseEvidence | null {
  const turns = evidenceTurns(window, totalTurns, evidence);
  for (let i = turns.length - 1; i >= 0; i--) {
    const calls = turns[i]!.toolCalls ?? [];
    for (let j = calls.length - 1; j >= 0; j--) {
      const c = calls[j]!;
      if (c.ok !== false || c.denied) continue;
      const command = (c.args ?? '').trim();
      if (!command) continue;
      return { command: command.slice(0, CAUSE_TEXT_MAX), error: (c.result ?? '').trim().slice(0, CAUSE_TEXT_MAX) };
    }
  }
  return null;
}

/**
 * Text with what varies between sightings of one failure taken out: ISO and clock timestamps,
 * UUIDs, hex hashes and ids (7+ hex digits with a digit among them), paths under a temporary
 * directory (/tmp, /var/folders, /private/var/folders, $TMPDIR-like `tmp.XXXX`), then every number,
 * then runs of whitespace. Case is kept (an error's case can matter), and the result is bounded.
 */
export function normaliseCause(text: string): string {
  return text
    .replace(/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>')
    .replace(/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, '<time>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>')
    .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b/gi, '<hash>')
    .replace(/(?:\/private)?\/(?:tmp|var\/folders|var\/tmp)\/[^\s'"`:;,)\]}]*/g, '<tmp>')
    .replace(/\btmp[.\-_][A-Za-z0-9]+\b/g, '<tmp>')
    .replace(/\d+(?:\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, CAUSE_TEXT_MAX);
}

/**
 * The fingerprint of a cause: 16 hex digits over the normalised command, the normalised error, the
 * repository root and the branch. The same for every agent that hit the same failure in the same
 * repository and branch; different when the command, the error, the repository or the branch is.
 */
export function causeFingerprint(cause: Cause): string {
  return evidenceHash(JSON.stringify([normaliseCause(cause.command), normaliseCause(cause.error), cause.repo, cause.branch]));
}

/** The incident workflow of a fingerprint: one per cause (while its window is open). */
export function incidentWorkflowId(fingerprint: string): string {
  return `warden-incident-${fingerprint}`;
}
