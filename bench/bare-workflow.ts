/**
 * The bare Temporal baseline of bench/fleet.ts: a minimal entity workflow whose `reportTurn`
 * update only counts and answers. Same update name and payload as warden's agentWorkflow, no
 * validation, no state beyond a counter, no activities, no upserts. It continues-as-new when the
 * server suggests it, as any long-lived entity must. With `idleAfterMs` > 0 it also keeps an idle
 * watchdog like warden's: one timer, running from the last turn, kept (not restarted) as turns
 * arrive; when it fires after that much silence the entity counts one idle check and arms no timer
 * until the next turn (warden queues one idle evaluation per silence). Bundled alone (its own worker process,
 * bench/bare-worker.ts), so the baseline pays nothing for warden's modules.
 */
import { allHandlersFinished, condition, continueAsNew, defineQuery, defineSignal, defineUpdate, setHandler, sleep, workflowInfo } from '@temporalio/workflow';

export interface BareReply {
  accepted: boolean;
  duplicate: boolean;
  whispers: never[];
  turns: number;
}

export const bareReportTurn = defineUpdate<BareReply, [unknown]>('reportTurn');
export const bareTurnsQuery = defineQuery<number>('turns');
export const bareStopSignal = defineSignal('stop');

export const bareIdleChecksQuery = defineQuery<number>('idleChecks');

export async function bareEntityWorkflow(turnsSoFar = 0, idleAfterMs = 0): Promise<number> {
  let turns = turnsSoFar;
  let stopped = false;
  let lastTurnAt = Date.now();
  let idleChecked = false;
  let idleChecks = 0;
  setHandler(bareReportTurn, () => {
    turns += 1;
    lastTurnAt = Date.now();
    idleChecked = false;
    return { accepted: true, duplicate: false, whispers: [], turns };
  });
  setHandler(bareTurnsQuery, () => turns);
  setHandler(bareIdleChecksQuery, () => idleChecks);
  setHandler(bareStopSignal, () => {
    stopped = true;
  });
  const done = () => stopped || workflowInfo().continueAsNewSuggested;
  if (idleAfterMs > 0) {
    let timer: { fired: boolean } | null = null;
    while (!done()) {
      if (timer === null && !idleChecked) {
        const t = { fired: false };
        timer = t;
        void sleep(Math.max(1, lastTurnAt + idleAfterMs - Date.now())).then(() => {
          t.fired = true;
        });
      }
      const waiting: { fired: boolean } | null = timer;
      await condition(() => done() || (waiting !== null && waiting.fired) || (waiting === null && !idleChecked));
      if (waiting?.fired) {
        timer = null;
        if (!idleChecked && Date.now() - lastTurnAt >= idleAfterMs) {
          idleChecked = true;
          idleChecks += 1;
        }
      }
    }
  } else {
    await condition(done);
  }
  if (stopped) return turns;
  await condition(allHandlersFinished);
  return await continueAsNew<typeof bareEntityWorkflow>(turns, idleAfterMs);
}
