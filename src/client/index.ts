/**
 * The typed warden client: what the CLI uses, and what other services import to start, report to,
 * signal and query supervised agents.
 *
 *   const warden = await WardenClient.connect();           // TEMPORAL_ADDRESS etc. from the env
 *   await warden.start({ agentId: 'x', task: 'fix the build' });
 *   const reply = await warden.reportTurn('x', { id: 't1', text: '…', toolCalls: [] });
 *   await warden.signal('x', 'resume', {});
 */
import pLimit, { type LimitFunction } from 'p-limit';
import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type WorkflowHandle,
} from '@temporalio/client';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { connectionSettings } from '../config/connection.js';
import { wardenDataConverter } from '../converter/path.js';
import {
  AgentIdSchema,
  AgentSpecSchema,
  SIGNAL_SCHEMAS,
  TaskSpecSchema,
  TurnSchema,
  describeZodError,
  type AgentSpec,
  type AgentSpecInput,
  type SignalName,
  type SignalPayload,
  type TaskSpecInput,
  type Turn,
  type TurnInput,
  type Whisper,
} from '../domain/contract/schemas.js';
import { RaiseBudgetSchema, type RaiseBudgetInput } from '../domain/contract/budget-schemas.js';
import { MAX_TOOL_CALLS, TRUNCATION_MARKER, fitTurnToBudget, unknownTurnFields } from '../domain/contract/limits.js';
import {
  AGENT_SEARCH_ATTRIBUTES,
  SEARCH_ATTRIBUTES,
  WardenCostUsd,
  WardenEscalationStep,
  WardenEvaluatorCostUsd,
  WardenLabels,
  WardenPaused,
  WardenState,
  WardenTokens,
} from '../domain/contract/search-attributes.js';
import { groupsOf, labelsFromGroups } from '../domain/contract/labels.js';
import type { AgentStatus, RaiseBudgetResult, ReportTurnResult } from '../domain/contract/status.js';
import { controlOutcome, dismissOutcome, type ControlOutcome, type ControlVerb } from '../domain/contract/control.js';
import type { AgentCases } from '../domain/judgement/cases.js';
import type { DeliveryReport } from '../domain/notify/notify.js';
import {
  agentSignals,
  casesQuery,
  delegateUpdate,
  pendingWhispersQuery,
  raiseBudgetUpdate,
  reportTurnUpdate,
  statusQuery,
  windowQuery,
} from '../messages/agent.js';
import { GENERIC_SDK_MESSAGES, backoffMs, describeTemporalError, type TemporalErrorKind } from './errors.js';

export const WORKFLOW_TYPE = 'agentWorkflow';

/**
 * The visibility filter for agents: warden's workflow type, and only the runs that are the agent —
 * not the closed runs an agent left behind when it continued as new (visibility lists every run of
 * a workflow id, each with the search attributes it had when it closed).
 */
export const AGENT_RUNS_QUERY = `WorkflowType = '${WORKFLOW_TYPE}' AND ExecutionStatus != 'ContinuedAsNew'`;
export const workflowIdFor = (agentId: string) => `agent-${agentId}`;
export const agentIdFrom = (workflowId: string) => workflowId.replace(/^agent-/, '');

/** The input was wrong (CLI exit code 2). `field` names what was wrong. */
export class InvalidInputError extends Error {
  override name = 'InvalidInputError';
}
/** No workflow for that agent (CLI exit code 3). */
export class AgentNotFoundError extends Error {
  override name = 'AgentNotFoundError';
  constructor(readonly agentId: string) {
    super(`no such agent: ${agentId} (workflow ${workflowIdFor(agentId)} not found)`);
  }
}
/** The agent's workflow has closed (done, failed, terminated, …): it takes no more reports or signals (CLI exit code 2). */
export class AgentEndedError extends InvalidInputError {
  override name = 'AgentEndedError';
  constructor(
    readonly agentId: string,
    /** Temporal's status of the closed workflow, lower case: `completed`, `failed`, `terminated`, … */
    readonly workflowStatus: string,
    message = `agent ${agentId} has ended (workflow ${workflowStatus}); it takes no more reports or signals`,
  ) {
    super(message);
  }
}

/**
 * The agent's workflow task fails on every attempt (the server says `Workflow Task in failed state`):
 * a worker *is* running, but the agent answers no query, update or signal until someone fixes it.
 */
