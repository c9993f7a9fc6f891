/** `warden delegate <agentId> --spec FILE`: hand a structured task spec to a child agent. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { withClient, globals } from '../context.js';
import { UsageError } from '../exit.js';
import { jsonTooDeep } from '../../json-depth.js';
import { print, printJson, readStdin } from '../output.js';

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
    .action(async (agentId: string, o: { spec?: string }, cmd: Command) => {
      let text: string;
      try {
        text = o.spec ? readFileSync(o.spec, 'utf8') : await readStdin();
      } catch (err) {
        throw new UsageError(`cannot read ${o.spec}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      let spec: unknown;
      const deep = jsonTooDeep(text, 'the task spec');
      if (deep) throw new UsageError(deep);
      try {
        spec = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`the task spec is not valid JSON: ${(err as Error).message}`);
      }
      const r = await withClient(cmd, (c) => c.delegate(agentId, spec as never));
      if (globals(cmd).json) return printJson(r);
      print(`delegated to ${r.childAgentId} (workflow ${r.workflowId})${r.queued ? ', queued for a slot' : ''}`);
    });
}
