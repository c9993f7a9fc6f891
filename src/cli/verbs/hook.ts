/** `warden hook claude|codex`: the definition; the bridge itself is in ../commands/hook.ts, loaded when a hook runs. */
import type { Command } from 'commander';
import type { HookAgent } from '../../hooks/protocol.js';
import { lazy } from './lazy.js';

const DEFAULT_TIMEOUT_MS = 10_000;

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
    .action(
      lazy(
        () => import('../commands/hook.js'),
        (m) => m.bridge(agent),
      ),
    );
}

export function register(program: Command): void {
  const hook = program.command('hook').description("bridges for coding agents' hooks: report their turns to warden and hand them its whispers");

  bridgeCommand(
    hook,
    'claude',
    'Claude Code',
    `
Events: PreToolUse (deny tool calls while the agent is paused or after it was aborted, and a call on
warden's controls of the agent itself, recorded as REWARD_HACKING), PostToolUse and PostToolUseFailure
(report the call as a turn, deliver whispers), UserPromptSubmit and SessionStart (deliver pending
whispers), Stop (report the final text, with the tokens the session's transcript records since the
last counted turn; block the stop once to deliver whispers), PreCompact and
PostCompact (the agent shows "compacting" while Claude Code compacts its own context), SessionEnd
(the agent ends done after supervisor.sessionEndGraceMs unless the session resumes), Notification
(a permission or idle prompt: the agent is awaiting-input with the pending tool call as the reason,
and the notification channels hear it once; its next tool call or prompt ends the wait), StopFailure
(the turn ended on an API error: a rate limit or an overloaded model makes the agent blocked with the
reason, any other error awaiting-input with one alert; its next tool call or prompt ends either),
PermissionDenied (a denied tool call is reported as a failed call marked denied; the same call
denied three times is SPIRALING), SubagentStart and SubagentStop (sub-agents are listed under the
agent in its status while they run; at a stop, the tokens its transcript records count toward the
agent's budgets). For an agent
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
Events: PreToolUse (deny tool calls while the agent is paused or after it was aborted, and a command
on warden's controls of the agent itself, recorded as REWARD_HACKING), PostToolUse (report the call as a
turn, deliver whispers), UserPromptSubmit and SessionStart (deliver pending whispers), Stop (report
the final message, with how much the token totals in the session's rollout grew since the last
counted turn; block the stop once to deliver whispers), PreCompact and PostCompact (the agent
shows "compacting" while codex compacts its own context), SubagentStart and SubagentStop (sub-agents
are listed under the agent while they run; at a stop, the token totals of its own rollout count
toward the agent's budgets), SessionEnd (codex exec exits: the agent
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