export class AgentWedgedError extends Error {
  override name = 'AgentWedgedError';
  constructor(
    readonly agentId: string,
    cause: string,
  ) {
    super(
      `agent ${agentId}'s workflow task is failing (${cause}): a worker picks it up, but every attempt fails, so the agent answers no query, report or signal. ` +
        `See why with \`temporal workflow describe --workflow-id ${workflowIdFor(agentId)}\` (the pending workflow task's last failure) ` +
        `or \`temporal workflow show --workflow-id ${workflowIdFor(agentId)}\` (its WorkflowTaskFailed events); ` +
        `\`temporal workflow terminate\` or \`reset\` ends or rewinds it.`,
    );
  }
}

/** The server's words for a workflow whose task keeps failing (a wedged agent, not a missing worker). */
export function isWedgedError(err: unknown): boolean {
  const e = err as { message?: string; cause?: { message?: string; cause?: { message?: string } } };
  return /workflow task in failed state|workflow task (has )?failed/i.test(`${e?.message ?? ''} ${e?.cause?.message ?? ''} ${e?.cause?.cause?.message ?? ''}`);
}

/** The fields of a raw turn that TurnSchema cut (text over its length, tool fields, tool calls past the cap). */
export function schemaTruncations(raw: TurnInput, parsed: Turn): string[] {
  const out: string[] = [];
  if (typeof raw.text === 'string' && parsed.text !== raw.text) out.push('text');
  const rawCalls = Array.isArray(raw.toolCalls) ? raw.toolCalls : [];
  const kept = parsed.toolCalls ?? [];
  if (rawCalls.length > kept.length) out.push(`toolCalls (kept the last ${MAX_TOOL_CALLS} of ${rawCalls.length})`);
  const offset = rawCalls.length - kept.length;
  kept.forEach((c, i) => {
    const r = rawCalls[i + offset] as { args?: unknown; result?: unknown } | undefined;
    for (const f of ['args', 'result'] as const) {
      const v = c[f];
      if (typeof v === 'string' && v.endsWith(TRUNCATION_MARKER) && v !== r?.[f]) out.push(`toolCalls.${i}.${f}`);
    }
  });
  return out;
}

/** reportTurn's reply, plus the fields the client truncated before sending (empty when none). */
export type ReportTurnReply = ReportTurnResult & { truncated: string[] };

/**
 * Temporal refused a call, for a reason named in the message (the SDK's own error says only
 * "Workflow Update failed"; the server's words are in its cause chain). `kind` tells which limit.
 */
export class TemporalRefusedError extends Error {
  override name = 'TemporalRefusedError';
  constructor(
    message: string,
    readonly kind: TemporalErrorKind,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * How reportTurn retries what can pass on a second try (the per-workflow in-flight update limit, a
 * busy server, an update aborted under way): capped exponential backoff with jitter, for at most
 * `maxElapsedMs` in all. The SDK's own gRPC retry (RESOURCE_EXHAUSTED: ten tries, 1 s to 5 s apart)
 * runs under each attempt. Not faster: measured on a dev server, callers that hammer a workflow
 * past its in-flight limit slow the updates already in flight, so fewer get through.
 */
export const REPORT_RETRY = { baseMs: 1_000, capMs: 10_000, maxElapsedMs: 180_000, maxAttempts: 40 };

/**
 * At most this many updates of one client are in flight on one agent at a time; more wait their
 * turn here. The server takes 10 per workflow at once and refuses the rest (RESOURCE_EXHAUSTED);
 * this leaves room for other clients (a hook, the CLI) and turns a burst into a queue rather than
 * a storm of refusals and retries.
 */
export const UPDATES_IN_FLIGHT_PER_AGENT = 8;

/** While some of warden's search attributes are missing, a client asks the namespace again at most this often. */
export const SEARCH_ATTRIBUTES_RECHECK_MS = 60_000;

/** At most `max` calls at once per key (an agent id); a key's limiter is dropped when it is idle. */
class KeyedLimiter {
  private readonly limits = new Map<string, LimitFunction>();
  constructor(private readonly max: number) {}
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let limit = this.limits.get(key);
    if (!limit) this.limits.set(key, (limit = pLimit(this.max)));
    try {
      return await limit(fn);
    } finally {
      if (limit.activeCount === 0 && limit.pendingCount === 0) this.limits.delete(key);
    }
  }
}

export class AgentAlreadyRunningError extends Error {
  override name = 'AgentAlreadyRunningError';
  constructor(readonly agentId: string) {
    super(`agent ${agentId} is already running (workflow ${workflowIdFor(agentId)}); pick another id or stop it first`);
  }
}

export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new InvalidInputError(`invalid ${what}: ${describeZodError(r.error)}`);
  return r.data;
}

