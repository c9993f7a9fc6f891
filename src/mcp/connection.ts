/**
 * The Temporal client of an MCP server, connected when the first tool needs it (an MCP client
 * starts `warden mcp` with its session, perhaps before Temporal is up) and kept for the rest. A
 * failed connection is not remembered: the next call tries again, and its tool error says why.
 */
import { WardenClient } from '../client/index.js';

export interface LazyClient {
  get(): Promise<WardenClient>;
  close(): Promise<void>;
}

export function lazyClient(connect: () => Promise<WardenClient>): LazyClient {
  let pending: Promise<WardenClient> | null = null;
  return {
    get() {
      pending ??= connect().catch((err: unknown) => {
        pending = null;
        throw err;
      });
      return pending;
    },
    async close() {
      const p = pending;
      pending = null;
      const c = await p?.catch(() => null);
      await c?.close();
    },
  };
}

/** A lazy client for the standard Temporal environment, with the CLI's global flags over it. */
export function connectLazily(overrides: { address?: string; namespace?: string; taskQueue?: string }): LazyClient {
  return lazyClient(() => WardenClient.connect(overrides));
}
