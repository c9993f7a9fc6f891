/** Temporal's errors named (src/client/errors.ts), read from the shapes the SDK throws. */
import type { Client } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { backoffMs, causeChain, describeTemporalError } from '../../src/client/errors.js';
import { REPORT_RETRY, TemporalRefusedError, WardenClient } from '../../src/client/index.js';

/** What the SDK throws for a refused update: ServiceError('Workflow Update failed', { cause: <gRPC error> }). */
function serviceError(code: number, details: string, outer = 'Workflow Update failed') {
  const grpc = Object.assign(new Error(`${code} ${['', '', '', 'INVALID_ARGUMENT', '', '', '', '', 'RESOURCE_EXHAUSTED'][code] ?? 'X'}: ${details}`), {
    code,
    details,
  });
  class ServiceError extends Error {}
  return new ServiceError(outer, { cause: grpc });
}

describe('describeTemporalError', () => {
  test('the in-flight update limit: named, retryable', () => {
    const d = describeTemporalError(serviceError(8, 'limit on number of concurrent in-flight updates has been reached (10)'));
    expect(d).toMatchObject({ kind: 'in-flight-update-limit', retryable: true, code: 8 });
    expect(d.message).toBe(
      'Workflow Update failed: too many updates in flight for this workflow at once (Temporal said RESOURCE_EXHAUSTED: limit on number of concurrent in-flight updates has been reached (10)); send fewer at a time, or retry',
    );
  });

  test('a message over the gRPC limit: named, not retryable', () => {
    const d = describeTemporalError(serviceError(8, 'grpc: received message larger than max (5243011 vs. 4194304)'));
    expect(d).toMatchObject({ kind: 'message-too-large', retryable: false });
    expect(d.message).toMatch(/larger than the Temporal server accepts .*5243011 vs\. 4194304/);
  });

  test('a payload over the blob size limit: named, not retryable', () => {
    const d = describeTemporalError(serviceError(3, 'Blob data size exceeds limit.'));
    expect(d).toMatchObject({ kind: 'payload-too-large', retryable: false, code: 3 });
    expect(d.message).toMatch(/over the Temporal server's size limit/);
  });

  test('another RESOURCE_EXHAUSTED (a rate limit) is retryable; UNAVAILABLE is not (the SDK already retried)', () => {
    expect(describeTemporalError(serviceError(8, 'namespace rate limit exceeded'))).toMatchObject({ kind: 'resource-exhausted', retryable: true });
    const down = describeTemporalError(serviceError(14, 'No connection established'));
    expect(down).toMatchObject({ kind: 'unavailable', retryable: false });
    expect(down.message).toMatch(/UNAVAILABLE: No connection established/);
  });

  test("the workflow's own refusal is its failure's message", () => {
    class WorkflowUpdateFailedError extends Error {}
    class ApplicationFailure extends Error {}
    const err = new WorkflowUpdateFailedError('Workflow Update failed', { cause: new ApplicationFailure('invalid turn: text: expected string') });
    expect(describeTemporalError(err)).toMatchObject({ kind: 'rejected', retryable: false, message: 'invalid turn: text: expected string' });
  });

  test('anything else keeps its message, with the innermost cause appended', () => {
    expect(describeTemporalError(new Error('boom'))).toMatchObject({ kind: 'other', retryable: false, message: 'boom' });
    expect(describeTemporalError(new Error('outer', { cause: new Error('inner') })).message).toBe('outer: inner');
    expect(describeTemporalError('text')).toMatchObject({ kind: 'other', message: 'text' });
  });

  test('a cyclic cause chain ends', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    a.cause = a;
    expect(causeChain(a)).toHaveLength(1);
  });
});

describe('backoffMs', () => {
  const opts = { baseMs: 200, capMs: 5_000 };
  test('doubles from the base, capped, with jitter between half and all of it', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((a) => backoffMs(a, opts, () => 1))).toEqual([200, 400, 800, 1600, 3200, 5000, 5000]);
    expect([1, 2, 10].map((a) => backoffMs(a, opts, () => 0))).toEqual([100, 200, 2500]);
  });
});

