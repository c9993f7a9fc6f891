/**
 * The IRC bot (`warden irc`): one process holding one IRC connection and one Temporal worker on
 * the `warden-irc` task queue that serves `postIrc`. Alerts are posted by exactly one activity
 * execution of one notify workflow, so each appears once however many warden workers run; while
 * the bot is away, postIrc tasks wait on the queue and are posted when it is back.
 *
 * Humans answer in the channel (`!status`, `!resume`, `!abort`, `!steer`, `!pause`, `!dismiss`); the bot acts
 * through WardenClient, for allowlisted nicks or hostmasks only.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { Client as IrcClient, type IrcMessageEvent, type IrcJoinEvent } from 'irc-framework';
import type { Logger } from 'pino';
import { makePostIrc, type IrcPoster } from '../activities/irc.js';
import { AgentNotFoundError, InvalidInputError, WardenClient } from '../src/client/index.js';
import { connectionSettings } from '../src/config/connection.js';
import {
  ACTING_VERBS,
  IRC_USAGE,
  REPLY_LIMITS,
  ReplyLimiter,
  isAllowed,
  parseIrcCommand,
  refusal,
  statusLine,
  type IrcBotConfig,
  type IrcCommand,
} from '../src/domain/notify/irc.js';
import { IRC_LINE_MAX, IRC_TASK_QUEUE, oneLine, splitIrcLine } from '../src/domain/notify/notify.js';
import { transition, type AgentEvent } from '../src/domain/contract/states.js';
import { installPinoRuntime } from './main.js';

export interface IrcBotOptions {
  config: IrcBotConfig;
  /** Temporal connection (defaults from the environment, as everywhere). */
  address?: string;
  namespace?: string;
  /** The task queue the bot's worker polls (default warden-irc). */
  ircTaskQueue?: string;
  log: Logger;
}

export interface IrcBotHandle {
  /** Resolves when the worker stops (after stop() or a fatal error). */
  done: Promise<void>;
  stop(): Promise<void>;
}