/** Update errors that mean "try again": the workflow task failed or the run closed (continue-as-new). */
export function isTransientUpdateError(err: unknown): boolean {
  const e = err as { code?: number; message?: string; cause?: { code?: number; message?: string } };
  const text = `${e?.message ?? ''} ${e?.cause?.message ?? ''}`;
  const code = e?.code ?? e?.cause?.code;
  return (
    (code === 9 /* FAILED_PRECONDITION */ && /workflow task fail|workflow is closing|update.*abort/i.test(text)) ||
    /workflow update was aborted|workflow is closing|WorkflowUpdateRPCTimeoutOrCancelled/i.test(text)
  );
}

export interface AgentSummary {
  agentId: string;
  workflowId: string;
  runId: string;
  status: string;
  state: string | null;
  escalationStep: number | null;
  paused: boolean | null;
  costUsd: number | null;
  tokens: number | null;
  startTime: string;
  closeTime: string | null;
  /** Its labels, from `WardenLabels` ({} without any). */
  labels?: Record<string, string>;
}

/** Every search attribute an agent's own upserts need is registered (AGENT_SEARCH_ATTRIBUTES). */
export const agentAttributesRegistered = (registered: readonly string[]): boolean => AGENT_SEARCH_ATTRIBUTES.every((n) => registered.includes(n));

export class WardenClient {
  constructor(
    readonly client: Client,
    readonly taskQueue: string,
    private readonly ownsConnection: Connection | null = null,
    /** How many reportTurn updates this client keeps in flight on one agent at most (see UPDATES_IN_FLIGHT_PER_AGENT). */
    updatesInFlightPerAgent = UPDATES_IN_FLIGHT_PER_AGENT,
  ) {
    this.updates = new KeyedLimiter(updatesInFlightPerAgent);
  }

  private readonly updates: KeyedLimiter;

  /** Connect using the standard Temporal environment (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, …). */
  static async connect(overrides: { address?: string; namespace?: string; taskQueue?: string; updatesInFlightPerAgent?: number } = {}): Promise<WardenClient> {
    const settings = connectionSettings(overrides);
    let connection: Connection;
    try {
      connection = await Connection.connect({
        ...settings.connectionOptions,
        connectTimeout: 5_000,
        interceptors: [grpcRetryInterceptor()],
      } as Parameters<typeof Connection.connect>[0]);
    } catch (err) {
      throw new Error(
        `cannot reach Temporal at ${settings.connectionOptions.address} (${err instanceof Error ? err.message : String(err)}). Start one with \`warden dev\` or set TEMPORAL_ADDRESS.`,
      );
    }
    return new WardenClient(
      new Client({ connection, namespace: settings.namespace, dataConverter: wardenDataConverter() }),
      settings.taskQueue,
      connection,
      overrides.updatesInFlightPerAgent,
    );
  }

  async close(): Promise<void> {
    await this.ownsConnection?.close();
  }

  get namespace(): string {
    return this.client.options.namespace;
  }

  handle(agentId: string): WorkflowHandle {
    parseOrThrow(AgentIdSchema, agentId, 'agentId');
    return this.client.workflow.getHandle(workflowIdFor(agentId));
  }

  /** The last answer to "which search attributes are registered", shared by concurrent callers. */
  private searchAttributesLookup: { at: number; names: Promise<string[]> } | null = null;

