/**
 * What a sub-agent spent, read from its own transcript at SubagentStop: Claude Code's (below) or
 * Codex's (readCodexSubagentSpend: its rollout's cumulative totals).
 *
 * A sub-agent's model calls run in a transcript of their own: Claude Code (2.1.330) names it in
 * SubagentStop's `agent_transcript_path`, `<project dir>/<session id>/subagents/agent-<id>.jsonl`,
 * beside the session's `transcript_path` (`<project dir>/<session id>.jsonl`). Each assistant
 * message there carries the Messages API's `usage`; the spend is their sum. The file is untrusted
 * input, so it is read only when it is:
 *
 *  - an absolute path ending in `.jsonl`, inside the session's transcript directory (the directory
 *    of `transcript_path`), also once every symlink in the path is resolved;
 *  - a regular file itself, not a symbolic link (lstat), and the same file when opened
 *    (O_NOFOLLOW | O_NONBLOCK: a FIFO or device is never waited on; fstat must match the lstat);
 *  - read at most SUBAGENT_TRANSCRIPT_MAX_BYTES from its start: a longer one is counted that far
 *    and marked `partial`.
 *
 * (The checks are transcript-read.ts's, shared with the session's own spend.)
 * Anything else is refused with a reason (the hook writes it on stderr) and the sub-agent's stop
 * is sent without spend. Tokens in count cache reads and writes, as the claude driver counts a
 * turn. Cost: Claude Code 2.1.330's transcripts write none per message, so a sub-agent's cost is
 * the sum of the `costUSD` its transcript's messages carry (older Claude Code wrote one), else of
 * their tokens at the price the user's own `prices:` gives their model (prices.ts), else 0.
 */
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, sep } from 'node:path';
import { codexCost, codexTotals } from './codex-spend.js';
import { type PriceTable, priceMessages } from './prices.js';
import { MAX_SPEND_TOKENS, MAX_SPEND_USD, TranscriptRefused, readTranscript, sumUsage, usageByMessage } from './transcript-read.js';

export { MAX_SPEND_TOKENS, MAX_SPEND_USD, TranscriptRefused };

/** The most of a sub-agent's transcript that is read. */
export const SUBAGENT_TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024;

export interface SubagentSpend {
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  /** Assistant messages counted (each API response once). */
  messages: number;
  /** Only part of the transcript was read (Claude Code's: its first SUBAGENT_TRANSCRIPT_MAX_BYTES; Codex's: a tail with no totals). */
  partial?: boolean;
}

/**
 * The spend of a Claude Code transcript (JSONL): each assistant message's `usage` (input, cache
 * creation and cache read tokens in; output tokens out) and `costUSD` where it has one. A message
 * written as several entries (one per content block, the same `message.id`) counts once, with its
 * largest usage. Lines that are not JSON, or not assistant messages, are skipped.
 */
export function sumTranscriptUsage(lines: Iterable<string>, prices?: PriceTable): SubagentSpend {
  return sumUsage(priceMessages(usageByMessage(lines).values(), prices).priced);
}

const inside = (root: string, path: string) => path.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * Checks the sub-agent's transcript `agentPath` against `root`, the folder the session's
 * transcripts are in (`what`, for the refusals): an absolute `.jsonl` path inside it, also once
 * every symlink in the path is resolved, and no symbolic link itself. Throws TranscriptRefused, or
 * the error of lstat/realpath.
 */
async function checkSubagentPath(agentPath: string, sessionTranscript: string | undefined, rootOf: (t: string) => string, what: string): Promise<void> {
  if (!isAbsolute(agentPath)) throw new TranscriptRefused('agent_transcript_path is not an absolute path');
  if (!agentPath.endsWith('.jsonl')) throw new TranscriptRefused('agent_transcript_path does not name a .jsonl transcript');
  if (!sessionTranscript || !isAbsolute(sessionTranscript))
    throw new TranscriptRefused('transcript_path (the session transcript) is missing or not an absolute path');
  await checkInsideRoot(agentPath, rootOf(sessionTranscript), what);
}

/** checkSubagentPath's checks against the folder `root` itself. */
async function checkInsideRoot(agentPath: string, root: string, what: string): Promise<void> {
  if (!isAbsolute(agentPath)) throw new TranscriptRefused('agent_transcript_path is not an absolute path');
  if (!agentPath.endsWith('.jsonl')) throw new TranscriptRefused('agent_transcript_path does not name a .jsonl transcript');
  if (!isAbsolute(root)) throw new TranscriptRefused(`${what} ${root} is not an absolute path`);
  if (!inside(root, agentPath) || agentPath.split(sep).includes('..')) throw new TranscriptRefused(`agent_transcript_path is not inside ${what} ${root}`);
  // A symbolic link is refused as such (readTranscript checks it again) before it is resolved.
  if ((await lstat(agentPath)).isSymbolicLink()) throw new TranscriptRefused('agent_transcript_path is a symbolic link');
  const [realRoot, real] = await Promise.all([realpath(root), realpath(agentPath)]);
  if (!inside(realRoot, real)) throw new TranscriptRefused(`agent_transcript_path leads out of ${what} (to ${real})`);
}

