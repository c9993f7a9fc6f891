/**
 * Reading a Claude Code transcript (JSONL) the hook was pointed at, which is untrusted input: the
 * part shared by a sub-agent's spend (subagent-spend.ts, its whole transcript at SubagentStop) and
 * the session's own (session-spend.ts, what was appended since the last turn). A transcript is read
 * only when it is:
 *
 *  - an absolute path ending in `.jsonl`, with no `..` segment;
 *  - a regular file itself, not a symbolic link (lstat), and the same file when opened
 *    (O_NOFOLLOW | O_NONBLOCK: a FIFO or device is never waited on; fstat must match the lstat);
 *  - read at most `maxBytes` from where the caller starts.
 *
 * Anything else is refused (TranscriptRefused, with the reason). Usage is summed per API message:
 * each assistant message's `usage` (input, cache-write and cache-read tokens in; output tokens
 * out), and the `costUSD` entries carry (older Claude Code wrote one; 2.1.330 writes none). A
 * message written as several entries (one per content block, the same `message.id`) counts once.
 */
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { isAbsolute, sep } from 'node:path';

/** The largest total a spend carries (the `subagent` signal's bound). */
export const MAX_SPEND_TOKENS = 1e12;
export const MAX_SPEND_USD = 1e9;

/** Why a transcript is not read. */
export class TranscriptRefused extends Error {}

/** A transcript file's identity and size when it was opened. */
export interface TranscriptFile {
  dev: number;
  ino: number;
  size: number;
}

/**
 * The checked transcript `path` (named `field` in the refusals), read from the byte offset
 * `startAt` chooses (given the file as opened; default 0) for at most `maxBytes`. Throws
 * TranscriptRefused, or the error of lstat/open/read.
 */
export async function readTranscript(
  path: string,
  field: string,
  maxBytes: number,
  startAt: (file: TranscriptFile) => number = () => 0,
): Promise<{ file: TranscriptFile; from: number; bytes: Buffer; more: boolean }> {
  if (!isAbsolute(path)) throw new TranscriptRefused(`${field} is not an absolute path`);
  if (!path.endsWith('.jsonl')) throw new TranscriptRefused(`${field} does not name a .jsonl transcript`);
  if (path.split(sep).includes('..')) throw new TranscriptRefused(`${field} has a .. segment`);
  const st = await lstat(path);
  if (st.isSymbolicLink()) throw new TranscriptRefused(`${field} is a symbolic link`);
  if (!st.isFile()) throw new TranscriptRefused(`${field} is not a regular file`);
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const fst = await fh.stat();
    if (!fst.isFile() || fst.ino !== st.ino || fst.dev !== st.dev) throw new TranscriptRefused(`${field} changed while it was opened`);
    const file = { dev: fst.dev, ino: fst.ino, size: fst.size };
    const from = Math.max(0, Math.min(startAt(file), fst.size));
    const len = Math.min(fst.size - from, maxBytes);
    const buf = Buffer.alloc(len);
    let got = 0;
    while (got < len) {
      const { bytesRead } = await fh.read(buf, got, len - got, from + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { file, from, bytes: buf.subarray(0, got), more: from + got < fst.size };
  } finally {
    await fh.close().catch(() => {});
  }
}

/** One API message's usage. */
export interface MessageUsage {
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  model?: string;
  /** Of tokensIn: prompt cache reads and writes (the rest is plain input), for pricing (prices.ts). */
  cacheRead?: number;
  cacheWrite?: number;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/**
 * Each assistant message's usage in transcript lines, by its API message id (else its request id,
 * else its own `#n`), in the order first seen; a message written as several entries keeps its
 * largest usage. Lines that are not JSON, or not assistant messages, are skipped, and so are
 * entries of a sub-agent's side chain (`isSidechain`) when `sidechains` is false.
 */
export function usageByMessage(lines: Iterable<string>, opts: { sidechains?: boolean } = {}): Map<string, MessageUsage> {
  const byMessage = new Map<string, MessageUsage>();
  let anonymous = 0;
  for (const raw of lines) {
    const line = raw.trim();
    if (!line.startsWith('{') || !line.includes('"usage"')) continue;
    let entry: {
      type?: unknown;
      isSidechain?: unknown;
      requestId?: unknown;
      costUSD?: unknown;
      message?: { id?: unknown; model?: unknown; usage?: unknown };
    };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const usage = entry?.message?.usage;
    if (entry.type !== 'assistant' || !usage || typeof usage !== 'object') continue;
    if (opts.sidechains === false && entry.isSidechain === true) continue;
    const u = usage as Record<string, unknown>;
    const model = typeof entry.message?.model === 'string' && entry.message.model ? entry.message.model.slice(0, 100) : undefined;
    const spent: MessageUsage = {
      tokensIn: num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens),
      tokensOut: num(u.output_tokens),
      costUsd: num(entry.costUSD),
      ...(model ? { model } : {}),
      cacheRead: num(u.cache_read_input_tokens),
      cacheWrite: num(u.cache_creation_input_tokens),
    };
    const id = entry.message?.id ?? entry.requestId;
    const key = typeof id === 'string' && id ? id.slice(0, 200) : `#${anonymous++}`;
    const seen = byMessage.get(key);
    if (!seen || spent.tokensIn + spent.tokensOut >= seen.tokensIn + seen.tokensOut)
      byMessage.set(key, { ...spent, costUsd: Math.max(spent.costUsd, seen?.costUsd ?? 0) });
  }
  return byMessage;
}

/** The sum of messages' usage, each total capped at the spend bounds. */
export function sumUsage(messages: Iterable<MessageUsage>): { tokensIn: number; tokensOut: number; costUsd: number; messages: number } {
  let tokensIn = 0;
  let tokensOut = 0;
  let costUsd = 0;
  let n = 0;
  for (const m of messages) {
    tokensIn += m.tokensIn;
    tokensOut += m.tokensOut;
    costUsd += m.costUsd;
    n++;
  }
  return {
    tokensIn: Math.min(MAX_SPEND_TOKENS, Math.round(tokensIn)),
    tokensOut: Math.min(MAX_SPEND_TOKENS, Math.round(tokensOut)),
    costUsd: Math.min(MAX_SPEND_USD, costUsd),
    messages: n,
  };
}
