/**
 * `warden install|uninstall claude|codex`, the pure part: merge warden's hooks into a settings file
 * (Claude Code's `.claude/settings.json`, Codex's `hooks.json`; both take the same shape,
 * `{"hooks": {"<Event>": [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}]}}`),
 * and take them out again.
 *
 * What warden writes: the forwarder command (`warden-hook claude`, or node running
 * `…/hooks/forward.js claude`), which hands the event to the resident hook endpoint; and, when the
 * plan has `http` (a Claude Code user-scope install), Claude Code's own `type: "http"` handler
 * posting straight to the endpoint on the hot-path events (PreToolUse, PostToolUse,
 * PostToolUseFailure) — it carries the endpoint's token, literally.
 *
 *  - The user's other hooks and settings are kept byte for byte: every change is a small text edit
 *    (json-edit.ts) at one place; nothing is re-serialised.
 *  - Idempotent: a file that already has warden's hooks as planned is returned unchanged.
 *  - warden's handlers are recognised by their command or URL: the whole command runs the
 *    forwarder, or the older `warden hook claude` (`warden` or a path to it, or the built
 *    `…/main.js` after node; flags, a redirection); or an http handler posting to a loopback
 *    `http://…/hooks/claude` (any port). An older one (the old command, another path, `--agent`,
 *    another port or token, a shorter timeout, another matcher) is updated in place, keeping its own
 *    `--timeout` and a timeout longer than warden's; a second one on the same event is removed.
 *  - A handler that runs warden's hook inside a larger command (`audit.sh; warden hook claude`) is
 *    the user's: never changed or removed, and warden adds no hook of its own on that event.
 *  - Uninstall removes every warden handler of that agent kind, and the group, event list and
 *    `hooks` object that held only it.
 */
import type { Node } from 'jsonc-parser';
import { getNodeValue } from 'jsonc-parser';
import type { HookAgent } from '../protocol.js';
import { SettingsError, appendEdit, applyEdit, parseSettings, prop, propertyOf, removeEdit, render, replaceEdit, type Edit } from './json-edit.js';

/** Claude Code's and Codex's hook timeout, in seconds (the hook's own --timeout is 10 s). */
export const HOOK_TIMEOUT_S = 30;

export interface PlannedEvent {
  event: string;
  matcher?: string;
  /** Seconds, when the CLI allows less than HOOK_TIMEOUT_S on this event (it would clamp it, and say so at every start). */
  timeout?: number;
  /** A hot-path event: an http handler when the plan has one (Claude Code, user scope). */
  http?: true;
  /** The CLI may exit as soon as it runs this hook (and kill it): the command runs in the background (detachedCommand). */
  detach?: true;
}

/**
 * A hook command run in the background, with the event on its stdin: `claude -p` runs StopFailure
 * as it exits and kills a hook still running a few ms later (2.1.330), before any hook can reach
 * warden. The background process keeps the event (fd 3 is the hook's stdin: a background job's own
 * stdin would be /dev/null) and outlives the CLI. It has nothing to answer: StopFailure takes no decision.
 */
export function detachedCommand(command: string): string {
  return `{ ${command} <&3 >/dev/null 2>&1 & } 3<&0`;
}
const DETACHED = /^\{ (.+) <&3 >\/dev\/null 2>&1 & \} 3<&0$/;

/** Codex runs a SessionEnd hook for at most 3 s (0.169: longer ones are clamped, with a warning). */
export const CODEX_SESSION_END_TIMEOUT_S = 3;

