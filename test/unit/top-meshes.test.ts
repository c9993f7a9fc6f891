/** `warden top`'s mesh rows: task counts, the row model, their place in the roster, the JSON and the text. */
import { describe, expect, test } from 'vitest';
import {
  buildMeshRow,
  formatProgress,
  isMeshRow,
  meshConfirmPrompt,
  meshDeclined,
  meshFocusLines,
  meshJson,
  meshKey,
  meshOutcome,
  meshPending,
  meshVerbRefusal,
  parseTopMeshStatus,
  taskCounts,
  type MeshEntry,
} from '../../src/roster/meshes.js';
import { buildRow, hideFinished, roster, rowJson } from '../../src/roster/rows.js';
import { renderText } from '../../src/cli/top/table.js';
import { iso, NOW, opts, rosterEntry as agent } from '../helpers/top.js';

function mesh(runId: string, over: Partial<MeshEntry> = {}): MeshEntry {
  return { runId, workflowId: `mesh-${runId}`, status: 'RUNNING', phase: 'running', startTime: iso(300_000), closeTime: null, ...over };
}
function meshStatus(runId: string, phase: string, states: string[], over: Record<string, unknown> = {}) {
  return parseTopMeshStatus({
    runId,
    phase,
    phaseReason: null,
    startedAt: NOW - 300_000,
    tasks: states.map((state, i) => ({ state, task: { slug: `t${i + 1}` }, reason: null, attempts: [] })),
    spend: { a: { tokens: 10, costUsd: 0.5, turns: 1 }, b: { tokens: 20, costUsd: 0.25, turns: 2 } },
    log: [],
    ...over,
  });
}
describe('task counts', () => {
  test('integrated, done, failed and the rest open', () => {
    const c = taskCounts(['integrated', 'integrated', 'failed', 'running', 'queued']);
    expect(c).toEqual({ total: 5, integrated: 2, done: 0, failed: 1, open: 2 });
    expect(formatProgress(c)).toBe('2/5 integrated, 1 failed, 2 open');
    expect(formatProgress(taskCounts(['integrated', 'done', 'needs_rebase']))).toBe('1/3 integrated, 1 done, 1 open');
    expect(formatProgress(taskCounts([]))).toBe('0/0 integrated');
  });
});

describe('parseTopMeshStatus', () => {
  test('a wrong shape names the field; an unknown phase is refused', () => {
    expect(() => parseTopMeshStatus({ runId: 'x', phase: 'running', tasks: 'no' })).toThrow(/^meshStatus answer: tasks: /);
    expect(() => parseTopMeshStatus({ runId: 'x', phase: 'dancing', tasks: [] })).toThrow(/^meshStatus answer: phase: /);
    expect(() => parseTopMeshStatus(null)).toThrow(/^meshStatus answer: \(root\): /);
  });
  test('missing optional parts are lenient', () => {
    const st = parseTopMeshStatus({ runId: 'x', phase: 'running', tasks: [{ state: 7 }] });
    expect(st.phaseReason).toBeNull();
    expect(st.tasks[0]).toMatchObject({ state: 'queued', task: { slug: '?' } });
    expect(st.spend).toEqual({});
  });
});

describe('buildMeshRow', () => {
  test('awaiting input: first-rank priority, the reason in the intent and the why', () => {
    const st = meshStatus('r1', 'awaiting-input', ['integrated', 'needs_rebase', 'failed'], { phaseReason: 'conflict budget spent (3 of 3)' });
    const r = buildMeshRow(mesh('r1', { phase: 'awaiting-input' }), st, null, opts);
    expect(r).toMatchObject({
      agentId: 'mesh-r1',
      state: 'awaiting-input',
      priority: 'awaiting-input',
      finished: false,
      why: 'conflict budget spent (3 of 3)',
      intent: 'mesh: 1/3 integrated, 1 failed, 1 open · conflict budget spent (3 of 3)',
      costUsd: 0.75,
      elapsedMs: 300_000,
      detailed: true,
    });
    expect(r.mesh).toMatchObject({ runId: 'r1', phase: 'awaiting-input', counts: { total: 3, integrated: 1, failed: 1, open: 1 } });
  });
  test('ready: a working priority, the reason shown; running: no reason', () => {
    const ready = buildMeshRow(
      mesh('r2'),
      meshStatus('r2', 'ready', ['integrated', 'integrated', 'failed'], { phaseReason: '2 of 3 tasks through, 1 failed; `warden mesh apply r2` merges' }),
      null,
      opts,
    );
    expect(ready).toMatchObject({
      state: 'ready',
      priority: 'normal',
      intent: 'mesh: 2/3 integrated, 1 failed · 2 of 3 tasks through, 1 failed; `warden mesh apply r2` merges',
    });
    const running = buildMeshRow(mesh('r3'), meshStatus('r3', 'running', ['running'], { phaseReason: 'ignored while running' }), null, opts);
    expect(running).toMatchObject({ priority: 'normal', why: 'running', intent: 'mesh: 0/1 integrated, 1 open' });
  });
  test('without an answer: the phase visibility gives, no counts, the query error kept', () => {
    const r = buildMeshRow(mesh('r4', { phase: 'validating' }), null, 'deadline exceeded', opts);
    expect(r).toMatchObject({ state: 'validating', intent: 'mesh', costUsd: null, detailed: false, priority: 'normal' });
    expect(r.mesh).toMatchObject({ counts: null, progress: null, error: 'deadline exceeded' });
    expect(buildMeshRow(mesh('r5', { phase: null }), null, null, opts).state).toBe('unknown');
  });
  test('an ended mesh, or a final phase, is finished', () => {
    expect(buildMeshRow(mesh('r6', { status: 'COMPLETED', closeTime: iso(60_000) }), null, null, opts)).toMatchObject({
      finished: true,
      priority: 'finished',
      elapsedMs: 240_000,
    });
    expect(buildMeshRow(mesh('r7'), meshStatus('r7', 'cancelled', []), null, opts)).toMatchObject({ finished: true, priority: 'finished' });
  });
});

