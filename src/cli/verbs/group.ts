/** `warden group budget|status <key=value>`: a budget on a label, shared by every agent that carries it. */
import { Option, type Command } from 'commander';
import { collect, positiveDuration, positiveInt, positiveNumber } from '../flags.js';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  const group = program.command('group').description('a budget shared by the agents of one label (a group: --label team=payments on start)');

  group
    .command('budget')
    .description("set the group's budget: reaching it pauses every running agent of the group and sends one alert")
    .argument('<key=value>', 'the group: a label, e.g. team=payments')
    .option('--cost-usd <usd>', 'cap on what the group may cost per period, in US dollars, e.g. 50', positiveNumber('--cost-usd', 1e12))
    .option('--tokens <n>', 'cap on the tokens (in + out) the group may use per period', positiveInt('--tokens'))
    .addOption(
      new Option('--period <period>', 'the period the spend is counted over (UTC); a new one resumes the agents the group paused')
        .choices(['day', 'month'])
        .default('day'),
    )
    .option('--webhook <url>', 'POST the alert to this URL when the cap is reached (repeatable; once per period)', collect)
    .option('--irc <#channel>', 'post the alert to an IRC channel through the `warden irc` bot')
    .option(
      '--poll-interval <time>',
      "how often the group's counter lists its agents, e.g. 30s (default; set when the counter starts)",
      positiveDuration('--poll-interval'),
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Every agent started with --label key=value (or labels: in your own warden.yaml) counts its spend
in that group. The group's counter reads the spend the agents publish (every 30 s at most, see
safety.group_report_interval) once per poll interval; when the group's spend in the period
reaches a cap, warden pauses every running agent of the group (status says why) and sends one
alert naming the group and its agents; an agent that joins later is paused at the next poll.
The cap holds within about one poll plus one publication interval (about a minute by default).
Spend before the budget was first set is not counted. A new period, or a raise above the
spend, resumes the agents the group paused, and only those.
Exit codes: 0 ok, 1 failure, 2 bad usage.
Examples:
  warden group budget team=payments --cost-usd 50 --period day
  warden group budget team=payments --tokens 20000000 --period month --webhook https://hooks.example/warden`,
    )
    .action(
      lazy(
        () => import('../commands/group.js'),
        (m) => m.groupBudgetAction,
      ),
    );

  group
    .command('status')
    .description("show the group's budget, the period's spend (supervision's apart), its agents and the ones it paused")
    .argument('<key=value>', 'the group: a label, e.g. team=payments')
    .option('--json', 'print the status as JSON')
    .addHelpText(
      'after',
      `
Supervision is what the agents' evaluators' own model calls cost (WardenEvaluatorCostUsd): shown
beside the spend, never counted against the cap.
Exit codes: 0 ok, 1 failure, 2 bad usage, 3 no such group (no budget set).`,
    )
    .action(
      lazy(
        () => import('../commands/group.js'),
        (m) => m.groupStatusAction,
      ),
    );
}
