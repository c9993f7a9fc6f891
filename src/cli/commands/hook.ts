/**
 * `warden hook claude|codex`: the command around the hook bridge. The protocol and what warden
 * answers are in src/hooks/ (protocol.ts, handle.ts). The agent must never suffer for its
 * supervisor: unless `--strict`, any failure writes one line to stderr and exits 0 with no output.
 */
import type { Command } from 'commander';
import type { WardenClient } from '../../client/index.js';
import { connectionSettings } from '../../config/connection.js';
import { HOOK_STDIN_MAX_BYTES, readStdinBounded } from '../../hooks/bounded-read.js';
import { HookInputError, answerHookEvent, connectForHook, hookFailed } from '../../hooks/event.js';
import type { ClaudeHookOutput, HookAgent } from '../../hooks/protocol.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { visible } from '../../text/sanitize.js';

// ---------- the command ----------

interface HookOptions {
  agent?: string;
  strict?: boolean;
  timeout: string;
}

async function connect(cmd: Command, timeoutMs: number): Promise<WardenClient> {
  const g = globals(cmd);
  return connectForHook(connectionSettings({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue }), timeoutMs);
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
    const session: { id?: string } = {}; // the auto-started agent of this event's session, once known
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
        const client = async () => (conn.client ??= await connect(cmd, timeoutMs));
        try {
          return await answerHookEvent({ agent, raw, named, env: process.env, cwd: process.cwd(), started, timeoutMs, client, warn }, session);
        } catch (err) {
          throw err instanceof HookInputError ? new UsageError(err.message) : err;
        }
      })();
      work.catch(() => {}); // the deadline may win; the loser's rejection is not news
      const out = await Promise.race([work, deadline]);
      if (out) process.stdout.write(`${JSON.stringify(out)}\n`);
    } catch (err) {
      if (strict) throw err;
      // An auto-started session hears it once, not at every tool call.
      hookFailed(err, session, warn);
    } finally {
      clearTimeout(timer);
      // Never wait on a connection that hangs: the process exits right after this (see main.ts).
      void conn.client?.close().catch(() => {});
    }
  };
}
