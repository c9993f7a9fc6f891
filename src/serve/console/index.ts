/**
 * The web console of `warden serve`, under `/console`:
 *
 *   GET  /console                       the fleet (script-rendered from the JSON below, polled)
 *   GET  /console/api/agents?q=&finished=  the fleet as JSON (fleet.ts: one visibility listing per refresh)
 *   GET  /console/agents/<id>           one agent: facts, budgets, notifications, timeline (src/timeline/), actions;
 *                                       its script polls the JSON below
 *   GET  /console/api/agents/<id>       the agent page's sections as JSON (agent.ts: one status query per refresh)
 *   POST /console/agents/<id>/<action>  resume, pause, steer (text), dismiss (note), abort, raise (new budget limits): operator
 *                                       role, same origin and the CSRF field; answered 303 back to
 *                                       the agent's page, which says what became of it
 *   GET  /console/static/console.js|css the script and style sheet (no inline script anywhere)
 *
 * Login: any console address with `?token=<operator or read-only token>` sets the session cookie
 * and redirects to the address without it (auth.ts); the tokens live in tokens.ts's file. Without a
 * valid session every page answers 401 and every POST is refused; a read-only session's POST 403.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { AgentEndedError, AgentNotFoundError, InvalidInputError, type WardenClient } from '../../client/index.js';
import { messagePage } from '../page.js';
import { steerText } from '../server.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { csrfFor, csrfOk, CONSOLE_PATH, loginCookie, logoutCookie, overHttps, sameOrigin, sessionToken, withoutToken } from './auth.js';
import { FleetSource, type FleetOptions } from './fleet.js';
import { agentPage, agentSections, CONSOLE_HEADERS, fleetPage } from './html.js';
import { isConsoleAction, raiseFromForm, type ConsoleAction } from './actions.js';
import { AgentSource, type AgentSourceOptions } from './agent.js';
import { roleOf, type ConsoleRole, type ConsoleTokens } from './tokens.js';

export interface ConsoleOptions {
  /** Temporal, connected on first use (the console may start before Temporal does). */
  client: () => Promise<WardenClient>;
  /** The current tokens (tokens.ts tokenStore: re-read when the file changes). */
  tokens: () => ConsoleTokens | null;
  log: Logger;
  fleet?: FleetOptions;
  agent?: AgentSourceOptions;
  /** How often the fleet page and the agent page poll (ms). */
  pollMs?: number;
}

const MAX_FORM_BYTES = 16 * 1024;
const AGENT_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const MAX_NOTE_CHARS = 500;

class ConsoleError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

