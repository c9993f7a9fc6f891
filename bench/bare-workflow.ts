/**
 * The bare Temporal baseline of bench/fleet.ts: a minimal entity workflow whose `reportTurn`
 * update only counts and answers. Same update name and payload as warden's agentWorkflow, no
 * validation, no state beyond a counter, no activities, no upserts. It continues-as-new when the
 * server suggests it, as any long-lived entity must. Bundled alone (its own worker process,
 * bench/bare-worker.ts), so the baseline pays nothing for warden's modules.
 */
import { allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, defineUpdate, setHandler, workflowInfo } from '@temporalio/workflow';

export interface BareReply {
  accepted: boolean;
  duplicate: boolean;
  whispers: never[];
  turns: number;
}

export const bareReportTurn = defineUpdate<BareReply, [unknown]>('reportTurn');
export const bareTurnsQuery = defineQuery<number>('turns');
export const bareStopSignal = defineSignal('stop');

export async function bareEntityWorkflow(turnsSoFar = 0): Promise<number> {
  let turns = turnsSoFar;
  let stopped = false;
  setHandler(bareReportTurn, () => {
    turns += 1;
    return { accepted: true, duplicate: false, whispers: [], turns };
  });
  setHandler(bareTurnsQuery, () => turns);
  setHandler(bareStopSignal, () => {
    stopped = true;
  });
  await condition(() => stopped || workflowInfo().continueAsNewSuggested);
  if (stopped) return turns;
  await condition(allHandlersFinished);
  return await continueAsNew<typeof bareEntityWorkflow>(turns);
}
