/** What a compaction carries across continue-as-new (part of CarriedState; rules in compaction.ts). */

/** The ladder's last resort: the agent goes on in a fresh context that starts from `handoff`. */
export interface Compaction {
  /** What the fresh context starts from (src/domain/judgement/handoff.ts), bounded. */
  handoff: string;
  /** Why (the verdict that reached the threshold). */
  reason: string;
  /** When warden decided it (ms). */
  at: number;
  /** The fresh context has taken its first turn. */
  done: boolean;
  /** When it finished (ms). */
  doneAt?: number;
  /** External agents: the id of the reported turn whose reply carried the handoff ('' for a turn without id); null: not delivered yet. */
  deliveredWith: string | null;
}

export interface CompactionState {
  /** The last compaction (pending until `done`), or null: never compacted. */
  compaction: Compaction | null;
}

export const freshCompaction = (): CompactionState => ({ compaction: null });

/*
 * The only function that assigns the compaction field (docs/developing/architecture.md, "State
 * slices"); the rules are in compaction.ts.
 */

/** A compaction was decided, delivered, or finished: the newest one. */
export function setCompaction(s: CompactionState, compaction: Compaction): void {
  s.compaction = compaction;
}
