/** Driver registry: one file per driver, chosen by `AgentSpec.driver.kind`. */
import type { DriverConfig } from '../../src/domain/contract/schemas.js';
import { codexDriver } from './codex.js';
import { claudeDriver } from './claude.js';
import { commandDriver } from './command.js';
import { scriptedDriver } from './scripted.js';
import type { Driver } from './types.js';

export async function driverFor(config: DriverConfig): Promise<Driver> {
  switch (config.kind) {
    case 'scripted':
      return scriptedDriver(config);
    case 'command':
      return commandDriver(config);
    case 'codex':
      return codexDriver(config);
    case 'claude':
      return claudeDriver(config);
  }
}
export type { Driver, DriverContext, TurnRequest } from './types.js';
