/**
 * `npm run scorecard`: writes docs/scorecard.md, warden's judgement scored on the committed
 * labelled sets (test/cases/…). Every number on the page is computed here, at run time, by the same
 * code `warden evaluate --cases` runs (score-cases.ts, the first tier of triage.ts, the prompt
 * builder): after a change to the judgement, one command regenerates the page.
 * test/unit/scorecard.test.ts rebuilds the page in-process and compares it with the committed one.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { makeEvaluate } from '../activities/evaluate.js';
import { OPENAI_MAX_TOKENS } from '../activities/evaluators/openai.js';
import { scoreCases } from '../src/cli/commands/score-cases.js';
import { DEFAULT_SAMPLE_OK } from '../src/domain/contract/evaluator-schemas.js';
import { SupervisorConfigSchema } from '../src/domain/contract/schemas.js';
import { buildEvaluationPrompt } from '../src/domain/judgement/prompt.js';
import { CASE_LABELS, parseCases, score, type CaseLabel, type LabelledCase, type Prediction } from '../src/domain/judgement/scoring.js';
import { sampledOk } from '../src/domain/judgement/tiered.js';
import { tierOne, triage, type TriageRow, type TriageWindow } from '../src/domain/judgement/triage.js';

/** The labelled sets, in the order the page shows them. */
export const SETS = [
  { key: 'real', file: 'test/cases/real/cases.jsonl', title: 'real runs, labelled by others', readme: 'test/cases/real/README.md' },
  {
    key: 'regression',
    file: 'test/cases/regression/cases.jsonl',
    title: "other teams' loop-detector tests (never a headline number)",
    readme: 'test/cases/regression/README.md',
  },
  { key: 'warden', file: 'test/cases/cases.jsonl', title: "warden's own regression cases", readme: 'test/cases/README.md' },
] as const;

export const OUT = 'docs/scorecard.md';

/** A problem label caught less often than this on a split is listed under "Where warden is weak". */
const WEAK_RECALL = 0.8;

/**
 * The stated assumptions of the cost estimate. The price is a list price read from a published
 * table, not measured here; change it here and regenerate.
 */
export const COST = {
  turnSeconds: 30,
  model: 'gpt-4.1-mini (OpenAI, through the `openai` evaluator)',
  usdPerMillionIn: 0.4,
  usdPerMillionOut: 1.6,
  priceSource:
    'list price $0.40 per million input tokens and $1.60 per million output tokens, as published in 2026 (read 2026-11-28; not verified live from this machine)',
  /** A token is taken as 4 characters of the prompt (no tokenizer is run). */
  charsPerToken: 4,
};

