/**
 * WardenClient asks the namespace which search attributes it has once, not once per start: every
 * ListSearchAttributes call is an operator round trip, and the Temporal CLI's dev server keeps a
 * connection to itself open per call (ten thousand starts exhausted its file descriptors). The
 * operator service here is a stand-in that counts calls; the integration suites start agents
 * against the real dev server through the same method.
 */
import type { Client } from '@temporalio/client';
import { afterEach, expect, test, vi } from 'vitest';
import { SEARCH_ATTRIBUTES_RECHECK_MS, WardenClient } from '../../src/client/index.js';
import { SEARCH_ATTRIBUTES } from '../../src/domain/contract/search-attributes.js';

function clientAnswering(answers: Array<string[] | Error>) {
  const listSearchAttributes = vi.fn(async () => {
    const next = answers.length > 1 ? answers.shift()! : answers[0]!;
    if (next instanceof Error) throw next;
    return { customAttributes: Object.fromEntries(next.map((k) => [k, 1])) };
  });
  const client = { options: { namespace: 'default' }, connection: { operatorService: { listSearchAttributes } } } as unknown as Client;
  return { warden: new WardenClient(client, 'warden'), listSearchAttributes };
}

const ALL = Object.keys(SEARCH_ATTRIBUTES);

afterEach(() => {
  vi.useRealTimers();
});

test('all registered: one call for the client, shared by concurrent callers', async () => {
  const { warden, listSearchAttributes } = clientAnswering([[...ALL, 'SomethingElse']]);
  const answers = await Promise.all(Array.from({ length: 50 }, () => warden.registeredSearchAttributes()));
  for (const a of answers) expect(a.sort()).toEqual([...ALL].sort());
  expect(await warden.registeredSearchAttributes()).toHaveLength(ALL.length);
  expect(listSearchAttributes).toHaveBeenCalledTimes(1);
});

test('some missing: asked again only after the recheck interval, and then the new answer counts', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  const { warden, listSearchAttributes } = clientAnswering([[ALL[0]!], ALL]);
  expect(await warden.registeredSearchAttributes()).toEqual([ALL[0]]);
  vi.advanceTimersByTime(SEARCH_ATTRIBUTES_RECHECK_MS - 1);
  expect(await warden.registeredSearchAttributes()).toEqual([ALL[0]]);
  expect(listSearchAttributes).toHaveBeenCalledTimes(1);
  vi.advanceTimersByTime(2);
  const again = await Promise.all(Array.from({ length: 5 }, () => warden.registeredSearchAttributes()));
  for (const a of again) expect(a).toHaveLength(ALL.length);
  expect(listSearchAttributes).toHaveBeenCalledTimes(2);
  vi.advanceTimersByTime(SEARCH_ATTRIBUTES_RECHECK_MS * 10);
  expect(await warden.registeredSearchAttributes()).toHaveLength(ALL.length);
  expect(listSearchAttributes).toHaveBeenCalledTimes(2);
});

test('a failed call answers none registered and is not remembered', async () => {
  const { warden, listSearchAttributes } = clientAnswering([new Error('UNAVAILABLE'), ALL]);
  expect(await warden.registeredSearchAttributes()).toEqual([]);
  expect(await warden.registeredSearchAttributes()).toHaveLength(ALL.length);
  expect(listSearchAttributes).toHaveBeenCalledTimes(2);
});

/** A stand-in whose workflow.start records what it was asked to start. */
function starting(registered: string[]) {
  const { warden } = clientAnswering([registered]);
  const starts: Record<string, unknown>[] = [];
  (warden.client as unknown as { workflow: unknown }).workflow = {
    start: vi.fn(async (_type: string, opts: Record<string, unknown>) => {
      starts.push(opts);
      return { workflowId: opts.workflowId, firstExecutionRunId: 'run-1' };
    }),
  };
  return { warden, starts };
}
const attrs = (o: Record<string, unknown>) =>
  Object.fromEntries(((o.typedSearchAttributes ?? []) as { key: { name: string }; value: unknown }[]).map((p) => [p.key.name, p.value]));

test('a namespace registered before WardenLabels: every agent keeps its search attributes; labels are not published', async () => {
  const older = ALL.filter((n) => n !== 'WardenLabels');
  const { warden, starts } = starting(older);
  const plain = await warden.start({ agentId: 'plain', task: 't' });
  expect(plain.searchAttributes).toBe(true);
  expect(plain.labelsSearchable).toBeUndefined();
  expect(Object.keys(attrs(starts[0]!))).toEqual([
    'WardenState',
    'WardenEscalationStep',
    'WardenPaused',
    'WardenCostUsd',
    'WardenTokens',
    'WardenEvaluatorCostUsd',
  ]);
  expect(starts[0]!.memo).toEqual({ wardenTask: 't' });
  const labelled = await warden.start({ agentId: 'lab', task: 't', labels: { team: 'payments' } });
  expect(labelled).toMatchObject({ searchAttributes: true, labelsSearchable: false });
  expect(attrs(starts[1]!).WardenLabels).toBeUndefined();
});

test('a namespace registered before WardenEvaluatorCostUsd: agents keep the older ones and are not started with it', async () => {
  const { warden, starts } = starting(ALL.filter((n) => n !== 'WardenEvaluatorCostUsd'));
  expect(await warden.start({ agentId: 'plain', task: 't' })).toMatchObject({ searchAttributes: true });
  expect(Object.keys(attrs(starts[0]!))).toEqual(['WardenState', 'WardenEscalationStep', 'WardenPaused', 'WardenCostUsd', 'WardenTokens']);
});

test('with WardenLabels registered a labelled agent publishes its labels once, at start, with its epoch in the memo', async () => {
  const { warden, starts } = starting(ALL);
  const r = await warden.start({ agentId: 'lab', task: 't', labels: { team: 'payments', env: 'ci' } });
  expect(r).toMatchObject({ searchAttributes: true, labelsSearchable: true });
  expect(attrs(starts[0]!).WardenLabels).toEqual(['env=ci', 'team=payments']);
  expect(starts[0]!.memo).toMatchObject({ wardenEpoch: expect.any(String), wardenStartedAt: expect.any(Number) });
  await warden.start({ agentId: 'plain', task: 't' });
  expect(attrs(starts[1]!).WardenLabels).toBeUndefined();
  expect(starts[1]!.memo).toEqual({ wardenTask: 't' });
});
