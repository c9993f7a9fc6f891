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

export { DEFAULT_LISTEN } from '../verbs/serve.js';

export const serveAction = async (o: { listen: string }, cmd: Command) => {
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
};
