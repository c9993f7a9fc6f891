/**
 * The gates on a finished attempt (its checkpoint says done and, for patch modes, a patch draft
 * exists): S, D and O, pure. What they decide: integrate (ready), wait for the final message,
 * ask once for a re-emit, or fail the task.
 *
 * Gate O and correct work (docs/using/mesh.md): when D and S pass and the checkpoint says
 * done, the patch is the work; the final message's sections are its report. Missing sections earn
 * at most one re-emit request (none when the agent has ended its session: nobody would read it);
 * then the patch is integrated with a warning on the task (gate P still decides whether it
 * applies).
 */
import type { Tunables } from './config.js';
import { deliverableCheck, markReady, outputWaited, outputWaitStart, scopeCheck, setGate } from './gates.js';
import { onlyOutputMissing, outputMark, stallAfterMs, type Observation } from './rules.js';
import { moveTo, type Attempt, type TaskRecord } from './state.js';
import { reemitRequested } from './waits.js';

export type GateDecision =
  | { kind: 'ready'; warning?: string }
  | { kind: 'wait' }
  | { kind: 'reemit'; failed: string[]; text: string }
  | { kind: 'fail'; reason: string };

const SECTIONS = 'Summary, Intended files touched, Patch, Commands run + results, Risks / follow-ups';

/**
 * Gates O, D and S on a finished attempt. S failing fails the task (never integrated). O or D
 * failing: O may still be on its way (the turn ends after the files are written), so wait up to
 * the stall time, then ask for one re-emit; a second failure fails the task, unless only O failed:
 * then the patch is integrated with a warning.
 */
export function gateFinished(
  task: TaskRecord,
  a: Attempt,
  obs: Observation,
  t: Pick<Tunables, 'stallThreshold' | 'tickInterval' | 'ackSla' | 'checkpointInterval'>,
  now: number,
): GateDecision {
  const out = deliverableCheck(obs.lastTurn?.text ?? '', a.mode === 'analysis-only' ? 'explorer' : 'worker');
  setGate(a, 'O', out.ok ? 'ok' : 'fail');
  if (a.mode !== 'analysis-only' && task.task.scope.length) {
    const sc = scopeCheck(task.task.scope, obs.patch.files);
    setGate(a, 'S', sc.ok ? 'ok' : 'fail');
    if (!sc.ok) return { kind: 'fail', reason: `gate S failed: ${sc.outside.join(', ')} outside the scope ${task.task.scope.join(', ')}; not integrated` };
  }
  const failed = [
    ...(out.ok ? [] : [`O (missing sections: ${out.missing.join(', ')})`]),
    ...(a.gates.D === 'fail' ? ['D (the patch draft is not a unified diff)'] : []),
  ];
  if (failed.length === 0) {
    markReady(a, null);
    return { kind: 'ready' };
  }
  const keep = onlyOutputMissing(a);
  const accept = (): GateDecision => {
    const warning = `gate O: integrated without the deliverable sections (missing: ${out.missing.join(', ')}); ${a.agentEnded !== null && a.reemits === 0 ? 'the agent had ended its session' : 'asked once to re-emit them'}`;
    markReady(a, warning);
    return { kind: 'ready', warning };
  };
  // The agent has ended: its final message is final, nobody would read a re-emit request.
  if (keep && a.agentEnded !== null) return accept();
  const mayWait = now - outputWaitStart(a, now) < stallAfterMs(t);
  if (a.gates.D !== 'fail' && mayWait) {
    outputWaited(a);
    setGate(a, 'O', '?');
    return { kind: 'wait' };
  }
  if (a.reemits >= 1) return keep ? accept() : { kind: 'fail', reason: `gate ${failed.join(' and ')} failed after a re-emit request` };
  reemitRequested(a, outputMark('reemit', obs));
  moveTo(a, 'needs_reemit');
  return {
    kind: 'reemit',
    failed,
    text: keep
      ? `Your final message lacks the deliverable sections (missing: ${out.missing.join(', ')}). Your patch passed its checks and will be integrated either way; end your next message with the sections (${SECTIONS}).`
      : `Your output violates the contract: gate ${failed.join('; ')}. Re-emit: write the patch draft again at ${a.patchPath} and end with the deliverable sections (${SECTIONS}).`,
  };
}
