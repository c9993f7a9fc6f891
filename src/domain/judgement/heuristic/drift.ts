/**
 * DRIFT, as far as words show it.
 *
 * - offTask: the window's own words (the agent's text and its calls' arguments, not the results
 *   it read) use almost none of the task's content words: under 10 % of them, for a task of at least
 *   8 content words and a window of at least 3 turns and 40 content words of its own. Work on the
 *   task names what the task is about (its files, its entities, its verbs) at least now and then;
 *   a window that never does is working on something else. Short of that the heuristic abstains:
 *   a plausible detour is for a model evaluator to judge.
 */
import { contentTokens } from './similarity.js';
import type { Detector } from './types.js';

const MIN_TASK_WORDS = 8;
const MIN_WINDOW_WORDS = 40;
const MIN_TURNS = 3;
const COVERAGE = 0.1;

export const offTask: Detector = ({ task, turns, from }) => {
  if (turns.length - from < MIN_TURNS) return null;
  const taskWords = contentTokens(task, 8_000);
  if (taskWords.size < MIN_TASK_WORDS) return null;
  const need = Math.ceil(taskWords.size * COVERAGE);
  const own = new Set<string>();
  let used = 0;
  const add = (w: string) => {
    if (own.has(w)) return;
    own.add(w);
    if (taskWords.has(w)) used++;
  };
  for (const t of turns) {
    for (const w of contentTokens(t.text, 8_000)) add(w);
    for (const c of t.toolCalls ?? []) for (const w of contentTokens(c.args ?? '', 4_000)) add(w);
    if (used >= need) return null; // on task (most windows stop at their first turn)
  }
  if (own.size < MIN_WINDOW_WORDS) return null;
  const about = task.replace(/\s+/g, ' ').trim();
  return {
    kind: 'CORRECTION',
    pattern: 'DRIFT',
    message: `Your recent turns use almost none of the task's words (${used} of ${taskWords.size}): you seem to be working on something else. Go back to the task: "${about.length > 120 ? `${about.slice(0, 120)}…` : about}".`,
    turns: turns.map((_, i) => i).filter((i) => i >= from),
  };
};