  /**
   * Which of warden's search attributes the namespace has registered. Asked once per client while
   * all of them are there, and again at most every SEARCH_ATTRIBUTES_RECHECK_MS while some are
   * missing; concurrent callers share one call, and a failed call is not remembered. Every start
   * used to ask: one operator call per agent, and the dev server of the Temporal CLI (1.9.1) keeps
   * one connection to itself open per ListSearchAttributes call, so ten thousand starts exhausted
   * its 20,000 file descriptors and it stopped answering.
   */
  async registeredSearchAttributes(): Promise<string[]> {
    const seen = this.searchAttributesLookup;
    if (seen) {
      const names = await seen.names;
      if (names.length === Object.keys(SEARCH_ATTRIBUTES).length || Date.now() - seen.at < SEARCH_ATTRIBUTES_RECHECK_MS) return names;
    }
    // Stale or never asked: ask, unless another caller already started the next lookup meanwhile.
    if (this.searchAttributesLookup && this.searchAttributesLookup !== seen) return this.searchAttributesLookup.names;
    const lookup = {
      at: Date.now(),
      names: this.client.connection.operatorService.listSearchAttributes({ namespace: this.namespace }).then(
        (res) => Object.keys(res.customAttributes ?? {}).filter((k) => k in SEARCH_ATTRIBUTES),
        () => {
          if (this.searchAttributesLookup === lookup) this.searchAttributesLookup = null;
          return [] as string[];
        },
      ),
    };
    this.searchAttributesLookup = lookup;
    return lookup.names;
  }

  /**
   * Start supervising an agent unless its workflow exists: the workflow id is the lock, so any
   * number of callers racing to start the same agent (the hooks of one new session) all succeed
   * and exactly one workflow runs. An agent that has ended is not started again (its id stays
   * taken: `ended` is true, and the caller's next call says the agent ended).
   */
  async ensureStarted(input: AgentSpecInput): Promise<{ workflowId: string; ended: boolean }> {
    try {
      const r = await this.start(input, { ifExists: 'use' });
      return { workflowId: r.workflowId, ended: false };
    } catch (err) {
      if (err instanceof AgentAlreadyRunningError) return { workflowId: workflowIdFor(input.agentId), ended: true };
      throw err;
    }
  }

  /**
   * Start supervising an agent. Refuses a second start of a running agent id, and a workflow id
   * that is not `agent-<agentId>` (`opts.workflowId`, for callers that name the workflow).
   */
  async start(
    input: AgentSpecInput,
    opts: { workflowId?: string; ifExists?: 'fail' | 'use' } = {},
  ): Promise<{ spec: AgentSpec; workflowId: string; runId: string; searchAttributes: boolean; labelsSearchable?: boolean }> {
    const spec = parseOrThrow(AgentSpecSchema, input, 'AgentSpec');
    if (opts.workflowId !== undefined && opts.workflowId !== workflowIdFor(spec.agentId)) {
      throw new InvalidInputError(
        `workflowId: ${JSON.stringify(opts.workflowId)} does not match agentId ${JSON.stringify(spec.agentId)}; an agent's workflow id is ${workflowIdFor(spec.agentId)}`,
      );
    }
    const registered = await this.registeredSearchAttributes();
    // The attributes added later are optional: a namespace without one still gets the rest, and the
    // run, not started with it, never sends it (search-attributes.ts).
    const searchAttributes = spec.searchAttributes && agentAttributesRegistered(registered);
    const finalSpec: AgentSpec = { ...spec, searchAttributes };
    // Labels are published once, here, as WardenLabels: the workflow never upserts them (a group's
    // counter lists its agents by them). Without the attribute the agent runs, unseen by its groups.
    const groups = groupsOf(spec.labels);
    const labelsSearchable = searchAttributes && groups.length > 0 && registered.includes(WardenLabels.name);
    try {
      const handle = await this.client.workflow.start(WORKFLOW_TYPE, {
        taskQueue: this.taskQueue,
        workflowId: workflowIdFor(spec.agentId),
        args: [finalSpec],
        // 'use': a running workflow of that id is the answer (no error, no second run), and a
        // closed one is not started again (that is a WorkflowExecutionAlreadyStartedError).
        workflowIdConflictPolicy: opts.ifExists === 'use' ? 'USE_EXISTING' : 'FAIL',
        workflowIdReusePolicy: opts.ifExists === 'use' ? 'REJECT_DUPLICATE' : 'ALLOW_DUPLICATE',
        // The memo, which visibility lists and Temporal copies across continue-as-new: the task's
        // first line (a roster row not queried still says what the agent does), and a labelled
        // agent's epoch for its groups' counters (src/domain/group/budget.ts).
        memo: {
          wardenTask: spec.task.split('\n')[0]!.slice(0, 180),
          ...(groups.length > 0 && { wardenEpoch: randomUUID(), wardenStartedAt: Date.now() }),
        },
        staticSummary: `Supervising ${spec.agentId}: ${spec.task.split('\n')[0]!.slice(0, 180)}`,
        staticDetails: `evaluator **${spec.evaluator.kind}** · window ${spec.supervisor.windowSize} · every ${spec.supervisor.evalInterval} turns · escalate at step ${spec.supervisor.escalationThreshold}`,
        ...(searchAttributes
          ? {
              typedSearchAttributes: [
                { key: WardenState, value: 'spawning' },
                { key: WardenEscalationStep, value: 0 },
                { key: WardenPaused, value: false },
                { key: WardenCostUsd, value: 0 },
                { key: WardenTokens, value: 0 },
                ...(registered.includes(WardenEvaluatorCostUsd.name) ? [{ key: WardenEvaluatorCostUsd, value: 0 }] : []),
                ...(labelsSearchable ? [{ key: WardenLabels, value: groups }] : []),
              ],
            }
          : {}),
      } as Parameters<Client['workflow']['start']>[1]);
      return {
        spec: finalSpec,
        workflowId: handle.workflowId,
        runId: handle.firstExecutionRunId,
        searchAttributes,
        ...(groups.length > 0 && { labelsSearchable }),
      };
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new AgentAlreadyRunningError(spec.agentId);
      throw err;
    }
  }

