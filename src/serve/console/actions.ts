/**
 * The console's actions: which it offers, and the new budget limits its raise form asks for. (The
 * agent's timeline is src/timeline/agent-timeline.ts, shared with the MCP server.)
 */

/** The actions the console offers, and the ones that apply in a state (the workflow decides anyway). */
export const CONSOLE_ACTIONS = ['resume', 'steer', 'pause', 'dismiss', 'abort', 'raise'] as const;
export type ConsoleAction = (typeof CONSOLE_ACTIONS)[number];
export const isConsoleAction = (x: string): x is ConsoleAction => (CONSOLE_ACTIONS as readonly string[]).includes(x);

/** The new limits the raise form asks for (blank fields are left as they are), or what is wrong with one (its field named). */
export function raiseFromForm(
  form: URLSearchParams,
): { ok: true; raise: { tokens?: number; costUsd?: number; turns?: number; wallClockMs?: number } } | { ok: false; message: string } {
  const raise: { tokens?: number; costUsd?: number; turns?: number; wallClockMs?: number } = {};
  const field = (name: string) => (form.get(name) ?? '').trim();
  for (const [name, key] of [
    ['tokens', 'tokens'],
    ['turns', 'turns'],
  ] as const) {
    const v = field(name);
    if (!v) continue;
    if (!/^\d{1,15}$/.test(v) || Number(v) < 1) return { ok: false, message: `${name}: a whole number of at least 1` };
    raise[key] = Number(v);
  }
  const cost = field('cost_usd');
  if (cost) {
    if (!/^\d{1,9}(\.\d{1,6})?$/.test(cost) || Number(cost) <= 0) return { ok: false, message: 'cost_usd: an amount in US dollars above 0, like 20 or 7.50' };
    raise.costUsd = Number(cost);
  }
  const wall = field('wall_clock');
  if (wall) {
    const m = /^(\d{1,9})(ms|s|m|h)$/.exec(wall);
    if (!m || Number(m[1]) < 1) return { ok: false, message: 'wall_clock: a duration like 90m or 2h' };
    raise.wallClockMs = Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  }
  if (Object.keys(raise).length === 0) return { ok: false, message: 'give at least one new limit: tokens, cost_usd, turns or wall_clock' };
  return { ok: true, raise };
}
