/**
 * What a hooked Claude Code session's own turns spent, read from its transcript (`transcript_path`)
 * when the hook reports a turn (Stop), incrementally: only what Claude Code appended since the
 * last counted turn, never the transcript again from its start.
 *
 * Per session (agent) one small state file, `$WARDEN_HOME/hook-spend/<agent>.json` (0600 in a 0700
 * directory; warden's home, which the hook's tripwire keeps the agent out of), remembers the
 * transcript (its path, device and inode), the byte offset counted up to (always the end of a
 * whole line), the API message ids of the newest counted messages (a message Claude Code writes as
 * several entries, one per content block, may straddle the offset: its later entries count
 * nothing again), and the last turn's id with the figures it was sent with.
 *
 *  - A transcript that is another file (another path, device or inode), shorter than the offset,
 *    or whose last counted bytes (up to 256 before the offset, kept as a digest) are not the same
 *    any more (replaced, truncated, rewritten in place) is read again from its start: what comes
 *    up to the newest remembered message id (the API makes them unique), and any remembered one,
 *    counts nothing again — a resumed session's copy of its history is not counted twice.
 *  - At most SESSION_READ_MAX_BYTES are read a turn: a longer increment is counted that far (up
 *    to its last whole line) and the next turn goes on from there.
 *  - The state is written (to a new file, renamed over the old) before the turn is reported: a
 *    report that fails after it leaves those tokens uncounted (never counted twice), and a report
 *    re-sent for the same turn id (a retried hook) sends the same figures again, not read anew,
 *    which the workflow's turn-id dedupe then drops. When the state cannot be written, the turn
 *    goes without tokens (the next turn counts them).
 *
 * Sub-agents' side-chain entries (`isSidechain`) are skipped: a sub-agent's spend is counted at its
 * own stop, from its own transcript (subagent-spend.ts). The file checks are transcript-read.ts's.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_ID_RE } from '../domain/contract/schemas.js';
import { type PriceTable, priceMessages } from './prices.js';
import { readTranscript, sumUsage, usageByMessage } from './transcript-read.js';

/** The most of a transcript read at one turn. */
export const SESSION_READ_MAX_BYTES = 16 * 1024 * 1024;
/** How many of the newest counted message ids are kept for the boundary. */
export const BOUNDARY_IDS_KEPT = 64;
/** How many bytes before the offset are checked to be the ones counted. */
const TAIL_BYTES = 256;

const digest = (b: Buffer) => createHash('sha256').update(b).digest('hex').slice(0, 32);

export interface SessionSpend {
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  /** API messages counted at this turn. */
  messages: number;
  /** The models of the messages counted (at most a few). */
  models: string[];
  /** The models of counted messages whose cost is unknown: no cost in the transcript, no price in `prices` (at most five). */
  unpriced: string[];
  /** The transcript was another file or shorter than before: counted again from its start. */
  restarted?: boolean;
  /** More was appended than is read at one turn: the rest counts at the next. */
  more?: boolean;
  /** The figures a turn with this id was already sent with (a retried hook). */
  resent?: boolean;
}

interface SpendState {
  v: 1;
  path: string;
  dev: number;
  ino: number;
  offset: number;
  /** A digest of the (at most TAIL_BYTES) bytes before the offset. */
  tail: string;
  ids: string[];
  last?: { turn: string; tokensIn: number; tokensOut: number; costUsd: number; models: string[] };
}

/** The state file of an agent's session (agent ids are plain: letters, digits, `.`, `_`, `-`). */
export function spendStateFile(dir: string, agentId: string): string {
  // The id becomes a file name: only a plain agent id (a named agent's id reaches the hook unchecked).
  if (!AGENT_ID_RE.test(agentId)) throw new Error(`agent id ${JSON.stringify(agentId.slice(0, 120))} is not a valid agent id`);
  return join(dir, `${agentId}.json`);
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

async function loadState(file: string): Promise<SpendState | null> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return null; // none yet, or not what warden writes: start over
  }
  const s = raw as Partial<SpendState> | null;
  if (
    !s ||
    s.v !== 1 ||
    typeof s.path !== 'string' ||
    !isCount(s.dev) ||
    !isCount(s.ino) ||
    !isCount(s.offset) ||
    typeof s.tail !== 'string' ||
    !Array.isArray(s.ids)
  )
    return null;
  const ids = s.ids.filter((i): i is string => typeof i === 'string').slice(-BOUNDARY_IDS_KEPT);
  const l = s.last;
  const last =
    l && typeof l.turn === 'string' && isCount(l.tokensIn) && isCount(l.tokensOut) && typeof l.costUsd === 'number' && l.costUsd >= 0
      ? { ...l, models: Array.isArray(l.models) ? l.models.filter((m): m is string => typeof m === 'string') : [] }
      : undefined;
  return { v: 1, path: s.path, dev: s.dev, ino: s.ino, offset: s.offset, tail: s.tail, ids, ...(last ? { last } : {}) };
}

