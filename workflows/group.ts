/**
 * groupBudgetWorkflow, id `warden-group-<key>=<value>`: the durable spend counter of one label's
 * agents (src/domain/group/budget.ts holds its rules). It exists once someone sets a budget
 * (`warden group budget`, signal-with-start of `groupBudget`). Every poll interval (a durable
 * timer) one `listGroupAgents` activity lists the group's agents in visibility with the spend they
 * publish; the counter adds what grew since the last poll. Reaching the cap pauses the group's
 * running agents (their `pause` signal, with the reason) and sends one alert per period; a new
 * period or a raise resumes the agents the group paused. The agents' turns do nothing for it.
 * Continues as new when its history grows, carrying its state.
 */
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  GROUP_POLL_MS,
  applyPoll,
  carriedGroup,
  closedSince,
  decide,
  freshGroup,
  groupView,
  roll,
  setBudget,
  type GroupAction,
  type GroupState,
} from '../src/domain/group/budget.js';
import { GroupBudgetSchema, GroupInputSchema, type GroupInput } from '../src/domain/group/schemas.js';
import type { GroupActivities } from '../src/domain/group/activity-types.js';
import { describeZodError } from '../src/domain/contract/schemas.js';
import { groupWorkflowId } from '../src/domain/contract/labels.js';
import { groupBudgetSignal, groupStatusQuery } from '../src/messages/group.js';
import { pauseSignal, resumeSignal } from '../src/messages/agent.js';
import { startNotifyChild } from './notify.js';

/** Continue as new from this many events on (a poll is about ten). */
export const GROUP_HISTORY_EVENTS = 2_000;

const acts = proxyActivities<GroupActivities>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 },
});

export async function groupBudgetWorkflow(input: GroupInput, carried?: GroupState): Promise<void> {
  const parsed = GroupInputSchema.safeParse(input);
  if (!parsed.success) throw ApplicationFailure.nonRetryable(`invalid group input: ${describeZodError(parsed.error)}`, 'InvalidGroupInput');
  const { group } = parsed.data;
  const pollMs = parsed.data.pollIntervalMs ?? GROUP_POLL_MS;
  if (workflowInfo().workflowId !== groupWorkflowId(group)) {
    throw ApplicationFailure.nonRetryable(`workflow id ${workflowInfo().workflowId} does not match group ${group}`, 'InvalidGroupInput');
  }
  // `since` is when the budget was set: the start event's time (signal-with-start), before the client
  // returned, so an agent started after it is never taken as started before it. Not Date.now() nor
  // runStartTime: both are the first workflow task's time, which can come after an agent started at once.
  const st: GroupState = carried ? carriedGroup(carried) : freshGroup(group, workflowInfo().startTime.getTime());
  let wake = false;
  let pending = 0;
  let notifySeq = 0;
  const track = (p: Promise<unknown>, what: string) => {
    pending += 1;
    void p.catch((err: unknown) => log.warn(`group ${what} failed`, { group, error: String(err) })).finally(() => (pending -= 1));
  };
  const run = (actions: GroupAction[]) => {
    for (const a of actions) {
      if (a.kind === 'pause') track(getExternalWorkflowHandle(a.workflowId).signal(pauseSignal, { reason: a.reason }), `pause of ${a.workflowId}`);
      else if (a.kind === 'resume') track(getExternalWorkflowHandle(a.workflowId).signal(resumeSignal, { note: a.note }), `resume of ${a.workflowId}`);
      else if (st.budget?.webhooks?.length || st.budget?.irc) {
        const info = workflowInfo();
        const event = {
          event: 'group-budget-exhausted' as const,
          agentId: `group-${group}`,
          workflowId: info.workflowId,
          runId: info.runId,
          task: `the agents labelled ${group}: ${a.agents.join(', ') || 'none running'}`,
          step: 0,
          reason: a.reason,
          at: new Date(Date.now()).toISOString(),
        };
        track(startNotifyChild({ event, webhooks: st.budget.webhooks ?? [], ...(st.budget.irc ? { irc: st.budget.irc } : {}) }, ++notifySeq), 'alert');
      }
    }
  };
  // The budget: validated; an invalid one is logged and dropped, never thrown. It wakes the loop.
  setHandler(groupBudgetSignal, (p: unknown) => {
    const r = GroupBudgetSchema.safeParse(p);
    if (!r.success) return log.warn('invalid groupBudget', { group, error: describeZodError(r.error) });
    setBudget(st, r.data, Date.now());
    wake = true;
  });
  setHandler(groupStatusQuery, () => groupView(st, Date.now()));

  const long = () => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength >= GROUP_HISTORY_EVENTS;
  for (;;) {
    wake = false;
    roll(st, Date.now());
    try {
      const listed = await acts.listGroupAgents.executeWithOptions(
        { startToCloseTimeout: '1m', retry: { initialInterval: '1s', maximumInterval: '10s', maximumAttempts: 5 }, summary: `agents labelled ${group}` },
        [{ group, closedSince: closedSince(st, Date.now()) }],
      );
      applyPoll(st, listed.agents, Date.now());
      run(decide(st, Date.now()));
    } catch (err) {
      // Visibility refused or failed five times: this poll is skipped; the next one sees the same figures, or newer.
      log.warn('group poll failed', { group, error: String(err) });
    }
    if (long()) {
      await condition(() => allHandlersFinished() && pending === 0);
      await continueAsNew<typeof groupBudgetWorkflow>(input, st);
    }
    await condition(() => wake, pollMs);
  }
}
