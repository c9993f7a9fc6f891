/**
 * `warden serve`'s HTTP listener: answers action links (`/agents/<agentId>/<action>?token=…`).
 *
 *   GET   verifies the token, asks the agent (the `linkEscalation` query) whether it still waits on
 *         the escalation the link was issued for, and shows what the link will do and the finding
 *         it answers, with one button (and, for steer, a text box): a chat tool previewing the
 *         link, or a scanner following it, changes nothing. A link whose escalation was answered
 *         is refused here already.
 *   POST  verifies the token again and asks the agent's workflow with the `link` update; the
 *         workflow refuses a token id it has acted on before, and a link whose escalation it no
 *         longer waits on or whose sibling was used (src/domain/agent/links.ts).
 *
 * Answers are small HTML pages that say what happened, with the status code to match: 400 a
 * malformed link or input, 403 a bad signature or a link for another agent or action, 404 no such
 * agent, 409 the agent cannot take that action now (or has ended, or the link's escalation was
 * answered), 410 an expired, used or outdated link (or one whose sibling was used),
 * 503 no worker answered in time. It never redirects.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Logger } from 'pino';
import { isTransientUpdateError } from '../client/index.js';
import { escalationProblem, type EscalationView, type LinkRequest, type LinkResult } from '../domain/agent/links.js';
import { linkEscalationQuery, linkUpdate } from '../messages/agent.js';
import { SECURITY_HEADERS, MAX_STEER_CHARS, confirmPage, messagePage, type ShownFinding } from './page.js';
import { isLinkAction, verifyToken, type RefusalReason, type TokenClaims } from './token.js';

/** A POST body larger than this is refused (a steer form is well under it). */
export const MAX_BODY_BYTES = 16 * 1024;
/** How long a POST waits for the agent's worker to answer. */
export const UPDATE_TIMEOUT_MS = 20_000;
/** How long a GET waits for the agent to say which escalation it waits on. */
export const QUERY_TIMEOUT_MS = 5_000;

export interface LinkServerOptions {
  /** The key links are signed with; null: action links are off (the server answers hook events only). */
  secret: string | null;
  /** The resident hook endpoint (src/serve/hooks.ts), when this server answers hook events too. */
  hooks?: { handle(req: IncomingMessage, res: ServerResponse): boolean };
  /** The MCP endpoint at `/mcp` (src/serve/mcp.ts). */
  mcp?: { handle(req: IncomingMessage, res: ServerResponse): boolean };
  /** The web console (src/serve/console/), answering under /console. */
  console?: { handle(req: IncomingMessage, res: ServerResponse): boolean };
  /** Temporal's client for the links (null when links are off). */
  client: Client | null;
  log: Logger;
  now?: () => number;
  updateTimeoutMs?: number;
}

const STATUS_FOR: Record<RefusalReason, number> = { malformed: 400, outdated: 410, tampered: 403, 'wrong-agent': 403, 'wrong-action': 403, expired: 410 };
const TITLE_FOR: Record<RefusalReason, string> = {
  malformed: 'Not a valid link',
  outdated: 'Link outdated',
  tampered: 'Link refused',
  'wrong-agent': 'Link refused: wrong agent',
  'wrong-action': 'Link refused: wrong action',
  expired: 'Link expired',
};
const NOTHING = 'Nothing was changed.';

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, html: string, head = false): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-length': Buffer.byteLength(html) });
  res.end(head ? undefined : html);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'Too large', `the form is larger than ${MAX_BODY_BYTES} bytes. ${NOTHING}`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The route of a request path: `/agents/<agentId>/<action>`, decoded, or why not. */
export function route(path: string): { agentId: string; action: string } | null {
  const m = /^\/agents\/([^/]+)\/([^/]+)\/?$/.exec(path);
  if (!m) return null;
  try {
    return { agentId: decodeURIComponent(m[1]!), action: decodeURIComponent(m[2]!) };
  } catch {
    throw new HttpError(400, 'Not a valid link', `the link's path is not valid percent-encoding. ${NOTHING}`);
  }
}

/** The steering text of a POSTed form: trimmed, 1 to MAX_STEER_CHARS characters. */
export function steerText(body: string, contentType: string | undefined): { ok: true; text: string } | { ok: false; message: string; text: string } {
  const ct = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct !== 'application/x-www-form-urlencoded')
    return { ok: false, message: 'text: send the form (application/x-www-form-urlencoded) with a text field', text: '' };
  const texts = new URLSearchParams(body).getAll('text');
  if (texts.length !== 1) return { ok: false, message: 'text: exactly one text field', text: '' };
  const text = texts[0]!.replace(/\r\n/g, '\n').trim();
  if (!text) return { ok: false, message: 'text: write what the agent should do', text };
  if ([...text].length > MAX_STEER_CHARS)
    return { ok: false, message: `text: at most ${MAX_STEER_CHARS} characters (got ${[...text].length})`, text: [...text].slice(0, MAX_STEER_CHARS).join('') };
  return { ok: true, text };
}

