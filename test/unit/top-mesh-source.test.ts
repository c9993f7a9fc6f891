/**
 * `warden top`'s mesh source against a stand-in client (visibility pages, `meshStatus` answers): the
 * listing's query and bound, and the bounded, coalesced status queries.
 */
import { expect, test } from 'vitest';
import type { WardenClient } from '../../src/client/index.js';
import { listMeshes, MESH_LIMIT, MeshCache } from '../../src/roster/source.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

function fakeClient(n: number, answer: (workflowId: string) => Promise<unknown>) {
  const seen = { query: '', pageSize: 0, yielded: 0 };
  const client = {
    client: {
      workflow: {
        list({ query, pageSize }: { query: string; pageSize: number }) {
          seen.query = query;
          seen.pageSize = pageSize;
          return (async function* () {
            for (let i = 0; i < n; i++) {
              seen.yielded++;
              yield {
                workflowId: `mesh-r${i}`,
                status: { name: 'RUNNING' },
                typedSearchAttributes: { get: (k: { name: string }) => (k.name === 'WardenState' ? 'running' : undefined) },
                startTime: new Date(0),
                closeTime: undefined,
              };
            }
          })();
        },
        getHandle: (workflowId: string) => ({ query: () => answer(workflowId) }),
      },
    },
  } as unknown as WardenClient;
  return { client, seen };
}

test('listMeshes: running meshes by workflow type, bounded', async () => {
  const { client, seen } = fakeClient(500, async () => null);
  const out = await listMeshes(client, { limit: 3 });
  expect(seen.query).toBe("WorkflowType = 'meshWorkflow' AND ExecutionStatus = 'Running'");
  expect(out.map((m) => [m.runId, m.workflowId, m.phase, m.status])).toEqual([
    ['r0', 'mesh-r0', 'running', 'RUNNING'],
    ['r1', 'mesh-r1', 'running', 'RUNNING'],
    ['r2', 'mesh-r2', 'running', 'RUNNING'],
  ]);
  expect(seen.yielded).toBe(3); // stops reading at the bound
  expect((await listMeshes(fakeClient(500, async () => null).client)).length).toBe(MESH_LIMIT);
  expect(await listMeshes(client, { limit: 0 })).toEqual([]);
});

test('MeshCache: at most n queries at once, never two for one mesh; a failure is kept per mesh', async () => {
  let inFlight = 0;
  let most = 0;
  let fail = true;
  const { client } = fakeClient(6, async () => null);
  const answer = async (workflowId: string) => {
    inFlight++;
    most = Math.max(most, inFlight);
    for (let i = 0; i < 3; i++) await tick();
    inFlight--;
    if (workflowId === 'mesh-r1' && fail) throw new Error('no worker');
    return { runId: workflowId.slice(5), phase: 'running', tasks: [{ state: 'integrated' }, { state: 'running' }] };
  };
  (client.client.workflow as unknown as { getHandle: unknown }).getHandle = (workflowId: string) => ({ query: () => answer(workflowId) });
  const entries = await listMeshes(client);
  const cache = new MeshCache(client, 2);
  // Two polls at once: the second skips the meshes the first has in flight.
  await Promise.all([cache.poll(entries), cache.poll(entries)]);
  expect(most).toBe(2);
  expect(cache.queries).toBe(6);
  expect(cache.status(entries[0]!)).toMatchObject({ phase: 'running', tasks: [{ state: 'integrated' }, { state: 'running' }] });
  expect(cache.status(entries[1]!)).toBeNull();
  expect(cache.error(entries[1]!)).toBe('no worker');
  fail = false;
  await cache.poll(entries);
  expect(cache.error(entries[1]!)).toBeNull();
  expect(cache.status(entries[1]!)).toMatchObject({ runId: 'r1' });
});