/** The events warden hooks into, per agent (what `warden hook claude|codex` handles). */
export const HOOK_EVENTS: Record<HookAgent, PlannedEvent[]> = {
  claude: [
    { event: 'UserPromptSubmit' },
    // The hot path (every tool call): Claude Code posts these itself when the install is an http one.
    { event: 'PreToolUse', matcher: '*', http: true },
    { event: 'PostToolUse', matcher: '*', http: true },
    { event: 'PostToolUseFailure', matcher: '*', http: true },
    // A tool call its CLI denied: reported as a denied call (the same one denied again and again is a spiral).
    { event: 'PermissionDenied', matcher: '*' },
    { event: 'Notification' },
    { event: 'Stop' },
    // A turn that ended on an API error: blocked (a rate limit) or awaiting its human (a login, a bill).
    { event: 'StopFailure', detach: true },
    // Claude Code compacting its own context: the agent shows `compacting` in between.
    { event: 'PreCompact' },
    { event: 'PostCompact' },
    // Sub-agents (the Task tool, custom agents): listed under the agent while they run.
    { event: 'SubagentStart' },
    { event: 'SubagentStop' },
    // An ended session ends its agent after a grace period; a resumed one shows itself by its next
    // prompt or tool call. (Not SessionStart: for a new session it would start the agent before its
    // first prompt, so the agent's task would not be that prompt.)
    { event: 'SessionEnd' },
  ],
  codex: [
    { event: 'UserPromptSubmit' },
    { event: 'PreToolUse', matcher: '*' },
    { event: 'PermissionRequest', matcher: '*' },
    { event: 'PostToolUse', matcher: '*' },
    { event: 'Stop' },
    // codex compacting its own context (auto-compaction), as for Claude Code.
    { event: 'PreCompact' },
    { event: 'PostCompact' },
    // Sub-agents (spawn_agent): listed under the agent while they run; at their stop, what their own rollout spent counts.
    { event: 'SubagentStart' },
    { event: 'SubagentStop' },
    // `codex exec` ends its session when it exits (`codex exec resume` continues it): as for Claude Code.
    { event: 'SessionEnd', timeout: CODEX_SESSION_END_TIMEOUT_S },
  ],
};

export interface HookPlan {
  agent: HookAgent;
  /** The shell command each hook runs (the forwarder, `warden-hook claude`, or its full path). */
  command: string;
  timeout?: number;
  /**
   * Claude Code's `type: "http"` handler for the hot-path events: the endpoint's route (with the
   * connection flags in its query string) and its token. Only for a user-scope install: the token
   * is written into the file as it is.
   */
  http?: { url: string; token: string };
}

interface CommandHandler {
  type: 'command';
  command: string;
  timeout: number;
}

/** The environment variables an http handler may put into its headers (Claude Code's allowedEnvVars). */
export const HTTP_HOOK_ENV_VARS = ['CLAUDE_PROJECT_DIR', 'WARDEN_AUTO_START', 'WARDEN_AGENT_ID'] as const;

interface HttpHandler {
  type: 'http';
  url: string;
  headers: Record<string, string>;
  allowedEnvVars: string[];
  timeout: number;
}

type Handler = CommandHandler | HttpHandler;

/** The http handler of the hook endpoint, as Claude Code takes it. */
export function httpHandler(http: { url: string; token: string }, timeout: number = HOOK_TIMEOUT_S): HttpHandler {
  return {
    type: 'http',
    url: http.url,
    headers: {
      Authorization: `Bearer ${http.token}`,
      'X-Warden-Project-Dir': '$CLAUDE_PROJECT_DIR',
      'X-Warden-Auto-Start': '$WARDEN_AUTO_START',
      'X-Warden-Agent': '$WARDEN_AGENT_ID',
    },
    allowedEnvVars: [...HTTP_HOOK_ENV_VARS],
    timeout,
  };
}

/** The hook's own `--timeout <ms>` in a warden hook command (the user's tuning, e.g. for a long `verify`). */
function hookTimeoutFlag(command: string): string | null {
  return /\s--timeout(?:=|\s+)(\d+)(?=$|[\s;|&>])/.exec(command)?.[1] ?? null;
}

/**
 * The handler warden wants on an event: the planned command and timeout — but a handler already
 * there keeps its own `--timeout` flag, and a timeout longer than the planned one (unless the
 * agent's CLI caps that event, as Codex does SessionEnd's).
 */
