/**
 * A hooked session's spend, turn by turn, from the transcript its CLI appends to (Claude Code's
 * transcript, Codex's rollout: `transcript_path`), read when the hook reports a turn (Stop),
 * incrementally: only what the CLI appended since the last counted turn, never the transcript
 * again from its start. How the lines read are counted is the CLI's own (a SpendCounter:
 * session-spend.ts for Claude Code, codex-spend.ts for Codex); the rest is shared and here.
 *
 * Per session (agent) one small state file, `$WARDEN_HOME/hook-spend/<agent>.json` (0600 in a 0700
 * directory; warden's home, which the hook's tripwire keeps the agent out of), remembers the
 * transcript (its path, device and inode), the byte offset counted up to (always the end of a
 * whole line), what the counter carries from turn to turn, and the last turn's id with the
 * figures it was sent with.
 *
 *  - A transcript that is another file (another path, device or inode), shorter than the offset,
 *    or whose last counted bytes (up to 256 before the offset, kept as a digest) are not the same
 *    any more (replaced, truncated, rewritten in place) is read again from its start; the counter
 *    is told so (and whether it is the same file), and what it carries keeps it from counting
 *    twice what it counted before.
 *  - At most SESSION_READ_MAX_BYTES are read a turn: a longer increment is counted that far (up
 *    to its last whole line) and the next turn goes on from there.
 *  - The state is written (to a new file, renamed over the old) before the turn is reported: a
 *    report that fails after it leaves those tokens uncounted (never counted twice), and a report
 *    re-sent for the same turn id (a retried hook) sends the same figures again, not read anew,
 *    which the workflow's turn-id dedupe then drops. When the state cannot be written, the turn
 *    goes without tokens (the next turn counts them).
 *
 * The file checks are transcript-read.ts's.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_ID_RE } from '../domain/contract/schemas.js';
import { readTranscript } from './transcript-read.js';

/** The most of a transcript read at one turn. */
export const SESSION_READ_MAX_BYTES = 16 * 1024 * 1024;
/** How many bytes before the offset are checked to be the ones counted. */
const TAIL_BYTES = 256;

const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex').slice(0, 32);

/** What a turn's lines spent. */
export interface TurnSpend {
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  /** Model calls counted at this turn (API messages, usage records). */
  messages: number;
  /** The models of the calls counted (at most a few), where the transcript names them. */
  models: string[];
  /** The models of calls whose cost is unknown: no cost in the transcript, no price in the user's `prices:` (at most five). */
  unpriced?: string[];
}

export interface SessionSpend extends TurnSpend {
  /** The transcript was another file or shorter than before: counted again from its start. */
  restarted?: boolean;
  /** More was appended than is read at one turn: the rest counts at the next. */
  more?: boolean;
  /** The figures a turn with this id was already sent with (a retried hook). */
  resent?: boolean;
}

/** How one CLI's transcript is counted; `C` is what a counted turn carries to the next. */
export interface SpendCounter<C> {
  /** What a state file carries, checked: undefined when it is not what this counter writes (then it starts over). */
  carried(raw: unknown): C | undefined;
  /**
   * What `lines` (whole lines) spent. `prior`: what the last counted turn carried (none at the
   * first). `read.continues`: the lines go on from the offset counted up to; else the transcript is
   * read from its start, and `read.sameFile` says whether it is still the same file (path, device, inode).
   */
  count(lines: string[], prior: C | undefined, read: { continues: boolean; sameFile: boolean }): { spend: TurnSpend; carry: C };
}

interface SpendState<C> {
  v: 2;
  path: string;
  dev: number;
  ino: number;
  offset: number;
  /** A digest of the (at most TAIL_BYTES) bytes before the offset. */
  tail: string;
  carry: C;
  last?: { turn: string; tokensIn: number; tokensOut: number; costUsd: number; models: string[] };
}

/** The state file of an agent's session (agent ids are plain: letters, digits, `.`, `_`, `-`). */
export function spendStateFile(dir: string, agentId: string): string {
  // The id becomes a file name: only a plain agent id (a named agent's id reaches the hook unchecked).
  if (!AGENT_ID_RE.test(agentId)) throw new Error(`agent id ${JSON.stringify(agentId.slice(0, 120))} is not a valid agent id`);
  return join(dir, `${agentId}.json`);
}

/** A whole count of tokens, as a state file or a transcript must carry it. */
export const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

