/** `warden mesh run|status|apply|cancel|resume`: many driven workers in parallel (meshWorkflow). */
import { Option, type Command } from 'commander';
import { collect } from '../flags.js';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  const mesh = program.command('mesh').description('run many driven workers in parallel, monitored by ticks, integrated patch-first');

  mesh
    .command('run')
    .description('start a mesh run over a task file; prints the run id')
    .requiredOption('--tasks <file>', 'task file: a numbered/bulleted list (per task Agent:, Skills:, Scope:, Done when:; see docs/using/mesh.md), or JSON')
    .requiredOption('--repo <dir>', 'the git repository (its HEAD is the base commit)')
    .option('--run-id <id>', 'run id (default: generated)')
    .option('--cap <n>', 'max concurrent workers (default 4)')
    .option('--tick <duration|off>', 'tick interval (default 60s)')
    .option('--ack-sla <duration>', 'ack SLA (default 30s)')
    .option('--checkpoint-interval <duration>', 'checkpoint interval (default 2m)')
    .option('--patch-draft-timeout <duration>', 'patch draft timeout (default 5m)')
    .option('--first-edit-target <duration>', 'restart an attempt whose patch draft shows no change by then (default 10m)')
    .option('--stall-threshold <n>', 'a stall is no progress for this many tick intervals of wall-clock time (default 2)')
    .option('--hedge-budget <n>', 'max concurrent attempts per task (default 1)')
    .option('--conflict-budget <n>', 'rebase roundtrips before asking a human (default 3)')
    .option('--time-budget <duration>', 'after this, best-effort partial results')
    .option('--continue-waiting', 'never take over at the patch draft timeout')
    .option('--driver <kind>', 'worker driver: command, codex or claude', 'codex')
    .option('--driver-command <argv>', "for --driver command: a program speaking warden's turn protocol (described in docs/using/driven.md), split on spaces")
    .option('--driver-model <name>', "for --driver codex|claude: the workers' model")
    .option(
      '--driver-config <value>',
      'for --driver codex: a `-c key=value` override for codex exec; for --driver claude: an extra CLI argument (repeatable)',
      collect,
    )
    .option('--driver-base-url <url>', 'for --driver codex: an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1')
    .option('--driver-api-key-env <name>', 'for --driver codex with --driver-base-url: env var on the worker holding the API key')
    .option('--driver-wire-api <api>', 'for --driver codex with --driver-base-url: the wire API codex speaks to it (default responses)')
    .option('--no-credential-check', 'for --driver codex|claude: start even if no credentials are visible here (the worker has its own)')
    .option('--max-turns <n>', 'turns per worker before it is stopped (default 200)')
    .option('--codex-path <path>', 'for --driver codex: the codex binary')
    .option('--claude-path <path>', 'for --driver claude: the claude binary')
    .addOption(new Option('--command <argv>', 'old name of --driver-command').hideHelp())
    // Hidden, and refused with a message that names --driver-model (commander alone would only say "unknown option").
    .addOption(new Option('--model <name>', "refused: the workers' model is --driver-model").hideHelp())
    .option('--validate <command>', 'gate V: a shell command run on the integrated result (e.g. "npm test")')
    .option('--webhook <url>', "POST the mesh's alerts (awaiting input, ready, failed) to this URL (repeatable)", collect)
    .option('--webhook-secret-env <name>', 'env var on the worker holding the HMAC secret for --webhook')
    .addOption(
      new Option('--webhook-format <format>', 'body of --webhook: json (the event) or slack ({text, blocks} for chat tools)').choices(['json', 'slack']),
    )
    .option('--irc <#channel>', "post the mesh's alerts to an IRC channel through the `warden irc` bot")
    .option('--keep-worktrees', "keep the attempts' worktrees and the mesh's branches after apply or cancel (default: removed)")
    .option('--json', 'print {"runId": …}')
    .allowExcessArguments(true)
    .action(
      lazy(
        () => import('../commands/mesh.js'),
        (m) => m.runAction,
      ),
    );

  mesh
    .command('status')
    .description('the live dashboard (one row per task: phase, attempt, gates, last checkpoint) and the monitoring log')
    .argument('<runId>')
    .option('--log <n>', 'monitoring log lines to show', '20')
    .option('--json', 'print the whole mesh state as JSON')
    .action(
      lazy(
        () => import('../commands/mesh.js'),
        (m) => m.statusAction,
      ),
    );

  mesh
    .command('apply')
    .description("merge the integration branch into the user's branch (refused while tasks are open), then remove the run's worktrees and branches")
    .argument('<runId>')
    .option('--json', 'print {"commit", "branch"}')
    .action(
      lazy(
        () => import('../commands/mesh.js'),
        (m) => m.applyAction,
      ),
    );

  mesh
    .command('cancel')
    .description("stop every worker and end the mesh (nothing is merged); the run's worktrees and branches are removed")
    .argument('<runId>')
    .option('--reason <text>', 'why')
    .option('--json', 'print {"ok": true}')
    .action(
      lazy(
        () => import('../commands/mesh.js'),
        (m) => m.cancelAction,
      ),
    );

  mesh
    .command('resume')
    .description('answer a mesh awaiting input (conflict budget spent): grant another conflict budget')
    .argument('<runId>')
    .option('--note <text>', 'a note for the monitoring log')
    .option('--json', 'print {"ok": true}')
    .action(
      lazy(
        () => import('../commands/mesh.js'),
        (m) => m.resumeAction,
      ),
    );
}
