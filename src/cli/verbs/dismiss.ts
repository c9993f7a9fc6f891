/** `warden dismiss <agentId> [--note TEXT]`: mark the agent's last flagged verdict a false alarm. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('dismiss')
    .description(
      "mark the agent's last flagged verdict a false alarm: the escalation step goes back to 0, the same finding no longer whispers or escalates, and an agent paused by that escalation runs again",
    )
    .argument('<agentId>')
    .option('--note <text>', 'why it was a false alarm (kept with the decision; `warden cases export` writes it)')
    .option('--json', 'print the result as JSON')
    .action(
      lazy(
        () => import('../commands/dismiss.js'),
        (m) => m.dismissAction,
      ),
    );
}
