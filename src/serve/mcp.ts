/**
 * warden's MCP server over streamable HTTP on `warden serve`: `/mcp`, the same tools and resources
 * as `warden mcp` on stdio (src/mcp/server.ts).
 *
 * Who may call: a request must carry `Authorization: Bearer <token>`, the token in
 * `$WARDEN_HOME/mcp-token` (64 hex characters, mode 0600 in a 0700 directory; `warden serve`
 * creates it when missing and reads it at every request, so replacing the file rotates it). It is
 * not the hook endpoint's token: that one is written into Claude Code's settings, where every
 * session of the user can read it, and only reports turns; this one steers, aborts and starts
 * agents. A request with an `Origin` header (a browser's) is refused: no web page may drive it.
 *
 * Stateless: each POST gets a fresh MCP server and transport (no session id), answered as JSON.
 * Bodies over MAX_MCP_BODY_BYTES are refused.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { tokenMatches, wardenHome } from '../hooks/endpoint-file.js';
import type { WardenApi } from '../mcp/server.js';

export const MCP_ROUTE = '/mcp';
/** A request body larger than this is refused (a tool call is a few kilobytes). */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

const TOKEN_RE = /^[0-9a-f]{64}$/;

export const mcpTokenFile = (env: NodeJS.ProcessEnv = process.env) => join(wardenHome(env), 'mcp-token');

/** The token in the file, or null when there is none or it is not one warden writes. */
export function readMcpToken(env: NodeJS.ProcessEnv = process.env): string | null {
  try {
    const t = readFileSync(mcpTokenFile(env), 'utf8').trim();
    return TOKEN_RE.test(t) ? t : null;
  } catch {
    return null;
  }
}

/** The token file, created (a new random token, 0600) when missing or unreadable as a token. */
export function ensureMcpToken(env: NodeJS.ProcessEnv = process.env): { token: string; file: string; created: boolean } {
  const file = mcpTokenFile(env);
  const old = readMcpToken(env);
  if (old) return { token: old, file, created: false };
  mkdirSync(wardenHome(env), { recursive: true, mode: 0o700 });
  const token = randomBytes(32).toString('hex');
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${token}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return { token, file, created: true };
}

export interface McpEndpointOptions {
  log: Logger;
  client: () => Promise<WardenApi>;
  version: string;
  /** The token requests must carry (default: the token file's, read at each request). */
  token?: () => string | null;
}

export interface McpEndpoint {
  /** Answer the request when it is for `/mcp`: true when it was. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

class TooLarge extends Error {}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_MCP_BODY_BYTES) throw new TooLarge();
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Why a request may not reach the tools (status and message), or null when it may. */
export async function mcpRefusal(req: Pick<IncomingMessage, 'headers' | 'method'>, token: string | null): Promise<{ status: number; message: string } | null> {
  if (req.headers.origin !== undefined) return { status: 403, message: 'requests from web pages (with an Origin header) are refused' };
  if (!token) return { status: 503, message: 'the MCP token file is missing: restart `warden serve` to create it' };
  const auth = req.headers.authorization;
  if (!(await tokenMatches(Array.isArray(auth) ? auth[0] : auth, token)))
    return { status: 401, message: 'Authorization: Bearer <token> required, with the token in $WARDEN_HOME/mcp-token' };
  if (req.method !== 'POST') return { status: 405, message: 'POST JSON-RPC messages here (this server keeps no sessions and no streams)' };
  return null;
}

export function createMcpEndpoint(opts: McpEndpointOptions): McpEndpoint {
  const token = opts.token ?? (() => readMcpToken());

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = await mcpRefusal(req, token());
    if (refusal) {
      req.resume();
      const headers: Record<string, string> = refusal.status === 401 ? { 'www-authenticate': 'Bearer' } : refusal.status === 405 ? { allow: 'POST' } : {};
      if (refusal.status !== 405) opts.log.warn({ status: refusal.status, reason: refusal.message }, 'MCP request refused');
      return refuse(res, refusal.status, refusal.message, headers);
    }
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (err) {
      if (err instanceof TooLarge) return refuse(res, 413, `the request is larger than ${MAX_MCP_BODY_BYTES} bytes`);
      return refuse(res, 400, 'the request body is not JSON');
    }
    // Loaded on the first request: the MCP SDK costs `warden serve` (which the first hook of a
    // session may start and wait for) a second or more of start-up on a busy machine.
    const [{ StreamableHTTPServerTransport }, { createWardenMcpServer }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
      import('../mcp/server.js'),
    ]);
    const server = createWardenMcpServer({ client: opts.client, version: opts.version });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  return {
    handle(req, res) {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== MCP_ROUTE && path !== `${MCP_ROUTE}/`) return false;
      serve(req, res).catch((err: unknown) => {
        opts.log.error({ error: err instanceof Error ? err.message : String(err) }, 'MCP request failed');
        if (res.headersSent) return res.destroy();
        refuse(res, 500, 'the MCP request failed');
      });
      return true;
    },
  };
}
