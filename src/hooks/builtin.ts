/**
 * A built-in Node module without the cost of its ES module namespace. The hook forwarder
 * (forward.ts) is a process per hook event: an `import` of node:http costs it ~25 ms of CPU more than
 * the module itself, of node:fs, node:path and node:os together ~3 ms; `process.getBuiltinModule`
 * (Node ≥ 22.3) costs next to nothing. Older Node falls back to `import()`.
 */
export const builtin = async <T>(name: string): Promise<T> =>
  ((process as { getBuiltinModule?: (n: string) => unknown }).getBuiltinModule?.(name) as T | undefined) ?? ((await import(name)) as T);