describe('meshes in the roster', () => {
  const rows = () => [
    buildRow(agent('solo'), null, null, opts),
    buildRow(agent('r1.fix-a.a1', { parent: 'mesh-r1' }), null, null, opts),
    buildRow(agent('r1.fix-b.a1', { parent: 'mesh-r1', state: 'done', status: 'COMPLETED', closeTime: iso(1_000) }), null, null, opts),
    buildMeshRow(mesh('r1'), meshStatus('r1', 'running', ['running', 'integrated']), null, opts),
    buildMeshRow(mesh('r2', { startTime: iso(100_000) }), meshStatus('r2', 'awaiting-input', ['needs_rebase']), null, opts),
    buildRow(agent('r2.fix-c.a1', { parent: 'mesh-r2' }), null, null, opts),
  ];

  test('a mesh awaiting input comes first, before working agents; workers are indented under their mesh', () => {
    const out = roster(rows());
    expect(out.map((r) => [r.agentId, r.depth])).toEqual([
      ['mesh-r2', 0],
      ['r2.fix-c.a1', 1],
      // The rest by age, oldest first (solo started before mesh r1).
      ['solo', 0],
      ['mesh-r1', 0],
      ['r1.fix-a.a1', 1],
      ['r1.fix-b.a1', 1],
    ]);
    expect(out.filter(isMeshRow).map((r) => r.mesh.runId)).toEqual(['r2', 'r1']);
  });

  test('a mesh whose worker awaits input rises with it', () => {
    const rs = rows();
    rs[1] = buildRow(agent('r1.fix-a.a1', { parent: 'mesh-r1', state: 'awaiting-input' }), null, null, opts);
    const ids = roster(rs).map((r) => r.agentId);
    expect(ids.indexOf('mesh-r1')).toBeLessThan(ids.indexOf('solo'));
    expect(ids.indexOf('r1.fix-a.a1')).toBe(ids.indexOf('mesh-r1') + 1);
  });

  test('finished workers hide under a live mesh; the filter keeps a matching worker with its mesh', () => {
    expect(hideFinished(roster(rows())).map((r) => r.agentId)).not.toContain('r1.fix-b.a1');
    expect(roster(rows(), { filter: 'fix-c' }).map((r) => r.agentId)).toEqual(['mesh-r2', 'r2.fix-c.a1']);
    expect(roster(rows(), { filter: 'awaiting' }).map((r) => r.agentId)).toContain('mesh-r2');
  });

  test('agent rows keep their JSON; a mesh has its own', () => {
    const out = roster(rows());
    const solo = out.find((r) => r.agentId === 'solo')!;
    expect(Object.keys(rowJson(solo))).not.toContain('mesh');
    const m = out.find((r) => r.agentId === 'mesh-r2')!;
    expect(isMeshRow(m) && meshJson(m)).toEqual({
      runId: 'r2',
      workflowId: 'mesh-r2',
      phase: 'awaiting-input',
      phaseReason: null,
      tasks: { total: 1, integrated: 0, done: 0, failed: 0, open: 1 },
      progress: '0/1 integrated, 1 open',
      finished: false,
      priority: 'awaiting-input',
      why: 'awaiting-input',
      costUsd: 0.75,
      startedAt: iso(100_000),
      ageMs: 100_000,
      age: '1m40s',
      detailed: true,
      error: null,
    });
  });

  test('the text table shows the mesh row: id, phase badge, progress, age', () => {
    const text = renderText(roster(rows()), 160, { key: 'priority', desc: false });
    const line = text.find((l) => l.startsWith('mesh-r1 '));
    expect(line).toMatch(/^mesh-r1 +▶ running +mesh: 1\/2 integrated, 1 open +— +— +\$0\.750 +— +— +— +5m00s +—$/);
    expect(text.find((l) => /└ fix-a\.a1|└ r1\.fix-a\.a1/.test(l))).toBeTruthy();
    expect(text.find((l) => l.startsWith('mesh-r2 '))).toMatch(/‼ awaiting-input/);
  });
});

