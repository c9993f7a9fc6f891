/**
 * SPIRALING from denials: the same tool call — the same tool with the same input — denied three
 * times or more (Claude Code's PermissionDenied hook reports each denial as a tool call with
 * `denied: true`: by its human, a permission rule, or its auto-mode classifier). A denied call does
 * not go through by asking again; an agent that keeps asking is looping. Calls that differ in
 * their input are different requests, and a denial followed by the same call succeeding (its human
 * allowed it after all) is not counted. Context turns may complete the count; at least one denial
 * must be an evidence turn.
 */
import { callsOf, uniq, type Detector } from './types.js';

export const DENIAL_REPEAT = 3;

const clip = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n)}…` : s);

export const repeatedDenial: Detector = ({ turns, from }) => {
  const calls = callsOf(turns);
  const groups = new Map<string, { turns: number[]; name: string; args: string }>();
  calls.forEach(({ turn, call }, pos) => {
    if (call.denied !== true) return;
    const args = call.args ?? '';
    const key = `${call.name}\u0000${args}`;
    // Allowed after all (the same call went through later): not a loop of denials.
    if (calls.some((x, p) => p > pos && x.call.denied !== true && x.call.ok !== false && x.call.name === call.name && (x.call.args ?? '') === args)) return;
    const g = groups.get(key) ?? { turns: [], name: call.name, args };
    g.turns.push(turn);
    groups.set(key, g);
  });
  let best: { key: string; turns: number[]; name: string; args: string } | null = null;
  for (const [key, g] of groups) {
    if (g.turns.length < DENIAL_REPEAT || !g.turns.some((t) => t >= from)) continue;
    if (!best || g.turns.length > best.turns.length) best = { key, ...g };
  }
  if (!best) return null;
  const what = clip(best.args ? `${best.name} ${best.args}` : best.name);
  return {
    kind: 'CORRECTION',
    pattern: 'SPIRALING',
    message:
      `The same tool call was denied ${best.turns.length} times (${what}). Asking again does not change a denial: ` +
      'do the work another way, or stop and ask your human for the permission.',
    turns: uniq(best.turns.filter((t) => t >= from)),
    key: best.key,
  };
};
