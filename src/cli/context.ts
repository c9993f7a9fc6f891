/** Shared CLI plumbing: global connection flags and a client opened per command. */
import type { Command } from 'commander';
import { WardenClient } from '../client/index.js';

export interface GlobalOptions {
  address?: string;
  namespace?: string;
  taskQueue?: string;
  json?: boolean;
}

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

export async function withClient<T>(cmd: Command, fn: (c: WardenClient) => Promise<T>): Promise<T> {
  const g = globals(cmd);
  const client = await WardenClient.connect({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
