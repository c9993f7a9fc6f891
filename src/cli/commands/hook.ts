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
import { visible } from '../sanitize.js';

const DEFAULT_TIMEOUT_MS = 10_000;
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
function bridge(agent: HookAgent) {
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

function bridgeCommand(hook: Command, agent: HookAgent, what: string, help: string): void {
  hook
    .command(agent)
    .description(`a ${what} hook: reads the hook event (JSON) on stdin, reports to warden, prints the hook answer`)
    .option('--agent <id>', "the supervised agent (default $WARDEN_AGENT_ID; without either, the session's own agent, started by its first hook event)")
    .option('--strict', 'fail when warden cannot be reached or the agent is unknown (default: warn on stderr, exit 0, say nothing)')
    .option(
      '--timeout <ms>',
      'give up after this long, whatever the inputs (stdin, the transcript, warden itself); then the same as unreachable',
      String(DEFAULT_TIMEOUT_MS),
    )
    .addHelpText('after', help)
    .action(bridge(agent));
}

export function register(program: Command): void {
  const hook = program.command('hook').description("bridges for coding agents' hooks: report their turns to warden and hand them its whispers");

  bridgeCommand(
    hook,
    'claude',
    'Claude Code',
    `
Events: PreToolUse (deny tool calls while the agent is paused), PostToolUse and PostToolUseFailure
(report the call as a turn, deliver whispers), UserPromptSubmit and SessionStart (deliver pending
whispers), Stop (report the final text; block the stop once to deliver whispers), PreCompact and
PostCompact (the agent shows "compacting" while Claude Code compacts its own context), SessionEnd
(the agent ends done after supervisor.sessionEndGraceMs unless the session resumes), Notification
(a permission or idle prompt: the agent is awaiting-input with the pending tool call as the reason,
and the notification channels hear it once; its next tool call or prompt ends the wait). For an agent
started with --verify or --protect, a Stop claims the task done: the hook waits (within --timeout)
for warden's check and, when it fails, blocks the stop with the [VERIFY] whisper as the reason.
Give the Stop hook a --timeout longer than the check (and Claude's own hook "timeout" longer still).
Wire it with \`warden install claude\` (every session then starts its own agent on its first hook
event, named <project>-<session>; WARDEN_AUTO_START=0 turns that off), or by hand in
.claude/settings.json for an agent you started (warden start fixer --task "…"), for example:
  {"hooks": {"PostToolUse": [{"matcher": "*", "hooks": [{"type": "command",
     "command": "warden hook claude --agent fixer"}]}], ...}}`,
  );

  bridgeCommand(
    hook,
    'codex',
    'Codex CLI',
    `
Events: PreToolUse (deny tool calls while the agent is paused), PostToolUse (report the call as a
turn, deliver whispers), UserPromptSubmit and SessionStart (deliver pending whispers), Stop (report
the final message; block the stop once to deliver whispers), PreCompact and PostCompact (the agent
shows "compacting" while codex compacts its own context), SessionEnd (codex exec exits: the agent
ends done after supervisor.sessionEndGraceMs unless codex exec resume continues the session; codex
allows this hook 3 s), PermissionRequest (codex asks its human to
approve a tool call: the agent is awaiting-input with the call as the reason, the notification
channels hear it once, and the hook leaves the decision to the human). For an agent started with --verify
or --protect, a Stop claims the task done and waits (within --timeout) for warden's check; a
failed check blocks the stop with the [VERIFY] whisper as the reason.
Wire it with \`warden install codex\` (every session then starts its own agent on its first hook
event, named <project>-<session>; WARDEN_AUTO_START=0 turns that off), or by hand in
$CODEX_HOME/config.toml (or .codex/config.toml of a trusted project) for an agent you started
(warden start fixer --task "…"), for example:
  [[hooks.PostToolUse]]
  matcher = "*"
  [[hooks.PostToolUse.hooks]]
  type = "command"
  command = "warden hook codex --agent fixer"
Codex runs a hook only once it is trusted (/hooks in the TUI), or with --dangerously-bypass-hook-trust.`,
  );
}
