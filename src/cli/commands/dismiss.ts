/** `warden dismiss <agentId> [--note TEXT]`: mark the agent's last flagged verdict a false alarm. */
import type { Command } from 'commander';
import { globals, withClient } from '../context.js';
import { print, printJson } from '../output.js';
import { SignalRefusedError } from './signals.js';

export const dismissAction = async (agentId: string, o: { note?: string }, cmd: Command) => {
  const payload = o.note ? { note: o.note } : {};
  const outcome = await withClient(cmd, (client) => client.dismiss(agentId, payload));
  if (outcome.kind === 'refused') throw new SignalRefusedError(`dismiss refused by agent-${agentId} (state ${outcome.state}): ${outcome.reason}`);
  if (globals(cmd).json) return printJson({ agentId, signal: 'dismiss', payload, sent: true, outcome });
  if (outcome.kind === 'applied') print(`dismiss applied to agent-${agentId}: ${outcome.detail} (now ${outcome.state})`);
  else if (outcome.kind === 'pending') print(`dismiss sent to agent-${agentId}; not applied yet after 3 s (state ${outcome.state})`);
  else print(`dismiss sent to agent-${agentId} (${outcome.reason})`);
};