function handlerFor(plan: HookPlan, e: PlannedEvent, existing?: unknown): Handler {
  const old = existing && typeof existing === 'object' ? (existing as { command?: unknown; timeout?: unknown }) : {};
  const planned = plan.timeout ?? HOOK_TIMEOUT_S;
  const timeout = e.timeout ?? (typeof old.timeout === 'number' && Number.isFinite(old.timeout) && old.timeout > planned ? old.timeout : planned);
  if (plan.http && e.http) return httpHandler(plan.http, timeout);
  const flag = typeof old.command === 'string' && !hookTimeoutFlag(plan.command) ? hookTimeoutFlag(old.command) : null;
  const command = flag ? `${plan.command} --timeout ${flag}` : plan.command;
  return { type: 'command', command: e.detach ? detachedCommand(command) : command, timeout };
}
const groupFor = (plan: HookPlan, e: PlannedEvent, existing?: unknown) => ({
  ...(e.matcher !== undefined && { matcher: e.matcher }),
  hooks: [handlerFor(plan, e, existing)],
});

/**
 * Whether a hook command runs `warden hook <agent>`: the program is `warden` (or a path ending in
 * it, or the built `main.js`), possibly after `node`, with global flags before `hook`.
 */
export function isWardenHookCommand(command: unknown, agent: HookAgent): boolean {
  if (typeof command !== 'string') return false;
  const program = String.raw`(?:^|[\s'"/])(?:warden|main\.js)['"]?`;
  const flags = String.raw`(?:\s+--?[\w-]+(?:=\S+|\s+(?!hook\b)[^\s-]\S*)?)*`;
  return new RegExp(`${program}${flags}\\s+hook\\s+${agent}(?=$|[\\s;|&>])`).test(command);
}

/**
 * Whether a hook command runs the forwarder for `agent`: the program is `warden-hook` (or a path
 * ending in it), or `…/hooks/forward.js` (after node), with flags before or after the agent.
 */
export function isForwarderCommand(command: unknown, agent: HookAgent): boolean {
  if (typeof command !== 'string') return false;
  const program = String.raw`(?:^|[\s'"/])(?:warden-hook|hooks/forward\.js)['"]?`;
  const flags = String.raw`(?:\s+--?[\w-]+(?:=\S+|\s+(?!(?:claude|codex)\b)[^\s-]\S*)?)*`;
  return new RegExp(`${program}${flags}\\s+${agent}(?=$|[\\s;|&>])`).test(command);
}

/** Whether a hook command runs warden's hook for `agent`: the forwarder, or the older `warden hook <agent>`. */
export const isWardenCommand = (command: unknown, agent: HookAgent): boolean => isForwarderCommand(command, agent) || isWardenHookCommand(command, agent);

const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** Whether a host (as a URL writes it: IPv6 in brackets) is this machine's loopback. */
export const isLoopbackHost = (host: string): boolean => LOOPBACK_HOST.test(host);

/** Whether a handler is warden's http handler for `agent`: `type: "http"` posting to a loopback `http://…/hooks/<agent>`, any port. */
export function isWardenHttpHandler(handler: unknown, agent: HookAgent): boolean {
  if (!handler || typeof handler !== 'object') return false;
  const h = handler as { type?: unknown; url?: unknown };
  if (h.type !== 'http' || typeof h.url !== 'string') return false;
  let u: URL;
  try {
    u = new URL(h.url);
  } catch {
    return false;
  }
  return u.protocol === 'http:' && isLoopbackHost(u.hostname) && u.pathname === `/hooks/${agent}` && !u.username && !u.password;
}

