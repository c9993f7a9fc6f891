/**
 * `warden serve`: the HTTP listener of this machine's warden. It answers hook events (the resident
 * hook endpoint, src/serve/hooks.ts: `POST /hooks/claude|codex`, with the token of the endpoint
 * file) and, when WARDEN_LINK_SECRET is set, the action links in notifications (resume, abort,
 * dismiss as a false alarm, steer; src/serve/server.ts), and the web console under /console
 * (src/serve/console/: login with the token it prints, from $WARDEN_HOME/console-tokens.json).
 * Loopback by default; `--listen host:port` to expose the links behind the operator's proxy (hook
 * events are taken from loopback only).
 */
import type { Command } from 'commander';
import { createLogger } from '../../logger.js';
import { DEFAULT_ENDPOINT, ensureEndpoint, endpointFile } from '../../hooks/endpoint-file.js';
import { linkSecret } from '../../serve/config.js';
import { createHookEndpoint } from '../../serve/hooks.js';
import { createLinkServer, parseListen } from '../../serve/server.js';
import { MCP_ROUTE, createMcpEndpoint, ensureMcpToken } from '../../serve/mcp.js';
import { connectLazily } from '../../mcp/connection.js';
import { VERSION } from '../program.js';
import { WardenClient } from '../../client/index.js';
import { createConsole } from '../../serve/console/index.js';
import { consoleTokenFile, ensureConsoleTokens, rotateConsoleTokens, tokenStore } from '../../serve/console/tokens.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { printJson } from '../output.js';
import { startOtel } from '../../telemetry/otel.js';

export { DEFAULT_LISTEN } from '../verbs/serve.js';

export const serveAction = async (o: { listen?: string; rotateConsoleToken?: boolean }, cmd: Command) => {
  // Links are optional; a secret that is set but weak is a mistake to say, not to ignore.
  const secret = process.env.WARDEN_LINK_SECRET ? linkSecret(process.env) : null;
  if (secret && !secret.ok)
    throw new UsageError(
      `warden serve refuses to start: ${secret.reason}. Set it to the same secret the worker signs links with (e.g. \`openssl rand -hex 32\`), or unset it to answer hook events only.`,
    );
  // The hook token and the address hooks post to: the endpoint file's (created now when this user has none yet).
  const { endpoint } = await ensureEndpoint(process.env);
  const at = o.listen ?? new URL(endpoint.url).host ?? DEFAULT_ENDPOINT;
  const listen = parseListen(at);
  if (!listen.ok) throw new UsageError(listen.reason);
  const g = globals(cmd);
  const log = createLogger('warden-serve');
  // Hook latency as OpenTelemetry, when an OTLP endpoint is set (docs/operating/observability.md).
  const telemetry = await startOtel('warden-serve', log);
  // Links need Temporal from the start; hook events connect when the first one comes (Temporal may be down now).
  const warden = secret?.ok ? await WardenClient.connect({ address: g.address, namespace: g.namespace }) : null;
  const hooks = createHookEndpoint({ log });
  // MCP over HTTP: its own bearer token (created now when missing), and Temporal when the first tool needs it.
  const mcpToken = ensureMcpToken(process.env);
  const mcpClient = connectLazily({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue });
  const mcp = createMcpEndpoint({ log, client: mcpClient.get, version: VERSION });
  // The web console's login tokens (new ones on --rotate-console-token: every open session ends).
  const consoleTokens = o.rotateConsoleToken ? rotateConsoleTokens(process.env) : ensureConsoleTokens(process.env).tokens;
  // The console connects to Temporal on its first request (and again after a failed attempt).
  let consoleClient: Promise<WardenClient> | null = warden ? Promise.resolve(warden) : null;
  const connectConsole = () =>
    (consoleClient ??= WardenClient.connect({ address: g.address, namespace: g.namespace }).catch((err: unknown) => {
      consoleClient = null;
      throw err;
    }));
  const webConsole = createConsole({ client: connectConsole, tokens: tokenStore(process.env), log });
  const server = createLinkServer({ secret: secret?.ok ? secret.secret : null, client: warden?.client ?? null, log, hooks, mcp, console: webConsole });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new UsageError(`--listen ${at}: ${err.code ?? err.message}`)));
    server.listen(listen.port, listen.host, resolve);
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : listen.port;
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  const url = `http://${host}:${port}`;
  const links = Boolean(secret?.ok);
  const consoleUrl = `${url}/console?token=${consoleTokens.operator}`;
  if (g.json) printJson({ ready: true, url, hooks: `${url}/hooks/`, links, mcp: `${url}${MCP_ROUTE}`, console: consoleUrl, pid: process.pid });
  else {
    process.stderr.write(`warden serve: web console at ${consoleUrl}\n`);
    process.stderr.write(`warden serve: (the read-only token is in ${consoleTokenFile()}; \`warden serve --rotate-console-token\` replaces both)\n`);
    process.stderr.write(`warden serve: answering hook events on ${url}/hooks/claude and /hooks/codex (token in ${endpointFile()})\n`);
    process.stderr.write(`warden serve: answering MCP on ${url}${MCP_ROUTE} (bearer token in ${mcpToken.file})\n`);
    process.stderr.write(links ? `warden serve: answering action links on ${url}\n` : 'warden serve: action links are off (WARDEN_LINK_SECRET is not set)\n');
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      server.close(() => resolve());
      // Idle keep-alive connections (an HTTP hook client keeps one) would hold close() open forever.
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 5_000).unref();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await hooks.close();
  await mcpClient.close();
  await warden?.close();
  if (consoleClient && !warden) await (await consoleClient.catch(() => null))?.close();
  await telemetry.shutdown();
};