/** A failure answering the agent page's JSON. */
class ApiError extends Error {
  constructor(readonly inner: unknown) {
    super(inner instanceof Error ? inner.message : String(inner));
  }
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}, head = false): void {
  res.writeHead(status, { ...CONSOLE_HEADERS, ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(head ? undefined : body);
}

async function readForm(req: IncomingMessage): Promise<string> {
  const ct = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (ct !== 'application/x-www-form-urlencoded')
    throw new ConsoleError(400, 'Not a form', 'send the form (application/x-www-form-urlencoded). Nothing was changed.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) throw new ConsoleError(413, 'Too large', `the form is larger than ${MAX_FORM_BYTES} bytes. Nothing was changed.`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function createConsole(opts: ConsoleOptions): { handle(req: IncomingMessage, res: ServerResponse): boolean; fleet: FleetSource; agents: AgentSource } {
  const { log } = opts;
  const fleet = new FleetSource(opts.client, opts.fleet);
  const agents = new AgentSource(opts.client, opts.agent);

  async function act(agentId: string, action: ConsoleAction, form: URLSearchParams, contentType: string | undefined, body: string): Promise<string> {
    const w = await opts.client();
    if (action === 'steer') {
      const t = steerText(body, contentType);
      if (!t.ok) throw new ConsoleError(400, 'Steering needs text', `${t.message}. Nothing was changed.`);
      return (await w.control(agentId, 'steer', { text: t.text })).kind;
    }
    if (action === 'dismiss') {
      const note = (form.get('note') ?? '').trim();
      if ([...note].length > MAX_NOTE_CHARS) throw new ConsoleError(400, 'Note too long', `note: at most ${MAX_NOTE_CHARS} characters. Nothing was changed.`);
      return (await w.dismiss(agentId, note ? { note } : {})).kind;
    }
    if (action === 'raise') {
      const r = raiseFromForm(form);
      if (!r.ok) throw new ConsoleError(400, 'Not a budget', `${r.message}. Nothing was changed.`);
      const out = await w.raiseBudget(agentId, { ...r.raise, by: 'the web console (operator token)' });
      return !out.applied ? 'refused' : out.resumed ? 'resumed' : 'raised';
    }
    const payload =
      action === 'resume' ? { note: 'resumed from the web console' } : { reason: `${action === 'pause' ? 'paused' : 'aborted'} from the web console` };
    return (await w.control(agentId, action, payload)).kind;
  }

  async function handleRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const path = url.pathname;
    const head = req.method === 'HEAD';
    if (path === `${CONSOLE_PATH}/static/console.js` || path === `${CONSOLE_PATH}/static/console.css`) {
      const js = path.endsWith('.js');
      return send(res, 200, js ? CONSOLE_JS : CONSOLE_CSS, { 'content-type': js ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8' }, head);
    }
    // Login: the token from the printed address becomes the session cookie, and leaves the address.
    const presented = url.searchParams.getAll('token');
    if (presented.length > 0) {
      const role = presented.length === 1 ? roleOf(opts.tokens(), presented[0]) : null;
      if (!role) {
        log.warn({ path: path.slice(0, 100) }, 'console login refused');
        return send(
          res,
          403,
          messagePage('Console token refused', 'this console token is not valid (it may have been rotated): open the address `warden serve` printed last.'),
          { 'set-cookie': logoutCookie() },
        );
      }
      res.setHeader('set-cookie', loginCookie(presented[0]!, overHttps(req.headers, 'encrypted' in req.socket && req.socket.encrypted === true)));
      res.setHeader('location', withoutToken(url));
      return send(res, 303, messagePage('Logged in', 'continue to the console.'));
    }
    const token = sessionToken(req.headers);
    const role: ConsoleRole | null = roleOf(opts.tokens(), token);
    const api = path.startsWith(`${CONSOLE_PATH}/api/`);
    if (!role) {
      if (api) return send(res, 401, JSON.stringify({ error: 'not logged in' }), { 'content-type': 'application/json' });
      return send(
        res,
        401,
        messagePage('Log in to the console', 'open the console address `warden serve` printed: it carries the login token. Nothing was changed.'),
        {},
        head,
      );
    }
    const m = /^\/console\/agents\/([^/]+)(?:\/([^/]+))?\/?$/.exec(path);
    if (req.method === 'POST') {
      if (!m?.[2]) throw new ConsoleError(404, 'Not found', 'there is nothing to post to here.');
      if (role !== 'operator') throw new ConsoleError(403, 'Read-only', 'this session is read-only: actions need the operator token. Nothing was changed.');
      if (!sameOrigin(req.headers)) throw new ConsoleError(403, 'Refused', 'the form was not sent from this console. Nothing was changed.');
      const body = await readForm(req);
      const form = new URLSearchParams(body);
      if (form.getAll('csrf').length !== 1 || !csrfOk(token!, form.get('csrf'))) {
        throw new ConsoleError(403, 'Refused', 'the form lacks this session’s CSRF token (reload the page and try again). Nothing was changed.');
      }
      const agentId = decodeURIComponent(m[1]!);
      const action = decodeURIComponent(m[2]!);
      if (!AGENT_ID_RE.test(agentId)) throw new ConsoleError(404, 'No such agent', 'that is not an agent id. Nothing was changed.');
      if (!isConsoleAction(action)) throw new ConsoleError(404, 'Not found', 'actions are resume, pause, steer, dismiss, abort and raise.');
      const result = await act(agentId, action, form, req.headers['content-type'], body);
      fleet.invalidate(agentId);
      agents.invalidate(agentId);
      log.info({ agentId, action, result, role }, 'console action');
      res.setHeader('location', `/console/agents/${encodeURIComponent(agentId)}?did=${action}&result=${encodeURIComponent(result)}`);
      return send(res, 303, messagePage('Sent', `${action}: ${result}.`));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD, POST');
      throw new ConsoleError(405, 'Method not allowed', 'use the console in a browser.');
    }
    if (path === CONSOLE_PATH || path === `${CONSOLE_PATH}/`) return send(res, 200, fleetPage(role, opts.pollMs ?? 3_000), {}, head);
    if (path === `${CONSOLE_PATH}/api/agents`) {
      const answer = await fleet.answer({ filter: (url.searchParams.get('q') ?? '').slice(0, 200), showFinished: url.searchParams.get('finished') !== '0' });
      return send(res, 200, JSON.stringify(answer), { 'content-type': 'application/json; charset=utf-8' }, head);
    }
    const apiAgent = /^\/console\/api\/agents\/([^/]+)\/?$/.exec(path);
    if (apiAgent) {
      const agentId = decodeURIComponent(apiAgent[1]!);
      if (!AGENT_ID_RE.test(agentId)) return send(res, 404, JSON.stringify({ error: 'not an agent id' }), { 'content-type': 'application/json' });
      const a = await agents.answer(agentId).catch((err: unknown) => {
        throw new ApiError(err);
      });
      const body = { at: a.at, agentId, state: a.status.state, sections: agentSections(a.status, a.timeline) };
      return send(res, 200, JSON.stringify(body), { 'content-type': 'application/json; charset=utf-8' }, head);
    }
    if (m && !m[2]) {
      const agentId = decodeURIComponent(m[1]!);
      if (!AGENT_ID_RE.test(agentId)) throw new ConsoleError(404, 'No such agent', 'that is not an agent id.');
      const a = await agents.answer(agentId);
      const did = url.searchParams.get('did');
      const result = url.searchParams.get('result');
      const flash = did && isConsoleAction(did) && result ? { action: did, result } : null;
      const html = agentPage(a.status, a.timeline, { role, csrf: csrfFor(token!), flash, pollMs: opts.pollMs ?? 3_000 });
      return send(res, 200, html, {}, head);
    }
    throw new ConsoleError(404, 'Not found', 'there is nothing here.');
  }

  return {
    fleet,
    agents,
    handle(req, res) {
      const url = new URL(req.url ?? '/', 'http://warden.invalid');
      if (url.pathname !== CONSOLE_PATH && !url.pathname.startsWith(`${CONSOLE_PATH}/`)) return false;
      handleRequest(req, res, url).catch((err: unknown) => {
        if (res.headersSent) return res.destroy();
        // The page's script reads JSON: the same errors, as JSON.
        if (err instanceof ApiError) {
          const inner = err.inner;
          const status = inner instanceof AgentNotFoundError ? 404 : inner instanceof AgentEndedError ? 409 : inner instanceof InvalidInputError ? 400 : 502;
          if (status === 502) log.error({ error: inner instanceof Error ? inner.message : String(inner) }, 'console request failed');
          return send(res, status, JSON.stringify({ error: inner instanceof Error ? inner.message : String(inner) }), { 'content-type': 'application/json' });
        }
        if (err instanceof ConsoleError) return send(res, err.status, messagePage(err.title, err.message));
        if (err instanceof URIError) return send(res, 400, messagePage('Not a valid address', 'the path is not valid percent-encoding.'));
        if (err instanceof AgentNotFoundError) return send(res, 404, messagePage('No such agent', err.message));
        if (err instanceof AgentEndedError) return send(res, 409, messagePage('The agent has ended', err.message));
        if (err instanceof InvalidInputError) return send(res, 400, messagePage('Refused', err.message));
        log.error({ error: err instanceof Error ? err.message : String(err) }, 'console request failed');
        send(res, 502, messagePage('Temporal did not answer', err instanceof Error ? err.message : String(err)));
      });
      return true;
    },
  };
}
