/** `warden start <agentId> --task TEXT`: start supervising an agent (config file, then flags). */
import { Option, type Command } from 'commander';
import { collect, duration, fraction, int, positiveDuration, positiveInt, positiveNumber, sampleOkFlag } from '../flags.js';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('start')
    .description('start supervising an agent (workflow agent-<agentId>)')
    .argument('<agentId>', 'the agent id: letters, digits, . _ -')
    .option('--task <text>', 'the original task the agent was given (required)')
    .option('--config <file>', 'YAML config file with supervisor defaults and channels (flags override it)')
    .addOption(
      new Option('--evaluator <kind>', 'who judges the window (tiered: the heuristic, and a model only where it pays)').choices([
        'heuristic',
        'codex',
        'claude',
        'command',
        'openai',
        'tiered',
      ]),
    )
    .addOption(
      new Option('--tier-model <kind>', 'for --evaluator tiered: the model asked where the heuristic flags, is unsure, or samples an OK').choices([
        'openai',
        'codex',
        'claude',
        'command',
      ]),
    )
    .option('--sample-ok <fraction>', 'for --evaluator tiered: fraction of OK windows also sent to the model (default 0.05)', sampleOkFlag)
    .option(
      '--evaluator-command <argv>',
      'for --evaluator command (or --tier-model command): the program and its args (prompt on stdin, verdict line on stdout)',
    )
    .option(
      '--openai-base-url <url>',
      'for --evaluator openai (or --tier-model openai): an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 (model: --model)',
    )
    .option(
      '--openai-api-key-env <name>',
      'for --evaluator openai (or --tier-model openai): env var on the worker holding the API key (omit for keyless servers)',
    )
    .option('--codex-config <key=value>', 'for --evaluator codex (or --tier-model codex): a `-c` override passed to codex exec (repeatable)', collect)
    .option('--model <name>', 'evaluator model (default gpt-5.4)')
    .option('--window-size <n>', 'turns of history to evaluate (default 20)', int('--window-size'))
    .option('--eval-interval <n>', 'evaluate every N turns (default 5)', int('--eval-interval'))
    .option('--escalation-threshold <n>', 'non-OK verdicts in a row before escalating (default 3, never below 3)', int('--escalation-threshold'))
    .addOption(
      new Option(
        '--last-resort <what>',
        'at the escalation threshold, first compact the agent (a fresh context holding a handoff) and escalate only if the problem persists; none escalates at once (default)',
      ).choices(['compact', 'none']),
    )
    .option('--idle-after <duration>', 'evaluate once after this much silence, e.g. 10m (0 disables)', duration('--idle-after'))
    .option('--eval-timeout <duration>', 'evaluation timeout (default and maximum 30s)', duration('--eval-timeout'))
    .option('--webhook <url>', 'POST escalations to this URL (repeatable)', collect)
    .option('--webhook-secret-env <name>', 'env var on the worker holding the HMAC secret for --webhook')
    .addOption(
      new Option('--webhook-format <format>', 'body of --webhook: json (the event) or slack ({text, blocks} for chat tools)').choices(['json', 'slack']),
    )
    .option('--irc <#channel>', "post this agent's alerts to an IRC channel through the `warden irc` bot")
    .addOption(new Option('--driver <kind>', 'driven mode: warden runs the agent itself').choices(['codex', 'claude', 'command', 'scripted']))
    .option('--driver-command <argv>', 'for --driver command: a program speaking the turn protocol (docs/using/driven.md)')
    .option('--script <file>', 'for --driver scripted: a JSON array of turns to play')
    .option('--driver-model <name>', 'for --driver codex|claude: the agent model')
    .option(
      '--driver-config <value>',
      'for --driver codex: a `-c key=value` override for codex exec; for --driver claude: an extra CLI argument (repeatable)',
      collect,
    )
    .option('--work-dir <dir>', "driven mode: the agent's working directory (default $WARDEN_HOME/agents/<id>/work)")
    .option('--max-turns <n>', 'driven mode: stop after this many turns (default 50)', int('--max-turns'))
    .option('--driver-base-url <url>', 'for --driver codex: an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (a codex model_providers entry)')
    .option('--driver-api-key-env <name>', 'for --driver codex with --driver-base-url: env var on the worker holding the API key (omit for keyless servers)')
    .option('--driver-wire-api <api>', 'for --driver codex with --driver-base-url: the wire API codex speaks to it (default responses)')
    .option('--no-credential-check', 'for --driver codex|claude: start even if no credentials are visible here (the worker has its own)')
    .option('--verify <command>', 'definition of done: run this (sh -c) when the agent claims it is done; exit 0 passes, else the agent is told and goes on')
    .option('--verify-cwd <dir>', "for --verify: where it runs (default a driven agent's work dir, else the worker's)")
    .option('--verify-timeout <duration>', 'for --verify: kill it after this long, e.g. 5m (default 10m, at most 1h)', duration('--verify-timeout'))
    .option(
      '--protect <glob>',
      "a path the agent must not delete or weaken, e.g. 'test/**' or '*.snap' (repeatable); checked in the working tree's git diff at a done-claim",
      collect,
    )
    .option('--budget-tokens <n>', 'pause the agent once it has used this many tokens (in + out; config budgets.tokens)', positiveInt('--budget-tokens'))
    .option(
      '--budget-cost-usd <usd>',
      'pause the agent once it has cost this many US dollars, e.g. 2.50 (config budgets.cost_usd)',
      positiveNumber('--budget-cost-usd', 1e12),
    )
    .option('--budget-turns <n>', 'pause the agent after this many turns, driven or reported (config budgets.turns)', positiveInt('--budget-turns'))
    .option(
      '--budget-wall-clock <time>',
      'pause the agent this long after it started, e.g. 45s, 90m, 2h (config budgets.wall_clock)',
      positiveDuration('--budget-wall-clock'),
    )
    .option(
      '--budget-warn-at <share>',
      'warn the agent and notify once when it has spent this share of a budget, e.g. 0.8 (default; config budgets.warn_at)',
      fraction('--budget-warn-at'),
    )
    .option('--label <key=value>', "a label, e.g. team=payments (repeatable; config labels:): the agent's spend counts in that group's budget", collect)
    .option('--workflow-id <id>', 'refuse to start unless the workflow id is this (it is always agent-<agentId>)')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