/** A shell command's words (quotes and backslashes undone), and whether it has more than one command in it. */
function shellWords(command: string): { words: string[]; compound: boolean } {
  const words: string[] = [];
  let word: string | null = null;
  let compound = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (c === "'") {
      const close = command.indexOf("'", i + 1);
      if (close < 0) return { words, compound: true };
      word = (word ?? '') + command.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      let j = i + 1;
      let w = '';
      for (; j < command.length && command[j] !== '"'; j++) {
        if (command[j] === '\\' && j + 1 < command.length) w += command[++j];
        else if (command[j] === '`' || (command[j] === '$' && command[j + 1] === '(')) compound = true;
        else w += command[j];
      }
      if (j >= command.length) return { words, compound: true };
      word = (word ?? '') + w;
      i = j;
    } else if (c === '\\') {
      word = (word ?? '') + (command[++i] ?? '');
    } else if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === '&' && (command[i - 1] === '>' || command[i + 1] === '>')) {
      word = (word ?? '') + c; // a redirection: 2>&1, &>file
    } else if (c === ';' || c === '|' || c === '&' || c === '\n' || c === '`' || c === '(' || c === ')' || (c === '$' && command[i + 1] === '(')) {
      compound = true;
      word = (word ?? '') + c;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== null) words.push(word);
  return { words, compound };
}

const base = (w: string) => w.slice(w.lastIndexOf('/') + 1);

/**
 * Whether a hook command is, as a whole, a warden hook command — what install manages: one simple
 * command whose program is `warden` (or a path to it), or node (or another path to an executable)
 * running warden's `main.js`, with `hook <agent>` among its words. Not a command that runs warden's
 * hook next to something else (`audit.sh; warden hook claude`, a pipe, `&&`): that is the user's.
 */
export function isOnlyWardenHookCommand(command: unknown, agent: HookAgent): boolean {
  const inner = typeof command === 'string' ? DETACHED.exec(command)?.[1] : undefined;
  if (inner !== undefined) return isOnlyWardenHookCommand(inner, agent); // warden's own background form
  const old = isWardenHookCommand(command, agent);
  const forwarder = isForwarderCommand(command, agent);
  if (!old && !forwarder) return false;
  const { words, compound } = shellWords(command as string);
  if (compound) return false;
  let i = 0;
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++; // FOO=1 warden hook …
  const program = words[i];
  if (program === undefined) return false;
  const isWarden = (w: string | undefined) =>
    w !== undefined &&
    ((old && (base(w) === 'warden' || base(w) === 'main.js')) || (forwarder && (base(w) === 'warden-hook' || /(?:^|\/)hooks\/forward\.js$/.test(w))));
  return isWarden(program) || (/^node(js)?[\d.]*$/.test(base(program)) && isWarden(words[i + 1])) || (program.startsWith('/') && isWarden(words[i + 1]));
}

/** Whether a handler is, as a whole, warden's: its http handler, or a command that is only a warden hook command. */
export const isWardenHandler = (handler: unknown, agent: HookAgent): boolean =>
  isWardenHttpHandler(handler, agent) || isOnlyWardenHookCommand((handler as { command?: unknown } | null)?.command, agent);

export interface MergeResult {
  /** The new text (the input itself when nothing changed). */
  text: string;
  changed: boolean;
  /** What was done, one line each ("added to PreToolUse", "updated an older warden hook on Stop"). */
  actions: string[];
  /** What was left alone on purpose, one line each (the user's handlers that wrap warden's hook). */
  kept: string[];
}

/** One line per handler that runs warden's hook inside a larger command: left as the user wrote it. */
function wrappedNotes(text: string, agent: HookAgent, source: string, verb: 'install' | 'uninstall'): string[] {
  const root = parseSettings(text, source);
  const hooks = root && hooksObject(root, source);
  if (!hooks) return [];
  const out: string[] = [];
  for (const p of hooks.children ?? []) {
    const list = p.children?.[1];
    const event = String(p.children?.[0]?.value);
    if (list?.type !== 'array') continue;
    for (const f of hookHandlers(list, event, agent).filter((h) => h.wrapped)) {
      const command = JSON.stringify(prop(f.handler, 'command')?.value);
      out.push(
        verb === 'install'
          ? `kept your handler on ${event} that runs warden's hook inside ${command}; warden adds none of its own there`
          : `left your handler on ${event} as it is: ${command} runs warden's hook inside a larger command; take it out by hand`,
      );
    }
  }
  return out;
}