describe('reportTurn retries what can pass, by turn id, and names what cannot', () => {
  // A stand-in for the SDK's workflow handle: the retry loop is pure logic over its answers.
  function fakeClient(answers: (() => unknown)[]) {
    const calls: { updateId: string; id: string }[] = [];
    const handle = {
      async executeUpdate(_name: string, o: { args: [{ id: string }]; updateId: string }) {
        calls.push({ updateId: o.updateId, id: o.args[0].id });
        const next = answers.shift();
        if (!next) throw new Error('no more answers');
        return next();
      },
    };
    const client = { workflow: { getHandle: () => handle } } as unknown as Client;
    return { warden: new WardenClient(client, 'q'), calls };
  }
  const inFlight = () => {
    throw serviceError(8, 'limit on number of concurrent in-flight updates has been reached (10)');
  };
  const ok = () => ({ accepted: true, duplicate: false, whispers: [], paused: false, stop: false, interrupt: false, state: 'running' });
  const saved = { ...REPORT_RETRY };
  beforeEach(() => Object.assign(REPORT_RETRY, { baseMs: 1, capMs: 2 }));
  afterEach(() => Object.assign(REPORT_RETRY, saved));

  test('the in-flight limit: retried until it passes, every time with the same update id', async () => {
    const { warden, calls } = fakeClient([inFlight, inFlight, inFlight, ok]);
    const reply = await warden.reportTurn('a', { id: 't-1', text: 'x' });
    expect(reply.accepted).toBe(true);
    expect(calls).toHaveLength(4);
    expect(new Set(calls.map((c) => c.updateId))).toEqual(new Set(['turn-t-1']));
  });

  test('a turn without an id gets one before the first attempt and keeps it on every retry', async () => {
    const { warden, calls } = fakeClient([inFlight, inFlight, ok]);
    await warden.reportTurn('a', { text: 'x' });
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.id)).size).toBe(1);
    expect(calls[0]!.updateId).toBe(`turn-${calls[0]!.id}`);
  });

  test('a refusal that cannot pass is not retried, and its error names the cause', async () => {
    const tooBig = () => {
      throw serviceError(8, 'grpc: received message larger than max (5243011 vs. 4194304)');
    };
    const { warden, calls } = fakeClient([tooBig, ok]);
    const err = await warden.reportTurn('a', { id: 't-2', text: 'x' }).catch((e: unknown) => e);
    expect(calls).toHaveLength(1);
    expect(err).toBeInstanceOf(TemporalRefusedError);
    expect((err as TemporalRefusedError).kind).toBe('message-too-large');
    expect((err as Error).message).toMatch(
      /^Workflow Update failed: the request is larger than the Temporal server accepts \(Temporal said RESOURCE_EXHAUSTED: grpc: received message larger than max/,
    );
  });

  test('retries stop at the attempt cap, with the cause named', async () => {
    Object.assign(REPORT_RETRY, { maxAttempts: 3 });
    const { warden, calls } = fakeClient([inFlight, inFlight, inFlight, ok]);
    const err = await warden.reportTurn('a', { id: 't-3', text: 'x' }).catch((e: unknown) => e);
    expect(calls).toHaveLength(3);
    expect((err as Error).message).toMatch(/too many updates in flight for this workflow at once .*in-flight updates has been reached \(10\)/);
  });

  test('one client keeps at most its cap of updates in flight on one agent', async () => {
    let active = 0;
    let peak = 0;
    const handle = {
      async executeUpdate() {
        peak = Math.max(peak, ++active);
        await new Promise((r) => setTimeout(r, 2));
        active--;
        return ok();
      },
    };
    const warden = new WardenClient({ workflow: { getHandle: () => handle } } as unknown as Client, 'q', null, 3);
    await Promise.all(Array.from({ length: 30 }, (_, i) => warden.reportTurn('a', { id: `c-${i}`, text: 'x' })));
    expect(peak).toBe(3);
  });
});
