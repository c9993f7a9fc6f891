/**
 * workers/zod-preload is shared by every workflow of a worker thread, and the SDK deep-freezes
 * shared modules after loading them (reusable-vm.ts `deepFreeze`: own properties of objects,
 * recursively; functions frozen themselves). This test freezes zod the same way after the preload
 * ran, then builds and uses warden's real schemas: any lazy write into zod's shared objects would
 * throw "object is not extensible" here as it would inside a workflow.
 */
import { expect, test } from 'vitest';
import '../../workers/zod-preload.js';
import * as zod from 'zod';

function deepFreeze(object: unknown, visited = new WeakSet<object>()): unknown {
  if (object == null || (typeof object !== 'object' && typeof object !== 'function')) return object;
  if (visited.has(object) || Object.isFrozen(object)) return object;
  visited.add(object);
  // An ESM namespace (Node's view of a module; in the webpack bundle it is a plain object) cannot
  // be frozen itself: freeze what it exports.
  const isNamespace = Object.prototype.toString.call(object) === '[object Module]';
  if (typeof object === 'object') {
    for (const name of [...Object.getOwnPropertyNames(object), ...Object.getOwnPropertySymbols(object)]) {
      const value = (object as Record<string | symbol, unknown>)[name];
      if (value && (typeof value === 'object' || typeof value === 'function')) {
        try {
          deepFreeze(value, visited);
        } catch {
          // as the SDK: some objects cannot be frozen
        }
      }
    }
  }
  return isNamespace ? object : Object.freeze(object);
}

test('after the preload, a deep-frozen zod still builds and runs warden schemas', async () => {
  deepFreeze(zod);
  deepFreeze((globalThis as Record<string, unknown>).__zod_globalConfig);
  deepFreeze((globalThis as Record<string, unknown>).__zod_globalRegistry);
  expect(Object.isFrozen((globalThis as Record<string, unknown>).__zod_globalConfig)).toBe(true);

  // A fresh evaluation of warden's schemas on top of the frozen zod, as each workflow does.
  const { AgentSpecSchema, TurnSchema, SIGNAL_SCHEMAS } = await import('../../src/domain/contract/schemas.js');
  const spec = AgentSpecSchema.parse({ agentId: 'frozen-1', task: 'fix the parser' });
  expect(spec.evaluator.kind).toBe('heuristic');
  expect(TurnSchema.safeParse({ text: 'read src/parser.ts', toolCalls: [{ name: 'read_file', ok: true }] }).success).toBe(true);
  const bad = TurnSchema.safeParse({ text: 5 });
  expect(bad.success).toBe(false);
  expect(bad.error?.issues[0]?.path).toEqual(['text']);
  expect(SIGNAL_SCHEMAS.steer.safeParse({ text: 'look at the tests' }).success).toBe(true);
  expect(SIGNAL_SCHEMAS.steer.safeParse({ text: 7 }).success).toBe(false);
  expect(AgentSpecSchema.safeParse({ agentId: 'bad id!', task: '' }).success).toBe(false);
});
