/**
 * The baseline (docs/versioning.md): no workflow code asks a patch from before it, and every patch
 * marker in the committed histories is one the code still declares. A patch added after the
 * baseline appears in both lists; one that is removed must leave no history behind that needs it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PATCH_IDS } from '../../src/domain/contract/patches.js';

const ROOT = join(import.meta.dirname, '../..');

/** PATCH_IDS as plain records (empty right after a collapse, when its element type is `never`). */
const DECLARED: readonly { id: string; doc: string }[] = PATCH_IDS;

/** The ids collapsed into the baseline (twice, the second time before the first release): none may come back (a new change takes a new id). */
const BEFORE_THE_BASELINE = [
  'idle-timer-rearms',
  'turn-restart-intensity',
  'spend-search-attributes',
  'evidence-after-whisper',
  'idle-clock-after-resume',
  'agent-workflow-id',
  'restart-consecutive',
  'failed-outcome',
  'eval-queue-coalesce',
  'notify-child-workflow',
  'local-heuristic-evaluation',
  'short-runs',
  'watch-keeps-timer',
  'spend-at-most-per-minute',
  'patch-set-1',
  'spend-every-five-minutes',
  'patch-set-2',
  'dismiss-signal',
  'verified-done',
  'rate-limit-blocks',
  'verified-child-result',
  'protected-evidence',
  'children-block',
  'compact-last-resort',
  'cli-compaction-signal',
  'human-wait-signal',
  'session-end-grace',
  'mesh-wall-clock-stall',
  'mesh-keeps-correct-work',
  'mesh-notify-workflow',
  'mesh-cleanup-worktrees',
  'mesh-failure-ends-named',
  'mesh-failure-notified',
  // The second collapse, before the first release (0.1.0).
  'interrupt-while-blocked',
  'steer-joins-retry',
  'blocked-time-limit',
  'continue-at-quiet-moment',
  'mesh-continue-as-new',
  'mesh-attempt-cleanup',
  'mesh-removal-while-ready',
  'mesh-rebase-hold',
  'mesh-task-check',
  'protect-any-change',
  'mesh-check-on-integration',
  'mesh-first-edit-target',
  'mesh-hedging',
  'block-holder',
  'mesh-holder-token',
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every id passed to patched()/deprecatePatch() as a string literal in workflows/ and src/. */
function askedIds(): string[] {
  const ids = new Set<string>();
  for (const file of [...sources(join(ROOT, 'workflows')), ...sources(join(ROOT, 'src'))]) {
    for (const m of readFileSync(file, 'utf8').matchAll(/\b(?:patched|deprecatePatch)\(\s*'([^']+)'/g)) ids.add(m[1]!);
  }
  return [...ids];
}

/** The ids declared in PATCH_IDS (src/domain/contract/patches.ts). */
function declaredIds(): string[] {
  return DECLARED.map((p) => p.id);
}

/**
 * The patch ids warden's code recorded as markers in one history (`temporal workflow show --output
 * json`); the SDK's own (`__sdk_internal_patch_number:N`, its internal flags) are not warden's.
 */
function markerIds(file: string): string[] {
  const history = JSON.parse(readFileSync(file, 'utf8')) as {
    events: Array<{ markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: Array<{ data?: string }> }> } }>;
  };
  return history.events
    .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => {
      const data = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
      return (JSON.parse(Buffer.from(data ?? '', 'base64').toString('utf8')) as { id: string }).id;
    })
    .filter((id) => !id.startsWith('__sdk_internal'));
}

describe('the baseline', () => {
  it('no workflow code asks a patch id from before the baseline', () => {
    expect(askedIds().filter((id) => BEFORE_THE_BASELINE.includes(id))).toEqual([]);
  });

  it('every id the code asks is declared in PATCH_IDS, and no declared id is one from before the baseline', () => {
    const declared = declaredIds();
    expect(askedIds().filter((id) => !declared.includes(id))).toEqual([]);
    expect(declared.filter((id) => BEFORE_THE_BASELINE.includes(id))).toEqual([]);
  });

  it('every patch marker in the committed histories is an id the code declares', () => {
    const dir = join(ROOT, 'test/histories');
    const declared = declaredIds();
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThan(10);
    const unknown = files.flatMap((f) =>
      markerIds(join(dir, f))
        .filter((id) => !declared.includes(id))
        .map((id) => `${f}: ${id}`),
    );
    expect(unknown).toEqual([]);
  });

  it('every id is declared once, with its line', () => {
    expect(new Set(declaredIds()).size).toBe(DECLARED.length);
    for (const p of DECLARED) expect(p.doc.length, p.id).toBeGreaterThan(20);
  });

  it('the docs name no patch the code no longer declares', () => {
    const declared = declaredIds();
    const docs = [join(ROOT, 'README.md'), ...markdown(join(ROOT, 'docs'))];
    const stale = docs.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/patched\('([^']+)'\)/g)]
        .filter((m) => !declared.includes(m[1]!) && !file.endsWith('versioning.md'))
        .map((m) => `${file.slice(ROOT.length + 1)}: ${m[1]}`),
    );
    expect(stale).toEqual([]);
  });
});

function markdown(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdown(path);
    return name.endsWith('.md') ? [path] : [];
  });
}
