/**
 * The `scripted` driver: a deterministic agent that plays a script of turns, one per turn, each
 * taking `turnDelayMs` (heartbeating, and cut short by cancellation). Done after the last one.
 * For demos, the docs and tests.
 */
import type { DriverConfig } from '../../src/domain/contract/schemas.js';
import type { Driver } from './types.js';

export function scriptedDriver(config: Extract<DriverConfig, { kind: 'scripted' }>): Driver {
  return {
    name: 'scripted',
    async runTurn(req, ctx) {
      const index = Math.min(req.turnNumber, config.turns.length) - 1;
      const turn = { ...config.turns[index]!, id: `${req.agentId}-turn-${req.turnNumber}` };
      const session = { played: req.turnNumber };
      const interrupted = await sleepHeartbeating(config.turnDelayMs, ctx.signal, () => ctx.heartbeat({ text: '(working)' }));
      if (interrupted) return { turn: { id: turn.id, text: '(interrupted before the turn finished)' }, session, done: false, interrupted: true };
      const done = req.turnNumber >= config.turns.length;
      return { turn, session, done, ...(done && config.result !== undefined && { result: config.result }) };
    },
  };
}

/** Sleep `ms`, calling `beat` every second; true if `signal` aborted first. */
export async function sleepHeartbeating(ms: number, signal: AbortSignal, beat: () => void): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (signal.aborted) return true;
    beat();
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, Math.min(1000, end - Date.now()));
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }
  return signal.aborted;
}