async function loadState<C>(file: string, counter: SpendCounter<C>): Promise<SpendState<C> | null> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return null; // none yet, or not what warden writes: start over
  }
  const s = raw as Partial<SpendState<unknown>> | null;
  if (!s || s.v !== 2 || typeof s.path !== 'string' || !isCount(s.dev) || !isCount(s.ino) || !isCount(s.offset) || typeof s.tail !== 'string') return null;
  const carry = counter.carried(s.carry);
  if (carry === undefined) return null;
  const l = s.last;
  const last =
    l && typeof l.turn === 'string' && isCount(l.tokensIn) && isCount(l.tokensOut) && typeof l.costUsd === 'number' && l.costUsd >= 0
      ? { ...l, models: Array.isArray(l.models) ? l.models.filter((m): m is string => typeof m === 'string') : [] }
      : undefined;
  return { v: 2, path: s.path, dev: s.dev, ino: s.ino, offset: s.offset, tail: s.tail, carry, ...(last ? { last } : {}) };
}

async function saveState<C>(file: string, dir: string, state: SpendState<C>): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, JSON.stringify(state), { mode: 0o600, flag: 'wx' });
  await rename(tmp, file);
}

/**
 * What the session spent since its last counted turn, for the turn `turnId`, from the transcript
 * `transcriptPath` counted by `counter`, with its state in `dir` (see above). Throws
 * TranscriptRefused when the transcript is not one warden reads, or the error of reading it or of
 * writing the state: then nothing was counted, and the next turn counts it.
 */
export async function spendAtTurn<C>(
  counter: SpendCounter<C>,
  dir: string,
  agentId: string,
  transcriptPath: string,
  turnId: string,
  maxBytes = SESSION_READ_MAX_BYTES,
): Promise<SessionSpend> {
  const file = spendStateFile(dir, agentId);
  const prior = await loadState(file, counter);
  if (prior?.last && prior.last.turn === turnId && prior.path === transcriptPath) {
    const { tokensIn, tokensOut, costUsd, models } = prior.last;
    return { tokensIn, tokensOut, costUsd, models, messages: 0, resent: true };
  }
  // Read from a little before the offset: those bytes must be the ones counted up to it (the same
  // file, not rewritten in place); else the transcript is read again from its start.
  let sameFile = false;
  let back = 0;
  let read = await readTranscript(transcriptPath, 'transcript_path', maxBytes + TAIL_BYTES, (t) => {
    sameFile = !!prior && prior.path === transcriptPath && prior.dev === t.dev && prior.ino === t.ino;
    back = sameFile && prior!.offset <= t.size ? Math.min(TAIL_BYTES, prior!.offset) : 0;
    return sameFile && prior!.offset <= t.size ? prior!.offset - back : 0;
  });
  const continues = sameFile && read.from + back === prior!.offset && read.bytes.length >= back && digest(read.bytes.subarray(0, back)) === prior!.tail;
  const restarted = !!prior && !continues;
  if (!continues && read.from > 0) read = await readTranscript(transcriptPath, 'transcript_path', maxBytes + TAIL_BYTES);
  const skip = continues ? back : 0;
  const from = read.from + skip;
  const bytes = read.bytes.subarray(skip, skip + maxBytes);
  const more = read.more || read.bytes.length - skip > maxBytes;
  // Only whole lines: a line the CLI is still writing counts at the next turn. A line longer than
  // a whole read is passed over (its remains are not JSON), so the offset always moves on.
  const whole = bytes.lastIndexOf(0x0a) + 1;
  const end = whole === 0 && more ? bytes.length : whole;
  const lines = bytes.subarray(0, end).toString('utf8').split('\n');
  const { spend, carry } = counter.count(lines, prior?.carry, { continues, sameFile });
  const next: SpendState<C> = {
    v: 2,
    path: transcriptPath,
    dev: read.file.dev,
    ino: read.file.ino,
    offset: from + end,
    tail: digest(read.bytes.subarray(Math.max(0, from + end - TAIL_BYTES - read.from), from + end - read.from)),
    carry,
    last: { turn: turnId, tokensIn: spend.tokensIn, tokensOut: spend.tokensOut, costUsd: spend.costUsd, models: spend.models },
  };
  await saveState(file, dir, next);
  return { ...spend, ...(restarted ? { restarted: true } : {}), ...(more ? { more: true } : {}) };
}
