/** The definition of this command (options, help); the implementation is ../commands/irc.ts, loaded when it runs. */
import { type Command } from 'commander';
import { lazy } from './lazy.js';

export function register(program: Command): void {
  program
    .command('irc')
    .description('run the IRC bot: posts alerts (task queue warden-irc) and takes !status/!resume/!abort/!steer/!pause from allowlisted nicks')
    .option('--server <host>', 'IRC server host (or WARDEN_IRC_SERVER)')
    .option('--port <n>', 'IRC server port, default 6667 (or WARDEN_IRC_PORT)')
    .option('--tls', 'connect with TLS (or WARDEN_IRC_TLS=1)')
    .option('--nick <nick>', 'the bot nick, default warden (or WARDEN_IRC_NICK)')
    .option('--channel <#name>', 'the channel to join and post alerts to by default (or WARDEN_IRC_CHANNEL)')
    .option('--allow <nicks>', 'comma-separated nicks or hostmasks (nick!user@host, * and ?) allowed to act (or WARDEN_IRC_ALLOW); others are refused')
    .option('--password-env <name>', 'env var holding the server password (or WARDEN_IRC_PASSWORD_ENV)')
    .option('--json', 'print the validated config as JSON when ready')
    .addHelpText(
      'after',
      `
One bot per deployment is enough: it alone polls the warden-irc task queue, so each alert is posted
once however many warden workers run (a second bot would share the queue rather than repeat
alerts, but would also answer every ! command in its channel: run one). Alerts raised while no bot runs wait on the queue (up to
24 h) and are posted when one comes back.

Nicks not on --allow get at most one reply a minute (all of them together too); a command beyond
that is neither answered nor run. The bot paces everything it sends, so a flood of commands cannot
get it dropped from the server.

Example:
  warden irc --server irc.example.net --channel '#alerts' --nick warden --allow 'alice,bob!*@ops.example.net'`,
    )
    .action(
      lazy(
        () => import('../commands/irc.js'),
        (m) => m.ircAction,
      ),
    );
}