/**
 * The sub-agent's transcript `agentPath`, checked against the session's `sessionTranscript`, read
 * (at most `maxBytes` from its start, transcript-read.ts) and summed. Throws TranscriptRefused with
 * the reason when the path is not one warden reads, or the error of lstat/realpath/open/read.
 */
export async function readSubagentSpend(
  agentPath: string,
  sessionTranscript: string | undefined,
  maxBytes = SUBAGENT_TRANSCRIPT_MAX_BYTES,
  prices?: PriceTable,
): Promise<SubagentSpend> {
  await checkSubagentPath(agentPath, sessionTranscript, dirname, "the session's transcript directory");
  const { bytes, more } = await readTranscript(agentPath, 'agent_transcript_path', maxBytes);
  const lines = bytes.toString('utf8').split('\n');
  if (more) lines.pop(); // cut mid-line
  const spend = sumTranscriptUsage(lines, prices);
  return more ? { ...spend, partial: true } : spend;
}

// ---------- Codex ----------

/** The most of a Codex sub-agent's rollout read, from its end. */
export const CODEX_SUBAGENT_TAIL_BYTES = 16 * 1024 * 1024;

/**
 * Where Codex keeps a session's rollouts: the `sessions` folder above
 * `<YYYY>/<MM>/<DD>/rollout-<time>-<thread>.jsonl` (a sub-agent spawned on another day has its
 * rollout in that day's folder); for any other layout, the rollout's own folder.
 */
export function codexSessionsRoot(rollout: string): string {
  const day = dirname(rollout);
  const month = dirname(day);
  const year = dirname(month);
  const dated = /^\d{2}$/.test(basename(day)) && /^\d{2}$/.test(basename(month)) && /^\d{4}$/.test(basename(year));
  return dated && basename(dirname(year)) === 'sessions' ? dirname(year) : day;
}

/**
 * What a Codex sub-agent (`spawn_agent`) has spent in all, at SubagentStop: codex 0.169 names its
 * own rollout (a thread of its own) in `agent_transcript_path`, and its last `token_count` holds
 * the thread's cumulative totals (codex-spend.ts): tokens in are the input tokens (cached
 * included), out the output tokens. A sub-agent given more work (`send_input`) stops again with
 * larger totals: the `subagent` signal counts what grew beyond what was counted of it. The rollout
 * is checked as Claude Code's sub-agent transcript is, inside Codex's sessions folder
 * (codexSessionsRoot of the session's `transcript_path`), and only its last `maxBytes` are read:
 * the totals are cumulative, so the last ones there are the whole. A tail with none is `partial`
 * and counts nothing. Cost: codex writes none; the whole totals at the user's `prices:` for
 * `model` (the hook input's), else 0 — the `subagent` signal counts a cost's growth as it counts tokens'.
 */
export async function readCodexSubagentSpend(
  agentPath: string,
  sessionTranscript: string | undefined,
  maxBytes = CODEX_SUBAGENT_TAIL_BYTES,
  prices?: PriceTable,
  model?: string,
): Promise<SubagentSpend> {
  await checkSubagentPath(agentPath, sessionTranscript, codexSessionsRoot, "the session's Codex sessions folder");
  return readCodexRollout(agentPath, maxBytes, prices, model);
}

/**
 * A Codex sub-agent's rollout `agentPath` that must be inside the Codex sessions folder
 * `sessionsRoot` itself (the codex driver's `$CODEX_HOME/sessions`), checked and read as
 * readCodexSubagentSpend does.
 */
export async function readCodexRolloutSpend(
  agentPath: string,
  sessionsRoot: string,
  maxBytes = CODEX_SUBAGENT_TAIL_BYTES,
  prices?: PriceTable,
  model?: string,
): Promise<SubagentSpend> {
  await checkInsideRoot(agentPath, sessionsRoot, 'the Codex sessions folder');
  return readCodexRollout(agentPath, maxBytes, prices, model);
}

async function readCodexRollout(agentPath: string, maxBytes: number, prices: PriceTable | undefined, model: string | undefined): Promise<SubagentSpend> {
  const { bytes, from } = await readTranscript(agentPath, 'agent_transcript_path', maxBytes, (f) => Math.max(0, f.size - maxBytes));
  const lines = bytes.toString('utf8').split('\n');
  if (from > 0) lines.shift(); // cut mid-line
  const totals = codexTotals(lines);
  const last = totals.at(-1);
  if (!last) return { tokensIn: 0, tokensOut: 0, costUsd: 0, messages: 0, ...(from > 0 ? { partial: true } : {}) };
  const spent = { tokensIn: Math.min(MAX_SPEND_TOKENS, last.input), tokensOut: Math.min(MAX_SPEND_TOKENS, last.output), cachedIn: last.cached };
  return { tokensIn: spent.tokensIn, tokensOut: spent.tokensOut, costUsd: codexCost(spent, model, prices).costUsd, messages: totals.length };
}
