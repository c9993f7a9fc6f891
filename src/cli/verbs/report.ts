/** `warden report <agentId>`: report one turn (JSON on stdin or --file); prints the reply with whispers. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('report')
    .description('report one turn of an externally running agent; prints the whispers queued for it')
    .argument('<agentId>')
    .option('--file <path>', 'read the Turn JSON from a file instead of stdin')
    .option('--json', 'print the reply as JSON')
    .addHelpText(
      'after',
      `
Turn JSON: {"id"?: "t1", "text": "…", "toolCalls"?: [{"name","args"?,"result"?,"ok"?}], "tokensIn"?, "tokensOut"?, "costUsd"?, "at"?, "done"?: true}
"done": true claims the task is complete (checked first when the agent has --verify or --protect).
Example:
  echo '{"id":"t1","text":"running tests","toolCalls":[{"name":"shell","args":"npm test","ok":false}]}' | warden report fixer`,
    )
    .action(
      lazy(
        () => import('../commands/report.js'),
        (m) => m.reportAction,
      ),
    );
}
