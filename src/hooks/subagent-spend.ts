/**
 * What a Claude Code sub-agent spent, read from its own transcript at SubagentStop.
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
 * turn. Cost: warden keeps no price list; Claude Code's own prices reach warden only as costs it
 * writes, and its 2.1.330 transcripts write none per message, so a sub-agent's cost is the sum of
 * the `costUSD` its transcript's messages carry (older Claude Code wrote one), else 0.
 */
import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, sep } from 'node:path';
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
  /** Only the first SUBAGENT_TRANSCRIPT_MAX_BYTES were read. */
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
  if (!isAbsolute(agentPath)) throw new TranscriptRefused('agent_transcript_path is not an absolute path');
  if (!agentPath.endsWith('.jsonl')) throw new TranscriptRefused('agent_transcript_path does not name a .jsonl transcript');
  if (!sessionTranscript || !isAbsolute(sessionTranscript))
    throw new TranscriptRefused('transcript_path (the session transcript) is missing or not an absolute path');
  const root = dirname(sessionTranscript);
  if (!inside(root, agentPath) || agentPath.split(sep).includes('..'))
    throw new TranscriptRefused(`agent_transcript_path is not inside the session's transcript directory ${root}`);
  // A symbolic link is refused as such (readTranscript checks it again) before it is resolved.
  if ((await lstat(agentPath)).isSymbolicLink()) throw new TranscriptRefused('agent_transcript_path is a symbolic link');
  const [realRoot, real] = await Promise.all([realpath(root), realpath(agentPath)]);
  if (!inside(realRoot, real)) throw new TranscriptRefused(`agent_transcript_path leads out of the session's transcript directory (to ${real})`);
  const { bytes, more } = await readTranscript(agentPath, 'agent_transcript_path', maxBytes);
  const lines = bytes.toString('utf8').split('\n');
  if (more) lines.pop(); // cut mid-line
  const spend = sumTranscriptUsage(lines, prices);
  return more ? { ...spend, partial: true } : spend;
}
