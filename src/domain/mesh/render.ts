/**
 * Text the mesh writes: the delegation manifest, what a worker is told (the worker prompt
 * templates, with warden's worktree and paths filled in), the rebase request, and the live
 * dashboard with its monitoring log (ASCII only).
 */
import type { MeshTask, Tunables } from './config.js';
import { formatGates } from './gates.js';
import { activeAttempt, liveAttempts, readyAttempt, type Attempt, type MeshStatus, type TaskRecord } from './state.js';

const dur = (ms: number | 'off') => (ms === 'off' ? 'off' : ms % 60_000 === 0 && ms >= 60_000 ? `${ms / 60_000}m` : `${Math.round(ms / 100) / 10}s`);
const hhmmss = (ms: number) => new Date(ms).toISOString().slice(11, 19);
const mmss = (ms: number) => {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
};

export function renderManifest(args: {
  runId: string;
  repo: string;
  base: string;
  userBranch: string;
  tasks: MeshTask[];
  tunables: Tunables;
  validate?: string | null;
  driver: string;
}): string {
  const t = args.tunables;
  return [
    `# Delegation manifest: mesh run ${args.runId}`,
    '',
    `repo: ${args.repo}`,
    `base commit: ${args.base} (branch ${args.userBranch})`,
    `integration branch: mesh/${args.runId}/integration`,
    `worker driver: ${args.driver}`,
    '',
    '## Tasks (integration order = list order)',
    '',
    ...args.tasks.flatMap((x) => [
      `${x.index}. ${x.title}`,
      `   - slug: ${x.slug}`,
      `   - Agent: ${x.agent}`,
      `   - Skills: ${x.skills.length ? x.skills.join(', ') : 'none'}`,
      `   - Mode: ${x.mode}`,
      `   - Scope: ${x.scope.length ? x.scope.join(', ') : 'unconstrained'}`,
      `   - Done when: ${x.doneWhen ?? '(not given)'}`,
      ...(x.check ? [`   - Verify: ${x.check.command} (run by warden before integration, timeout ${dur(x.check.timeoutMs)})`] : []),
    ]),
    '',
    '## Caps, budgets, timeouts',
    '',
    `- Cap: ${t.cap}`,
    `- Conflict budget: ${t.conflictBudget}`,
    `- Tick interval: ${dur(t.tickInterval)}`,
    `- Checkpoint interval: ${dur(t.checkpointInterval)}`,
    `- Time budget: ${t.timeBudget === undefined ? 'none' : dur(t.timeBudget)}`,
    `- Ack SLA: ${dur(t.ackSla)}`,
    `- Patch draft timeout: ${dur(t.patchDraftTimeout)}`,
    `- First edit target: ${dur(t.firstEditTarget)}`,
    `- Continue waiting: ${t.continueWaiting ? 'yes' : 'no'}`,
    `- Hedge budget: ${t.hedgeBudget}`,
    `- Stall threshold: ${t.stallThreshold}`,
    `- Missing-artifact strikes: ${t.missingArtifactStrikes}`,
    `- Validation (gate V): ${args.validate ?? 'none'}`,
    '',
  ].join('\n');
}

