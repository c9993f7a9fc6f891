/** `warden report <agentId>`: report one turn (JSON on stdin or --file); prints the reply with whispers. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { withClient, globals } from '../context.js';
import { UsageError } from '../exit.js';
import { jsonTooDeep } from '../../json-depth.js';
import { print, printJson, readStdin } from '../output.js';
import { whisperLine } from '../../domain/agent/turn-input.js';

export const reportAction = async (agentId: string, o: { file?: string }, cmd: Command) => {
  let text: string;
  try {
    text = o.file ? readFileSync(o.file, 'utf8') : await readStdin();
  } catch (err) {
    throw new UsageError(`cannot read ${o.file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (!text.trim()) throw new UsageError('no turn given: pipe a Turn as JSON on stdin or use --file');
  let turn: unknown;
  const deep = jsonTooDeep(text, 'the turn');
  if (deep) throw new UsageError(deep);
  try {
    turn = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`the turn is not valid JSON: ${(err as Error).message}`);
  }
  const reply = await withClient(cmd, (c) => c.reportTurn(agentId, turn as never));
  if (globals(cmd).json) return printJson(reply);
  print(
    `${reply.duplicate ? 'duplicate turn (already recorded)' : 'turn recorded'}; state ${reply.state}${reply.paused ? ' (paused)' : ''}${reply.stop ? ' — STOP requested' : ''}${reply.interrupt ? ' — INTERRUPTED' : ''}${reply.verifying ? ' — done-claim being verified (the outcome comes with a later reply, or the agent ends done)' : ''}`,
  );
  for (const w of reply.whispers) print(whisperLine(w));
  if (reply.truncated.length) print(`truncated before sending (byte budget): ${reply.truncated.join(', ')}`);
};
