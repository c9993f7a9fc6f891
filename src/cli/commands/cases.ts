/**
 * `warden cases export <agentId>... [--out FILE]`: the flagged windows humans decided, as labelled
 * cases for `warden evaluate --cases` (src/domain/judgement/cases.ts: dismissed → OK; an escalation resumed
 * without dismissing, or aborted → the verdict's pattern; undecided windows are left out).
 */
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { exportCases, toJsonl, type CaseLine } from '../../domain/judgement/case-export.js';
import { globals, withClient } from '../context.js';
import { print, printJson } from '../output.js';

export const exportCasesAction = async (agentIds: string[], o: { out?: string }, cmd: Command) => {
  const json = globals(cmd).json === true;
  const lines: CaseLine[] = [];
  const agents: { agentId: string; exported: number; skipped: number; kept: number }[] = [];
  await withClient(cmd, async (client) => {
    for (const agentId of agentIds) {
      const got = await client.cases(agentId);
      const r = exportCases(got);
      lines.push(...r.lines);
      agents.push({ agentId, exported: r.lines.length, skipped: r.skipped, kept: got.cases.length });
    }
  });
  const text = toJsonl(lines);
  if (o.out) writeFileSync(o.out, text);
  const summary = { file: o.out ?? null, cases: lines.length, agents };
  if (json) return printJson(o.out ? summary : { ...summary, lines });
  if (!o.out) return void process.stdout.write(text);
  const skipped = agents.reduce((a, x) => a + x.skipped, 0);
  print(
    `wrote ${lines.length} case${lines.length === 1 ? '' : 's'} from ${agentIds.length} agent${agentIds.length === 1 ? '' : 's'} to ${o.out}${skipped ? ` (${skipped} flagged window${skipped === 1 ? '' : 's'} without a human decision skipped)` : ''}`,
  );
  if (lines.length === 0) print('no flagged window has a human decision yet: dismiss, resume or abort an escalation first');
};