const isChannel = (target: string) => /^[#&+!]/.test(target);
const RECONNECT_MAX_MS = 30_000;
/**
 * Lines out, paced: a burst of OUT_BURST, then one every OUT_INTERVAL_MS. IRC servers read a
 * client's lines slowly once it sends many (ngircd: about three a second) and drop a client whose
 * backlog grows; a paced bot's PONGs and alerts never wait behind its own backlog.
 */
const OUT_BURST = 5;
const OUT_INTERVAL_MS = 500;
type OutLine = { kind: 'say'; target: string; line: string } | { kind: 'ping'; token: string };

/** The IRC side: connect, stay connected, join channels, and tell when a channel is ready. */
class IrcLink implements IrcPoster {
  readonly client: IrcClient;
  private registered = false;
  private readonly joined = new Set<string>();
  private readonly wanted = new Set<string>();
  private waiters: (() => void)[] = [];
  private stopped = false;
  private attempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pingSeq = 0;
  private connections = 0;
  private readonly out: OutLine[] = [];
  private outTokens = OUT_BURST;
  private outAt = Date.now();
  private outTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly cfg: IrcBotConfig,
    private readonly log: Logger,
  ) {
    this.wanted.add(cfg.channel.toLowerCase());
    this.client = new IrcClient();
    const c = this.client;
    c.on('registered', () => {
      this.registered = true;
      this.connections += 1;
      this.attempts = 0;
      this.log.info({ server: cfg.server, port: cfg.port, nick: c.user.nick }, 'IRC registered');
      for (const ch of this.wanted) c.join(ch);
      this.wake();
    });
    c.on('join', (e: IrcJoinEvent) => {
      if (e.nick.toLowerCase() !== c.user.nick.toLowerCase()) return;
      this.joined.add(e.channel.toLowerCase());
      this.log.info({ channel: e.channel }, 'IRC joined');
      this.wake();
    });
    c.on('kick', (e: { kicked: string; channel: string }) => {
      if (e.kicked.toLowerCase() !== c.user.nick.toLowerCase()) return;
      this.joined.delete(e.channel.toLowerCase());
      setTimeout(() => this.registered && c.join(e.channel), 2_000).unref();
    });
    c.on('nick in use', () => {
      if (this.registered) return;
      // A previous connection of ours may linger until the server notices it is gone: take a variant.
      const next = `${c.user.nick}_`.slice(0, 30);
      this.log.warn({ nick: c.user.nick, next }, 'IRC nick in use');
      c.changeNick(next);
      c.user.nick = next;
    });
    c.on('socket close', (err: unknown) => {
      if (this.registered) this.log.warn({ err: err ? String(err) : undefined }, 'IRC connection lost');
      this.registered = false;
      this.joined.clear();
      // Lines not yet written belong to the lost connection: postIrc sends an alert again on the next one.
      this.out.length = 0;
    });
    c.on('close', () => this.scheduleReconnect());
    c.on('socket error', (err: unknown) => this.log.debug({ err: String(err) }, 'IRC socket error'));
  }

  connect(): void {
    this.client.connect({
      host: this.cfg.server,
      port: this.cfg.port,
      tls: this.cfg.tls,
      nick: this.cfg.nick,
      username: 'warden',
      gecos: 'warden supervisor bot',
      ...(this.cfg.passwordEnv && process.env[this.cfg.passwordEnv] ? { password: process.env[this.cfg.passwordEnv] } : {}),
      // Reconnects are ours (scheduleReconnect): irc-framework's give up after a few tries.
      auto_reconnect: false,
      ping_interval: 30,
      ping_timeout: 90,
      version: null,
    });
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.attempts += 1;
    const wait = Math.min(RECONNECT_MAX_MS, 500 * 2 ** Math.min(this.attempts, 6));
    this.log.info({ attempt: this.attempts, waitMs: wait }, 'IRC reconnecting');
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.stopped) this.connect();
    }, wait);
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private until(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (pred()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`${what} (waited ${timeoutMs} ms)`));
      }, timeoutMs);
      const check = () => {
        if (pred()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  isReady(channel = this.cfg.channel): boolean {
    return this.registered && this.joined.has(channel.toLowerCase());
  }

  async ready(channel: string, timeoutMs: number): Promise<void> {
    const ch = channel.toLowerCase();
    if (!this.wanted.has(ch)) {
      this.wanted.add(ch);
      if (this.registered) this.client.join(channel);
    }
    await this.until(() => this.registered, timeoutMs, `not connected to ${this.cfg.server}:${this.cfg.port}`);
    await this.until(() => this.isReady(ch), timeoutMs, `not in ${channel}`);
  }

  connection(): number {
    return this.connections;
  }

  /** Queue one line (already at most IRC_LINE_MAX bytes: irc-framework does not split it). */
  say(target: string, line: string): void {
    this.out.push({ kind: 'say', target, line });
    this.flush();
  }

  private flush(): void {
    const now = Date.now();
    this.outTokens = Math.min(OUT_BURST, this.outTokens + (now - this.outAt) / OUT_INTERVAL_MS);
    this.outAt = now;
    while (this.out.length && this.outTokens >= 1) {
      const next = this.out.shift()!;
      this.outTokens -= 1;
      if (next.kind === 'say') this.client.say(next.target, next.line);
      else this.client.ping(next.token);
    }
    if (this.out.length && !this.outTimer) {
      this.outTimer = setTimeout(() => {
        this.outTimer = null;
        this.flush();
      }, OUT_INTERVAL_MS);
    }
  }

  roundTrip(timeoutMs: number): Promise<void> {
    const token = `warden-${process.pid}-${++this.pingSeq}`;
    return new Promise((resolve, reject) => {
      const onPong = (e: { message?: string }) => {
        if (e.message !== token) return;
        clearTimeout(timer);
        this.client.removeListener('pong', onPong);
        resolve();
      };
      const timer = setTimeout(() => {
        this.client.removeListener('pong', onPong);
        reject(new Error(`no PONG within ${timeoutMs} ms`));
      }, timeoutMs);
      this.client.on('pong', onPong);
      // Behind the queued lines: the PONG says the server has read them.
      this.out.push({ kind: 'ping', token });
      this.flush();
    });
  }

  stop(message: string): void {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.outTimer) clearTimeout(this.outTimer);
    if (this.registered) this.client.quit(message);
    else this.client.connection?.end?.();
  }
}

