/** The definition of this command (options, help); the implementation is ../commands/serve.ts, loaded when it runs. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export const DEFAULT_LISTEN = '127.0.0.1:8788';

export function register(program: Command): void {
  program
    .command('serve')
    .description(
      "this user's warden over HTTP: the hook endpoint that Claude Code and Codex hooks post to, warden's MCP tools at /mcp, the web console, and (with WARDEN_LINK_SECRET) the action links of notifications",
    )
    .option(
      '--listen <host:port>',
      `where to listen (default: the hook endpoint's address in $WARDEN_HOME/hook-endpoint.json, else ${DEFAULT_LISTEN}: this machine only; put a proxy with TLS in front to expose links)`,
    )
    .option('--rotate-console-token', "replace the web console's login tokens (operator and read-only) before starting: every open console session ends")
    .option('--json', 'print {ready, url, hooks, links, mcp, console, pid} as JSON when listening')
    .addHelpText(
      'after',
      `
Hook events: POST /hooks/claude and /hooks/codex, taken from this machine only and only with the
token in $WARDEN_HOME/hook-endpoint.json (created by \`warden install\` or by this command; 0600).
Claude Code's HTTP hooks post here directly; every other hook runs \`warden-hook claude|codex\`, which
forwards its stdin here and starts this server (detached, logging to $WARDEN_HOME/serve.log) when
nothing listens at the endpoint's address. Run it yourself (or as a service) to keep it up.

MCP: POST /mcp speaks the Model Context Protocol (streamable HTTP, stateless) with the tools of
\`warden mcp\`, for requests that carry \`Authorization: Bearer <token>\` with the token in
$WARDEN_HOME/mcp-token (created by this command when missing; 0600; replace the file to rotate it).
Requests from web pages (with an Origin header) are refused.

Web console: /console, the fleet in a browser (agents that need a human first, as in
\`warden top\`) and each agent's timeline, with resume, steer, pause, dismiss and abort buttons.
This command prints its address with the operator's login token (opening it logs the browser
in); $WARDEN_HOME/console-tokens.json (0600) holds that token and a read-only one, which sees
everything and can act on nothing. --rotate-console-token replaces both.

Action links (only when WARDEN_LINK_SECRET is set; without it links answer 404 and say why):
Links appear in escalation notifications when the processes that send them (the worker for
webhooks, \`warden irc\` for IRC) have WARDEN_LINK_SECRET and WARDEN_LINK_BASE_URL (the address
humans reach this server at) in their environment; WARDEN_LINK_TTL sets how long a link works
(default 1h). Each link is signed, bound to one agent, one action and the escalation it was
issued for, and works once, while the agent still waits on that escalation; using one link of
an escalation voids the others. Opening a link shows what it will do and the finding it answers;
nothing happens until its button is pressed.

Examples:
  warden serve                                   # hook events only, on 127.0.0.1:8788
  export WARDEN_LINK_SECRET=$(openssl rand -hex 32)
  warden serve --listen 127.0.0.1:8788           # hook events and action links`,
    )
    .action(
      lazy(
        () => import('../commands/serve.js'),
        (m) => m.serveAction,
      ),
    );
}
