/** `warden delegate <agentId> --spec FILE`: hand a structured task spec to a child agent. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { withClient, globals } from '../context.js';
import { UsageError } from '../exit.js';
import { jsonTooDeep } from '../../json-depth.js';
import { print, printJson, readStdin } from '../output.js';

export const delegateAction = async (agentId: string, o: { spec?: string }, cmd: Command) => {
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
};