/** The system a case comes from, read from its `source` (the repository, and where that holds several systems, the folder or file). */
export function systemOf(set: string, source: string | undefined): string {
  if (!source) return '(no source)';
  if (set === 'warden') return source === 'written for warden' ? 'written for warden' : 'reconstructed from public threads';
  const m = /^https?:\/\/github\.com\/([^/@\s:]+\/[^/@\s:]+)(?:@[0-9a-f]+:(\S+))?/.exec(source.trim());
  if (!m) return source.trim();
  const repo = m[1]!;
  const path = m[2] ?? '';
  const known: Array<[RegExp, string]> = [
    [/^ag2ai\/Agents_Failure_Attribution Who&When\/Hand-Crafted\//, 'Who&When hand-crafted (Magentic-One)'],
    [/^ag2ai\/Agents_Failure_Attribution Who&When\/Algorithm-Generated\//, 'Who&When algorithm-generated (CaptainAgent)'],
    [/^microsoft\/AgentRx data\/magentic_dataset\//, 'AgentRx Magentic-One'],
    [/^microsoft\/AgentRx data\/tau_retail\/tau_dataset_full\.json/, 'tau-bench retail, runs its grader passed (via AgentRx)'],
    [/^microsoft\/AgentRx data\/tau_retail\//, 'AgentRx tau-bench retail, failed runs'],
  ];
  for (const [re, name] of known) if (re.test(`${repo} ${path}`)) return name;
  if (set === 'regression') return repo;
  return `${repo} ${path.replace(/\/[^/]*$/, '')}`.trim();
}

interface Row {
  set: string;
  split: string;
  system: string;
  c: LabelledCase;
  predicted: Prediction;
  triaged: TriageWindow;
}

const f3 = (x: number | null) => (x === null ? '—' : x.toFixed(3));
const ratio = (a: number, b: number): number | null => (b === 0 ? null : a / b);
const ofN = (a: number, b: number) => (b === 0 ? '—' : `${a} of ${b} (${((a / b) * 100).toFixed(1)} %)`);
const isProblem = (l: CaseLabel) => l !== 'OK';
const flagged = (p: Prediction) => p !== 'OK' && p !== 'SKIPPED';
const table = (head: string[], rows: string[][]) => [
  `| ${head.join(' | ')} |`,
  `|${head.map(() => '---').join('|')}|`,
  ...rows.map((r) => `| ${r.join(' | ')} |`),
];
const unique = <T>(xs: T[]) => [...new Set(xs)];

/** Heuristic score of a group of rows, in the columns every summary table uses. */
function summary(rows: Row[]) {
  const problems = rows.filter((r) => isProblem(r.c.label));
  const oks = rows.filter((r) => !isProblem(r.c.label));
  const flags = rows.filter((r) => flagged(r.predicted));
  const right = flags.filter((r) => r.predicted === r.c.label).length;
  const tri = triage(rows.map((r) => r.triaged));
  return {
    windows: rows.length,
    problems: problems.length,
    caught: problems.filter((r) => r.predicted === r.c.label).length,
    flags: flags.length,
    right,
    okWindows: oks.length,
    okFlagged: oks.filter((r) => flagged(r.predicted)).length,
    tri,
  };
}

function summaryCells(s: ReturnType<typeof summary>): string[] {
  const sent = (r: TriageRow) => (r.windows === 0 ? '—' : ofN(r.sent, r.windows));
  return [
    String(s.windows),
    s.problems === 0 ? '—' : ofN(s.caught, s.problems),
    s.flags === 0 ? '— (no flag)' : `${f3(ratio(s.right, s.flags))} (${s.right} of ${s.flags})`,
    s.okWindows === 0 ? '—' : ofN(s.okFlagged, s.okWindows),
    sent(s.tri.problems),
    sent(s.tri.ok),
  ];
}

const SUMMARY_HEAD = [
  'windows',
  'problems caught (right pattern)',
  'precision of flags',
  'OK windows flagged',
  'triage: problem windows sent',
  'triage: OK windows sent',
];

/** Where the problem starts at the window's first turn, by the annotation the label rests on (else null). */
export function startsAtOnset(c: LabelledCase): string | null {
  const a = c.annotation ?? '';
  if (c.label === 'OK') return null;
  if (/window starts at the mistake step/.test(a)) return 'the annotated mistake step';
  const m = /at steps \[(\d+)[,\]][^\n]*?window starts at step (\d+)/.exec(a);
  if (m && m[1] === m[2]) return 'the first of the annotated repeated failures';
  return null;
}

interface LeadTime {
  c: LabelledCase;
  system: string;
  split: string;
  /** 1-based turn of the window (the onset turn is 1) after which the heuristic first flags, else null. */
  flagAt: number | null;
  pattern: string | null;
  /** The same for the first tier sending the window to the model. */
  sentAt: number | null;
}

/**
 * Evaluate an onset window as warden would, every `every` turns counted from the onset (after turn
 * `every`, 2·`every`, …), each time over the turns so far: the first evaluation that flags.
 */
function leadTime(c: LabelledCase, system: string, split: string, every: number): LeadTime {
  let flagAt: number | null = null;
  let pattern: string | null = null;
  let sentAt: number | null = null;
  for (let k = every; k <= c.turns.length && (flagAt === null || sentAt === null); k += every) {
    const t = tierOne({ agentId: `case-${c.id ?? c.line}`, task: c.task, turns: c.turns.slice(0, k), reason: 'interval' }, 0);
    if (t.kind === 'skipped') continue;
    if (flagAt === null && t.heuristic.kind !== 'OK') {
      flagAt = k;
      pattern = t.heuristic.pattern ?? null;
    }
    if (sentAt === null && t.route.ask) sentAt = k;
  }
  return { c, system, split, flagAt, pattern, sentAt };
}

/**
 * The OK window of the same run that ends right before an onset window starts: its trajectory is
 * the same file, and its annotation says it ends before the very step the onset window starts at
 * (Who&When's `mistake_step`). Only then do the two windows join into one stretch of the run.
 */
export function windowBeforeOnset(c: LabelledCase, all: ReadonlyArray<LabelledCase>): LabelledCase | null {
  const step = /mistake_step=(\d+)/.exec(c.annotation ?? '')?.[1];
  if (c.label === 'OK' || step === undefined || !/window starts at the mistake step/.test(c.annotation ?? '')) return null;
  const trajectory = (x: LabelledCase) => (x.source ?? '').split(' ; ')[0]!.trim();
  return (
    all.find(
      (x) => x.label === 'OK' && trajectory(x) === trajectory(c) && /-> OK: window ends before step (\d+) \(0-based\)/.exec(x.annotation ?? '')?.[1] === step,
    ) ?? null
  );
}

interface Replay {
  c: LabelledCase;
  before: LabelledCase;
  /** Turns of the joined stretch before the onset. */
  preTurns: number;
  /** The first evaluation that flags: its last turn, counted from the onset (1 = the onset turn; 0 or less: before the onset), else null. */
  firstFlag: number | null;
  pattern: string | null;
  firstSent: number | null;
}

/**
 * Replay the OK window before the onset and the onset window as one stretch of the run, evaluating
 * every `every` turns over the last `size` turns (warden's window), from the stretch's first turn:
 * the first evaluation that flags, before or after the onset.
 */
function replayAcrossOnset(c: LabelledCase, before: LabelledCase, every: number, size: number): Replay {
  const turns = [...before.turns, ...c.turns];
  const pre = before.turns.length;
  let firstFlag: number | null = null;
  let pattern: string | null = null;
  let firstSent: number | null = null;
  for (let k = every; k <= turns.length && (firstFlag === null || firstSent === null); k += every) {
    const from = Math.max(0, k - size);
    const t = tierOne({ agentId: `case-${c.id ?? c.line}`, task: c.task, turns: turns.slice(from, k), reason: 'interval', firstTurnNumber: from + 1 }, 0);
    if (t.kind === 'skipped') continue;
    if (firstFlag === null && t.heuristic.kind !== 'OK') {
      firstFlag = k - pre;
      pattern = t.heuristic.pattern ?? null;
    }
    if (firstSent === null && t.route.ask) firstSent = k - pre;
  }
  return { c, before, preTurns: pre, firstFlag, pattern, firstSent };
}

const median = (xs: number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Build the page from the data under `root`, with the code as it is. */
export async function buildScorecard(root: string): Promise<string> {
  const evaluate = makeEvaluate(pino({ level: 'silent' }));
  const rows: Row[] = [];
  const hashes: string[] = [];
  for (const set of SETS) {
    const text = readFileSync(join(root, set.file), 'utf8');
    hashes.push(`\`${set.file}\` sha256 \`${createHash('sha256').update(text).digest('hex').slice(0, 16)}\``);
    const cases = parseCases(text);
    const r = await scoreCases(cases, { evaluate, evaluator: { kind: 'heuristic' }, model: 'none', timeoutMs: 30_000 });
    r.results.forEach((res, i) => {
      const c = cases[i]!;
      rows.push({ set: set.key, split: c.split ?? '(none)', system: systemOf(set.key, c.source), c, predicted: res.predicted, triaged: r.triaged![i]! });
    });
  }
  const sup = SupervisorConfigSchema.parse({});
  const out: string[] = [];
  const p = (...ls: string[]) => out.push(...ls);
  const of = (set: string, split?: string) => rows.filter((r) => r.set === set && (split === undefined || r.split === split));
  const splitsOf = (set: string) => unique(of(set).map((r) => r.split));

  // ---- headline numbers
  const realDev = summary(of('real', 'dev'));
  const realUn = summary(of('real', 'untouched'));
  const spiral = (rs: Row[]) => score(rs.map((r) => ({ label: r.c.label, predicted: r.predicted }))).labels.SPIRALING;
  const sDev = spiral(of('real', 'dev'));

  // ---- cost: the OK windows of the real set, under tiered with the default sample
  const realOk = of('real').filter((r) => r.c.label === 'OK');
  // Sent by the first tier (flagged or unsure), or a sure OK that the default sample picks: the same
  // hash the live evaluator samples with (tiered.ts), over the window's agent id and turn numbers.
  const askedOk = (rs: Row[]) =>
    rs.filter((r) => {
      if (r.triaged.sent !== null) return true;
      if (r.triaged.skipped) return false;
      const first = r.c.firstTurnNumber ?? 1;
      return sampledOk(`case-${r.c.id ?? r.c.line}`, first, first + r.c.turns.length - 1, DEFAULT_SAMPLE_OK);
    }).length;
  const promptTokens = (rs: Row[]) =>
    rs.map((r) =>
      Math.ceil(
        buildEvaluationPrompt({
          task: r.c.task,
          turns: r.c.turns,
          reason: r.c.reason ?? 'interval',
          evidenceFrom: r.c.evidenceFrom,
          firstTurnNumber: r.c.firstTurnNumber,
        }).length / COST.charsPerToken,
      ),
    );
  const tokensAll = promptTokens(of('real'));
  const meanTokens = Math.round(tokensAll.reduce((a, b) => a + b, 0) / tokensAll.length);
  const usdPerCall = (meanTokens * COST.usdPerMillionIn + OPENAI_MAX_TOKENS * COST.usdPerMillionOut) / 1e6;
  const evalsPerHour = 3600 / COST.turnSeconds / sup.evalInterval;
  const costRows = splitsOf('real').map((split) => {
    const oks = realOk.filter((r) => r.split === split);
    const asked = askedOk(oks);
    const share = oks.length ? asked / oks.length : 0;
    const calls = evalsPerHour * share;
    return { split, oks: oks.length, asked, share, calls, usd: calls * usdPerCall };
  });

  // ---- lead time
  const onset = rows.filter((r) => startsAtOnset(r.c) !== null);
  const leads = onset.map((r) => leadTime(r.c, r.system, r.split, sup.evalInterval));
  const replays = onset.flatMap((r) => {
    const before = windowBeforeOnset(
      r.c,
      of(r.set).map((x) => x.c),
    );
    return before ? [replayAcrossOnset(r.c, before, sup.evalInterval, sup.windowSize)] : [];
  });

  p(
    '# Scorecard: how well warden judges',
    '',
    '<!-- Written by scripts/scorecard.ts (`npm run build && npm run scorecard`); do not edit by hand. test/unit/scorecard.test.ts fails when this page differs from what the script writes. -->',
    '',
    "Every number on this page is computed by `scripts/scorecard.ts` from the committed labelled sets, with the judgement code as it is when the script runs: the same scoring as `warden evaluate --cases` (the `heuristic` evaluator, warden's offline default) and the same first tier as the `tiered` evaluator (`src/domain/judgement/triage.ts`). No model is asked for any number here. The sets, their sources and their label rules are described in [test/cases/README.md](../test/cases/README.md), [test/cases/real/README.md](../test/cases/real/README.md) and [test/cases/regression/README.md](../test/cases/regression/README.md); the evaluators in [Evaluators](using/evaluators.md).",
    '',
    '```sh',
    'npm run build && npm run scorecard   # rewrites docs/scorecard.md',
    '# the same scores, one split at a time (--json: precision/recall, okFalseFlagRate, confusion, triage):',
    ...SETS.flatMap((s) => splitsOf(s.key).map((split) => `node dist/src/cli/main.js evaluate --cases ${s.file} --split ${split} --json`)),
    '```',
    '',
    `Data: the three case files, by the sha256 of their contents: ${hashes.join(', ')}.`,
    '',
    "**The untouched split.** The real set's `untouched` split is the only data here that nobody tuned on. This page scores it on every regeneration: anyone who changes a detector while reading its row is tuning on it, and it stops being untouched.",
    '',
    '## Headline',
    '',
    `- Real runs, \`dev\` split (${realDev.windows} windows): the heuristic gives ${ofN(realDev.caught, realDev.problems)} problem windows their own pattern (SPIRALING precision ${f3(sDev.precision)}, recall ${f3(sDev.recall)}: ${sDev.truePositives} of ${sDev.support}) and flags ${ofN(realDev.okFlagged, realDev.okWindows)} OK windows.`,
    `- Real runs, \`untouched\` split (${realUn.windows} windows, ${realUn.problems} of them problems): OK windows flagged ${ofN(realUn.okFlagged, realUn.okWindows)}; problem windows caught ${ofN(realUn.caught, realUn.problems)}${realUn.problems < 10 ? ` — with ${realUn.problems} problem window${realUn.problems === 1 ? '' : 's'}, recall on untouched data is not measured` : ''}.`,
    `- The first tier of \`tiered\` (what it sends to a model): real \`dev\` problem windows ${ofN(realDev.tri.problems.sent, realDev.tri.problems.windows)}, OK windows ${ofN(realDev.tri.ok.sent, realDev.tri.ok.windows)}; real \`untouched\` OK windows ${ofN(realUn.tri.ok.sent, realUn.tri.ok.windows)}.`,
    `- Model cost of \`tiered\` on a healthy agent (assumptions below): ${costRows.map((c) => `${c.calls.toFixed(2)} model calls per agent-hour ($${c.usd.toFixed(4)} per agent-hour) at the OK rate of the real \`${c.split}\` windows`).join('; ')}.`,
    '',
  );

  // ---- per set and split
  p(
    '## Per set and split',
    '',
    '`heuristic` alone (the offline default). "Problems caught": problem windows given their own pattern. "Precision of flags": flags that name the window\'s label. Triage: windows the first tier of `tiered` sends to the model (`--sample-ok 0`); for problems that is the recall with a perfect model, for OK windows what the model costs.',
    '',
  );
  p(
    ...table(
      ['set', 'split', ...SUMMARY_HEAD],
      SETS.flatMap((s) => splitsOf(s.key).map((split) => [s.key, `\`${split}\``, ...summaryCells(summary(of(s.key, split)))])),
    ),
    '',
    ...SETS.map((s) => `- **${s.key}**: ${s.title} (\`${s.file}\`, [README](../${s.readme})).`),
    '',
  );

  // ---- per source
  p(
    '## Per source',
    '',
    'The same columns per system the windows come from (the `source` of each case: for the real set the benchmark and the agent system, for the regression set the upstream repository).',
    '',
  );
  p(
    ...table(
      ['set', 'split', 'source', ...SUMMARY_HEAD],
      SETS.flatMap((s) =>
        splitsOf(s.key).flatMap((split) =>
          unique(of(s.key, split).map((r) => r.system))
            .sort()
            .map((sys) => [s.key, `\`${split}\``, sys, ...summaryCells(summary(of(s.key, split).filter((r) => r.system === sys)))]),
        ),
      ),
    ),
    '',
  );

  // ---- per pattern
  p(
    '## Per pattern',
    '',
    'Per label: windows with it, windows the heuristic gave it, precision and recall, and windows of that label the first tier sends to the model.',
    '',
  );
  const patternRows: string[][] = [];
  for (const s of SETS)
    for (const split of splitsOf(s.key)) {
      const rs = of(s.key, split);
      const sc = score(rs.map((r) => ({ label: r.c.label, predicted: r.predicted })));
      const tri = triage(rs.map((r) => r.triaged));
      for (const l of CASE_LABELS) {
        const x = sc.labels[l];
        if (x.support === 0 && x.predicted === 0) continue;
        const t = tri.labels[l];
        patternRows.push([
          s.key,
          `\`${split}\``,
          l,
          String(x.support),
          String(x.predicted),
          f3(x.precision),
          x.support === 0 ? '—' : `${f3(x.recall)} (${x.truePositives} of ${x.support})`,
          t ? ofN(t.sent, t.windows) : '—',
        ]);
      }
    }
  p(...table(['set', 'split', 'label', 'windows', 'given by the heuristic', 'precision', 'recall', 'triage: sent to the model'], patternRows), '');

  // ---- cost
  p(
    '## What the model costs under `tiered`',
    '',
    `Assumptions, stated: an agent makes one turn every ${COST.turnSeconds} s; warden evaluates every \`evalInterval\` = ${sup.evalInterval} turns (the default; the idle watchdog adds an evaluation only after ${sup.idleAfterMs / 60_000} min of silence and is left out), so ${evalsPerHour} evaluations per agent-hour. The agent is healthy: every window is OK. \`tiered\` asks its model on an OK window when the first tier is unsure (a near miss or a triage signal) or samples it (\`--sample-ok\` default ${DEFAULT_SAMPLE_OK}, by a hash of the agent id and the window's turns); the share below is measured by running that first tier, with the default sample, on the real set's OK windows. A problem window costs one more call each time it is flagged, which this healthy-agent figure leaves out.`,
    '',
    `Price: ${COST.model}, ${COST.priceSource}. Tokens per call: the prompt the prompt builder (\`src/domain/judgement/prompt.ts\`) writes for each real window, at ${COST.charsPerToken} characters a token — mean ${meanTokens} tokens over the ${tokensAll.length} real windows (median ${median(tokensAll)}) — and the answer at its cap, ${OPENAI_MAX_TOKENS} tokens (\`max_tokens\` of the \`openai\` evaluator; a verdict is usually shorter). So one call costs about $${usdPerCall.toFixed(5)}.`,
    '',
    ...table(
      ['real split', 'OK windows', 'asked (unsure or sampled)', 'model calls per agent-hour', 'USD per agent-hour', 'USD per 1,000 agent-hours'],
      costRows.map((c) => [`\`${c.split}\``, String(c.oks), ofN(c.asked, c.oks), c.calls.toFixed(2), `$${c.usd.toFixed(4)}`, `$${(c.usd * 1000).toFixed(2)}`]),
    ),
    '',
    `A model evaluator alone (\`codex\`, \`claude\`, \`openai\`) is asked at every evaluation: ${evalsPerHour} calls per agent-hour, $${(evalsPerHour * usdPerCall).toFixed(4)} at this price.`,
    '',
  );

  // ---- lead time
  const found = leads.filter((l) => l.flagAt !== null);
  const sent = leads.filter((l) => l.sentAt !== null);
  const noOnsetSets = SETS.filter((s) => !onset.some((r) => r.set === s.key)).map((s) => s.key);
  p(
    '## Lead time: how soon after the onset the first flag comes',
    '',
    'What the data allow. No case file records, turn by turn, where a problem begins in a run; and the windows of one run are not contiguous (the OK window of a run ends before its earliest annotated failure, which can lie before the problem window starts), so a run cannot be replayed across its onset. ' +
      `The ${noOnsetSets.map((k) => `\`${k}\``).join(' and ')} set${noOnsetSets.length === 1 ? ' holds' : 's hold'} no onset information at all. What can be measured: the real problem windows whose annotation places the window's **first turn at the onset** (Who&When: "window starts at the mistake step"; AgentRx: the window starts at the first of the repeated annotated failures). ` +
      `For each, the heuristic and the first tier are run as warden runs them, every \`evalInterval\` = ${sup.evalInterval} turns, counted from the onset (after turn ${sup.evalInterval}, ${2 * sup.evalInterval}, … of the window, each time on the turns so far; the phase of the live cadence is unknown, so the live flag may come up to ${sup.evalInterval - 1} turns earlier or later), and the **first** evaluation that flags is reported: its turn, counting the onset turn as 1. ` +
      'A flag before the onset cannot happen here (the window holds no earlier turn), so none is counted as early; a flag of another pattern than the label counts as a flag. A window shorter than the interval gets no evaluation here.',
    '',
    `Onset windows: ${leads.length}. The heuristic flags ${ofN(found.length, leads.length)} of them within the window, the first at turn ${median(found.map((l) => l.flagAt!)) ?? '—'} (median; range ${found.length ? `${Math.min(...found.map((l) => l.flagAt!))}–${Math.max(...found.map((l) => l.flagAt!))}` : '—'}). The first tier sends ${ofN(sent.length, leads.length)} to the model, the first time at turn ${median(sent.map((l) => l.sentAt!)) ?? '—'} (median).`,
    '',
    ...table(
      ['window', 'split', 'source', 'label', 'turns', 'onset at', 'first heuristic flag (turn, pattern)', 'first sent by the first tier (turn)'],
      leads.map((l) => [
        `\`${l.c.id ?? `line ${l.c.line}`}\``,
        `\`${l.split}\``,
        l.system,
        l.c.label,
        String(l.c.turns.length),
        startsAtOnset(l.c)!,
        l.flagAt === null ? 'none in the window' : `${l.flagAt} (${l.pattern})`,
        l.sentAt === null ? 'none in the window' : String(l.sentAt),
      ]),
    ),
    '',
  );

  const when = (k: number | null) =>
    k === null
      ? 'none'
      : k <= 0
        ? `${1 - k} turn${k === 0 ? '' : 's'} before the onset (a false alarm, not an early detection)`
        : `at turn ${k} from the onset (the onset turn is 1)`;
  const early = replays.filter((r) => r.firstFlag !== null && r.firstFlag <= 0);
  const after = replays.filter((r) => r.firstFlag !== null && r.firstFlag > 0);
  p(
    '### Across the onset, where a run allows it',
    '',
    `Where the OK window of the same run ends right before the step the problem window starts at (Who&When: the OK window ends before \`mistake_step\`, the problem window starts at it), the two windows are one stretch of the run, in order. ${replays.length} problem window${replays.length === 1 ? ' has' : 's have'} such a predecessor. Each stretch is replayed as warden would see it: an evaluation every ${sup.evalInterval} turns from the stretch's first turn, each over the last ${sup.windowSize} turns (\`windowSize\`). Only the **first** flag of the stretch is scored: a first flag before the onset is a false alarm on the OK part and is not counted as early detection (nor is a later flag of the same stretch then counted as a detection).`,
    '',
    `First flags after the onset: ${ofN(after.length, replays.length)}; before the onset (false alarms): ${ofN(early.length, replays.length)}; none in the stretch: ${ofN(replays.length - after.length - early.length, replays.length)}.`,
    '',
    ...table(
      ['problem window', 'label', 'OK window before it', 'turns before / from the onset', 'first heuristic flag', 'first sent by the first tier'],
      replays.map((r) => [
        `\`${r.c.id ?? `line ${r.c.line}`}\``,
        r.c.label,
        `\`${r.before.id ?? `line ${r.before.line}`}\``,
        `${r.preTurns} / ${r.c.turns.length}`,
        r.firstFlag === null ? 'none' : `${when(r.firstFlag)} (${r.pattern})`,
        when(r.firstSent),
      ]),
    ),
    '',
  );

  // ---- weak
  p(
    '## Where warden is weak',
    '',
    `Read off the numbers above by the script: every problem label whose heuristic recall on a split is under ${WEAK_RECALL}, every real source where fewer than half of the problem windows are caught or over 5 % of the OK windows are flagged (both splits together), and the gaps in the data.`,
    '',
  );
  const weak: string[] = [];
  for (const s of SETS.filter((x) => x.key !== 'regression'))
    for (const split of splitsOf(s.key)) {
      const rs = of(s.key, split);
      const sc = score(rs.map((r) => ({ label: r.c.label, predicted: r.predicted })));
      const tri = triage(rs.map((r) => r.triaged));
      for (const l of CASE_LABELS.filter(isProblem)) {
        const x = sc.labels[l];
        if (x.support === 0 || (x.recall ?? 0) >= WEAK_RECALL) continue;
        const t = tri.labels[l]!;
        weak.push(
          `${l} on ${s.key} \`${split}\`: the heuristic catches ${x.truePositives} of ${x.support}; the first tier sends ${t.sent} of ${t.windows} to a model${t.sent < t.windows ? `; the other ${t.windows - t.sent} reach a model under \`tiered\` only through the sample of OK windows (${DEFAULT_SAMPLE_OK * 100} %)` : ''}.`,
        );
      }
    }
  const realLabels = new Set(of('real').map((r) => r.c.label));
  const absent = CASE_LABELS.filter((l) => isProblem(l) && !realLabels.has(l));
  if (absent.length)
    weak.push(
      `No real window is labelled ${absent.join(', ')}: those patterns are measured only on warden's own written and reconstructed cases (and REWARD_HACKING on a synthetic smoke set), not on real runs.`,
    );
  for (const sys of unique(of('real').map((r) => r.system)).sort()) {
    const sm = summary(of('real').filter((r) => r.system === sys));
    if (sm.problems > 0 && sm.caught / sm.problems < 0.5)
      weak.push(`Real runs of ${sys}: ${sm.caught} of ${sm.problems} problem windows caught by the heuristic.`);
    if (sm.okWindows > 0 && sm.okFlagged / sm.okWindows > 0.05)
      weak.push(`Real runs of ${sys}: ${ofN(sm.okFlagged, sm.okWindows)} OK windows flagged (false alarms).`);
  }
  if (realUn.problems < 10)
    weak.push(
      `The \`untouched\` split holds ${realUn.problems} problem window${realUn.problems === 1 ? '' : 's'} and ${realUn.okWindows} OK windows of one kind of agent: it measures false alarms, not recall. Recall on data nobody tuned on is not measured.`,
    );
  const missedLead = leads.filter((l) => l.flagAt === null);
  if (missedLead.length)
    weak.push(`Of the ${leads.length} windows that start at a problem's onset, ${missedLead.length} get no flag from the heuristic within the window.`);
  for (const s of SETS)
    for (const split of splitsOf(s.key)) {
      const t = triage(of(s.key, split).map((r) => r.triaged)).ok;
      if (t.share !== null && t.share > 0.25)
        weak.push(`On ${s.key} \`${split}\` the first tier sends ${ofN(t.sent, t.windows)} OK windows to the model, over the 25 % target of the first tier.`);
    }
  const reg = summary(of('regression', 'regression'));
  weak.push(
    `On other teams' loop-detector tests (\`regression\`), warden agrees on ${ofN(reg.caught, reg.problems)} problem windows and flags ${ofN(reg.okFlagged, reg.okWindows)} OK windows; those labels are other teams' design decisions (test/cases/regression/README.md).`,
  );
  p(...weak.map((w) => `- ${w}`), '');
  return out.join('\n');
}

async function main() {
  const root = process.cwd();
  const page = await buildScorecard(root);
  writeFileSync(join(root, OUT), page);
  process.stdout.write(`wrote ${OUT}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