/** Run one channel command for `nick` and return the reply line. */
export async function runIrcCommand(warden: WardenClient, nick: string, cmd: IrcCommand): Promise<string> {
  const id = cmd.agentId;
  try {
    if (cmd.verb === 'status') return `${nick}: ${statusLine(await warden.status(id))}`;
    if (cmd.verb === 'steer') {
      await warden.signal(id, 'steer', { text: cmd.text });
      return `${nick}: steering queued for ${id}; it reaches the agent at its next turn.`;
    }
    if (cmd.verb === 'dismiss') {
      // The workflow decides (nothing flagged, already dismissed, ended): report what it did.
      const note = cmd.note ? `${cmd.note} (${nick} on IRC)` : `dismissed by ${nick} on IRC`;
      const out = await warden.dismiss(id, { note });
      if (out.kind === 'applied') return `${nick}: ${id}: ${out.detail}; it is now ${out.state}.`;
      if (out.kind === 'refused') return `${nick}: cannot dismiss ${id}: ${out.reason}`;
      return `${nick}: dismiss sent to ${id}${out.kind === 'pending' ? `; it is still ${out.state}` : ''}.`;
    }
    // resume, pause, abort: refuse what the state table refuses, with its reason, before sending.
    const before = await warden.status(id);
    const t = transition(before.state, cmd.verb as AgentEvent);
    if (!t.ok) return `${nick}: cannot ${cmd.verb} ${id}: ${t.reason}`;
    // The record says who acted: `<note> (alice on IRC)`.
    const payload =
      cmd.verb === 'resume'
        ? { note: cmd.note ? `${cmd.note} (${nick} on IRC)` : `resumed by ${nick} on IRC` }
        : { reason: cmd.reason ? `${cmd.reason} (${nick} on IRC)` : `${cmd.verb} by ${nick} on IRC` };
    await warden.signal(id, cmd.verb, payload as never);
    // Report the state the agent reached (an abort ends the run, so status may no longer answer).
    const deadline = Date.now() + 5_000;
    for (;;) {
      const after = await warden.status(id).catch(() => null);
      if (!after || after.state !== before.state || Date.now() > deadline) {
        return `${nick}: ${cmd.verb} sent to ${id}${after ? `; it is now ${after.state}` : ''}.`;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    if (err instanceof AgentNotFoundError) return `${nick}: no such agent: ${id}`;
    if (err instanceof InvalidInputError) return `${nick}: ${err.message}`;
    return `${nick}: ${cmd.verb} ${id} failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export async function startIrcBot(opts: IrcBotOptions): Promise<IrcBotHandle> {
  const { config: cfg, log } = opts;
  installPinoRuntime(log);
  const warden = await WardenClient.connect({ address: opts.address, namespace: opts.namespace });
  const link = new IrcLink(cfg, log);

  const limiter = new ReplyLimiter(REPLY_LIMITS, Date.now());
  let dropped = 0;
  link.client.on('privmsg', (e: IrcMessageEvent) => {
    const parsed = parseIrcCommand(e.message);
    if (parsed.kind === 'none') return;
    const to = isChannel(e.target) ? e.target : e.nick;
    const who = { nick: e.nick, ident: e.ident, hostname: e.hostname };
    const member = isAllowed(cfg.allow, who);
    // One reply per command, counted before anything runs: a stranger's flood gets one line a
    // minute, and its commands beyond that are not run. An allowlisted nick's command always runs.
    const mayReply = limiter.take(e.nick, member, Date.now());
    if (!mayReply) {
      dropped += 1;
      // Logged once per 100 dropped, so that a flood does not flood the log either.
      if (dropped % 100 === 1) log.warn({ ...who, allowlisted: member, dropped }, 'IRC: too many commands, not answering');
      if (!member) return;
    }
    // Lines of at most IRC_LINE_MAX bytes, never split further by the IRC library: one line for a
    // stranger, at most two for an allowlisted nick.
    const reply = (line: string) => {
      if (!mayReply) return;
      for (const l of splitIrcLine(oneLine(line, 600), IRC_LINE_MAX, member ? 2 : 1)) link.say(to, l);
    };
    if (parsed.kind === 'help') return reply(`${e.nick}: ${IRC_USAGE}`);
    if (parsed.kind === 'error') return reply(`${e.nick}: ${parsed.message}`);
    const cmd = parsed.command;
    if (ACTING_VERBS.includes(cmd.verb) && !member) {
      log.warn({ ...who, verb: cmd.verb, agentId: cmd.agentId }, 'IRC command refused: not on the allowlist');
      return reply(refusal(e.nick, cmd.verb));
    }
    log.info({ ...who, verb: cmd.verb, agentId: cmd.agentId }, 'IRC command');
    void runIrcCommand(warden, e.nick, cmd).then(reply);
  });

  link.connect();
  // Poll for alerts only once the bot can post them: pending tasks stay on the queue meanwhile.
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (link.isReady()) {
        clearInterval(timer);
        resolve();
      }
    }, 100);
  });

  const settings = connectionSettings({ address: opts.address, namespace: opts.namespace });
  const connection = await NativeConnection.connect(settings.connectionOptions);
  const taskQueue = opts.ircTaskQueue ?? IRC_TASK_QUEUE;
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue,
    activities: { postIrc: makePostIrc(link, log) },
    // Posts go out one at a time, in order, on one connection.
    maxConcurrentActivityTaskExecutions: 1,
    shutdownGraceTime: '5s',
  });
  log.info({ taskQueue, channel: cfg.channel, server: `${cfg.server}:${cfg.port}`, nick: link.client.user.nick, allow: cfg.allow }, 'IRC bot ready');
  const done = (async () => {
    try {
      await worker.run();
    } finally {
      await connection.close();
      await warden.close();
    }
  })();
  return {
    done,
    async stop() {
      link.stop('warden bot stopping');
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
