/** `warden mcp`: warden's MCP server over stdio (the implementation is ../commands/mcp.ts, loaded when it runs). */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('mcp')
    .description('an MCP server over stdio: tools to list, inspect, steer, pause, resume, dismiss, abort and start supervised agents')
    .addHelpText(
      'after',
      `
Speaks the Model Context Protocol on stdin and stdout, for an MCP client that starts it (Claude
Code, Codex, …); it prints nothing else there. It connects to Temporal (--address, --namespace,
--task-queue, or the TEMPORAL_* environment) when the first tool needs it.

Tools: list_agents, agent_status, steer, pause, resume, dismiss, abort, start. Resource:
warden://agents/{agentId}/timeline. Answers are JSON (structuredContent), bounded; text an agent
wrote is under "untrusted" keys. \`warden serve\` answers the same tools over HTTP at /mcp, with the
bearer token in $WARDEN_HOME/mcp-token.

Examples:
  claude mcp add warden -- warden mcp
  codex mcp add warden -- warden mcp
  warden --address 127.0.0.1:7233 mcp`,
    )
    .action(
      lazy(
        () => import('../commands/mcp.js'),
        (m) => m.mcpAction,
      ),
    );
}
