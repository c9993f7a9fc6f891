/**
 * `warden hook claude|codex`: the command around the hook bridge. The protocol and what warden
 * answers are in src/hooks/ (protocol.ts, handle.ts). The agent must never suffer for its
 * supervisor: unless `--strict`, any failure writes one line to stderr and exits 0 with no output.
 */
import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { WardenClient } from '../../client/index.js';
import { connectionSettings } from '../../config/connection.js';
import { HOOK_STDIN_MAX_BYTES, readStdinBounded } from '../../hooks/bounded-read.js';
import { autoStarting, markUnreachable, planSession, sayOnce, sessionMarkerDir, sessionProjectDir, unreachableRecently } from '../../hooks/auto-start.js';
import { handleHook } from '../../hooks/handle.js';
import { sessionAgentId } from '../../hooks/session.js';
import { checkHookInput, type ClaudeHookOutput, type CodexHookInput, type HookAgent } from '../../hooks/protocol.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { jsonTooDeep } from '../../json-depth.js';
import { visible } from '../sanitize.js';

const CONNECT_TIMEOUT_MS = 3_000;
const VERIFY_ANSWER_MARGIN_MS = 2_000;
const CANNOT_REACH = 'cannot reach Temporal';

// ---------- the command ----------

interface HookOptions {
  agent?: string;
  strict?: boolean;
  timeout: string;
}

async function connect(cmd: Command, timeoutMs: number): Promise<WardenClient> {
  const g = globals(cmd);
  const settings = connectionSettings({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue });
  let connection: Connection;
  try {
    connection = await Connection.connect({
      ...settings.connectionOptions,
      connectTimeout: Math.min(CONNECT_TIMEOUT_MS, Math.ceil(timeoutMs / 2)), // so its own, clearer error comes first
    } as Parameters<typeof Connection.connect>[0]);
  } catch (err) {
    throw new Error(`${CANNOT_REACH} at ${settings.connectionOptions.address} (${err instanceof Error ? err.message : String(err)})`);
  }
  return new WardenClient(new Client({ connection, namespace: settings.namespace }), settings.taskQueue, connection);
}

/** The action of `warden hook <agent>`: stdin → handleHook → stdout, never in the agent's way unless --strict. */
export function bridge(agent: HookAgent) {
  return async (o: HookOptions, cmd: Command): Promise<void> => {
    const started = Date.now();
    const strict = Boolean(o.strict);
    const timeoutMs = Number(o.timeout);
    // One line on stderr; it may echo agent or server text, so terminal controls are shown as text.
    const warn = (line: string) => process.stderr.write(`warden hook: ${visible(line)}\n`);
    const conn: { client: WardenClient | null } = { client: null };
    let session: string | undefined; // the auto-started agent of this event's session, once known
    let timer: NodeJS.Timeout | undefined;
    try {
      if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new UsageError(`--timeout must be a positive number of milliseconds, not ${o.timeout}`);
      // No agent named: the session's own agent, started on its first hook event (auto-start).
      const named = o.agent ?? process.env.WARDEN_AGENT_ID;
      // The deadline covers everything the hook does: reading stdin (which may never end), reading
      // the transcript (see hooks/bounded-read.ts) and talking to warden. Every read is
      // asynchronous, so this timer fires whatever the inputs are.
      let phase: 'stdin' | 'warden' = 'stdin';
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                phase === 'stdin'
                  ? `the hook input on stdin did not end within ${timeoutMs} ms`
                  : `no answer from warden within ${timeoutMs} ms (is a worker running?)`,
              ),
            ),
          timeoutMs,
        );
      });
      const work = (async (): Promise<ClaudeHookOutput | null> => {
        const raw = await readStdinBounded(HOOK_STDIN_MAX_BYTES);
        phase = 'warden';
        const deep = jsonTooDeep(raw, 'the hook input on stdin');
        if (deep) throw new UsageError(deep);
        let parsed: unknown;
        try {
          parsed = JSON.parse(raw);
        } catch (err) {
          throw new UsageError(`the hook input on stdin is not JSON: ${(err as Error).message}`);
        }
        let input: CodexHookInput;
        try {
          input = checkHookInput(parsed);
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        // A Stop that claims done waits for warden's check, leaving room to answer within the deadline.
        const waitUntil = started + timeoutMs - Math.min(VERIFY_ANSWER_MARGIN_MS, timeoutMs / 4);
        const client = async () => (conn.client ??= await connect(cmd, timeoutMs));
        if (named) return handleHook(agent, input, named, client, warn, waitUntil);
        // Known before the config file is read, so that a bad one is reported once per session too.
        if (input.session_id) session = sessionAgentId(sessionProjectDir(agent, input), input.session_id);
        const plan = planSession(agent, input);
        if (plan.untrusted) sayOnce(sessionMarkerDir(), plan.agentId, plan.untrusted, warn, 'untrusted');
        if (plan.off) {
          sayOnce(sessionMarkerDir(), plan.agentId, `${plan.off}; session ${input.session_id} is not supervised`, warn);
          return null;
        }
        // Temporal was unreachable a moment ago: don't make every tool call wait for that again.
        if (unreachableRecently(sessionMarkerDir(), plan.agentId)) return null;
        return handleHook(agent, input, plan.agentId, autoStarting(client, plan.spec), warn, waitUntil);
      })();
      work.catch(() => {}); // the deadline may win; the loser's rejection is not news
      const out = await Promise.race([work, deadline]);
      if (out) process.stdout.write(`${JSON.stringify(out)}\n`);
    } catch (err) {
      if (strict) throw err;
      const why = err instanceof Error ? err.message : String(err);
      // An auto-started session hears it once, not at every tool call.
      if (session) {
        if (why.startsWith(CANNOT_REACH)) markUnreachable(sessionMarkerDir(), session);
        sayOnce(sessionMarkerDir(), session, `supervision is off for this session (agent ${session}): ${why}`, warn);
      } else warn(`${why} — continuing without supervision`);
    } finally {
      clearTimeout(timer);
      // Never wait on a connection that hangs: the process exits right after this (see main.ts).
      void conn.client?.close().catch(() => {});
    }
  };
}
