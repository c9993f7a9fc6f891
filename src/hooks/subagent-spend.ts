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
 * Anything else is refused with a reason (the hook writes it on stderr) and the sub-agent's stop
 * is sent without spend. Tokens in count cache reads and writes, as the claude driver counts a
 * turn. Cost: warden keeps no price list; Claude Code's own prices reach warden only as costs it
 * writes, and its 2.1.330 transcripts write none per message, so a sub-agent's cost is the sum of
 * the `costUSD` its transcript's messages carry (older Claude Code wrote one), else 0.
 */
import { constants } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, sep } from 'node:path';

/** The most of a sub-agent's transcript that is read. */
export const SUBAGENT_TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024;
/** The largest total sent (the `subagent` signal's bound). */
export const MAX_SPEND_TOKENS = 1e12;
export const MAX_SPEND_USD = 1e9;

export interface SubagentSpend {
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  /** Assistant messages counted (each API response once). */
  messages: number;
  /** Only the first SUBAGENT_TRANSCRIPT_MAX_BYTES were read. */
  partial?: boolean;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * The spend of a Claude Code transcript (JSONL): each assistant message's `usage` (input, cache
 * creation and cache read tokens in; output tokens out) and `costUSD` where it has one. A message
 * written as several entries (one per content block, the same `message.id`) counts once, with its
 * largest usage. Lines that are not JSON, or not assistant messages, are skipped.
 */
export function sumTranscriptUsage(lines: Iterable<string>): SubagentSpend {
  const byMessage = new Map<string, { tokensIn: number; tokensOut: number; costUsd: number }>();
  let anonymous = 0;
  for (const raw of lines) {
    const line = raw.trim();
    if (!line.startsWith('{') || !line.includes('"usage"')) continue;
    let entry: { type?: unknown; uuid?: unknown; requestId?: unknown; costUSD?: unknown; message?: { id?: unknown; role?: unknown; usage?: unknown } };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const usage = entry?.message?.usage;
    if (entry.type !== 'assistant' || !usage || typeof usage !== 'object') continue;
    const u = usage as Record<string, unknown>;
    const spent = {
      tokensIn: num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens),
      tokensOut: num(u.output_tokens),
      costUsd: num(entry.costUSD),
    };
    const id = entry.message?.id ?? entry.requestId;
    const key = typeof id === 'string' && id ? id : `#${anonymous++}`;
    const seen = byMessage.get(key);
    if (!seen || spent.tokensIn + spent.tokensOut >= seen.tokensIn + seen.tokensOut)
      byMessage.set(key, { ...spent, costUsd: Math.max(spent.costUsd, seen?.costUsd ?? 0) });
  }
  let tokensIn = 0;
  let tokensOut = 0;
  let costUsd = 0;
  for (const m of byMessage.values()) {
    tokensIn += m.tokensIn;
    tokensOut += m.tokensOut;
    costUsd += m.costUsd;
  }
  return {
    tokensIn: Math.min(MAX_SPEND_TOKENS, Math.round(tokensIn)),
    tokensOut: Math.min(MAX_SPEND_TOKENS, Math.round(tokensOut)),
    costUsd: Math.min(MAX_SPEND_USD, costUsd),
    messages: byMessage.size,
  };
}

/** Why a sub-agent's transcript is not read, or null when it may be. */
export class TranscriptRefused extends Error {}

const inside = (root: string, path: string) => path.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * The sub-agent's transcript `agentPath`, checked against the session's `sessionTranscript`, read
 * (at most `maxBytes` from its start) and summed. Throws TranscriptRefused with the reason when
 * the path is not one warden reads, or the error of lstat/realpath/open/read.
 */
export async function readSubagentSpend(
  agentPath: string,
  sessionTranscript: string | undefined,
  maxBytes = SUBAGENT_TRANSCRIPT_MAX_BYTES,
): Promise<SubagentSpend> {
  if (!isAbsolute(agentPath)) throw new TranscriptRefused('agent_transcript_path is not an absolute path');
  if (!agentPath.endsWith('.jsonl')) throw new TranscriptRefused('agent_transcript_path does not name a .jsonl transcript');
  if (!sessionTranscript || !isAbsolute(sessionTranscript))
    throw new TranscriptRefused('transcript_path (the session transcript) is missing or not an absolute path');
  const root = dirname(sessionTranscript);
  if (!inside(root, agentPath) || agentPath.split(sep).includes('..'))
    throw new TranscriptRefused(`agent_transcript_path is not inside the session's transcript directory ${root}`);
  const st = await lstat(agentPath);
  if (st.isSymbolicLink()) throw new TranscriptRefused('agent_transcript_path is a symbolic link');
  if (!st.isFile()) throw new TranscriptRefused('agent_transcript_path is not a regular file');
  const [realRoot, real] = await Promise.all([realpath(root), realpath(agentPath)]);
  if (!inside(realRoot, real)) throw new TranscriptRefused(`agent_transcript_path leads out of the session's transcript directory (to ${real})`);

  const fh = await open(agentPath, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  let buf: Buffer;
  let partial = false;
  try {
    const fst = await fh.stat();
    if (!fst.isFile() || fst.ino !== st.ino || fst.dev !== st.dev) throw new TranscriptRefused('agent_transcript_path changed while it was opened');
    partial = fst.size > maxBytes;
    const len = Math.min(fst.size, maxBytes);
    buf = Buffer.alloc(len);
    let got = 0;
    while (got < len) {
      const { bytesRead } = await fh.read(buf, got, len - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    buf = buf.subarray(0, got);
  } finally {
    await fh.close().catch(() => {});
  }
  const lines = buf.toString('utf8').split('\n');
  if (partial) lines.pop(); // cut mid-line
  const spend = sumTranscriptUsage(lines);
  return partial ? { ...spend, partial: true } : spend;
}
