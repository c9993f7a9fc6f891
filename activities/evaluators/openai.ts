/**
 * The `openai` evaluator: one `POST <baseUrl>/chat/completions` per evaluation, to any
 * OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp's llama-server …).
 *
 * - the supervisor's instructions go in a `system` message, the task and the quoted transcript in a
 *   `user` message (the whole prompt as one `user` message if it does not start with them);
 * - `model` is `config.model`, else the supervisor's model; `temperature` from the config (default
 *   0), `max_tokens: 300` (a verdict is one line), no streaming;
 * - `Authorization: Bearer <key>` only when `apiKeyEnv` names an environment variable of the worker.
 *   The key is read here, in the activity: it never enters workflow history, logs or error messages;
 * - the request is aborted with `ctx.signal` (cancellation or deadline);
 * - the usage (`usage.prompt_tokens` / `completion_tokens` / `total_tokens`, and `usage.cost` in
 *   dollars where the server reports it) goes with the answer, for the agent's evaluator spend;
 * - the answer is `choices[0].message.content` (a leading `<think>…</think>` block, as some
 *   reasoning models emit, is dropped). A non-2xx status, a body that is not JSON, no choices or an
 *   empty message is an error, which the caller turns into a skipped evaluation.
 */
import { secretFor } from '../../src/config/worker.js';
import type { EvaluatorConfig } from '../../src/domain/contract/schemas.js';
import { SUPERVISOR_INSTRUCTIONS } from '../../src/domain/judgement/prompt.js';
import type { Evaluator, EvaluatorUsage } from './types.js';

export type OpenAIEvaluatorConfig = Extract<EvaluatorConfig, { kind: 'openai' }>;

/** A verdict is one line; leave room for a little preamble. */
export const OPENAI_MAX_TOKENS = 300;
/** How much of an error body goes into an error message. */
const BODY_SNIPPET_CHARS = 300;

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** `<baseUrl>/chat/completions`, whether or not the base URL ends with a slash. */
export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

/**
 * The prompt as chat messages: the supervisor instructions as `system`, the rest (task, trigger,
 * quoted transcript) as `user`. A prompt that does not begin with the instructions is sent whole, as
 * one `user` message.
 */
export function chatMessages(prompt: string): ChatMessage[] {
  if (prompt.startsWith(SUPERVISOR_INSTRUCTIONS)) {
    const rest = prompt.slice(SUPERVISOR_INSTRUCTIONS.length).trim();
    if (rest)
      return [
        { role: 'system', content: SUPERVISOR_INSTRUCTIONS },
        { role: 'user', content: rest },
      ];
  }
  return [{ role: 'user', content: prompt }];
}

/** The request body for one evaluation. */
export function chatRequestBody(config: OpenAIEvaluatorConfig, model: string, prompt: string) {
  return {
    model: config.model ?? model,
    messages: chatMessages(prompt),
    temperature: config.temperature ?? 0,
    max_tokens: OPENAI_MAX_TOKENS,
    stream: false,
  };
}

/**
 * The API key from the worker's environment, or undefined when the config names no variable. The
 * spec only *names* the variable: the worker's operator must allow that name
 * (WARDEN_SECRET_ENV_ALLOW) and the endpoint it goes to (WARDEN_ENDPOINT_ALLOW); otherwise this
 * throws, naming the variable or the URL, and nothing is sent.
 */
export function apiKeyFrom(config: Pick<OpenAIEvaluatorConfig, 'apiKeyEnv' | 'baseUrl'>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!config.apiKeyEnv) return undefined;
  const r = secretFor('openai evaluator (apiKeyEnv)', config.apiKeyEnv, chatCompletionsUrl(config.baseUrl), env);
  if (!r.ok) throw new Error(r.reason);
  return r.value;
}

/**
 * The answer text of a chat-completions response body, or an error describing what is wrong with
 * it. `content` may be a string or (some servers) an array of `{type: 'text', text}` parts.
 */