describe('mesh focus and verbs', () => {
  test('the focus lines list each task; a verb on a mesh row is refused with the mesh commands', () => {
    const st = meshStatus('r1', 'ready', ['integrated', 'failed'], { phaseReason: '1 of 2 tasks through, 1 failed' });
    const lines = meshFocusLines('r1', st, null);
    expect(lines[0]).toBe('  phase ready — 1 of 2 tasks through, 1 failed');
    expect(lines).toContain('  task 2 t2: failed');
    expect(lines.at(-1)).toBe('  keys on a mesh: a apply · x cancel · r resume (awaiting input); the other verbs act on agents (`warden mesh status r1`)');
    expect(meshFocusLines('r1', null, 'no worker')[1]).toBe('  (meshStatus query failed: no worker)');
    expect(meshVerbRefusal('pause', 'r1')).toMatch(/^pause: mesh-r1 is a mesh, not an agent; .*warden mesh resume\|apply\|cancel r1/);
  });
});

describe('mesh keys: a apply, x cancel, r resume; the other verbs refused', () => {
  const ready = { runId: 'r1', phase: 'ready' };
  const waiting = { runId: 'r2', phase: 'awaiting-input' };
  const running = { runId: 'r3', phase: 'running' };

  test('a asks y/N before apply, on any phase (a mesh that is not ready refuses it itself, with its reason)', () => {
    expect(meshKey('a', 'abort', ready, false)).toEqual({
      kind: 'confirm',
      action: 'apply',
      runId: 'r1',
      prompt: 'apply mesh-r1: merge mesh/r1/integration into your branch? y/N',
    });
    expect(meshKey('a', 'abort', running, false)).toEqual({
      kind: 'confirm',
      action: 'apply',
      runId: 'r3',
      prompt: 'apply mesh-r3: merge mesh/r3/integration into your branch (it is running; apply needs it ready)? y/N',
    });
  });

  test('x asks y/N before cancel; a mesh that has ended is refused', () => {
    for (const m of [ready, waiting, running])
      expect(meshKey('x', 'stop', m, false)).toEqual({ kind: 'confirm', action: 'cancel', runId: m.runId, prompt: meshConfirmPrompt('cancel', m) });
    expect(meshConfirmPrompt('cancel', ready)).toBe('cancel mesh-r1: stop every worker and end the mesh, merging nothing? y/N');
    expect(meshKey('x', 'stop', { runId: 'r4', phase: 'cancelled' }, true)).toEqual({
      kind: 'refuse',
      message: 'cancel mesh-r4 refused: the mesh is cancelled; nothing to cancel',
    });
  });

  test('r resumes a mesh awaiting input at once (no question, as for an agent); any other phase is refused', () => {
    expect(meshKey('r', 'resume', waiting, false)).toEqual({ kind: 'act', action: 'resume', runId: 'r2' });
    expect(meshKey('r', 'resume', running, false)).toEqual({
      kind: 'refuse',
      message: 'resume mesh-r3 refused: the mesh is running, not awaiting input; nothing to resume',
    });
    expect(meshKey('r', 'resume', ready, false)).toMatchObject({ kind: 'refuse' });
  });

  test('the agent-only verbs (steer, interrupt, pause, dismiss) stay refused, with the pointer', () => {
    for (const [key, label] of [
      ['s', 'steer'],
      ['i', 'interrupt'],
      ['p', 'pause'],
      ['d', 'dismiss'],
    ] as const)
      expect(meshKey(key, label, waiting, false)).toEqual({ kind: 'refuse', message: meshVerbRefusal(label, 'r2') });
  });

  test('the status line: pending, declined, the outcome as `warden mesh` prints it, or the client error', () => {
    expect(meshPending('apply', 'r1')).toBe('applying mesh-r1…');
    expect(meshPending('cancel', 'r1')).toBe('cancelling mesh-r1…');
    expect(meshDeclined('cancel', 'r1')).toBe('cancel mesh-r1: not sent (answered no)');
    expect(meshOutcome('apply', 'r1', { ok: true, commit: '0123456789abcdef', branch: 'main' })).toBe('merged mesh/r1/integration into main (0123456789ab)');
    expect(meshOutcome('cancel', 'r1', { ok: true })).toBe('cancel sent to mesh r1');
    expect(meshOutcome('resume', 'r2', { ok: true })).toBe('resume sent to mesh r2');
    expect(meshOutcome('apply', 'r3', { ok: false, error: new Error('mesh r3 is running; apply needs it ready') })).toBe(
      'apply mesh-r3 failed: mesh r3 is running; apply needs it ready',
    );
  });
});
