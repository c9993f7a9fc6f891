/** The mesh's pure core: task file, checkpoint format, gates, tick rules, rendering. */
import { describe, expect, test } from 'vitest';
import { MeshInputSchema, TunablesSchema, resolveTasks, slugify } from '../../src/domain/mesh/config.js';
import { parseCheckpoint, renderCheckpoint } from '../../src/domain/mesh/checkpoint.js';
import {
  conflictingFiles,
  deliverableCheck,
  formatGates,
  initialGates,
  inScope,
  scopeCheck,
  binaryPatchBytes,
  gitSafetyRefusal,
  isUnifiedDiff,
  parseNumstatZ,
  unsafePatchPath,
  requiredGates,
} from '../../src/domain/mesh/gates.js';
import { parseTaskFile, TaskFileError } from '../../src/domain/mesh/tasks.js';
import { integrationTurn, tickAttempt, type Observation } from '../../src/domain/mesh/rules.js';
import { gateFinished } from '../../src/domain/mesh/finished.js';
import { workerSpec } from '../../src/domain/mesh/worker.js';
import { AgentSpecSchema, DriverConfigSchema } from '../../src/domain/contract/schemas.js';
import { rebaseRequest, renderDashboard, renderManifest, workerPrompt } from '../../src/domain/mesh/render.js';
import { blankAttempt, publicState, type AttemptStart } from '../../src/domain/mesh/state.js';
import { meshStatus, record, TICK_TUNABLES as tun } from '../helpers/mesh-fixtures.js';

const TEMPLATE = `Use $mesh to parallelize (patch-first):
1. Implement formula: mol-mesh-run.
- Agent: worker
- Skills: none
- Mode: patch-first
- Scope: src/run/**, docs/run.md
- Done when: npm test passes
2. Explain how config is loaded.
   - Agent: explorer
   - Mode: analysis-only
3. Fix the parser
- Mode: direct edit ok

Tunable thresholds:
- Cap: 2
- Tick interval: 5s
- Ack SLA: 10s
- Continue waiting: yes
- Stall threshold: 3
- Time budget: 45m (after this, return best-effort partial results)
`;

describe('task file', () => {
  test("the seed's template: tasks verbatim with their fields, and the tunables", () => {
    const f = parseTaskFile(TEMPLATE);
    expect(f.tasks).toEqual([
      {
        title: 'Implement formula: mol-mesh-run.',
        agent: 'worker',
        skills: [],
        mode: 'patch-first',
        scope: ['src/run/**', 'docs/run.md'],
        doneWhen: 'npm test passes',
      },
      { title: 'Explain how config is loaded.', agent: 'explorer', mode: 'analysis-only' },
      { title: 'Fix the parser', mode: 'direct-edit' },
    ]);
    const t = TunablesSchema.parse(f.tunables);
    expect(t).toMatchObject({
      cap: 2,
      tickInterval: 5000,
      ackSla: 10_000,
      continueWaiting: true,
      stallThreshold: 3,
      timeBudget: 2_700_000,
      patchDraftTimeout: 300_000,
    });
  });

  test('a bulleted list, a single freeform task, and JSON', () => {
    expect(parseTaskFile('- a\n- b\n  - Scope: x/**').tasks).toEqual([{ title: 'a' }, { title: 'b', scope: ['x/**'] }]);
    expect(parseTaskFile('Just fix the flaky test in ci.').tasks).toEqual([{ title: 'Just fix the flaky test in ci.' }]);
    const j = parseTaskFile(JSON.stringify({ tasks: [{ title: 'x', scope: ['a/*'] }, 'y'], tunables: { cap: 3 }, validate: 'npm test' }));
    expect(j).toEqual({ tasks: [{ title: 'x', scope: ['a/*'] }, { title: 'y' }], tunables: { cap: 3 }, validate: 'npm test' });
  });

  test('errors name the field', () => {
    expect(() => parseTaskFile('[{"title": ""}]')).toThrow(/task 1: title: title must not be empty/);
    expect(() => parseTaskFile('1. a\n- Agent: wizard')).toThrow(TaskFileError);
    expect(() => parseTaskFile('1. a\nTunable thresholds:\n- Cap: many')).toThrow(/tunables: cap/);
    expect(() => parseTaskFile('  ')).toThrow(/empty/);
  });

  test('defaults: explorers are analysis-only, slugs are unique and path-safe', () => {
    const tasks = resolveTasks(MeshInputSchema.shape.tasks.parse([{ title: 'Fix it!' }, { title: 'Fix it!' }, { title: 'Look', agent: 'explorer' }]));
    expect(tasks.map((t) => [t.slug, t.mode])).toEqual([
      ['1-fix-it', 'patch-first'],
      ['2-fix-it', 'patch-first'],
      ['3-look', 'analysis-only'],
    ]);
    expect(slugify('Ünïcode & spaces / slashes', 12)).toBe('12-unicode-spaces-slashes');
    expect(TunablesSchema.parse({})).toMatchObject({
      cap: 4,
      tickInterval: 60_000,
      ackSla: 30_000,
      patchDraftTimeout: 300_000,
      firstEditTarget: 600_000,
      stallThreshold: 2,
      missingArtifactStrikes: 1,
    });
  });
});

