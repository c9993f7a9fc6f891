/** Exit codes (DESIGN.md): 0 ok, 1 failure, 2 bad usage or invalid input, 3 no such agent. */
import { AgentAlreadyRunningError, AgentNotFoundError, InvalidInputError } from '../client/index.js';
import { ConfigError } from '../config/file.js';
import { EXIT, UsageError } from './errors.js';

export { EXIT, UsageError };

export function exitCodeFor(err: unknown): number {
  // A group without a counter (src/client/groups.ts), by name: this module stays light to import.
  if (err instanceof AgentNotFoundError || (err instanceof Error && err.name === 'GroupNotFoundError')) return EXIT.NO_SUCH_AGENT;
  if (err instanceof UsageError || err instanceof InvalidInputError || err instanceof ConfigError) return EXIT.USAGE;
  if (err instanceof AgentAlreadyRunningError) return EXIT.FAILURE;
  return EXIT.FAILURE;
}
