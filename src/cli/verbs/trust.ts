/** `warden trust [DIR]`: trust a project's warden.yaml as it is now (src/cli/commands/trust.ts). */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('trust')
    .description("trust a project's warden.yaml as it is now: hooked sessions there use all of it (commands, endpoints, webhooks)")
    .argument('[dir]', 'the project directory (default: the current directory)')
    .option('--revoke', 'forget the trust of the project: its warden.yaml is untrusted again')
    .option('--list', 'list the trusted projects and whether each warden.yaml is still the one trusted')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      `
A warden.yaml in a project comes with the repository. Until you trust it, a session hooked there
(warden install) takes from it only thresholds that make supervision stricter than your own config
(supervisor.eval_interval, escalation_threshold, idle_after; budgets no higher than yours) and
ignores the rest: evaluator, verify, notify, protect, hooks, safety and the other supervisor keys.
It says once per session what it ignored. Trusted or not, a project's budgets never lift your
own config's: each is taken only where you have none or it is lower, and its labels (groups)
are never taken: only your own config and --label set them. Trusting records the
project's real path and the SHA-256 of its warden.yaml in $XDG_CONFIG_HOME/warden/trusted-projects
(mode 0600); a changed file is untrusted again.
Trusting prints what the file makes warden run and send: read it first.
Exit codes: 0 ok, 1 failure (no warden.yaml), 2 bad usage or an invalid warden.yaml.
Examples:
  warden trust                 # the current directory's warden.yaml
  warden trust ~/src/app --json
  warden trust --revoke ~/src/app
  warden trust --list`,
    )
    .action(
      lazy(
        () => import('../commands/trust.js'),
        (m) => m.trustAction,
      ),
    );
}
