/**
 * Connection settings from the standard Temporal environment: TEMPORAL_ADDRESS (default
 * 127.0.0.1:7233), TEMPORAL_NAMESPACE (default `default`), TEMPORAL_API_KEY, TLS and profile
 * settings — everything @temporalio/envconfig reads — plus WARDEN_TASK_QUEUE (default `warden`).
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';

export const DEFAULT_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_TASK_QUEUE = 'warden';

export interface ConnectionSettings {
  connectionOptions: NativeConnectionOptions & { address: string };
  namespace: string;
  taskQueue: string;
}

export function connectionSettings(overrides: { address?: string; namespace?: string; taskQueue?: string } = {}): ConnectionSettings {
  const cfg = loadClientConnectConfig();
  const address = overrides.address ?? cfg.connectionOptions.address ?? DEFAULT_ADDRESS;
  return {
    connectionOptions: { ...cfg.connectionOptions, address },
    namespace: overrides.namespace ?? cfg.namespace ?? 'default',
    taskQueue: overrides.taskQueue ?? process.env.WARDEN_TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
  };
}
