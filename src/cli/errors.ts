/**
 * Exit codes (DESIGN.md) and the usage error, with no dependencies: the command definitions throw
 * UsageError from their flag parsers before any command's implementation is loaded. exit.ts maps
 * every other error to its code.
 */
export const EXIT = { OK: 0, FAILURE: 1, USAGE: 2, NO_SUCH_AGENT: 3 } as const;

export class UsageError extends Error {
  override name = 'UsageError';
}