/** A JSON value's canonical form, for comparing what a user wrote with what warden plans. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

interface Found {
  event: string;
  eventList: Node;
  group: Node;
  groupHooks: Node;
  handler: Node;
}

function hooksObject(root: Node, source: string): Node | undefined {
  const hooks = prop(root, 'hooks');
  if (hooks && hooks.type !== 'object') throw new SettingsError(`${source}: "hooks" is not an object; fix it first — warden leaves it as it is`);
  return hooks;
}

function eventList(hooks: Node, event: string, source: string): Node | undefined {
  const list = prop(hooks, event);
  if (list && list.type !== 'array') throw new SettingsError(`${source}: "hooks.${event}" is not a list; fix it first — warden leaves it as it is`);
  return list;
}

/**
 * The handlers on one event's list, in order, whose command runs warden's hook: as a whole
 * (`wrapped` false: install's own) or inside a larger command (`wrapped` true: the user's).
 */
function hookHandlers(list: Node, event: string, agent: HookAgent): Array<Found & { wrapped: boolean }> {
  const out: Array<Found & { wrapped: boolean }> = [];
  for (const group of list.children ?? []) {
    if (group.type !== 'object') continue;
    const groupHooks = prop(group, 'hooks');
    if (groupHooks?.type !== 'array') continue;
    for (const handler of groupHooks.children ?? []) {
      if (handler.type !== 'object') continue;
      if (isWardenHttpHandler(getNodeValue(handler), agent)) {
        out.push({ event, eventList: list, group, groupHooks, handler, wrapped: false });
        continue;
      }
      const command = prop(handler, 'command')?.value;
      if (isWardenCommand(command, agent)) out.push({ event, eventList: list, group, groupHooks, handler, wrapped: !isOnlyWardenHookCommand(command, agent) });
    }
  }
  return out;
}

/** warden's own handlers on one event's list (the whole command a warden hook command), in order. */
const wardenHandlers = (list: Node, event: string, agent: HookAgent): Found[] => hookHandlers(list, event, agent).filter((f) => !f.wrapped);

/** Whether a group holds nothing but warden handlers. */
const onlyWarden = (f: Found, agent: HookAgent) => (f.groupHooks.children ?? []).every((h) => h.type === 'object' && isWardenHandler(getNodeValue(h), agent));

/** The one edit that brings `text` a step closer to the plan, or null when it is there. */
function nextInstallEdit(text: string, plan: HookPlan, source: string): { edit: Edit; action: string } | null {
  const root = parseSettings(text, source)!;
  const hooks = hooksObject(root, source);
  const events = HOOK_EVENTS[plan.agent];
  if (!hooks) {
    const all = Object.fromEntries(events.map((e) => [e.event, [groupFor(plan, e)]]));
    return { edit: appendEdit(text, root, all, 'hooks'), action: `added warden's hook to ${events.map((e) => e.event).join(', ')}` };
  }
  for (const e of events) {
    const list = eventList(hooks, e.event, source);
    if (!list) return { edit: appendEdit(text, hooks, [groupFor(plan, e)], e.event), action: `added warden's hook to ${e.event}` };
    const all = hookHandlers(list, e.event, plan.agent);
    const found = all.filter((f) => !f.wrapped);
    // The user runs warden's hook inside a command of their own here: theirs, and enough.
    if (!found.length && all.length) continue;
    if (!found.length)
      return {
        edit: appendEdit(text, list, groupFor(plan, e)),
        action: `added warden's hook to ${e.event} (after the ${list.children?.length ?? 0} already there)`,
      };
    const [first, ...extra] = found;
    if (extra.length) {
      const dup = extra[0]!;
      const edit = (dup.groupHooks.children?.length ?? 0) === 1 ? removeEdit(dup.eventList, dup.group) : removeEdit(dup.groupHooks, dup.handler);
      return { edit, action: `removed a second warden hook on ${e.event}` };
    }
    const existing = getNodeValue(first!.handler);
    if (onlyWarden(first!, plan.agent)) {
      const want = groupFor(plan, e, existing);
      if (canonical(getNodeValue(first!.group)) !== canonical(want))
        return { edit: replaceEdit(text, first!.group, want), action: `updated an older warden hook on ${e.event}` };
    } else {
      const want = handlerFor(plan, e, existing);
      if (canonical(existing) !== canonical(want))
        return { edit: replaceEdit(text, first!.handler, want), action: `updated an older warden hook on ${e.event}` };
    }
  }
  return null;
}