/** What a worker (or explorer, or direct-edit takeover) is told: the prompt template, filled. */
export function workerPrompt(args: { runId: string; task: MeshTask; attempt: Attempt; base: string; tunables: Tunables; rebaseNote?: string }): string {
  const { task, attempt: a, tunables: t } = args;
  const explorer = a.mode === 'analysis-only';
  const direct = a.mode === 'direct-edit';
  const lines = [
    `You are ${explorer ? 'an explorer' : 'a worker'} in warden mesh run ${args.runId}, task ${task.index} (${task.slug}), attempt ${a.attempt}.`,
    `Default mode: ${explorer ? 'ANALYSIS-ONLY' : direct ? 'DIRECT EDIT (take-over attempt)' : 'PATCH-FIRST'}.`,
    `- Your working directory is your own git worktree (${a.worktree}), branch ${a.branch}, from base commit ${args.base}. Only warden changes the integration branch.`,
    explorer
      ? '- Do NOT edit files.'
      : direct
        ? '- Edit files in your worktree directly; warden writes the patch draft from your worktree diff.'
        : `- Propose your change as a unified diff (e.g. \`git diff ${a.diffBase}\` of your worktree) written to the patch draft path.`,
    '- If you need to run commands, do so and report exact outputs.',
    '- Do NOT spawn subagents.',
    '',
    'SLA requirements (non-negotiable):',
    `- Within ${dur(t.ackSla)}: create/update ${a.checkpointPath} with the required checkpoint format:`,
    '  status_code: <one token: started | discovering | drafting_patch | waiting_for_feedback | blocked | done>',
    '  status_detail: <one line>',
    '  plan: (exactly 5 bullets)',
    '  intended_files: (bullets)',
    '  blockers: (bullets; "- none" if none)',
    '  artifacts: (bullets: the checkpoint and patch paths)',
    ...(explorer
      ? []
      : [
          `- If you can propose any real diff, create/update ${a.patchPath} as a unified diff (starting with "diff --git"). No placeholder diffs; explain in blockers instead.`,
          `- First edit target: within ${dur(t.firstEditTarget)} ${direct ? 'your worktree' : 'the patch draft'} must show real progress (at least one real change, even scaffolding); an attempt without one by then is restarted.`,
        ]),
    `- Update the checkpoint at least every ${dur(t.checkpointInterval)}. When finished set status_code: done.`,
    '- Do not claim an artifact exists unless it exists on disk.',
    '',
    'Task:',
    `- ${task.title}`,
    `Scope: ${task.scope.length ? task.scope.join(', ') : 'unconstrained'}${task.scope.length ? ' (touch nothing else)' : ''}`,
    ...(task.doneWhen ? [`Done when: ${task.doneWhen}`] : []),
    ...(task.check ? [`Check: warden runs \`${task.check.command}\` in your worktree before your patch is integrated; make it pass.`] : []),
    `Skills: ${task.skills.length ? task.skills.join(', ') : 'none'}`,
    ...(args.rebaseNote ? ['', args.rebaseNote] : []),
    '',
    'Deliverable (required format, as your final message):',
    ...(explorer
      ? ['1) Summary (1-3 bullets)', '2) Findings', '3) Commands run + results', '4) Risks / follow-ups', '5) Questions (if blocked)']
      : [
          '1) Summary (1-3 bullets)',
          '2) Intended files touched',
          '3) Patch (unified diff in a fenced block)',
          '4) Commands run + results',
          '5) Risks / follow-ups',
          '6) Questions (if blocked)',
        ]),
    '',
    'After your final message, stay available: warden may send a rebase request. warden ends your session once your patch is integrated.',
  ];
  return lines.join('\n');
}

/** The rebase request template, with where to rebase onto. */
export function rebaseRequest(args: { conflictingFiles: string[]; error: string; integrationBranch: string; head: string; patchPath: string }): string {
  return [
    'Your patch did not apply cleanly.',
    'Please rebase/regenerate your patch against the current workspace state and resend a single unified diff.',
    'Failure details:',
    `- Conflicting files: ${args.conflictingFiles.length ? args.conflictingFiles.join(', ') : '(unknown)'}`,
    `- Error summary: ${args.error.split('\n').filter(Boolean).slice(0, 3).join(' / ').slice(0, 400)}`,
    `- Current HEAD: ${args.integrationBranch} at ${args.head} (rebase onto it, then write the diff against it to ${args.patchPath})`,
    'Constraints:',
    '- Keep patch-first.',
    '- Do not broaden scope.',
  ].join('\n');
}

const isOpenTask = (t: TaskRecord) => t.state !== 'integrated' && t.state !== 'done' && t.state !== 'failed';

function nextAction(t: TaskRecord): string {
  const warning = t.warnings?.at(-1) ?? (isOpenTask(t) ? (readyAttempt(t) ?? activeAttempt(t))?.warning : null);
  if (warning) return `${t.next === '-' ? '' : `${t.next}; `}warning: ${short(warning, 60)}`;
  if (t.state === 'failed' && t.failedGate) return `- (gate ${t.failedGate} failed)`;
  return t.next;
}

const short = (s: string, n: number) => (s.length <= n ? s : `${s.slice(0, n - 2)}..`);
/** The end of a text on one line (line breaks, also as the CLI shows them, ␊ ␍, become spaces), at most n characters. */
const tail = (s: string, n: number) => {
  const one = s.replace(/(?:\s|\u240a|\u240d)+/g, ' ').trim();
  return one.length <= n ? one : `..${one.slice(-(n - 2))}`;
};
const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));