  /**
   * Report one turn of an externally running agent; the reply carries every queued whisper.
   * A turn without an id gets one, so that a retry is recognised as the same turn. The turn id
   * doubles as the update id (Temporal dedupes within a run; the workflow remembers recent ids
   * across continue-as-new). An update that meets a failed or superseded workflow task — as
   * happens when the workflow continues-as-new under it — is retried with the same id.
   */
  async reportTurn(agentId: string, turn: TurnInput): Promise<ReportTurnReply> {
    // Unknown fields are refused by name (the workflow's validator does the same), never dropped silently.
    const unknown = unknownTurnFields(turn);
    if (unknown.length) throw new InvalidInputError(`invalid turn: unknown field${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 5).join(', ')}`);
    const parsed = parseOrThrow(TurnSchema, turn, 'turn');
    // What is sent is the bounded turn, never the raw one: the update's accepted event stores the
    // argument whole, so the byte budget is applied here, before sending, with the fields named.
    const fitted = fitTurnToBudget(parsed);
    const truncated = [...new Set([...schemaTruncations(turn, parsed), ...fitted.truncated])];
    // A turn without an id gets one here, before the first attempt, and every retry below sends
    // the same id: the update id is `turn-<id>`, so Temporal answers a repeat of an update it has
    // already taken with that update's result (within a run; the workflow remembers recent ids
    // across continue-as-new). Retrying is therefore safe even when an earlier attempt may have
    // been accepted. A caller that re-sends a failed report itself must pass its own `id`: a new
    // call without one is a new turn.
    const withId = { ...fitted.turn, id: parsed.id ?? randomUUID() } as TurnInput & { id: string };
    const handle = this.handle(agentId);
    return this.updates.run(agentId, async () => {
      const started = Date.now();
      for (let attempt = 1; ; attempt++) {
        try {
          const reply = await handle.executeUpdate(reportTurnUpdate, {
            args: [withId],
            updateId: `turn-${withId.id}`,
          });
          return { ...reply, truncated };
        } catch (err) {
          const retryable = isTransientUpdateError(err) || describeTemporalError(err).retryable;
          const delay = backoffMs(attempt, REPORT_RETRY);
          if (retryable && attempt < REPORT_RETRY.maxAttempts && Date.now() - started + delay <= REPORT_RETRY.maxElapsedMs) {
            await new Promise((r) => setTimeout(r, delay));
            continue;
          }
          throw await this.translate(agentId, err);
        }
      }
    });
  }

  async signal<N extends SignalName>(agentId: string, name: N, payload: SignalPayload<N> = {} as SignalPayload<N>): Promise<void> {
    const parsed = parseOrThrow(SIGNAL_SCHEMAS[name] as z.ZodType, payload, `${name} payload`);
    const handle = this.handle(agentId);
    try {
      await this.ensureRunning(handle, agentId);
      await handle.signal(agentSignals[name], parsed as SignalPayload<N>);
    } catch (err) {
      throw await this.translate(agentId, err);
    }
  }