async function saveState(file: string, dir: string, state: SpendState): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(tmp, JSON.stringify(state), { mode: 0o600, flag: 'wx' });
  await rename(tmp, file);
}

/**
 * What the session spent since its last counted turn, for the turn `turnId`, from the transcript
 * `transcriptPath`, with its state in `dir` (see above); messages without a cost of their own
 * are priced from `prices` (the user's `prices:`, prices.ts) where it has their model. Throws TranscriptRefused when the
 * transcript is not one warden reads, or the error of reading it or of writing the state: then
 * nothing was counted, and the next turn counts it.
 */
export async function sessionSpendAtTurn(
  dir: string,
  agentId: string,
  transcriptPath: string,
  turnId: string,
  maxBytes = SESSION_READ_MAX_BYTES,
  prices?: PriceTable,
): Promise<SessionSpend> {
  const file = spendStateFile(dir, agentId);
  const prior = await loadState(file);
  if (prior?.last && prior.last.turn === turnId && prior.path === transcriptPath) {
    const { tokensIn, tokensOut, costUsd, models } = prior.last;
    return { tokensIn, tokensOut, costUsd, models, unpriced: [], messages: 0, resent: true };
  }
  // Read from a little before the offset: those bytes must be the ones counted up to it (the same
  // file, not rewritten in place); else the transcript is read again from its start.
  let sameFile = false;
  let back = 0;
  let read = await readTranscript(transcriptPath, 'transcript_path', maxBytes + TAIL_BYTES, (t) => {
    sameFile = !!prior && prior.path === transcriptPath && prior.dev === t.dev && prior.ino === t.ino && prior.offset <= t.size;
    back = sameFile ? Math.min(TAIL_BYTES, prior!.offset) : 0;
    return sameFile ? prior!.offset - back : 0;
  });
  const continues = sameFile && read.bytes.length >= back && digest(read.bytes.subarray(0, back)) === prior!.tail;
  const restarted = !!prior && !continues;
  if (!continues && read.from > 0) read = await readTranscript(transcriptPath, 'transcript_path', maxBytes + TAIL_BYTES);
  const skip = continues ? back : 0;
  const from = read.from + skip;
  const bytes = read.bytes.subarray(skip, skip + maxBytes);
  const more = read.more || read.bytes.length - skip > maxBytes;
  // Only whole lines: a line Claude Code is still writing counts at the next turn. A line longer than
  // a whole read is passed over (its remains are not JSON), so the offset always moves on.
  const whole = bytes.lastIndexOf(0x0a) + 1;
  const end = whole === 0 && more ? bytes.length : whole;
  const counted = usageByMessage(bytes.subarray(0, end).toString('utf8').split('\n'), { sidechains: false });
  const known = new Set(prior?.ids ?? []);
  // A transcript read again from its start (a resumed session's copy, say) holds what was counted
  // before: everything up to the newest remembered message counts nothing again, not only the
  // remembered ids.
  const entries = [...counted];
  let after = 0;
  if (restarted) for (let i = 0; i < entries.length; i++) if (known.has(entries[i]![0])) after = i + 1;
  const fresh = entries.slice(after).filter(([id]) => !known.has(id));
  const { priced, unpriced } = priceMessages(
    fresh.map(([, u]) => u),
    prices,
  );
  const spend = sumUsage(priced);
  const models = [...new Set(fresh.map(([, u]) => u.model).filter((m): m is string => !!m))].slice(0, 5);
  const named = [...counted.keys()].filter((id) => !id.startsWith('#'));
  const ids = [...(prior?.ids ?? []).filter((id) => !named.includes(id)), ...named].slice(-BOUNDARY_IDS_KEPT);
  const next: SpendState = {
    v: 1,
    path: transcriptPath,
    dev: read.file.dev,
    ino: read.file.ino,
    offset: from + end,
    tail: digest(read.bytes.subarray(Math.max(0, from + end - TAIL_BYTES - read.from), from + end - read.from)),
    ids,
    last: { turn: turnId, tokensIn: spend.tokensIn, tokensOut: spend.tokensOut, costUsd: spend.costUsd, models },
  };
  await saveState(file, dir, next);
  return { ...spend, models, unpriced, ...(restarted ? { restarted: true } : {}), ...(more ? { more: true } : {}) };
}
