/**
 * `warden irc`: the IRC bot. One process: an IRC connection (joins the channel, answers `!verb`
 * commands from allowlisted nicks) and a Temporal worker on the `warden-irc` task queue that posts
 * alerts. Config by flags, else WARDEN_IRC_* environment variables; validated, errors name the field.
 */
import type { Command } from 'commander';
import { describeZodError } from '../../domain/contract/schemas.js';
import { IrcBotConfigSchema, splitList, type IrcBotConfig } from '../../domain/notify/irc.js';
import { createLogger } from '../../logger.js';
import { startIrcBot } from '../../../workers/irc.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { printJson } from '../output.js';

interface IrcOptions {
  server?: string;
  port?: string;
  tls?: boolean;
  nick?: string;
  channel?: string;
  allow?: string;
  passwordEnv?: string;
}

/** Flags first, then WARDEN_IRC_SERVER, _PORT, _TLS, _NICK, _CHANNEL, _ALLOW, _PASSWORD_ENV. */
export function ircConfigFrom(o: IrcOptions, env: NodeJS.ProcessEnv = process.env): IrcBotConfig {
  const allow = o.allow ?? env.WARDEN_IRC_ALLOW;
  const raw = {
    server: o.server ?? env.WARDEN_IRC_SERVER,
    ...((o.port ?? env.WARDEN_IRC_PORT) !== undefined && { port: o.port ?? env.WARDEN_IRC_PORT }),
    ...((o.tls || env.WARDEN_IRC_TLS) && { tls: o.tls === true || /^(1|true|yes)$/i.test(env.WARDEN_IRC_TLS ?? '') }),
    ...((o.nick ?? env.WARDEN_IRC_NICK) !== undefined && { nick: o.nick ?? env.WARDEN_IRC_NICK }),
    channel: o.channel ?? env.WARDEN_IRC_CHANNEL,
    ...(allow !== undefined && { allow: splitList(allow) }),
    ...((o.passwordEnv ?? env.WARDEN_IRC_PASSWORD_ENV) !== undefined && { passwordEnv: o.passwordEnv ?? env.WARDEN_IRC_PASSWORD_ENV }),
  };
  if (raw.server === undefined) throw new UsageError('warden irc needs --server HOST (or WARDEN_IRC_SERVER)');
  if (raw.channel === undefined) throw new UsageError("warden irc needs --channel '#name' (or WARDEN_IRC_CHANNEL)");
  const r = IrcBotConfigSchema.safeParse(raw);
  if (!r.success) throw new UsageError(`invalid IRC bot config: ${describeZodError(r.error)}`);
  return r.data;
}

export const ircAction = async (o: IrcOptions, cmd: Command) => {
  const config = ircConfigFrom(o);
  const g = globals(cmd);
  const log = createLogger('warden-irc');
  const bot = await startIrcBot({ config, address: g.address, namespace: g.namespace, log });
  if (g.json) printJson({ ready: true, config });
  else
    process.stderr.write(
      `warden irc: connected to ${config.server}:${config.port} as ${config.nick} in ${config.channel}; posting alerts from task queue warden-irc\n`,
    );
  const stop = () => void bot.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await bot.done;
};