/** The live dashboard: one row per task in fixed columns, then the monitoring log. */
export function renderDashboard(s: MeshStatus, now: number, opts: { logLines?: number } = {}): string {
  const lines: string[] = [];
  lines.push(`mesh ${s.runId}: ${s.phase}${s.phaseReason ? ` (${s.phaseReason})` : ''}`);
  lines.push(`last tick: ${s.lastTickAt ? new Date(s.lastTickAt).toISOString() : '-'} (tick interval: ${dur(s.tunables.tickInterval)}; ticks ${s.ticks})`);
  lines.push(
    `integration: ${s.integrationBranch} at ${s.integrationHead?.slice(0, 12) ?? '-'}; conflicts ${s.conflicts}/${s.conflictBudget}${s.validation ? `; V ${s.validation.ok ? 'ok' : `fail (exit ${s.validation.exitCode})`}` : ''}${s.applied ? `; applied to ${s.applied.branch} at ${s.applied.commit.slice(0, 12)}` : ''}`,
  );
  lines.push('');
  lines.push('Dashboard');
  const head = ['task', 'agent', 'att', 'unrel', 'state', 'last_seen', 'last_tick', 'gates', 'next'];
  const rows = s.tasks.map((t) => {
    // The attempt the task's state follows (with hedges: the one ready to integrate, else the newest live one; once ended, the winner).
    const a =
      readyAttempt(t) ??
      activeAttempt(t) ??
      t.attempts.find((x) => x.attempt === t.integratedAttempt || (t.state === 'done' && x.reason === 'done')) ??
      t.attempts.at(-1);
    // With hedges, every live attempt: "1+2".
    const live = isOpenTask(t) ? liveAttempts(t) : [];
    return [
      `${t.task.index} ${short(t.task.slug, 24)}`,
      a ? short(a.agentId, 28) : '-',
      live.length > 1 ? live.map((x) => x.attempt).join('+') : a ? String(a.attempt) : '0',
      a ? String(a.unrel) : '0',
      t.state,
      a?.lastSeenAt ? mmss(now - a.lastSeenAt) : '-',
      a?.lastTickAt ? hhmmss(a.lastTickAt) : '-',
      a ? formatGates(a.gates) : '-',
      `${nextAction(t)}${a?.agentNote && isOpenTask(t) ? ` [agent ${short(a.agentNote, 60)}]` : ''}`,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  lines.push(
    head
      .map((h, i) => pad(h, widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  for (const r of rows)
    lines.push(
      r
        .map((c, i) => pad(c, widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  const warned = s.tasks.filter((t) => t.warnings?.length);
  if (warned.length) {
    lines.push('');
    lines.push('Warnings');
    for (const t of warned) for (const w of t.warnings!) lines.push(`- task ${t.task.index} ${t.task.slug}: ${w}`);
  }
  const checked = s.tasks.flatMap((t) => {
    const a = [...t.attempts].reverse().find((x) => x.check);
    return a?.check ? [[t, a.attempt, a.check] as const] : [];
  });
  if (checked.length) {
    lines.push('');
    lines.push('Task checks');
    for (const [t, n, c] of checked) {
      const how = c.timedOut ? 'timed out' : `exit ${c.exitCode ?? '-'}`;
      lines.push(
        `- task ${t.task.index} ${t.task.slug} attempt ${n}: ${c.passed ? 'passed' : 'failed'} (${how}${t.checkFailures ? `, ${t.checkFailures} failed` : ''}): ${c.command}`,
      );
      if (!c.passed && c.outputTail.trim()) lines.push(`  output: ${tail(c.outputTail.trim(), 300)}`);
    }
  }
  const failed = s.tasks.filter((t) => t.state === 'failed');
  if (failed.length) {
    lines.push('');
    lines.push('Failures');
    for (const t of failed) {
      lines.push(`- task ${t.task.index} ${t.task.slug}${t.failedGate ? ` (gate ${t.failedGate})` : ''}: ${t.reason ?? 'failed'}`);
      if (t.lastOutput) lines.push(`  last output: ${tail(t.lastOutput, 300)}`);
    }
  }
  lines.push('');
  lines.push('Monitoring log');
  for (const e of s.log.slice(-(opts.logLines ?? 20))) lines.push(`- ${hhmmss(e.at)} ${e.text}`);
  return lines.join('\n');
}

/** One monitoring-log line for a ticked attempt. */
export function tickLine(
  a: Attempt,
  status: string | null,
  checkpointOk: boolean,
  patch: { exists: boolean; size: number; mtimeMs: number | null; by: string | null },
): string {
  const p = patch.exists
    ? `OK size=${patch.size} mtime=${patch.mtimeMs ? hhmmss(patch.mtimeMs) : '?'}${patch.by === 'warden' ? ' (drafted by warden)' : ''}`
    : 'DNE';
  return `ticked ${a.agentId} status="${status ?? '-'}" checkpoint=${checkpointOk ? 'OK' : 'DNE'} ${a.checkpointPath} patch=${p} ${a.patchPath}`;
}
