/**
 * The web console on a listener of its own, for `warden dev`: the same pages `warden serve`
 * answers under /console (no hook endpoint, no action links), with the same login tokens
 * ($WARDEN_HOME/console-tokens.json), connected to the given Temporal.
 */
import type { Logger } from 'pino';
import { WardenClient } from '../../client/index.js';
import { createLinkServer } from '../server.js';
import { createConsole } from './index.js';
import { ensureConsoleTokens, tokenStore } from './tokens.js';

export interface ConsoleListener {
  /** The console's address with the operator's login token. */
  url: string;
  close(): Promise<void>;
}

export async function startConsoleListener(opts: {
  host: string;
  port: number;
  address: string;
  namespace: string;
  log: Logger;
  env?: NodeJS.ProcessEnv;
}): Promise<ConsoleListener> {
  const env = opts.env ?? process.env;
  const { tokens } = ensureConsoleTokens(env);
  let client: Promise<WardenClient> | null = null;
  const connect = () =>
    (client ??= WardenClient.connect({ address: opts.address, namespace: opts.namespace }).catch((err: unknown) => {
      client = null;
      throw err;
    }));
  const server = createLinkServer({
    secret: null,
    client: null,
    log: opts.log,
    console: createConsole({ client: connect, tokens: tokenStore(env), log: opts.log }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, resolve);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}/console?token=${tokens.operator}`,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await (await client?.catch(() => null))?.close();
    },
  };
}
