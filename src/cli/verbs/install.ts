/** The definition of this command (options, help); the implementation is ../commands/install.ts, loaded when it runs. */
import { type Command } from 'commander';
import { DEFAULT_ENDPOINT } from '../../hooks/endpoint-file.js';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  for (const verb of ['install', 'uninstall'] as const) {
    const c = program
      .command(verb)
      .description(
        verb === 'install'
          ? "put warden's hooks into Claude Code's or Codex's settings: every session there is supervised from its first prompt, no `warden start` needed"
          : 'take out exactly the hooks `warden install` put in (the file as it was, when nobody changed it since)',
      )
      .argument('<agent>', 'claude or codex')
      .option('--project <dir>', "the project's settings (<dir>/.claude/settings.json, <dir>/.codex/hooks.json); the default, with the current directory")
      .option('--user', "the user's settings, for every project (~/.claude/settings.json, $CODEX_HOME/hooks.json)")
      .option('--dry-run', 'print the change as a diff and write nothing');
    c.option(
      '--endpoint <host:port>',
      verb === 'install'
        ? `where warden's hook endpoint (\`warden serve\`) listens, on this machine; kept in $WARDEN_HOME/hook-endpoint.json (default ${DEFAULT_ENDPOINT})`
        : 'taken as install takes it, so that an install command line works as an uninstall one; the endpoint file is left as it is',
    );
    c.option('--json', 'print what was done as JSON')
      .addHelpText(
        'after',
        verb === 'install'
          ? `
Every hook hands its event to warden's hook endpoint, \`warden serve\` on loopback: each runs the
forwarder \`warden-hook claude|codex\`, except that in Claude Code's user settings (--user)
PreToolUse, PostToolUse and PostToolUseFailure are Claude Code's own http hooks, which carry the
endpoint's token (so never in a project's settings; the file is made 0600 when others could read
it). The first hook that finds the endpoint absent starts it (log: $WARDEN_HOME/serve.log); or run
\`warden serve\` yourself, or as a service. The token is never printed.
The user's other hooks and settings stay byte for byte; a second run changes nothing; an older
warden hook (also \`warden hook claude\`) is updated in place, keeping its own --timeout and a
longer timeout. A handler that runs warden's hook inside a larger command is the user's and left
alone. A settings file that is not valid JSON, or a symlink to nothing, is refused (exit 2) and
left as it is. Connection flags given here (--address, --namespace, --task-queue) go into the
hook command and the http hook's URL; otherwise the endpoint uses its own environment.
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