  /**
   * Send a control signal (steer, interrupt, stop, pause, resume, abort) and find out what became
   * of it: the workflow either applies it (a new transition) or refuses it (a new `refused` entry
   * with the state table's reason). Waits up to `timeoutMs` (default 3 s) for the status query to
   * show one or the other; `pending` means neither was seen in time. Without a worker to answer the
   * status query the signal is still sent, and the outcome is `unchecked`.
   * One function, so that a control *update* (answered by the workflow itself) can replace it.
   */
  async control<N extends ControlVerb>(
    agentId: string,
    verb: N,
    payload: SignalPayload<N> = {} as SignalPayload<N>,
    opts: { timeoutMs?: number; intervalMs?: number } = {},
  ): Promise<ControlOutcome | { kind: 'unchecked'; reason: string }> {
    parseOrThrow(SIGNAL_SCHEMAS[verb] as z.ZodType, payload, `${verb} payload`);
    return this.signalAndWatch(agentId, verb, payload, (before, after) => controlOutcome(verb, before, after), opts);
  }

  /**
   * Dismiss the agent's last flagged verdict as a false alarm (the `dismiss` signal): the ladder goes
   * back to step 0, the same finding no longer advances it, and an agent paused by that escalation
   * is resumed. Waits like `control` to see the workflow apply or refuse it.
   */
  async dismiss(
    agentId: string,
    payload: SignalPayload<'dismiss'> = {},
    opts: { timeoutMs?: number; intervalMs?: number } = {},
  ): Promise<ControlOutcome | { kind: 'unchecked'; reason: string }> {
    parseOrThrow(SIGNAL_SCHEMAS.dismiss, payload, 'dismiss payload');
    return this.signalAndWatch(agentId, 'dismiss', payload, dismissOutcome, opts);
  }

  /** The flagged windows the agent remembers and what humans decided about them (the `cases` query). */
  async cases(agentId: string): Promise<AgentCases> {
    try {
      return await this.handle(agentId).query(casesQuery);
    } catch (err) {
      const translated = await this.translate(agentId, err);
      if (translated !== err) throw translated;
      const e = err as { message?: string; cause?: { message?: string } };
      throw new Error(
        `cases query for agent ${agentId} failed (${e.cause?.message ?? e.message}); is a worker of this version running on task queue ${this.taskQueue}?`,
      );
    }
  }