/** The page for an update the workflow refused (its validator threw a LinkRefused). */
function refusedByAgent(type: string | undefined, message: string): HttpError {
  if (type === 'LinkUsed') return new HttpError(410, 'Link already used', `${message}. ${NOTHING}`);
  if (type === 'LinkExpired') return new HttpError(410, 'Link expired', `${message}. ${NOTHING}`);
  if (type === 'LinkNotApplicable') return new HttpError(409, 'Not possible now', `${message}. ${NOTHING}`);
  if (type === 'LinkAnswered') return new HttpError(409, 'Escalation already answered', `${message}. ${NOTHING}`);
  if (type === 'LinkLimit') return new HttpError(429, 'Too many links used', `${message}. ${NOTHING}`);
  return new HttpError(400, 'Link refused', `${message}. ${NOTHING}`);
}

const DONE_TITLE: Record<string, string> = {
  resume: 'Resumed',
  abort: 'Aborted',
  dismiss: 'Dismissed as a false alarm',
  steer: 'Steering sent',
  pause: 'Paused',
};

export function createLinkServer(opts: LinkServerOptions): Server {
  const { secret, client, log } = opts;
  const now = opts.now ?? Date.now;
  const handle = (agentId: string) => client!.workflow.getHandle(`agent-${agentId}`);

  /** The agent exists and runs, or the page saying otherwise. */
  async function ensureRunning(agentId: string): Promise<void> {
    let status: string;
    try {
      status = (await handle(agentId).describe()).status.name;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5)
        throw new HttpError(404, 'No such agent', `there is no agent ${agentId}. ${NOTHING}`);
      throw err;
    }
    if (status !== 'RUNNING') throw new HttpError(409, 'The agent has ended', `agent ${agentId} has ended (${status.toLowerCase()}). ${NOTHING}`);
  }

  async function act(claims: TokenClaims, text: string | undefined): Promise<LinkResult> {
    const deadline = Date.now() + (opts.updateTimeoutMs ?? UPDATE_TIMEOUT_MS);
    // One update id per request: a retry below (the run was closing for continue-as-new, a workflow
    // task failed) is answered by Temporal with the first attempt's result if that one was taken.
    // Never the token id alone: Temporal would answer a replay with the first use's success.
    const updateId = `link-${claims.tokenId}-${randomUUID()}`;
    const args: [LinkRequest] = [
      {
        action: claims.action,
        tokenId: claims.tokenId,
        expiresAt: claims.expiresAt,
        escalation: claims.escalation,
        ...(claims.finding ? { finding: claims.finding } : {}),
        ...(text !== undefined ? { text } : {}),
      },
    ];
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          return await client!.withDeadline(deadline, () => handle(claims.agentId).executeUpdate(linkUpdate, { args, updateId }));
        } catch (err) {
          if (!isTransientUpdateError(err) || attempt >= 5 || Date.now() + 500 * attempt >= deadline) throw err;
          await new Promise((r) => setTimeout(r, 500 * attempt));
        }
      }
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        const cause = err.cause as { type?: string; message?: string } | undefined;
        throw refusedByAgent(cause?.type, cause?.message ?? err.message);
      }
      const e = err as { code?: number; message?: string; name?: string };
      if (err instanceof WorkflowNotFoundError || e.code === 5 || /not found|already completed/i.test(e.message ?? '')) {
        await ensureRunning(claims.agentId); // 404 or "has ended"
      }
      if (e.code === 4 || /deadline|timed? ?out|RPCTimeoutOrCancelled/i.test(`${e.name} ${e.message}`)) {
        throw new HttpError(
          503,
          'No answer from the agent',
          'no warden worker answered in time. The link was not used yet unless a worker takes it later: check with `warden status`, or try the link again.',
        );
      }
      throw err;
    }
  }

  /**
   * The finding an escalation's link answers, to show on its confirm page; refuses (the same rule
   * as the agent's validator) a link whose escalation was answered. Undefined when the agent did
   * not answer in time (the page says so; the POST is checked by the agent anyway).
   */
  async function escalationFor(claims: TokenClaims): Promise<ShownFinding | null | undefined> {
    if (claims.escalation === 0) return null;
    let view: EscalationView;
    try {
      view = await client!.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => handle(claims.agentId).query(linkEscalationQuery));
    } catch (err) {
      log.warn({ agentId: claims.agentId, error: err instanceof Error ? err.message : String(err) }, 'escalation of an action link not read');
      return undefined;
    }
    const problem = escalationProblem(view, claims);
    if (problem) throw refusedByAgent(problem.kind, problem.message);
    return { escalation: claims.escalation, pattern: view.finding?.pattern ?? null, message: view.finding?.message ?? null };
  }

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://warden.invalid');
    const head = req.method === 'HEAD';
    if (url.pathname === '/' || url.pathname === '/healthz') {
      return send(
        res,
        200,
        messagePage(
          'warden serve',
          secret ? 'This server answers warden action links. Open one from a notification.' : 'This server answers warden hook events.',
        ),
        head,
      );
    }
    const r = route(url.pathname);
    if (r && !secret) throw new HttpError(404, 'Action links are off', `this server was started without WARDEN_LINK_SECRET. ${NOTHING}`);
    if (!r) throw new HttpError(404, 'Not found', 'there is nothing here.');
    if (!isLinkAction(r.action)) throw new HttpError(404, 'Not found', 'links are for resume, abort, dismiss, steer or pause.');
    if (!['GET', 'HEAD', 'POST'].includes(req.method ?? '')) {
      res.setHeader('allow', 'GET, HEAD, POST');
      throw new HttpError(405, 'Method not allowed', `open the link in a browser. ${NOTHING}`);
    }
    const tokens = url.searchParams.getAll('token');
    if (tokens.length > 1) throw new HttpError(400, 'Not a valid link', `the link has more than one token. ${NOTHING}`);
    const v = verifyToken(secret!, tokens[0], { agentId: r.agentId, action: r.action }, now());
    if (!v.ok) {
      log.warn({ agentId: r.agentId.slice(0, 100), action: r.action, reason: v.reason }, 'action link refused');
      throw new HttpError(STATUS_FOR[v.reason], TITLE_FOR[v.reason], `${v.message}. ${NOTHING}`);
    }
    const { claims } = v;
    if (req.method !== 'POST') {
      await ensureRunning(claims.agentId);
      const finding = await escalationFor(claims);
      return send(res, 200, confirmPage(claims.agentId, claims.action, claims.expiresAt, { finding }), head);
    }
    let text: string | undefined;
    const body = await readBody(req);
    if (claims.action === 'steer') {
      const t = steerText(body, req.headers['content-type']);
      if (!t.ok) {
        const finding = await escalationFor(claims);
        return send(res, 400, confirmPage(claims.agentId, claims.action, claims.expiresAt, { finding, error: `${t.message}. ${NOTHING}`, text: t.text }));
      }
      text = t.text;
    }
    const result = await act(claims, text);
    log.info(
      { agentId: claims.agentId, action: claims.action, tokenId: claims.tokenId, escalation: claims.escalation, applied: result.applied, state: result.state },
      'action link used',
    );
    if (!result.applied) return send(res, 409, messagePage('Not applied', `agent ${claims.agentId}: ${result.detail}. The link is used up.`));
    return send(
      res,
      200,
      messagePage(`${DONE_TITLE[claims.action]}: agent ${claims.agentId}`, `${result.detail} (now ${result.state}).`, 'This link is now used up.'),
    );
  }

  return createServer((req, res) => {
    if (opts.hooks?.handle(req, res)) return;
    if (opts.mcp?.handle(req, res)) return;
    if (opts.console?.handle(req, res)) return;
    handleRequest(req, res).catch((err: unknown) => {
      if (res.headersSent) return res.destroy();
      if (err instanceof HttpError) return send(res, err.status, messagePage(err.title, err.message), req.method === 'HEAD');
      log.error({ error: err instanceof Error ? err.message : String(err) }, 'action link failed');
      send(res, 502, messagePage('Temporal did not answer', `the request could not reach the agent. ${NOTHING}`));
    });
  });
}

/** `host:port` (IPv6 as `[::1]:port`), or why not. */
export function parseListen(raw: string): { ok: true; host: string; port: number } | { ok: false; reason: string } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535)
    return { ok: false, reason: `--listen: ${JSON.stringify(raw.slice(0, 100))} is not host:port (e.g. 127.0.0.1:8788, [::1]:8788, 0.0.0.0:8788)` };
  return { ok: true, host: m[1] ?? m[2]!, port };
}
