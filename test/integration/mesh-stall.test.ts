/**
 * The stall rule end to end, on the real dev server with real workers: stall means no change of a
 * worker's status or patch draft for `stall threshold` × the tick interval of wall-clock time. A
 * worker whose status moves every second (or every 3 seconds, inside a 4-second stall time) is
 * never restarted, though tasks ending around it wake the loop for extra ticks; a worker that
 * keeps writing the same status is restarted only once the stall time has passed since a tick
 * first saw it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { waitForMesh } from '../../src/client/mesh.js';
import { startMesh } from '../../src/client/mesh.js';
import { renderDashboard } from '../../src/domain/mesh/render.js';
import { git, gitRepo, meshInput } from '../helpers/mesh.js';
import { recordHistory } from '../helpers/histories.js';
import { useStack } from '../helpers/stack.js';

process.env.WARDEN_HOME = mkdtempSync(join(tmpdir(), 'warden-home-'));
const show = (s: Parameters<typeof renderDashboard>[0]) => process.env.WARDEN_MESH_SHOW && console.log(renderDashboard(s, Date.now(), { logLines: 80 }));

describe('mesh stall rule in wall-clock time', () => {
  const stack = useStack();

  test('workers whose status moves within the stall time are never restarted, whatever extra ticks wake-ups cause', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n', 'e.txt': 'e\n' });
    const tasks = [
      // Three quick tasks integrate early: each ending agent wakes the loop for an extra tick.
      ...['a', 'b', 'c'].map((f) => ({ title: `Quick ${f} {edit ${f}.txt:1:${f.toUpperCase()}}`, slug: `quick-${f}`, scope: [`${f}.txt`] })),
      { title: 'Busy every second {slow:40} {edit d.txt:1:D}', slug: 'busy-1s', scope: ['d.txt'] },
      { title: 'Busy every 3 seconds {slow:40:3} {edit e.txt:1:E}', slug: 'busy-3s', scope: ['e.txt'] },
    ];
    // A 2s tick and the default stall threshold 2: the stall time is 4s of wall-clock time.
    await startMesh(stack.warden, meshInput('steady', repo, tasks, { cap: 5, tickInterval: '2s', ackSla: '20s' }));
    const done = await waitForMesh(stack.warden, 'steady', (s) => s.phase === 'ready' || s.phase === 'failed', 240_000);
    show(done);
    expect(done.log.filter((l) => l.text.startsWith('STALL DETECTED')).map((l) => l.text)).toEqual([]);
    expect(done.tasks.map((t) => [t.task.slug, t.state, t.attempts.length])).toEqual([
      ['quick-a', 'integrated', 1],
      ['quick-b', 'integrated', 1],
      ['quick-c', 'integrated', 1],
      ['busy-1s', 'integrated', 1],
      ['busy-3s', 'integrated', 1],
    ]);
    // The busy workers were watched the whole time: many ticks saw them working.
    for (const slug of ['busy-1s', 'busy-3s'])
      expect(done.log.filter((l) => l.text.startsWith(`ticked steady.${slug}.a1 status="drafting_patch: working`)).length).toBeGreaterThan(5);
    expect(git(repo, 'show', 'mesh/steady/integration:e.txt')).toBe('E');
    await stack.warden.client.workflow.getHandle('mesh-steady').signal('cancel', { reason: 'test over' });
  });

  test('a worker writing the same status is restarted once the stall time has passed since a tick first saw it, not before', async () => {
    const repo = gitRepo({ 'a.txt': 'a\n' });
    const tasks = [{ title: 'Stuck first attempt {stall-a1} {edit a.txt:1:A}', slug: 'stuck', scope: ['a.txt'] }];
    // A 2s tick and stall threshold 3: the stall time is 6s.
    await startMesh(stack.warden, meshInput('stuck', repo, tasks, { tickInterval: '2s', stallThreshold: 3, ackSla: '20s' }));
    const done = await waitForMesh(stack.warden, 'stuck', (s) => s.phase === 'ready' || s.phase === 'failed', 180_000);
    show(done);
    const handle = stack.warden.client.workflow.getHandle('mesh-stuck');
    await handle.signal('cancel', { reason: 'test over' });
    await handle.result();
    await recordHistory(stack.server.address, handle, process.env.WARDEN_HISTORY_NAME ?? 'mesh-stuck');
    const firstSeen = done.log.find((l) => l.text.startsWith('ticked stuck.stuck.a1 status="discovering: reading the code"'));
    const stall = done.log.find((l) => l.text.startsWith('STALL DETECTED'));
    expect(firstSeen).toBeDefined();
    expect(stall).toBeDefined();
    expect(stall!.at - firstSeen!.at).toBeGreaterThanOrEqual(6_000);
    expect(stall!.text).toMatch(/^STALL DETECTED: no progress for \d+s \(status "discovering: reading the code", no patch draft; stall time 6s\)$/);
    expect(done.tasks[0]!.attempts.length).toBe(2);
    expect(done.tasks[0]!.state).toBe('integrated');
  });
});