Examples:
  warden start fixer --task "make the failing build pass"
  warden start fixer --task "…" --verify "npm test" --verify-cwd ./repo --protect 'test/**' --protect '*.snap'
  warden start fixer --task "…" --driver codex --last-resort compact
  warden start fixer --task "…" --driver codex --budget-cost-usd 5 --budget-wall-clock 2h
  warden start fixer --task "…" --label team=payments --label env=ci
  warden start fixer --task "…" --config warden.yaml --webhook http://127.0.0.1:9000/hook
  warden start fixer --task "…" --irc '#alerts' --webhook https://hooks.slack.com/services/… --webhook-format slack
  warden start fixer --task "…" --evaluator command --evaluator-command "python3 judge.py"
  warden start bot --task "…" --driver command --driver-command "python3 my_agent.py" --work-dir ./repo
  warden start cx --task "…" --driver codex --driver-base-url http://127.0.0.1:8000/v1 --driver-api-key-env MY_KEY --driver-model my-model
  warden start fixer --task "…" --evaluator openai --openai-base-url http://127.0.0.1:11434/v1 --model llama3.2
  warden start fixer --task "…" --evaluator tiered --tier-model openai --openai-base-url http://127.0.0.1:11434/v1 --sample-ok 0.05`,
    )
    .action(
      lazy(
        () => import('../commands/start.js'),
        (m) => m.startAction,
      ),
    );
}