  private async signalAndWatch<N extends SignalName>(
    agentId: string,
    name: N,
    payload: SignalPayload<N>,
    judge: (before: AgentStatus, after: AgentStatus) => ControlOutcome,
    opts: { timeoutMs?: number; intervalMs?: number },
  ): Promise<ControlOutcome | { kind: 'unchecked'; reason: string }> {
    const snapshot = async (): Promise<AgentStatus | null> => {
      try {
        return await this.handle(agentId).query(statusQuery);
      } catch {
        return null;
      }
    };
    const before = await snapshot();
    await this.signal(agentId, name, payload);
    if (!before) return { kind: 'unchecked', reason: 'no worker answered the status query, so the effect was not checked' };
    const deadline = Date.now() + (opts.timeoutMs ?? 3_000);
    let last: ControlOutcome = { kind: 'pending', state: before.state };
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
      const after = await snapshot();
      if (!after) continue;
      last = judge(before, after);
      if (last.kind !== 'pending') return last;
    }
    return last;
  }

  async status(agentId: string): Promise<AgentStatus> {
    const handle = this.handle(agentId);
    try {
      return await handle.query(statusQuery);
    } catch (err) {
      const translated = await this.translate(agentId, err);
      if (translated !== err) throw translated;
      if (isWedgedError(err)) throw new AgentWedgedError(agentId, 'Workflow Task in failed state');
      // A query that times out is not always a missing worker: a workflow task failing on every attempt looks the same.
      const attempt = await this.failingWorkflowTaskAttempt(agentId);
      if (attempt !== null) throw new AgentWedgedError(agentId, `its workflow task is on attempt ${attempt}`);
      const e = err as { message?: string; cause?: { message?: string } };
      throw new Error(
        `status query for agent ${agentId} failed (${e.cause?.message ?? e.message}); queries are answered by a worker — is \`warden worker\` running on task queue ${this.taskQueue}?`,
      );
    }
  }

  async pendingWhispers(agentId: string): Promise<Whisper[]> {
    try {
      return await this.handle(agentId).query(pendingWhispersQuery);
    } catch (err) {
      throw await this.translate(agentId, err);
    }
  }

  /**
   * Delegate: the agent hands a structured task spec to a child agent (a child workflow, `queued`
   * while it waits for a slot). Refused with a reason for solo mode, at the spawn-depth limit, or
   * for an invalid spec.
   */
  async delegate(agentId: string, task: TaskSpecInput): Promise<{ childAgentId: string; workflowId: string; queued: boolean }> {
    const parsed = parseOrThrow(TaskSpecSchema, task, 'task spec');
    try {
      return await this.handle(agentId).executeUpdate(delegateUpdate, {
        args: [parsed as TaskSpecInput],
        updateId: `delegate-${parsed.childId}`,
      });
    } catch (err) {
      throw await this.translate(agentId, err);
    }
  }

  /**
   * Set new budget limits (the `raiseBudget` update; `warden budget`): each given budget's limit
   * replaces the old one, recorded with `by` and the time. An agent paused because a budget was
   * reached runs again once none is. Refused (InvalidInputError naming the field) for a malformed
   * request, an ended agent, or a limit not above what the agent has already spent.
   */
  async raiseBudget(agentId: string, raise: RaiseBudgetInput): Promise<RaiseBudgetResult> {
    const parsed = parseOrThrow(RaiseBudgetSchema, raise, 'budget raise');
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.handle(agentId).executeUpdate(raiseBudgetUpdate, { args: [parsed as RaiseBudgetInput] });
      } catch (err) {
        // The run continued as new or its workflow task failed meanwhile: the next run takes it.
        if (attempt < 5 && isTransientUpdateError(err)) {
          await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
          continue;
        }
        throw await this.translate(agentId, err);
      }
    }
  }

  /**
   * How one of an agent's notifications went: the state of its notify workflow (`deliveryId` is that
   * workflow's id, `notify-…`) and, once it completed, its delivery report (per channel, delivered or
   * why not). Null when there is no such workflow (its retention ran out, or it never started).
   */
  async notificationDelivery(deliveryId: string): Promise<{ status: string; report: DeliveryReport | null } | null> {
    if (!/^notify-[\x21-\x7e]{1,300}$/.test(deliveryId))
      throw new InvalidInputError(`deliveryId: ${JSON.stringify(deliveryId.slice(0, 100))} is not a notification's delivery id`);
    const handle = this.client.workflow.getHandle(deliveryId);
    try {
      const d = await handle.describe();
      if (d.status.name !== 'COMPLETED') return { status: d.status.name, report: null };
      return { status: d.status.name, report: (await handle.result()) as DeliveryReport };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number })?.code === 5) return null;
      throw err;
    }
  }

  /** The turns the supervisor currently evaluates (the rolling window). */
  async window(agentId: string): Promise<Turn[]> {
    try {
      return await this.handle(agentId).query(windowQuery);
    } catch (err) {
      throw await this.translate(agentId, err);
    }
  }

  /**
   * Agents known to the namespace (each one's live or last run: not the runs it continued as new
   * from), newest first (by start time), from visibility. SQL visibility
   * has no ORDER BY, so up to `scan` (default 10000) matching workflows are read and sorted here.
   * A query the server refuses is invalid input, with the server's reason.
   */
  async list(opts: { query?: string; limit?: number; scan?: number } = {}): Promise<AgentSummary[]> {
    const q = [AGENT_RUNS_QUERY, opts.query ? `(${opts.query})` : ''].filter(Boolean).join(' AND ');
    const out: AgentSummary[] = [];
    try {
      await this.collect(q, out, opts.scan ?? 10_000);
    } catch (err) {
      throw listError(err, opts.query);
    }
    out.sort((a, b) => (a.startTime < b.startTime ? 1 : a.startTime > b.startTime ? -1 : 0));
    return out.slice(0, opts.limit ?? 100);
  }

  private async collect(q: string, out: AgentSummary[], max: number): Promise<void> {
    for await (const wf of this.client.workflow.list({ query: q })) {
      const sa = wf.typedSearchAttributes;
      out.push({
        agentId: agentIdFrom(wf.workflowId),
        workflowId: wf.workflowId,
        runId: wf.runId,
        status: wf.status.name,
        state: (sa.get(WardenState as never) as string | undefined) ?? null,
        escalationStep: (sa.get(WardenEscalationStep as never) as number | undefined) ?? null,
        paused: (sa.get(WardenPaused as never) as boolean | undefined) ?? null,
        costUsd: (sa.get(WardenCostUsd as never) as number | undefined) ?? null,
        tokens: (sa.get(WardenTokens as never) as number | undefined) ?? null,
        startTime: wf.startTime.toISOString(),
        closeTime: wf.closeTime?.toISOString() ?? null,
        labels: labelsFromGroups(sa.get(WardenLabels as never) as unknown[] | undefined),
      });
      if (out.length >= max) break;
    }
  }

  /** The attempt number of the agent's pending workflow task when it has failed before (≥ 2), else null. */
  private async failingWorkflowTaskAttempt(agentId: string): Promise<number | null> {
    try {
      const d = await this.client.workflow.getHandle(workflowIdFor(agentId)).describe();
      const attempt = Number(d.raw.pendingWorkflowTask?.attempt ?? 0);
      return d.status.name === 'RUNNING' && attempt >= 2 ? attempt : null;
    } catch {
      return null;
    }
  }

  private async ensureRunning(handle: WorkflowHandle, agentId: string): Promise<void> {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') {
      throw new AgentEndedError(agentId, d.status.name.toLowerCase(), `agent ${agentId} is not running (workflow ${d.status.name.toLowerCase()})`);
    }
  }

  /** Map SDK errors to warden's: unknown agent (exit 3), ended agent or rejected input (exit 2). */
  private async translate(agentId: string, err: unknown): Promise<unknown> {
    const e = err as { code?: number; message?: string; cause?: { message?: string } };
    if (err instanceof WorkflowUpdateFailedError) return new InvalidInputError(e.cause?.message ?? e.message ?? 'update rejected');
    if (isWedgedError(err)) return new AgentWedgedError(agentId, 'Workflow Task in failed state');
    const notFound = err instanceof WorkflowNotFoundError || e?.code === 5 || /not found|already completed/i.test(e?.message ?? '');
    if (!notFound) return named(err);
    // NOT_FOUND also means "that run has closed": tell an ended agent from one that never existed.
    try {
      const d = await this.client.workflow.getHandle(workflowIdFor(agentId)).describe();
      if (d.status.name !== 'RUNNING') {
        return new AgentEndedError(agentId, d.status.name.toLowerCase());
      }
      return err;
    } catch {
      return new AgentNotFoundError(agentId);
    }
  }
}

