/**
 * One instance per worker thread of a value that never changes once built: warden's zod schemas.
 *
 * Every cached workflow evaluates the module scope of the workflow code again (the SDK's reusable
 * V8 context keeps a module cache per workflow), so a schema declared at module scope is built once
 * per cached agent: ~460 KiB per agent for warden's schemas (`bench/agent-memory.ts`,
 * docs/operating/capacity.md). The worker preloads this module (workers/bundle.ts `PRELOAD_MODULES`), so it is
 * evaluated once per worker thread and `built` below is shared by every workflow of that thread:
 * the first workflow builds a schema, the others get the same instance.
 *
 * Why that is safe: a zod schema is a pure validator (parse results depend only on the input);
 * the caches zod fills on first use are deterministic. The SDK deep-freezes what a preloaded
 * module exports (here only the function), not the closure, so the schemas stay unfrozen — zod
 * writes to a schema on first use and would throw on a frozen one. Without the preload (tests that
 * bundle from source, Node itself) this is a plain per-module cache and behaves the same.
 *
 * Keys are `<file>:<name>`, unique across the code base (test/unit/shared.test.ts holds that).
 */
const built = new Map<string, unknown>();

export function shared<T>(key: string, build: () => T): T {
  if (built.has(key)) return built.get(key) as T;
  const value = build();
  built.set(key, value);
  return value;
}
