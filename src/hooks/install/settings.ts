/**
 * `warden install|uninstall claude|codex`, the pure part: merge warden's hooks into a settings file
 * (Claude Code's `.claude/settings.json`, Codex's `hooks.json`; both take the same shape,
 * `{"hooks": {"<Event>": [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}]}}`),
 * and take them out again.
 *
 *  - The user's other hooks and settings are kept byte for byte: every change is a small text edit
 *    (json-edit.ts) at one place; nothing is re-serialised.
 *  - Idempotent: a file that already has warden's hooks as planned is returned unchanged.
 *  - warden's handlers are recognised by their command (`… warden … hook claude …`, or the built
 *    `…/main.js hook claude`): an older one (another path, `--agent`, another timeout or matcher)
 *    is updated in place; a second one on the same event is removed.
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
}

/** Codex runs a SessionEnd hook for at most 3 s (0.169: longer ones are clamped, with a warning). */
export const CODEX_SESSION_END_TIMEOUT_S = 3;

/** The events warden hooks into, per agent (what `warden hook claude|codex` handles). */
export const HOOK_EVENTS: Record<HookAgent, PlannedEvent[]> = {
  claude: [
    { event: 'UserPromptSubmit' },
    { event: 'PreToolUse', matcher: '*' },
    { event: 'PostToolUse', matcher: '*' },
    { event: 'PostToolUseFailure', matcher: '*' },
    { event: 'Notification' },
    { event: 'Stop' },
    // Claude Code compacting its own context: the agent shows `compacting` in between.
    { event: 'PreCompact' },
    { event: 'PostCompact' },
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
    // `codex exec` ends its session when it exits (`codex exec resume` continues it): as for Claude Code.
    { event: 'SessionEnd', timeout: CODEX_SESSION_END_TIMEOUT_S },
  ],
};

export interface HookPlan {
  agent: HookAgent;
  /** The shell command each hook runs (`warden hook claude`, or the built CLI's full path). */
  command: string;
  timeout?: number;
}

interface Handler {
  type: 'command';
  command: string;
  timeout: number;
}

const handlerFor = (plan: HookPlan, e: PlannedEvent): Handler => ({
  type: 'command',
  command: plan.command,
  timeout: e.timeout ?? plan.timeout ?? HOOK_TIMEOUT_S,
});
const groupFor = (plan: HookPlan, e: PlannedEvent) => ({ ...(e.matcher !== undefined && { matcher: e.matcher }), hooks: [handlerFor(plan, e)] });

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

export interface MergeResult {
  /** The new text (the input itself when nothing changed). */
  text: string;
  changed: boolean;
  /** What was done, one line each ("added to PreToolUse", "updated an older warden hook on Stop"). */
  actions: string[];
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

/** warden's handlers on one event's list, in order. */
function wardenHandlers(list: Node, event: string, agent: HookAgent): Found[] {
  const out: Found[] = [];
  for (const group of list.children ?? []) {
    if (group.type !== 'object') continue;
    const groupHooks = prop(group, 'hooks');
    if (groupHooks?.type !== 'array') continue;
    for (const handler of groupHooks.children ?? []) {
      if (handler.type !== 'object') continue;
      if (isWardenHookCommand(prop(handler, 'command')?.value, agent)) out.push({ event, eventList: list, group, groupHooks, handler });
    }
  }
  return out;
}

/** Whether a group holds nothing but warden handlers. */
const onlyWarden = (f: Found, agent: HookAgent) =>
  (f.groupHooks.children ?? []).every((h) => h.type === 'object' && isWardenHookCommand(prop(h, 'command')?.value, agent));

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
    const found = wardenHandlers(list, e.event, plan.agent);
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
    if (onlyWarden(first!, plan.agent)) {
      const want = groupFor(plan, e);
      if (canonical(getNodeValue(first!.group)) !== canonical(want))
        return { edit: replaceEdit(text, first!.group, want), action: `updated an older warden hook on ${e.event}` };
    } else {
      const want = handlerFor(plan, e);
      if (canonical(getNodeValue(first!.handler)) !== canonical(want))
        return { edit: replaceEdit(text, first!.handler, want), action: `updated an older warden hook on ${e.event}` };
    }
  }
  return null;
}

const MAX_STEPS = 200;

/** Merge warden's hooks into a settings file's text (`null`: there is no file yet). */
export function installHooks(text: string | null, plan: HookPlan, source = 'settings'): MergeResult {
  // What install writes must be what it recognises as its own, or a second run would add it again.
  if (!isWardenHookCommand(plan.command, plan.agent)) throw new Error(`not a warden hook command: ${plan.command}`);
  if (text === null || !text.trim()) {
    parseSettings(text ?? '', source);
    const events = HOOK_EVENTS[plan.agent];
    const body = { hooks: Object.fromEntries(events.map((e) => [e.event, [groupFor(plan, e)]])) };
    return {
      text: `${render(body, '  ', '')}\n`,
      changed: true,
      actions: [`${text === null ? 'created the file with' : 'wrote'} warden's hooks on ${events.map((e) => e.event).join(', ')}`],
    };
  }
  let current = text;
  const actions: string[] = [];
  for (let i = 0; i < MAX_STEPS; i++) {
    const step = nextInstallEdit(current, plan, source);
    if (!step) return { text: current, changed: current !== text, actions };
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
  if (text === null) return { text: '', changed: false, actions: [] };
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
  return { text: current, changed: current !== text, actions };
}