const CP = {
  statusCode: 'drafting_patch',
  statusDetail: 'editing src/a.ts',
  plan: ['read', 'edit', 'diff', 'check', 'report'],
  intendedFiles: ['src/a.ts'],
  blockers: [],
  artifacts: ['/r/.mesh/runs/x/checkpoints/1-a--a1.md'],
};

describe('checkpoint format', () => {
  test('render and parse round-trip; "- none" means no blockers', () => {
    const text = renderCheckpoint(CP);
    expect(text).toContain('blockers:\n- none\n');
    expect(parseCheckpoint(text)).toEqual({ ok: true, checkpoint: CP });
  });
  test('violations are named', () => {
    const text = renderCheckpoint(CP);
    expect(parseCheckpoint(text.replace('- report\n', ''))).toEqual({ ok: false, error: 'plan: expected exactly 5 bullets, found 4' });
    expect(parseCheckpoint(text.replace('status_code: drafting_patch', 'status_code: two words'))).toMatchObject({
      ok: false,
      error: 'status_code: expected one token',
    });
    expect(parseCheckpoint(text.replace(/artifacts:\n- .*\n/, ''))).toMatchObject({ ok: false, error: 'artifacts: missing' });
    expect(parseCheckpoint(text.replace('artifacts:', 'artefacts:'))).toMatchObject({ ok: false, error: expect.stringMatching(/^a bullet outside a list/) });
    expect(parseCheckpoint(text.replace('editing', 'édition'))).toMatchObject({ ok: false, error: 'checkpoint is not ASCII-only' });
    expect(parseCheckpoint('')).toMatchObject({ ok: false, error: 'status_code: missing' });
  });
});

const DIFF = `diff --git a/src/a.ts b/src/a.ts
index 1..2 100644
--- a/src/a.ts
+++ b/src/a.ts
@@ -1 +1 @@
-a
+b
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-x
+y
`;