export function answerFrom(body: unknown): string {
  const choices = (body as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) {
    const err = (body as { error?: { message?: unknown } } | null)?.error?.message;
    throw new Error(`no choices in the answer${typeof err === 'string' ? `: ${err}` : ''}`);
  }
  const choice = choices[0] as { message?: { content?: unknown }; finish_reason?: unknown } | null;
  const content = choice?.message?.content;
  let text = '';
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    text = content
      .map((p: unknown) => (typeof p === 'string' ? p : typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : ''))
      .join('');
  }
  text = text.replace(/^\s*<think>[\s\S]*?<\/think>/i, '').trim();
  if (!text) {
    const finish = choice?.finish_reason;
    const why =
      finish === 'length'
        ? ` (finish_reason length: the model used its ${OPENAI_MAX_TOKENS} tokens before answering)`
        : typeof finish === 'string'
          ? ` (finish_reason ${finish})`
          : '';
    throw new Error(`empty message in choices[0]${why}`);
  }
  return text;
}

/**
 * The usage of a chat-completions response: `usage.prompt_tokens`, `usage.completion_tokens`,
 * `usage.total_tokens`, and dollars where the server reports them (`usage.cost`, as OpenRouter
 * does; OpenAI itself does not). Undefined when the body has no usage.
 */
export function usageFrom(body: unknown): EvaluatorUsage | undefined {
  const u = (body as { usage?: unknown } | null)?.usage;
  if (!u || typeof u !== 'object') return undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  const o = u as Record<string, unknown>;
  const usage: EvaluatorUsage = {
    ...(num(o.prompt_tokens) !== undefined && { tokensIn: num(o.prompt_tokens) }),
    ...(num(o.completion_tokens) !== undefined && { tokensOut: num(o.completion_tokens) }),
    ...(num(o.total_tokens) !== undefined && { tokens: num(o.total_tokens) }),
    ...(num(o.cost) !== undefined && { costUsd: num(o.cost) }),
  };
  return Object.keys(usage).length ? usage : undefined;
}

export function openaiEvaluator(config: OpenAIEvaluatorConfig): Evaluator {
  const url = chatCompletionsUrl(config.baseUrl);
  const where = redactUrl(url);
  return {
    name: 'openai',
    async evaluate(req, ctx) {
      if (ctx.signal.aborted) throw new Error('openai evaluation aborted before it started');
      const key = apiKeyFrom(config);
      const body = chatRequestBody(config, req.model, req.prompt);
      const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
      if (key) headers.authorization = `Bearer ${key}`;
      const hide = (s: string) => (key ? s.replaceAll(key, '[redacted]') : s);

      const started = Date.now();
      ctx.log.debug({ url: where, model: body.model, auth: key ? config.apiKeyEnv : null }, 'chat completion requested');
      let status: number;
      let text: string;
      try {
        const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: ctx.signal });
        status = res.status;
        text = await res.text();
      } catch (err) {
        const ms = Date.now() - started;
        if (ctx.signal.aborted) throw new Error(`chat completion at ${where} stopped after ${ms} ms: ${abortReason(ctx.signal)}`);
        throw new Error(hide(`request to ${where} failed: ${describeFetchError(err)}`));
      }
      const ms = Date.now() - started;
      ctx.log.debug({ url: where, status, ms }, 'chat completion answered');
      if (status < 200 || status > 299) throw new Error(hide(`${where} answered HTTP ${status}: ${snippet(text)}`));
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new Error(hide(`${where} answered HTTP ${status} with a body that is not JSON: ${snippet(text)}`));
      }
      try {
        return { text: answerFrom(parsed), usage: usageFrom(parsed) };
      } catch (err) {
        throw new Error(hide(`${where}: ${(err as Error).message}`));
      }
    },
  };
}

/** The URL without any user:password part, for messages. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url;
  }
}

/** A short, one-line excerpt of a body: the `error.message` of a JSON error when there is one. */
function snippet(text: string): string {
  let s = text;
  try {
    const m = (JSON.parse(text) as { error?: { message?: unknown } | string } | null)?.error;
    if (typeof m === 'string') s = m;
    else if (typeof m?.message === 'string') s = m.message;
  } catch {
    /* not JSON: the raw text */
  }
  s = s.replace(/\s+/g, ' ').trim();
  if (!s) return '(empty body)';
  return s.length > BODY_SNIPPET_CHARS ? `${s.slice(0, BODY_SNIPPET_CHARS)}…` : s;
}

/** undici's `TypeError: fetch failed` hides the reason in `cause` (ECONNREFUSED, ENOTFOUND …). */
function describeFetchError(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  return e?.cause?.message ?? e?.cause?.code ?? e?.message ?? String(err);
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r.name === 'TimeoutError' ? 'deadline reached' : r.message;
  return r === undefined ? 'aborted' : String(r);
}
