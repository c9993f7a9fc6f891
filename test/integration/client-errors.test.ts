/**
 * The client against Temporal's own limits, on a real dev server and worker:
 *
 *  - 300 concurrent reportTurn calls at one agent (past the server's 10 in-flight updates per
 *    workflow, RESOURCE_EXHAUSTED): the client keeps at most 8 in flight per agent and retries what
 *    is refused, by turn id; a client without that cap sends all 300 at once and its retries carry
 *    them through. Every report succeeds and the agent counts each turn exactly once (the retry
 *    itself, deterministically: test/unit/client-errors.test.ts);
 *  - an error that is not worth retrying (an update payload over the server's limit) reaches the
 *    caller with Temporal's cause named, not a bare "Workflow Update failed".
 */
import { expect, test } from 'vitest';
import { TemporalRefusedError, WardenClient } from '../../src/client/index.js';
import { describeTemporalError } from '../../src/client/errors.js';
import { useStack } from '../helpers/stack.js';

const stack = useStack();
const quiet = { evalInterval: 1000, idleAfterMs: 0 };

/** Fire `n` reports with ids at one agent, spread over `clients`; every one must succeed, each counted once. */
async function burst(agentId: string, n: number, clients: WardenClient[]) {
  await stack.warden.start({ agentId, task: 'x', supervisor: quiet });
  const results = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => clients[i % clients.length]!.reportTurn(agentId, { id: `${agentId}-${i}`, text: `turn ${i}` })),
  );
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error)?.message ?? r.reason)] : []));
  expect(failed.slice(0, 3), `${failed.length} of ${n} failed`).toEqual([]);
  // A report retried after its first attempt was in fact taken is answered `duplicate` (the
  // workflow knows its id) — never counted twice: the count is exactly n.
  expect(results.every((r) => r.status === 'fulfilled' && (r.value.accepted || r.value.duplicate))).toBe(true);
  expect((await stack.warden.status(agentId)).turns).toBe(n);
  // Sent again by id, a turn is recognised, not counted twice. Who recognises it depends on the
  // server: while Temporal still holds the first update's outcome for `turn-<id>`, it answers with
  // that outcome (accepted, as the first time); once it has dropped it, the workflow's own memory
  // of recent ids answers `duplicate`. Either way the count below stays n.
  const again = await clients[0]!.reportTurn(agentId, { id: `${agentId}-7`, text: 'turn 7' });
  expect(again.duplicate || again.accepted).toBe(true);
  expect((await stack.warden.status(agentId)).turns).toBe(n);
  await stack.warden.signal(agentId, 'abort', {});
}

test('300 concurrent reports with ids at one agent through one client: all succeed, each counted once', async () => {
  await burst('burst-one', 300, [stack.warden]);
}, 400_000);

test('100 reports at once from a client with no in-flight cap: refused past the limit, retried until all land', async () => {
  // No cap: all 100 go out at once, as from many processes, ten times the server's 10 in flight (300
  // uncapped reports on a loaded machine can outlast the client's three-minute retry budget).
  // The SDK's own gRPC retry gives up on many of them (ten tries); the client's retry carries them through.
  const uncapped = await WardenClient.connect({
    address: stack.server.address,
    namespace: stack.server.namespace,
    updatesInFlightPerAgent: Number.POSITIVE_INFINITY,
  });
  try {
    await burst('burst-uncapped', 100, [uncapped]);
  } finally {
    await uncapped.close();
  }
}, 400_000);

test('a non-retryable refusal names its cause, and is not retried', async () => {
  const agentId = 'refused';
  await stack.warden.start({ agentId, task: 'x', supervisor: quiet });
  // The client bounds every turn it sends, so go around it: a 5 MiB update argument meets the
  // server's gRPC message limit (RESOURCE_EXHAUSTED, like the in-flight limit, but never passes).
  const big = 'x'.repeat(5 * 1024 * 1024);
  const raw = await stack.warden
    .handle(agentId)
    .executeUpdate('reportTurn', { args: [{ id: 'big', text: big }], updateId: 'turn-big' })
    .catch((e: unknown) => e);
  expect((raw as Error).message).toBe('Workflow Update failed'); // the SDK's words: the cause is hidden
  const d = describeTemporalError(raw);
  expect(d).toMatchObject({ kind: 'message-too-large', retryable: false, code: 8 });
  expect(d.message).toMatch(
    /^Workflow Update failed: the request is larger than the Temporal server accepts \(Temporal said RESOURCE_EXHAUSTED: .*larger than max/,
  );
  // The CLI's path: `warden report` prints what the client throws.
  const err = await (stack.warden as unknown as { translate(a: string, e: unknown): Promise<unknown> }).translate(agentId, raw);
  expect(err).toBeInstanceOf(TemporalRefusedError);
  expect((err as Error).message).toBe(d.message);
  expect((await stack.warden.status(agentId)).turns).toBe(0);
  await stack.warden.signal(agentId, 'abort', {});
});
