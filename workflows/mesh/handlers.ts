/** The mesh's message handlers: status, cancel, resume, child spend, and the `apply` update. */
import { setHandler } from '@temporalio/workflow';
import { isOpen, publicState } from '../../src/domain/mesh/state.js';
import * as m from '../../src/messages/agent.js';
import { acts } from './attempts.js';
import * as mm from '../../src/messages/mesh.js';
import { committed, now, record, setPhase, type MeshShell } from './shell.js';

export function installHandlers(sh: MeshShell): void {
  const { s, loop, spec } = sh;
  setHandler(mm.meshStatusQuery, () => publicState(s));
  setHandler(
    mm.meshCancelSignal,
    committed(sh, (p) => {
      loop.cancel ??= p?.reason ?? 'cancelled by a human';
    }),
  );
  setHandler(
    mm.meshResumeSignal,
    committed(sh, (p) => {
      if (s.phase !== 'awaiting-input') return;
      s.conflictBudget = s.conflicts + s.tunables.conflictBudget;
      record(sh, `RESUMED by a human${p?.note ? `: ${p.note}` : ''}; conflict budget now ${s.conflictBudget}`);
      setPhase(sh, 'running'); // the main loop sends the rebase requests held back
    }),
  );
  setHandler(
    m.childSpendSignal,
    committed(sh, (p) => {
      if (p?.agentId) s.spend[p.agentId] = { tokens: p.tokens ?? 0, costUsd: p.costUsd ?? 0, turns: p.turns ?? 0 };
    }),
  );
  setHandler(
    mm.meshApplyUpdate,
    committed(sh, async () => {
      const r = await acts.meshApply({ repo: s.repo, runId: spec.runId, integrationBranch: s.integrationBranch, userBranch: s.userBranch! });
      s.applied = { ...r, at: now() };
      record(sh, `APPLIED: merged ${s.integrationBranch} into ${r.branch} (${r.commit.slice(0, 12)})`);
      setPhase(sh, 'applied');
      return r;
    }),
    {
      validator: () => {
        const open = s.tasks.filter(isOpen);
        if (open.length) throw new Error(`mesh ${spec.runId} has open tasks (${open.map((x) => `${x.task.index} ${x.state}`).join(', ')}); apply refused`);
        if (s.phase !== 'ready') throw new Error(`mesh ${spec.runId} is ${s.phase}; apply needs it ready`);
      },
    },
  );
}
