/**
 * The `command` driver: any program that speaks warden's turn protocol, so teams can wrap their own
 * agent in any language.
 *
 * Protocol, one process per turn:
 *   stdin   one JSON object: {agentId, task, turnNumber, input, whispers, session, workDir, doneMarker, toolAllowlist,
 *           mesh?: {runId, task, checkpoint, patch} for a mesh worker, compact?: {handoff}}
 *   compact present only on a compaction turn (the ladder's last resort before escalation): drop
 *           whatever context the agent keeps (its conversation, its memory) and start afresh from
 *           `input`, which holds the handoff (task, progress, the corrections it ignored, what to do
 *           next); `session` is null. Reply as for any turn; the session you return is the new one.
 *   stdout  JSON lines. Optional progress lines {"partial": {text?, toolCalls?}} (each one is a
 *           heartbeat and the partial turn kept if the turn is cancelled); the LAST line is the
 *           result: {"turn": Turn, "session"?: object, "done"?: boolean, "result"?: any}
 *   exit    0. Anything else fails the turn (stderr's tail is in the error), except a rate limit:
 *           exit 75, or a stderr line {"rateLimited": {"retryAfterMs"?: number, "reason"?: string}}
 *           with any non-zero exit, says the model is rate-limited or overloaded. The turn is then
 *           retried after a backoff and the agent shows `blocked` meanwhile (src/domain/agent/rate-limit.ts).
 *   signals on interrupt/stop-after-drain/abort the process group gets SIGTERM, then SIGKILL after
 *           the grace period.
 * The program runs in the agent's working directory with WARDEN_AGENT_ID, WARDEN_TURN and WARDEN_AGENT_HOME
 * set, and otherwise only the explicit environment of src/config/worker.ts (PATH, HOME, LANG, …, plus
 * the operator's WARDEN_SUBPROCESS_ENV_ALLOW): never the worker's secrets.
 */
import { z } from 'zod';
import { describeZodError, type DriverConfig, ToolCallSchema, TurnSchema } from '../../src/domain/contract/schemas.js';
import { subprocessEnv } from '../../src/config/worker.js';
import { classifyTurnFailure, type RateLimit } from '../../src/domain/agent/rate-limit.js';
import { runInGroup } from '../process-group.js';
import type { Driver } from './types.js';

const ResultLine = z.object({
  turn: TurnSchema,
  session: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).nullish(),
  done: z.boolean().default(false),
  /** With done: the agent's result (a delegated child's deliverable). */
  result: z.unknown().optional(),
});
const PartialLine = z.object({ partial: z.object({ text: z.string().default(''), toolCalls: z.array(ToolCallSchema).optional() }) });

export class TurnProtocolError extends Error {
  override name = 'TurnProtocolError';
}

/** A turn that failed because the model is rate-limited: retried after a backoff, never counted as a failure. */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError';
  constructor(
    message: string,
    readonly limit: RateLimit,
  ) {
    super(message);
  }
}

export function commandDriver(config: Extract<DriverConfig, { kind: 'command' }>): Driver {
  const [file, ...args] = config.command;
  return {
    name: 'command',
    async runTurn(req, ctx) {
      let partial: z.output<typeof PartialLine>['partial'] = { text: '' };
      let last: string | null = null;
      const stdin = JSON.stringify({
        agentId: req.agentId,
        task: req.task,
        turnNumber: req.turnNumber,
        input: req.input,
        whispers: req.whispers,
        session: req.session,
        workDir: req.workDir,
        doneMarker: req.doneMarker,
        toolAllowlist: req.toolAllowlist ?? [],
        ...(req.compact && { compact: req.compact }),
        ...(config.env?.WARDEN_MESH_RUN && {
          mesh: {
            runId: config.env.WARDEN_MESH_RUN,
            task: config.env.WARDEN_MESH_TASK,
            checkpoint: config.env.WARDEN_MESH_CHECKPOINT,
            patch: config.env.WARDEN_MESH_PATCH,
          },
        }),
      });
      const r = await runInGroup(
        file!,
        args,
        {
          input: stdin,
          cwd: req.workDir,
          // Explicit: the base set, the operator's WARDEN_SUBPROCESS_ENV_ALLOW, and warden's own names (a mesh worker's WARDEN_MESH_* from its config).
          extendEnv: false,
          env: subprocessEnv({ ...config.env, WARDEN_AGENT_ID: req.agentId, WARDEN_TURN: String(req.turnNumber), WARDEN_AGENT_HOME: req.homeDir }),
          stdout: 'pipe',
          stderr: 'pipe',
          maxBuffer: 20_000_000,
        },
        {
          signal: ctx.signal,
          killGraceMs: ctx.killGraceMs,
          onStdoutLine: (line) => {
            last = line;
            try {
              const p = PartialLine.safeParse(JSON.parse(line));
              if (p.success) {
                partial = p.data.partial;
                ctx.heartbeat(partial);
              }
            } catch {
              /* not JSON: ignored, except as the last line */
            }
          },
        },
      );
      const id = `${req.agentId}-turn-${req.turnNumber}`;
      if (r.aborted) {
        return { turn: TurnSchema.parse({ ...partial, id, text: partial.text || '(interrupted)' }), session: req.session, done: false, interrupted: true };
      }
      if (r.exitCode !== 0) {
        const tail = String(r.stderr ?? '')
          .trim()
          .split('\n')
          .slice(-8)
          .join('\n');
        const limit = r.exitCode === undefined ? null : classifyTurnFailure({ driver: 'command', exitCode: r.exitCode, text: String(r.stderr ?? '') });
        if (limit) throw new RateLimitedError(`agent command exited with code ${r.exitCode}: ${limit.reason}`, limit);
        throw new Error(`agent command ${r.exitCode === undefined ? `was killed by ${r.signal}` : `exited with code ${r.exitCode}`}: ${tail || '(no stderr)'}`);
      }
      if (!last) throw new TurnProtocolError('agent command printed no result line');
      let json: unknown;
      try {
        json = JSON.parse(last);
      } catch {
        throw new TurnProtocolError(`the last stdout line is not JSON: ${JSON.stringify(String(last).slice(0, 200))}`);
      }
      const parsed = ResultLine.safeParse(json);
      if (!parsed.success) throw new TurnProtocolError(`invalid turn result: ${describeZodError(parsed.error)}`);
      const { turn, session, done, result } = parsed.data;
      return { turn: { ...turn, id: turn.id ?? id }, session: session ?? req.session, done, ...(result !== undefined && { result }) };
    },
  };
}
