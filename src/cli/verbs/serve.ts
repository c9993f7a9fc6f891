/** The definition of this command (options, help); the implementation is ../commands/serve.ts, loaded when it runs. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export const DEFAULT_LISTEN = '127.0.0.1:8788';

export function register(program: Command): void {
  program
    .command('serve')
    .description('answer action links from notifications (resume, abort, dismiss, steer) over HTTP; needs WARDEN_LINK_SECRET')
    .option(
      '--listen <host:port>',
      `where to listen (default ${DEFAULT_LISTEN}: this machine only; put a proxy with TLS in front to expose it)`,
      DEFAULT_LISTEN,
    )
    .option('--json', 'print {ready, url} as JSON when listening')
    .addHelpText(
      'after',
      `
Links appear in escalation notifications when the processes that send them (the worker for
webhooks, \`warden irc\` for IRC) have WARDEN_LINK_SECRET and WARDEN_LINK_BASE_URL (the address
humans reach this server at) in their environment; WARDEN_LINK_TTL sets how long a link works
(default 1h). Each link is signed, bound to one agent, one action and the escalation it was
issued for, and works once, while the agent still waits on that escalation; using one link of
an escalation voids the others. Opening a link shows what it will do and the finding it answers;
nothing happens until its button is pressed.

Example:
  export WARDEN_LINK_SECRET=$(openssl rand -hex 32)
  warden serve --listen 127.0.0.1:8788`,
    )
    .action(
      lazy(
        () => import('../commands/serve.js'),
        (m) => m.serveAction,
      ),
    );
}