describe('gates', () => {
  test('D and S: unified diff, touched files, scope globs', () => {
    expect(isUnifiedDiff(DIFF)).toBe(true);
    expect(isUnifiedDiff('--- a\n+++ b\n')).toBe(false);
    const files = ['src/a.ts', 'README.md'];
    expect(scopeCheck(['src/**'], files)).toEqual({ ok: false, outside: ['README.md'] });
    expect(scopeCheck(['src/', 'README.md'], files).ok).toBe(true);
    expect(inScope(['src/*.ts'], 'src/a.ts')).toBe(true);
    expect(inScope(['src/*.ts'], 'src/x/a.ts')).toBe(false);
    expect(inScope(['**/*.md'], 'docs/a/b.md')).toBe(true);
    expect(inScope(['lib'], 'lib/x.js')).toBe(true);
    expect(inScope([], 'anything')).toBe(true);
  });
  test('O: the deliverable sections', () => {
    const ok = '1) Summary\n- did it\n2) Intended files touched\n- a\n3) Patch\n```diff\n```\n4) Commands run + results\n- none\n5) Risks / follow-ups\n- none';
    expect(deliverableCheck(ok, 'worker')).toEqual({ ok: true, missing: [] });
    expect(deliverableCheck('## Summary\ndone', 'worker')).toEqual({ ok: false, missing: ['Intended files', 'Patch', 'Commands run', 'Risks'] });
    expect(deliverableCheck('Summary\nFindings\nCommands run\nRisks', 'explorer').ok).toBe(true);
  });
  test('profiles and formatting', () => {
    const [scoped, explorer] = resolveTasks([
      { title: 'a', scope: ['src/**'], agent: 'worker', skills: [], verify: false },
      { title: 'b', agent: 'explorer', skills: [], scope: [], verify: false },
    ]);
    expect(requiredGates(scoped!)).toEqual(['A', 'O', 'D', 'P', 'S']);
    expect(requiredGates(explorer!)).toEqual(['A', 'O']);
    expect(formatGates(initialGates(scoped!, false))).toBe('A=-- C=-- O=-- D=-- P=-- S=? V=na');
    expect(formatGates(initialGates(explorer!, true))).toBe('A=-- C=-- O=-- D=na P=na S=na V=--');
  });
  test('S: the file list from `git apply --numstat -z` (names as git reads them, renames both sides)', () => {
    expect(parseNumstatZ('1\t1\tc.txt\x001\t1\ta.txt\x00')).toEqual({ ok: true, files: ['c.txt', 'a.txt'] });
    // A rename or copy: both names; binary files count `-`; names with tabs, newlines and quotes are raw.
    expect(parseNumstatZ('0\t0\t\x00old name.txt\x00new\tname.txt\x00-\t-\tbin/x.png\x001\t0\tq"u\noted\x00')).toEqual({
      ok: true,
      files: ['old name.txt', 'new\tname.txt', 'bin/x.png', 'q"u\noted'],
    });
    expect(parseNumstatZ('1\t0\ta.txt\x001\t0\ta.txt\x00')).toEqual({ ok: true, files: ['a.txt'] });
    expect(parseNumstatZ('')).toEqual({ ok: true, files: [] });
    // Anything else is an error, never a shorter list.
    expect(parseNumstatZ('1\t1\ta.txt\x00garbage\x00')).toMatchObject({ ok: false, error: expect.stringMatching(/^unexpected numstat record "garbage"/) });
    expect(parseNumstatZ('0\t0\t\x00only-old\x00')).toMatchObject({ ok: false, error: 'a rename record without both names' });
  });
  test('P: paths git must not write, and git refusing a patch for safety', () => {
    expect(unsafePatchPath('src/a.ts')).toBeNull();
    expect(unsafePatchPath('.github/x.yml')).toBeNull();
    expect(unsafePatchPath('a/.gitignore')).toBeNull();
    expect(unsafePatchPath('../outside.txt')).toMatch(/leaves the repository/);
    expect(unsafePatchPath('a/../../x')).toMatch(/leaves the repository/);
    expect(unsafePatchPath('/etc/passwd')).toMatch(/absolute/);
    expect(unsafePatchPath('.git/config')).toMatch(/inside a \.git directory/);
    expect(unsafePatchPath('sub/.GIT/hooks/pre-commit')).toMatch(/inside a \.git directory/);
    expect(unsafePatchPath('.git. /config')).toMatch(/inside a \.git directory/);
    expect(unsafePatchPath('')).toBe('an empty path');
    expect(gitSafetyRefusal("error: invalid path '../outside.txt'")).toBe("error: invalid path '../outside.txt'");
    expect(gitSafetyRefusal("error: affected file 'lnk/x.txt' is beyond a symbolic link")).toBe("error: affected file 'lnk/x.txt' is beyond a symbolic link");
    expect(gitSafetyRefusal('error: patch failed: a.txt:1\nerror: a.txt: patch does not apply')).toBeNull();
  });
  test('D: what binary hunks inflate to', () => {
    const bin = 'diff --git a/big b/big\nnew file mode 100644\nindex 0..a7ce5b5\nGIT binary patch\nliteral 629145600\nzcmeIu!Q\n\nliteral 0\nHcmV?d00001\n\n';
    expect(binaryPatchBytes(bin)).toBe(629145600);
    expect(binaryPatchBytes(bin + bin.replace('literal 629145600', 'delta 10'))).toBe(629145610);
    expect(binaryPatchBytes('diff --git a/x b/x\n+literal 5\n+GIT binary patch\n')).toBe(0);
  });
  test('P: conflicting files from git apply', () => {
    const err = 'error: patch failed: src/a.ts:1\nerror: src/a.ts: patch does not apply\nerror: b.txt: does not exist in index';
    expect(conflictingFiles(err)).toEqual(['src/a.ts', 'b.txt']);
  });
});

