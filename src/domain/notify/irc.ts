/**
 * The IRC bot's pure parts: its configuration, the `!verb <agent> …` commands humans type in the
 * channel, and the allowlist of nicks or hostmasks that may act. No I/O here.
 */
import { z } from 'zod';
import { AGENT_ID_RE, IrcChannelSchema } from '../contract/schemas.js';
import { MAX_REASON_TEXT, MAX_WHISPER_TEXT, truncate } from '../contract/limits.js';
import type { AgentStatus } from '../contract/status.js';

/** RFC 2812 nick characters (a letter or special first), as servers accept them. */
const NICK_RE = /^[A-Za-z[\]\\`_^{|}][A-Za-z0-9[\]\\`_^{|}-]{0,29}$/;
/** An allowlist entry: a nick, or a hostmask `nick!user@host` with * and ? wildcards. */
const ALLOW_RE = /^[^\s!@,]+(![^\s!@,]+@[^\s!@,]+)?$/;

export const IrcBotConfigSchema = z
  .object({
    server: z
      .string()
      .min(1, 'server must not be empty')
      .regex(/^[^\s/:]+$/, 'server: a host name or address, without a port or scheme'),
    port: z.coerce.number().int().min(1, 'port: 1-65535').max(65535, 'port: 1-65535').default(6667),
    tls: z.boolean().default(false),
    nick: z.string().regex(NICK_RE, 'nick: letters, digits and []\\`_^{|}-, at most 30, not starting with a digit or -').default('warden'),
    channel: IrcChannelSchema,
    /** Nicks or hostmasks (`nick!user@host`, * and ? wildcards) allowed to act. Empty: nobody may act. */
    allow: z.array(z.string().regex(ALLOW_RE, 'allow: a nick or a hostmask nick!user@host')).default([]),
    /** Name of the env var holding the server password (never a flag value, so it stays out of `ps`). */
    passwordEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'passwordEnv: an environment variable name')
      .optional(),
  })
  .strict();
export type IrcBotConfigInput = z.input<typeof IrcBotConfigSchema>;
export type IrcBotConfig = z.output<typeof IrcBotConfigSchema>;

