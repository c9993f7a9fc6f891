/**
 * When the heuristic is *unsure* of an OK: a near miss. The `tiered` evaluator asks its model about
 * these windows (src/domain/judgement/tiered.ts).
 *
 * Definition: the heuristic says OK, but **one more turn exactly like one of the window's evidence
 * turns would make a detector flag**. Concretely, for each evidence turn (the newest first, at most
 * NEAR_MISS_LOOKBACK distinct ones) the window is judged again with a copy of that turn appended
 * after the last one; the first detector that then fires, with the copy among its evidence, is the
 * near miss. Examples, with today's thresholds: two identical failing commands (three flag), three
 * identical observations (four flag), two identical messages without a tool call (three flag), an
 * edit applied and undone once (apply-undo-apply flags), two insubstantial turns at the end (three
 * flag), two promises in a row without a call (three flag), five busy turns without anything new
 * (six flag), five calls of an A-B-A-B-A ping-pong (six flag).
 *
 * Why this and not a second set of "near" thresholds: it uses the detectors and their thresholds as
 * they are, so it follows them when they are retuned, and it is exactly "this window is one repeat
 * away from a verdict". What it does not see: reward-hacking signs and success claims (one more
 * copy of a harmless turn never makes them) — those the sampled OK windows cover.
 *
 * The copies are judged as an `interval` evaluation (the idle detector looks at the last turn, and
 * a copied quiet turn at the end would make every idle check with a quiet turn "unsure").
 */
import { evidenceFrame, turnNumber } from '../evidence.js';
import type { Pattern, Turn } from '../../contract/schemas.js';
import { DETECTORS } from './index.js';
import type { DetectorContext, HeuristicInput } from './types.js';

/** How many distinct evidence turns (the newest) are tried as the repeated one. */
export const NEAR_MISS_LOOKBACK = 20;

export interface NearMiss {
  /** The detector that one more such turn would make flag. */
  detector: string;
  pattern: Pattern;
  /** The turn number whose repetition would tip it. */
  turn: number;
  /** In words, for logs and `warden evaluate`. */
  reason: string;
}

/**
 * The near miss of a window the heuristic judged OK, or null when no single repeated evidence turn
 * would make it flag. Pure and deterministic. (On a window the heuristic flags the answer is
 * meaningless: call it only after an OK.)
 */
export function nearMiss(input: HeuristicInput): NearMiss | null {
  const frame = evidenceFrame(input.turns.length, input.evidenceFrom, input.firstTurnNumber);
  const seen = new Set<string>();
  let tried = 0;
  for (let i = frame.count - 1; i >= frame.evidenceFrom && tried < NEAR_MISS_LOOKBACK; i--) {
    const turn = input.turns[i]!;
    const key = JSON.stringify(withoutId(turn));
    if (seen.has(key)) continue;
    seen.add(key);
    tried++;
    const turns = [...input.turns, turn];
    const copy = turns.length - 1;
    const ctx: DetectorContext = { task: input.task, turns, reason: 'interval', from: frame.evidenceFrom };
    for (const [name, detect] of DETECTORS) {
      const f = detect(ctx);
      if (!f || !f.turns.includes(copy)) continue;
      const n = turnNumber(frame, i);
      return { detector: name, pattern: f.pattern, turn: n, reason: `one more turn like turn ${n} would make ${name} flag ${f.pattern}` };
    }
  }
  return null;
}

function withoutId(t: Turn): Omit<Turn, 'id' | 'at'> {
  const { id: _id, at: _at, ...rest } = t;
  return rest;
}