const obs = (code: string | null, detail = 'x', patch: { sha: string } | null = null): Observation => ({
  checkpoint:
    code === null
      ? { exists: false, mtimeMs: null, parse: null }
      : { exists: true, mtimeMs: 1, parse: { ok: true, checkpoint: { ...CP, statusCode: code, statusDetail: detail } } },
  patch: patch
    ? { exists: true, size: 10, mtimeMs: 1, sha: patch.sha, unified: true, files: ['a'], by: 'worker' }
    : { exists: false, size: 0, mtimeMs: null, sha: null, unified: false, files: [], by: null },
  lastTurn: null,
});

describe('tick rules', () => {
  test('ack SLA: nothing before it, a restart at it (once per task)', () => {
    const { task, a } = record();
    expect(tickAttempt(task, a, obs(null), 1000, tun)).toEqual({ kind: 'none' });
    expect(tickAttempt(task, a, obs(null), 3000, tun)).toMatchObject({ kind: 'restart', reason: expect.stringMatching(/^ack SLA missed: no checkpoint/) });
    expect(a.gates.A).toBe('fail');
    task.ackRestarts = 1;
    expect(tickAttempt(task, a, obs(null), 4000, tun)).toEqual({ kind: 'none' });
    expect(tickAttempt(task, a, obs('started'), 5000, tun)).toEqual({ kind: 'none' });
    expect(a.gates.A).toBe('ok');
  });
  test('stall: no change for the stall threshold × the tick interval of wall-clock time; extra ticks do not count', () => {
    const { task, a } = record();
    expect(tickAttempt(task, a, obs('discovering', 'reading'), 1000, tun).kind).toBe('none');
    // Wake-up ticks a few milliseconds apart see the same status: not a stall.
    for (const at of [1001, 1002, 1500, 2999]) expect(tickAttempt(task, a, obs('discovering', 'reading'), at, tun).kind).toBe('none');
    expect(tickAttempt(task, a, obs('discovering', 'reading'), 3000, tun)).toMatchObject({
      kind: 'restart',
      event: 'STALL DETECTED: no progress for 2s (status "discovering: reading", no patch draft; stall time 2s)',
    });
    // A status that moves is progress, even with the patch draft unchanged.
    const p = record();
    for (let at = 1000; at < 20_000; at += 700) expect(tickAttempt(p.task, p.a, obs('drafting_patch', `step ${at}`, { sha: 's1' }), at, tun).kind).toBe('none');
  });
  test('stall: waiting for feedback is not a stall; after the draft timeout a stall means take over', () => {
    const r = record();
    tickAttempt(r.task, r.a, obs('waiting_for_feedback'), 1000, tun);
    expect(tickAttempt(r.task, r.a, obs('waiting_for_feedback'), 9000, tun).kind).toBe('none');
    const late = record();
    tickAttempt(late.task, late.a, obs('discovering', 'x', { sha: 'a' }), 61_000, tun);
    expect(tickAttempt(late.task, late.a, obs('discovering', 'x', { sha: 'a' }), 63_000, tun)).toMatchObject({ kind: 'takeover' });
  });
  test('patch draft timeout: take over once; the take-over attempt failing too fails the task', () => {
    const { task, a } = record();
    tickAttempt(task, a, obs('started'), 1000, tun);
    expect(tickAttempt(task, a, obs('discovering', 'y'), 60_000, tun)).toMatchObject({
      kind: 'takeover',
      event: expect.stringMatching(/^TIMEOUT ESCALATION: no patch draft after 60s/),
    });
    task.tookOver = true;
    a.kind = 'takeover';
    a.spawnedAt = 60_000;
    expect(tickAttempt(task, a, obs('discovering', 'z'), 120_000, tun)).toMatchObject({ kind: 'fail' });
    const waiting = record();
    expect(tickAttempt(waiting.task, waiting.a, obs('started'), 60_000, { ...tun, continueWaiting: true }).kind).not.toBe('takeover');
  });
  test('missing artifacts: a strike and a re-checkpoint request, then a restart', () => {
    const { task, a } = record();
    tickAttempt(task, a, obs('started'), 1000, tun);
    expect(tickAttempt(task, a, obs(null), 2000, tun)).toMatchObject({
      kind: 'steer',
      text: expect.stringMatching(/^Checkpoint integrity: checkpoint missing/),
    });
    expect(a.unrel).toBe(1);
    expect(tickAttempt(task, a, obs('done'), 3000, tun)).toMatchObject({
      kind: 'restart',
      reason: 'missing-artifact incident 2: checkpoint says done but the patch draft does not exist',
    });
  });
  test('ready when done with a draft; after a rebase request only a different patch is ready', () => {
    const { task, a } = record();
    expect(tickAttempt(task, a, obs('done', 'x', { sha: 's1' }), 1000, tun)).toEqual({ kind: 'ready' });
    a.waitingFor = { what: 'rebase', sha: 's1', ticks: 0 };
    expect(tickAttempt(task, a, obs('done', 'x', { sha: 's1' }), 2000, tun)).toEqual({ kind: 'none' });
    expect(tickAttempt(task, a, obs('done', 'x', { sha: 's2' }), 3000, tun)).toEqual({ kind: 'ready' });
    const an = record('analysis-only');
    expect(tickAttempt(an.task, an.a, obs('done'), 1000, tun)).toEqual({ kind: 'ready' });
  });
  test('the wait for a changed patch after a rebase request is bounded by the patch draft timeout', () => {
    const { task, a } = record();
    expect(tickAttempt(task, a, obs('done', 'x', { sha: 's1' }), 1000, tun)).toEqual({ kind: 'ready' });
    a.waitingFor = { what: 'rebase', sha: 's1', ticks: 0 };
    for (let at = 2000; at < 62_000; at += 1000) expect(tickAttempt(task, a, obs('done', 'x', { sha: 's1' }), at, tun)).toEqual({ kind: 'none' });
    expect(tickAttempt(task, a, obs('done', 'x', { sha: 's1' }), 62_000, tun)).toEqual({
      kind: 'fail',
      reason: 'no new patch 60s after the rebase request (the agent kept the patch that did not apply; limit: the patch draft timeout, 60s)',
    });
  });
  test('refused artifacts (a FIFO, a symlink, an oversized file, a path git refuses) fail the task with the named gate', () => {
    const cpRefused = record();
    const o = obs('started');
    expect(
      tickAttempt(
        cpRefused.task,
        cpRefused.a,
        { ...o, checkpoint: { exists: true, mtimeMs: null, parse: null, refused: 'the checkpoint is a named pipe (FIFO), not a regular file' } },
        1000,
        tun,
      ),
    ).toEqual({
      kind: 'fail',
      reason: 'gate C refused: the checkpoint is a named pipe (FIFO), not a regular file',
    });
    expect(cpRefused.a.gates.C).toBe('fail');
    const d = record();
    const refusedPatch = (refused: string): Observation => ({ ...obs('done', 'x', { sha: 's' }), patch: { ...obs('done', 'x', { sha: 's' }).patch, refused } });
    expect(tickAttempt(d.task, d.a, refusedPatch('gate D: the patch draft is 629145600 bytes, over its budget of 1048576'), 1000, tun)).toEqual({
      kind: 'fail',
      reason: 'gate D refused: the patch draft is 629145600 bytes, over its budget of 1048576; not integrated',
    });
    expect(d.a.gates.D).toBe('fail');
    const p = record();
    expect(
      tickAttempt(p.task, p.a, refusedPatch('gate P: the patch touches a path git must not write: ".git/config" is inside a .git directory'), 1000, tun),
    ).toMatchObject({ kind: 'fail', reason: expect.stringMatching(/^gate P refused: .*\.git\/config/) });
    expect(p.a.gates.P).toBe('fail');
    // An analysis-only attempt has no patch to refuse.
    const x = record('analysis-only');
    expect(tickAttempt(x.task, x.a, refusedPatch('gate D: the patch draft is a symlink, not a regular file'), 1000, tun)).toEqual({ kind: 'ready' });
  });
  test('integration goes in task order', () => {
    const a = record().task,
      b = record().task;
    expect(integrationTurn([a, b])).toBe(1);
    a.state = 'failed';
    b.task = { ...b.task, index: 2 };
    expect(integrationTurn([a, b])).toBe(2);
    b.state = 'integrated';
    expect(integrationTurn([a, b])).toBeNull();
  });
});

