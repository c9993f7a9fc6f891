/** `warden steer|interrupt|stop|pause|resume|abort|heartbeat <agentId>`: send one signal. */
import type { Command } from 'commander';
import type { SignalName } from '../../domain/contract/schemas.js';
import { withClient, globals } from '../context.js';
import { CONTROL_VERBS, type ControlVerb } from '../../domain/contract/control.js';
import { print, printJson } from '../output.js';

/** The workflow refused the signal (the state table or the payload): exit 1 with its reason. */
export class SignalRefusedError extends Error {
  override name = 'SignalRefusedError';
}

/** Send `verb` with its payload (built and checked by the definition in ../verbs/signals.ts); print what happened. */
export async function send(verb: SignalName, agentId: string, payload: Record<string, unknown>, cmd: Command): Promise<void> {
  const json = globals(cmd).json;
  if (!(CONTROL_VERBS as readonly string[]).includes(verb)) {
    await withClient(cmd, (client) => client.signal(agentId, verb, payload as never));
    if (json) return printJson({ agentId, signal: verb, payload, sent: true });
    return print(`${verb} sent to agent-${agentId}`);
  }
  // Control verbs: send, then wait (up to 3 s) to see the workflow apply or refuse it.
  const outcome = await withClient(cmd, (client) => client.control(agentId, verb as ControlVerb, payload as never));
  if (outcome.kind === 'refused') {
    // Exit 1; with --json the error object ({error, exitCode}) is what stdout gets.
    throw new SignalRefusedError(`${verb} refused by agent-${agentId} (state ${outcome.state}): ${outcome.reason}`);
  }
  if (json) return printJson({ agentId, signal: verb, payload, sent: true, outcome });
  if (outcome.kind === 'applied') print(`${verb} applied to agent-${agentId}: ${outcome.detail} (now ${outcome.state})`);
  else if (outcome.kind === 'pending') print(`${verb} sent to agent-${agentId}; not applied yet after 3 s (state ${outcome.state})`);
  else print(`${verb} sent to agent-${agentId} (${outcome.reason})`);
}