/**
 * The SDK's gRPC retry, less one case: a request over the server's message size limit is refused
 * as RESOURCE_EXHAUSTED, which the SDK retries ten times over half a minute though it can never pass.
 */
export function grpcRetryInterceptor() {
  const defaults = defaultGrpcRetryOptions();
  return makeGrpcRetryInterceptor({
    ...defaults,
    retryableDecider: (attempt, status) =>
      describeTemporalError({ code: status.code, details: status.details, message: status.details }).kind !== 'message-too-large' &&
      defaults.retryableDecider(attempt, status),
  });
}

/** An SDK error that says only "Workflow Update failed" (or the like) becomes one that names Temporal's reason. */
function named(err: unknown): unknown {
  const d = describeTemporalError(err);
  const generic = err instanceof Error && GENERIC_SDK_MESSAGES.test(err.message);
  if (!generic && d.kind === 'other') return err;
  return new TemporalRefusedError(d.message, d.kind, d.retryable, { cause: err });
}

/**
 * The SDK reports a refused list as "Failed to list workflows"; the server's reason is in the
 * cause (gRPC INVALID_ARGUMENT, e.g. "invalid query: ... Bogus is not a valid search attribute").
 */
export function listError(err: unknown, query: string | undefined): unknown {
  const e = err as { message?: string; code?: number; details?: string; cause?: { message?: string; code?: number; details?: string } };
  const c = e?.cause ?? e;
  const reason = c?.details || c?.message || e?.message || String(err);
  if (c?.code === 3 /* INVALID_ARGUMENT */ || e?.code === 3) {
    return new InvalidInputError(`invalid --query ${JSON.stringify(query ?? '')}: ${reason}`);
  }
  return new Error(`listing agents failed: ${reason}`);
}

export type { ControlOutcome, ControlVerb } from '../domain/contract/control.js';
export type { AgentStatus, ReportTurnResult } from '../domain/contract/status.js';

export type { AgentSpec, AgentSpecInput, Turn, TurnInput, Whisper } from '../domain/contract/schemas.js';