/** `a,b, c` → ['a','b','c'] (for --allow and WARDEN_IRC_ALLOW). */
export function splitList(v: string | undefined): string[] {
  return (v ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface IrcSender {
  nick: string;
  ident?: string;
  hostname?: string;
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 'i');
}

/**
 * Whether `who` may act. A plain entry matches the nick (case-insensitively, as IRC compares
 * nicks); an entry with `!` and `@` matches the whole `nick!user@host`, with * and ? wildcards.
 */
export function isAllowed(allow: readonly string[], who: IrcSender): boolean {
  const mask = `${who.nick}!${who.ident ?? ''}@${who.hostname ?? ''}`;
  return allow.some((entry) => (entry.includes('!') ? globToRegExp(entry).test(mask) : entry.toLowerCase() === who.nick.toLowerCase()));
}

export const IRC_VERBS = ['status', 'resume', 'abort', 'steer', 'pause', 'dismiss'] as const;
export type IrcVerb = (typeof IRC_VERBS)[number];
/** Verbs that change an agent (need the allowlist); `status` only reads. */
export const ACTING_VERBS: readonly IrcVerb[] = ['resume', 'abort', 'steer', 'pause', 'dismiss'];

export type IrcCommand =
  | { verb: 'status'; agentId: string }
  | { verb: 'resume'; agentId: string; note?: string }
  | { verb: 'abort'; agentId: string; reason?: string }
  | { verb: 'pause'; agentId: string; reason?: string }
  | { verb: 'dismiss'; agentId: string; note?: string }
  | { verb: 'steer'; agentId: string; text: string };

export type ParsedLine = { kind: 'none' } | { kind: 'help' } | { kind: 'command'; command: IrcCommand } | { kind: 'error'; message: string };

export const IRC_USAGE =
  '!status <agent> · !resume <agent> [note] · !abort <agent> [reason] · !steer <agent> <text> · !pause <agent> [reason] · !dismiss <agent> [note]';

/**
 * Parse one channel message. Anything not starting with `!` is chatter (`none`); `!help` (or an
 * unknown `!verb` that is ours) gets the usage; a known verb with a bad argument is an error that
 * names it.
 */
export function parseIrcCommand(message: string): ParsedLine {
  const m = /^!(\w+)(?:\s+(.*))?$/s.exec(message.trim());
  if (!m) return { kind: 'none' };
  const verb = m[1]!.toLowerCase();
  if (verb === 'help' || verb === 'warden') return { kind: 'help' };
  if (!(IRC_VERBS as readonly string[]).includes(verb)) return { kind: 'none' }; // another bot's command
  const rest = (m[2] ?? '').trim();
  const sp = rest.search(/\s/);
  const agentId = sp < 0 ? rest : rest.slice(0, sp);
  const tail = sp < 0 ? '' : rest.slice(sp).trim();
  if (!agentId) return { kind: 'error', message: `usage: !${verb} <agent>${verb === 'steer' ? ' <text>' : ''}` };
  if (!AGENT_ID_RE.test(agentId)) return { kind: 'error', message: `"${agentId.slice(0, 40)}" is not an agent id (letters, digits, . _ -)` };
  switch (verb as IrcVerb) {
    case 'status':
      return { kind: 'command', command: { verb: 'status', agentId } };
    case 'resume':
      return { kind: 'command', command: { verb: 'resume', agentId, ...(tail && { note: tail.slice(0, MAX_REASON_TEXT) }) } };
    case 'abort':
      return { kind: 'command', command: { verb: 'abort', agentId, ...(tail && { reason: tail.slice(0, MAX_REASON_TEXT) }) } };
    case 'pause':
      return { kind: 'command', command: { verb: 'pause', agentId, ...(tail && { reason: tail.slice(0, MAX_REASON_TEXT) }) } };
    case 'dismiss':
      return { kind: 'command', command: { verb: 'dismiss', agentId, ...(tail && { note: tail.slice(0, MAX_REASON_TEXT) }) } };
    case 'steer':
      if (!tail) return { kind: 'error', message: `usage: !steer ${agentId} <text>` };
      return { kind: 'command', command: { verb: 'steer', agentId, text: tail.slice(0, MAX_WHISPER_TEXT) } };
  }
}

/** The polite refusal for someone not on the allowlist. */
export function refusal(nick: string, verb: IrcVerb): string {
  return `${nick}: sorry, you are not on this bot's allowlist, so I cannot ${verb} agents for you. Ask an operator to add you (warden irc --allow); !status works for everyone.`;
}

/** `!status` as one line: state, pause reason, ladder, turns, last verdict, spend. */
export function statusLine(s: AgentStatus): string {
  const parts = [`${s.agentId} is ${s.state}`];
  if (s.paused && s.pauseReason) parts.push(`(${truncate(s.pauseReason, 80)})`);
  parts.push(
    `· step ${s.escalationStep}/${s.escalationThreshold}`,
    `· ${s.turns} turns`,
    `· ${s.evaluations.total} evaluations (${s.evaluations.flagged} flagged)`,
  );
  if (s.lastVerdict)
    parts.push(`· last verdict ${[s.lastVerdict.kind, s.lastVerdict.pattern].filter(Boolean).join(' ')}: ${truncate(s.lastVerdict.message, 120)}`);
  if (s.pendingWhispers) parts.push(`· ${s.pendingWhispers} whispers pending`);
  parts.push(`· $${s.costUsd.toFixed(2)}`);
  return parts.join(' ');
}

/**
 * How often the bot answers in the channel. Anyone may type `!help` or `!status`, so the bot's
 * replies are what a stranger can make it say: a flood of commands must not turn into a flood of
 * replies (the server would drop the bot for flooding, and alerts with it).
 *
 * - a nick not on the allowlist gets at most one reply per `outsiderIntervalMs` (a minute), and
 *   all such nicks together too: a crowd of strangers (or one changing nicks) gets one line a
 *   minute in all;
 * - an allowlisted nick gets a burst of `memberBurst` replies, then one per `memberIntervalMs`;
 * - every reply, whoever asked, also draws from one bucket of `totalBurst`, one per `totalIntervalMs`.
 *
 * A command from a stranger that gets no reply is not run either (`!status` costs a query).
 */
export interface ReplyLimits {
  outsiderIntervalMs: number;
  memberBurst: number;
  memberIntervalMs: number;
  totalBurst: number;
  totalIntervalMs: number;
}
export const REPLY_LIMITS: ReplyLimits = { outsiderIntervalMs: 60_000, memberBurst: 5, memberIntervalMs: 2_000, totalBurst: 10, totalIntervalMs: 1_000 };

/** A token bucket: `burst` tokens, one more every `intervalMs`. */
class Bucket {
  private tokens: number;
  private at: number;
  constructor(
    private readonly burst: number,
    private readonly intervalMs: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }
  private refill(now: number): void {
    if (now > this.at) {
      this.tokens = Math.min(this.burst, this.tokens + (now - this.at) / this.intervalMs);
      this.at = now;
    }
  }
  can(now: number): boolean {
    this.refill(now);
    return this.tokens >= 1;
  }
  take(): void {
    this.tokens -= 1;
  }
  /** Full again (nothing to remember). */
  full(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.burst;
  }
}

export class ReplyLimiter {
  private readonly nicks = new Map<string, Bucket>();
  private readonly outsiders: Bucket;
  private readonly total: Bucket;
  constructor(
    private readonly limits: ReplyLimits = REPLY_LIMITS,
    now = 0,
  ) {
    this.outsiders = new Bucket(1, limits.outsiderIntervalMs, now);
    this.total = new Bucket(limits.totalBurst, limits.totalIntervalMs, now);
  }

  /** Whether the bot may answer `nick` now (`member`: on the allowlist); if so, the reply is counted. */
  take(nick: string, member: boolean, now: number): boolean {
    const key = `${member ? 'm' : 'o'}:${nick.toLowerCase()}`;
    let mine = this.nicks.get(key);
    if (!mine) {
      mine = member ? new Bucket(this.limits.memberBurst, this.limits.memberIntervalMs, now) : new Bucket(1, this.limits.outsiderIntervalMs, now);
    }
    const ok = mine.can(now) && this.total.can(now) && (member || this.outsiders.can(now));
    if (ok) {
      mine.take();
      this.total.take();
      if (!member) this.outsiders.take();
    }
    this.nicks.set(key, mine);
    if (this.nicks.size > 1_000) this.prune(now);
    return ok;
  }

  private prune(now: number): void {
    for (const [k, b] of this.nicks) if (b.full(now)) this.nicks.delete(k);
  }
}
