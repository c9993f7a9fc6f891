/**
 * A command's action that loads its implementation (src/cli/commands/) only when the command runs:
 * `warden --help` or one verb then costs only the definitions, not every verb's imports.
 */
// biome-ignore lint/suspicious/noExplicitAny: commander hands an action the command's own arguments
type Action = (...args: any[]) => unknown;

// biome-ignore lint/suspicious/noExplicitAny: as above
export function lazy<M>(load: () => Promise<M>, pick: (m: M) => Action): (...args: any[]) => Promise<void> {
  return async (...args: unknown[]) => {
    await pick(await load())(...args);
  };
}
