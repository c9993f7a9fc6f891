/**
 * The evaluator's answer: one JSON object, and nothing else.
 *
 *   {"verdict": "OK", "pattern": null, "message": "", "evidence": []}
 *   {"verdict": "CORRECTION", "pattern": "SPIRALING", "message": "…", "evidence": [12, 14]}
 *
 * Why a whole-answer JSON object rather than "the first line that looks like a verdict": a lenient
 * line scan lets `  result: OK`, `- OK`, `**OK**`, `ok`, an echoed prompt, or an agent's own
 * `ESCALATION …` text quoted back by the model count as a verdict. Here the answer must *be* the
 * object (surrounding whitespace, or one ```json fence wrapping the whole answer, are the only
 * wrapping allowed), the keys are fixed, the values are exact upper-case enums, and a non-OK verdict
 * must name its pattern, say what is wrong, and cite the turns it rests on by number. Anything else
 * is not a verdict: the evaluation is skipped, which neither advances nor resets the ladder.
 *
 * Evidence rules (the ladder judges only what the agent did after the last whisper reached it):
 * every cited number must be a turn shown in the transcript; citations of context turns (before the
 * evidence boundary) are dropped; a non-OK interval verdict left with no evidence turn is rejected.
 * An idle verdict may cite no turn: its evidence is the silence.
 */
import { z } from 'zod';
import { PATTERNS, VERDICT_KINDS, type Verdict } from '../contract/schemas.js';
import { truncate, MAX_WHISPER_TEXT } from '../contract/limits.js';
import { turnIndex, type EvidenceFrame } from './evidence.js';

export const AnswerSchema = z
  .object({
    verdict: z.enum(VERDICT_KINDS),
    pattern: z.enum(PATTERNS).nullable().optional(),
    message: z.string().max(20_000).optional(),
    evidence: z.array(z.number().int().positive()).max(50).optional(),
  })
  .strict();

export type ParsedAnswer = { ok: true; verdict: Verdict } | { ok: false; error: string };

export interface AnswerContext {
  frame: EvidenceFrame;
  reason: 'interval' | 'idle';
}

/** The answer text stripped of surrounding whitespace and of one fence that wraps all of it. */
function unwrap(text: string): string {
  const t = text.trim();
  const fence = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n```$/.exec(t);
  return (fence ? fence[1]! : t).trim();
}

const issue = (e: z.ZodError) => e.issues.map((i) => `${i.path.length ? i.path.join('.') : 'answer'}: ${i.message}`).join('; ');

/** Parse an evaluator's answer under the strict format. Never throws. */
export function parseAnswer(text: string | null | undefined, ctx: AnswerContext): ParsedAnswer {
  if (!text || !text.trim()) return { ok: false, error: 'empty answer' };
  const body = unwrap(text);
  if (!body.startsWith('{') || !body.endsWith('}')) return { ok: false, error: 'the answer is not one JSON object (it must be the whole answer)' };
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch (err) {
    return { ok: false, error: `the answer is not valid JSON: ${(err as Error).message}` };
  }
  const parsed = AnswerSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: `invalid answer: ${issue(parsed.error)}` };
  const a = parsed.data;
  const cited = [...new Set(a.evidence ?? [])];
  const unknown = cited.filter((n) => turnIndex(ctx.frame, n) < 0);
  if (unknown.length) return { ok: false, error: `evidence: turn ${unknown.join(', ')} is not in the transcript` };
  const evidence = cited.filter((n) => turnIndex(ctx.frame, n) >= ctx.frame.evidenceFrom).sort((x, y) => x - y);
  if (a.verdict === 'OK') {
    if (a.pattern) return { ok: false, error: 'pattern: an OK verdict has no pattern (null)' };
    return { ok: true, verdict: { kind: 'OK', pattern: null, message: tidy(a.message ?? ''), evidence } };
  }
  if (!a.pattern) return { ok: false, error: `pattern: a ${a.verdict} verdict must name one of ${PATTERNS.join(', ')}` };
  const message = tidy(a.message ?? '');
  if (!message) return { ok: false, error: `message: a ${a.verdict} verdict must say what is wrong` };
  if (ctx.reason === 'interval' && evidence.length === 0) {
    return {
      ok: false,
      error: cited.length
        ? 'evidence: the verdict rests only on turns before the evidence boundary (already judged)'
        : `evidence: a ${a.verdict} verdict must cite the turns it rests on`,
    };
  }
  return { ok: true, verdict: { kind: a.verdict, pattern: a.pattern, message, evidence } };
}

const tidy = (m: string) => truncate(m.replace(/\s+/g, ' ').trim(), MAX_WHISPER_TEXT);

/** A verdict in the strict answer form (what the heuristic evaluator answers, and the prompt's example). */
export function formatAnswer(v: Verdict): string {
  return JSON.stringify({ verdict: v.kind, pattern: v.pattern, message: v.message, evidence: v.evidence ?? [] });
}
