/**
 * The mesh's carried status within its byte budget (src/domain/mesh/carried.ts): detail shown only
 * to people is trimmed, in order, until it fits; decisions are never touched. And the task count
 * that bounds it is enforced at the input.
 */
import { describe, expect, it } from 'vitest';
import { MESH_CARRIED_MAX_BYTES, fitMeshCarried } from '../../src/domain/mesh/carried.js';
import { MESH_MAX_TASKS, MeshInputSchema } from '../../src/domain/mesh/config.js';
import { jsonBytes } from '../../src/domain/contract/limits.js';
import { freshAttempt, meshStatus, meshTask, taskRecord } from '../helpers/mesh-fixtures.js';

/** A big mesh: 64 tasks of 6 closed attempts, each with 8 KiB of file names and a 1,000-character output. */
function bigMesh() {
  const t = meshTask();
  const tasks = Array.from({ length: MESH_MAX_TASKS }, (_, i) =>
    taskRecord(
      t,
      Array.from({ length: 6 }, (_, k) =>
        freshAttempt(t, {
          attempt: k + 1,
          closed: k < 5,
          patchFiles: Array.from({ length: 200 }, (_, f) => `src/module-${f}/file-${f}.ts`),
          lastOutput: 'x'.repeat(1_000),
          patchSha: `sha-${i}-${k}`,
        }),
      ),
    ),
  );
  return meshStatus(tasks, { log: Array.from({ length: 200 }, (_, i) => ({ at: i, text: `ticked ${'y'.repeat(300)}` })) });
}

describe('the carried mesh status', () => {
  it('fits as it is: nothing trimmed, the same object', () => {
    const t = meshTask();
    const s = meshStatus([taskRecord(t, [freshAttempt(t)])]);
    const out = fitMeshCarried(s);
    expect(out.trimmed).toEqual([]);
    expect(out.status).toBe(s);
  });

  it('over the budget: file names first, then closed outputs, then old log lines; decisions kept', () => {
    const s = bigMesh();
    expect(jsonBytes(s)).toBeGreaterThan(MESH_CARRIED_MAX_BYTES);
    const out = fitMeshCarried(s);
    expect(out.bytesBefore).toBe(jsonBytes(s));
    expect(out.bytesAfter).toBeLessThanOrEqual(MESH_CARRIED_MAX_BYTES);
    expect(out.trimmed[0]).toBe('file names of observed patches');
    const a = out.status.tasks[3]!.attempts[2]!;
    expect(a.patchFiles).toHaveLength(20);
    expect(a.patchFiles.at(-1)).toBe('… 181 more');
    expect(a.patchSha).toBe('sha-3-2');
    expect(out.status.tasks.map((r) => r.state)).toEqual(s.tasks.map((r) => r.state));
    expect(s.tasks[3]!.attempts[2]!.patchFiles).toHaveLength(200); // the live status is not changed
  });

  it('a smaller budget goes further, in order', () => {
    const out = fitMeshCarried(bigMesh(), 200_000);
    expect(out.trimmed).toEqual(['file names of observed patches', "closed attempts' last outputs", 'older log lines']);
    expect(out.status.log).toHaveLength(50);
    expect(out.status.tasks[0]!.attempts[0]!.lastOutput).toBeNull();
    expect(out.status.tasks[0]!.attempts[5]!.lastOutput).toHaveLength(1_000); // the live attempt keeps its own
  });

  it('the input refuses more tasks than the bound, naming the field', () => {
    const tasks = Array.from({ length: MESH_MAX_TASKS + 1 }, (_, i) => ({ title: `task ${i}` }));
    const r = MeshInputSchema.safeParse({ runId: 'big', repo: '/tmp/r', tasks, driver: { kind: 'command', command: ['true'] } });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toBe(`tasks: at most ${MESH_MAX_TASKS} in one mesh (split a larger plan into several meshes)`);
  });
});