describe('gates on a finished attempt', () => {
  const deliverable = '1) Summary\n2) Intended files touched\n3) Patch\n4) Commands run + results\n5) Risks / follow-ups';
  const scoped = () => {
    const r = record();
    r.task.task = { ...r.task.task, scope: ['src/**'] };
    return r;
  };
  test('all pass: ready', () => {
    const { task, a } = scoped();
    const o = { ...obs('done', 'x', { sha: 's' }), lastTurn: { text: deliverable, at: null } };
    o.patch.files = ['src/a.ts'];
    expect(gateFinished(task, a, o, tun, 1000)).toEqual({ kind: 'ready' });
    expect(a).toMatchObject({ ready: true, gates: { O: 'ok', S: 'ok' } });
  });
  test('S fails the task', () => {
    const { task, a } = scoped();
    const o = { ...obs('done', 'x', { sha: 's' }), lastTurn: { text: deliverable, at: null } };
    o.patch.files = ['src/a.ts', 'README.md'];
    expect(gateFinished(task, a, o, tun, 1000)).toEqual({ kind: 'fail', reason: 'gate S failed: README.md outside the scope src/**; not integrated' });
  });
  test('O missing, in wall-clock time: ticks milliseconds apart do not use up the wait; the stall time does', () => {
    const { task, a } = record();
    const o = obs('done', 'x', { sha: 's' });
    for (const at of [1000, 1001, 1002, 1003, 2999]) expect(gateFinished(task, a, o, tun, at)).toEqual({ kind: 'wait' });
    expect(gateFinished(task, a, o, tun, 3000)).toMatchObject({ kind: 'reemit' });
  });
});

