/** `warden delegate <agentId> --spec FILE`: hand a structured task spec to a child agent. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('delegate')
    .description("delegate a task to a child agent (a child workflow; queued while it waits for its parent's slot)")
    .argument('<agentId>', 'the parent agent')
    .option('--spec <file>', 'the task spec as JSON (default: stdin)')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Task spec: {"childId", "objective", "resultSchema": <JSON Schema>, "definitionOfDone", "driver": {...},
            "toolAllowlist"?: [..], "budgets"?: {tokens?, costUsd?, turns?, wallClockMs?}, "driven"?: {...},
            "verify"?: {command, cwd?, timeoutMs?}}
The child runs driven, as agent <agentId>.<childId>. Its result must validate against resultSchema;
with "verify", it is accepted only once that command passes (a failed check keeps the child working).`,
    )
    .action(
      lazy(
        () => import('../commands/delegate.js'),
        (m) => m.delegateAction,
      ),
    );
}