const MAX_STEPS = 200;

/** Merge warden's hooks into a settings file's text (`null`: there is no file yet). */
export function installHooks(text: string | null, plan: HookPlan, source = 'settings'): MergeResult {
  // What install writes must be what it recognises as its own, or a second run would add it again.
  if (!isOnlyWardenHookCommand(plan.command, plan.agent)) throw new Error(`not a warden hook command: ${plan.command}`);
  if (plan.http && !isWardenHttpHandler(httpHandler(plan.http), plan.agent)) throw new Error(`not a loopback URL of the hook endpoint: ${plan.http.url}`);
  if (text === null || !text.trim()) {
    parseSettings(text ?? '', source);
    const events = HOOK_EVENTS[plan.agent];
    const body = { hooks: Object.fromEntries(events.map((e) => [e.event, [groupFor(plan, e)]])) };
    return {
      text: `${render(body, '  ', '')}\n`,
      changed: true,
      actions: [`${text === null ? 'created the file with' : 'wrote'} warden's hooks on ${events.map((e) => e.event).join(', ')}`],
      kept: [],
    };
  }
  let current = text;
  const actions: string[] = [];
  for (let i = 0; i < MAX_STEPS; i++) {
    const step = nextInstallEdit(current, plan, source);
    if (!step) return { text: current, changed: current !== text, actions, kept: wrappedNotes(current, plan.agent, source, 'install') };
    current = applyEdit(current, step.edit);
    actions.push(step.action);
  }
  throw new SettingsError(`${source}: too many warden hooks to merge; remove them by hand (warden uninstall) and install again`);
}

/** The outermost node that holds only this handler: the handler, its group, its event, or `hooks` itself. */
function removalFor(root: Node, hooks: Node, f: Found): Edit {
  if ((f.groupHooks.children?.length ?? 0) > 1) return removeEdit(f.groupHooks, f.handler);
  if ((f.eventList.children?.length ?? 0) > 1) return removeEdit(f.eventList, f.group);
  if ((hooks.children?.length ?? 0) > 1) return removeEdit(hooks, propertyOf(f.eventList));
  return removeEdit(root, propertyOf(hooks));
}

/** Remove every warden hook of this agent kind from a settings file's text. */
export function uninstallHooks(text: string | null, agent: HookAgent, source = 'settings'): MergeResult {
  if (text === null) return { text: '', changed: false, actions: [], kept: [] };
  let current = text;
  const actions: string[] = [];
  for (let i = 0; i < MAX_STEPS; i++) {
    const root = parseSettings(current, source);
    const hooks = root && hooksObject(root, source);
    if (!root || !hooks) break;
    let found: Found | undefined;
    for (const p of hooks.children ?? []) {
      const list = p.children?.[1];
      const event = String(p.children?.[0]?.value);
      if (list?.type !== 'array') continue;
      found = wardenHandlers(list, event, agent)[0];
      if (found) break;
    }
    if (!found) break;
    current = applyEdit(current, removalFor(root, hooks, found));
    actions.push(`removed warden's hook from ${found.event}`);
  }
  return { text: current, changed: current !== text, actions, kept: wrappedNotes(current, agent, source, 'uninstall') };
}