describe('worker spec', () => {
  test('a command worker gets the WARDEN_MESH_* environment; the spec is a valid AgentSpec', () => {
    const { task, a } = record();
    const spec = MeshInputSchema.parse({ runId: 'r', repo: '/repo', tasks: [{ title: 't' }], driver: { kind: 'command', command: ['python3', 'w.py'] } });
    const child = AgentSpecSchema.parse(workerSpec({ spec, task: task.task, attempt: a, base: 'abc', parentWorkflowId: 'mesh-r' }));
    expect(child.driver).toEqual({
      kind: 'command',
      command: ['python3', 'w.py'],
      env: { WARDEN_MESH_RUN: 'r', WARDEN_MESH_TASK: '1-t', WARDEN_MESH_CHECKPOINT: '/c', WARDEN_MESH_PATCH: '/p' },
    });
    expect(child).toMatchObject({ agentId: 'r.1-t.a1', driven: { workDir: '/w' }, parent: { agentId: 'mesh-r', depth: 1 }, delegation: { mode: 'solo' } });
    expect(DriverConfigSchema.safeParse({ kind: 'command', command: ['x'], env: { PATH: '/evil' } }).success).toBe(false);
  });

  test("the attempt's holder token goes into the worker's spec (the mesh alone may hold it), and not into the status query", () => {
    const { task, a } = record();
    const spec = MeshInputSchema.parse({ runId: 'r', repo: '/repo', tasks: [{ title: 't' }], driver: { kind: 'command', command: ['x'] } });
    const plain = AgentSpecSchema.parse(workerSpec({ spec, task: task.task, attempt: a, base: 'abc', parentWorkflowId: 'mesh-r' }));
    expect(plain.safety.holdToken).toBeUndefined(); // meshes started before the token
    a.holdToken = 'mesh-holder-token-0123456789';
    const child = AgentSpecSchema.parse(workerSpec({ spec, task: task.task, attempt: a, base: 'abc', parentWorkflowId: 'mesh-r' }));
    expect(child.safety.holdToken).toBe(a.holdToken);
    const st = meshStatus([task]);
    expect(JSON.stringify(publicState(st))).not.toContain(a.holdToken);
    expect(st.tasks[0]!.attempts[0]!.holdToken).toBe(a.holdToken); // the mesh keeps it
  });
});

