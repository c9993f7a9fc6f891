/** The definition of this command (options, help); the implementation is ../commands/install.ts, loaded when it runs. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  for (const verb of ['install', 'uninstall'] as const) {
    program
      .command(verb)
      .description(
        verb === 'install'
          ? "put warden's hooks into Claude Code's or Codex's settings: every session there is supervised from its first prompt, no `warden start` needed"
          : 'take out exactly the hooks `warden install` put in (the file as it was, when nobody changed it since)',
      )
      .argument('<agent>', 'claude or codex')
      .option('--project <dir>', "the project's settings (<dir>/.claude/settings.json, <dir>/.codex/hooks.json); the default, with the current directory")
      .option('--user', "the user's settings, for every project (~/.claude/settings.json, $CODEX_HOME/hooks.json)")
      .option('--dry-run', 'print the change as a diff and write nothing')
      .option('--json', 'print what was done as JSON')
      .addHelpText(
        'after',
        verb === 'install'
          ? `
The user's other hooks and settings stay byte for byte; a second run changes nothing; an older
warden hook is updated in place, keeping its own --timeout and a longer timeout. A handler that
runs warden's hook inside a larger command is the user's and left alone. A settings file that is
not valid JSON, or a symlink to nothing, is refused (exit 2) and left as it is. Connection flags given here (--address, --namespace, --task-queue) go into the
hook command; otherwise the hooks use the agent's environment (TEMPORAL_ADDRESS, …).
Examples:
  warden install claude --project ~/src/app --dry-run
  warden install codex --user
  warden uninstall claude --project ~/src/app`
          : `
When the file is exactly what install wrote, uninstall puts back the file as it was (removes it,
if install created it); otherwise it removes every warden hook and leaves the rest as it is now.`,
      )
      .action(
        lazy(
          () => import('../commands/install.js'),
          (m) => m.run(verb),
        ),
      );
  }
}
