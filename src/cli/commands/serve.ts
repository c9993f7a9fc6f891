/**
 * `warden serve`: the HTTP listener that answers action links in notifications (resume, abort,
 * dismiss as a false alarm, steer). Loopback by default; `--listen host:port` to expose it behind
 * the operator's proxy. Needs WARDEN_LINK_SECRET, the key the links are signed with (docs/links.md).
 */
import type { Command } from 'commander';
import { createLogger } from '../../logger.js';
import { linkSecret } from '../../serve/config.js';
import { createLinkServer, parseListen } from '../../serve/server.js';
import { WardenClient } from '../../client/index.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { printJson } from '../output.js';

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
    .action(async (o: { listen: string }, cmd: Command) => {
      const secret = linkSecret(process.env);
      if (!secret.ok)
        throw new UsageError(
          `warden serve refuses to start: ${secret.reason}. Set it to the same secret the worker signs links with (e.g. \`openssl rand -hex 32\`).`,
        );
      const listen = parseListen(o.listen);
      if (!listen.ok) throw new UsageError(listen.reason);
      const g = globals(cmd);
      const log = createLogger('warden-serve');
      const warden = await WardenClient.connect({ address: g.address, namespace: g.namespace });
      const server = createLinkServer({ secret: secret.secret, client: warden.client, log });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (err: NodeJS.ErrnoException) => reject(new UsageError(`--listen ${o.listen}: ${err.code ?? err.message}`)));
        server.listen(listen.port, listen.host, resolve);
      });
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : listen.port;
      const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
      const url = `http://${host}:${port}`;
      if (g.json) printJson({ ready: true, url });
      else process.stderr.write(`warden serve: answering action links on ${url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => server.close(() => resolve());
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await warden.close();
    });
}