describe('rendering', () => {
  test('manifest, worker prompt, rebase request and dashboard', () => {
    const { task, a } = record();
    const m = renderManifest({ runId: 'r', repo: '/repo', base: 'abc', userBranch: 'main', tasks: [task.task], tunables: tun, driver: 'command' });
    expect(m).toContain('1. t\n   - slug: 1-t');
    expect(m).toContain('- Tick interval: 1s');
    const p = workerPrompt({ runId: 'r', task: task.task, attempt: a, base: 'abc', tunables: tun });
    expect(p).toContain('Default mode: PATCH-FIRST.');
    expect(p).toContain('create/update /c with the required checkpoint format');
    expect(p).toContain('create/update /p as a unified diff');
    const rb = rebaseRequest({
      conflictingFiles: ['a.txt'],
      error: 'error: patch failed: a.txt:1',
      integrationBranch: 'mesh/r/integration',
      head: 'def',
      patchPath: '/p',
    });
    expect(rb.split('\n').slice(0, 4)).toEqual([
      'Your patch did not apply cleanly.',
      'Please rebase/regenerate your patch against the current workspace state and resend a single unified diff.',
      'Failure details:',
      '- Conflicting files: a.txt',
    ]);
    a.lastTickAt = Date.UTC(2026, 0, 31, 19, 22, 0);
    a.lastSeenAt = a.lastTickAt - 55_000;
    task.next = 'tick';
    const s = meshStatus([task], { lastTickAt: a.lastTickAt, ticks: 3, integrationHead: null, log: [{ at: a.lastTickAt, text: 'STALL DETECTED: x' }] });
    const d = renderDashboard(s, a.lastTickAt).split('\n');
    expect(d[1]).toBe('last tick: 2026-01-31T19:22:00.000Z (tick interval: 1s; ticks 3)');
    expect(d[5]).toMatch(/^task\s+agent\s+att\s+unrel\s+state\s+last_seen\s+last_tick\s+gates\s+next$/);
    expect(d[6]).toMatch(/^1 1-t\s+r\.1-t\.a1\s+1\s+0\s+spawned\s+00:55\s+19:22:00\s+A=-- C=-- O=-- D=-- P=-- S=na V=na\s+tick$/);
    expect(d.at(-1)).toBe('- 19:22:00 STALL DETECTED: x');
  });
});

describe('a blank attempt', () => {
  const start: AttemptStart = {
    attempt: 2,
    kind: 'takeover',
    mode: 'direct-edit',
    agentId: 'r.1-t.a2',
    workflowId: 'agent-r.1-t.a2',
    branch: 'mesh/r/1-t-a2',
    worktree: '/w2',
    checkpointPath: '/c2',
    patchPath: '/p2',
    diffBase: 'head',
    spawnedAt: 7,
  };
  test('keeps who and where it is and the gates it was given; nothing is seen yet', () => {
    const gates = initialGates(record().task.task, true);
    const a = blankAttempt(start, gates);
    expect(a).toMatchObject(start);
    expect(a.gates).toBe(gates);
    expect([a.state, a.acked, a.ready, a.closed, a.agentEnded, a.waitingFor, a.patchSha, a.lastStatus]).toEqual([
      'spawned',
      false,
      false,
      false,
      null,
      null,
      null,
      null,
    ]);
  });
  test('two blank attempts share no array', () => {
    const gates = initialGates(record().task.task, false);
    const [a, b] = [blankAttempt(start, gates), blankAttempt(start, gates)];
    a.patchFiles.push('a.txt');
    expect(b.patchFiles).toEqual([]);
  });
});
