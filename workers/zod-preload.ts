/**
 * Loaded once per worker thread through the bundle's `preloadModules` (workers/bundle.ts), so that
 * zod's module scope is shared by every cached workflow instead of being evaluated again for each
 * one (measured: about 1.8 MiB per cached agent; docs/operating/capacity.md).
 *
 * The SDK deep-freezes preloaded modules after loading them. zod initialises some global
 * configuration lazily (the default locale on the first schema, the memoizer on the first object or
 * array schema), which would then throw "object is not extensible" inside a workflow. So this
 * module runs that one-time initialisation here, before the freeze: a few schemas of the kinds
 * warden uses, parsed once with valid and once with invalid input. Nothing here holds per-workflow
 * state; warden's own schemas (src/domain/contract/schemas) stay per workflow, since zod schema instances
 * materialise methods on first use and must not be frozen.
 */
import { z } from 'zod';

const probe = z.object({
  a: z.array(z.string().trim().max(10)).max(2),
  b: z.number().int().nonnegative().optional(),
  c: z.enum(['x', 'y']).default('x'),
  d: z.union([z.literal(1), z.string()]),
  e: z.record(z.string(), z.unknown()),
  f: z.boolean().nullable(),
});
probe.safeParse({ a: ['x'], d: 1, e: {}, f: null });
probe.safeParse({ a: [1, 2, 3], b: -1.5, c: 'z', d: {}, e: 1, f: 'no' });
z.discriminatedUnion('kind', [z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b'), n: z.number() })]).safeParse({ kind: 'c' });

export const zodPreloaded = true;
