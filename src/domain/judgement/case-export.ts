/**
 * `warden cases export`: the cases a human decided (cases.ts), as the JSONL lines
 * `warden evaluate --cases` scores (src/domain/judgement/scoring.ts). CLI only: this module checks each
 * line against the cases schema, which the workflow code never needs.
 */
import type { Turn } from '../contract/schemas.js';
import { labelOf, type AgentCases, type CaseRecord } from './cases.js';
import { CaseSchema, type CaseLabel } from './scoring.js';

/** One line of the exported file (CaseSchema, plus `decidedBy`). */
export interface CaseLine {
  id: string;
  task: string;
  turns: Turn[];
  label: CaseLabel;
  decidedBy: 'human';
  source: string;
  reason: 'interval' | 'idle';
  evidenceFrom: number;
  firstTurnNumber?: number;
  notes: string;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function notesOf(c: CaseRecord): string {
  const said = `the evaluator said ${c.verdict.kind}${c.verdict.pattern ? ` ${c.verdict.pattern}` : ''}: ${clip(c.verdict.message, 1_500)}`;
  const d = c.decision!;
  const note = d.note ? ` (note: ${clip(d.note, 1_000)})` : '';
  const what =
    d.kind === 'dismissed'
      ? `a human dismissed this as a false alarm${note}`
      : d.kind === 'resumed'
        ? `this escalated and a human resumed the agent without dismissing it${note}`
        : `this escalated and a human aborted the agent${note}`;
  return `${what}; ${said}`;
}

/**
 * The cases a human decided, as lines `warden evaluate --cases` reads; `skipped` counts flagged
 * windows left out because no human has decided them yet.
 */
export function exportCases(agent: AgentCases): { lines: CaseLine[]; skipped: number } {
  const lines: CaseLine[] = [];
  let skipped = 0;
  for (const c of agent.cases) {
    const label = labelOf(c);
    if (label === null) {
      skipped += 1;
      continue;
    }
    lines.push({
      id: `${agent.agentId}-case-${c.seq}`,
      task: agent.task,
      turns: c.turns,
      label,
      decidedBy: 'human',
      source: `warden cases export: agent ${agent.agentId}, flagged at ${c.at}`,
      reason: c.reason,
      evidenceFrom: c.evidenceFrom,
      ...(c.firstTurnNumber === undefined ? {} : { firstTurnNumber: c.firstTurnNumber }),
      notes: notesOf(c),
    });
  }
  return { lines, skipped };
}

/** The lines as JSONL, each checked against the format `warden evaluate --cases` reads. */
export function toJsonl(lines: readonly CaseLine[]): string {
  return lines
    .map((l, i) => {
      const r = CaseSchema.safeParse(l);
      if (!r.success)
        throw new Error(`case ${l.id} (line ${i + 1}) does not fit the cases format: ${r.error.issues[0]?.path.join('.')}: ${r.error.issues[0]?.message}`);
      return `${JSON.stringify(l)}\n`;
    })
    .join('');
}
