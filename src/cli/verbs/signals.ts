/** `warden steer|interrupt|stop|pause|resume|abort|heartbeat <agentId>`: the definitions; sending is in ../commands/signals.ts. */
import type { Command } from 'commander';
import type { SignalName } from '../../domain/contract/schemas.js';
import { UsageError } from '../errors.js';

const VERBS: { name: SignalName; description: string; build: (o: Record<string, string | undefined>, rest: string[]) => Record<string, unknown> }[] = [
  {
    name: 'steer',
    description: 'queue a [steering] message for the agent, delivered at its next turn boundary',
    build: (o, rest) => {
      const text = o.text ?? rest.join(' ');
      if (!text.trim()) throw new UsageError('steer needs text: warden steer <agentId> "text" (or --text)');
      return { text };
    },
  },
  {
    name: 'interrupt',
    description: 'abandon the current turn, keep the session, wait for input (steer or resume continues)',
    build: (o) => ({ ...(o.reason && { reason: o.reason }) }),
  },
  {
    name: 'stop',
    description: 'graceful drain: let the current turn finish (up to --drain-timeout), then end',
    build: (o) => {
      const out: Record<string, unknown> = { ...(o.reason && { reason: o.reason }) };
      if (o.drainTimeout !== undefined) {
        const n = Number(o.drainTimeout);
        if (!Number.isInteger(n) || n < 0) throw new UsageError('--drain-timeout must be a whole number of milliseconds');
        out.drainTimeoutMs = n;
      }
      return out;
    },
  },
  {
    name: 'pause',
    description: 'freeze the agent (paused-by-user): no evaluations, reports answer paused',
    build: (o) => ({ ...(o.reason && { reason: o.reason }) }),
  },
  { name: 'resume', description: 'thaw a paused or escalated agent; resets the escalation ladder', build: (o) => ({ ...(o.note && { note: o.note }) }) },
  { name: 'abort', description: "end the agent's task now (state failed)", build: (o) => ({ ...(o.reason && { reason: o.reason }) }) },
  { name: 'heartbeat', description: 'tell warden the agent is alive', build: () => ({}) },
];

export function register(program: Command): void {
  for (const verb of VERBS) {
    const c = program.command(verb.name).description(verb.description).argument('<agentId>');
    if (verb.name === 'steer') c.argument('[text...]', 'the steering text').option('--text <text>', 'the steering text');
    if (verb.name === 'resume') c.option('--note <text>', 'a note for the record');
    else if (verb.name !== 'steer' && verb.name !== 'heartbeat') c.option('--reason <text>', 'why (recorded in history)');
    if (verb.name === 'stop') c.option('--drain-timeout <ms>', 'how long the current turn may take to finish (default 30000)');
    c.option('--json', 'print the result as JSON').action(async (agentId: string, ...args: unknown[]) => {
      const cmd = args.at(-1) as Command;
      const opts = args.at(-2) as Record<string, string | undefined>;
      const rest = verb.name === 'steer' ? ((args[0] as string[]) ?? []) : [];
      const payload = verb.build(opts, rest);
      const { send } = await import('../commands/signals.js');
      await send(verb.name, agentId, payload, cmd);
    });
  }
}
