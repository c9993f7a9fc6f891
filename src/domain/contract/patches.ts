/**
 * The ids of workflow changes that alter replay (Temporal's `patched()`): the agent core asks them
 * with `ctx.ports.patched(id)`, the mesh workflow with `patched()` directly. The committed
 * histories are this version's baseline; a change made after it adds its id here with one line on
 * what it changed (docs/versioning.md).
 * Types and constants only: no imports.
 */
export const PATCH_IDS = [
  { id: 'budget-warnings', doc: "a budget's warning threshold (budgets.warnAt) queues a BUDGET whisper and starts one budget-warning alert, once per budget" },
  { id: 'budget-pause', doc: 'reaching a budget pauses the agent until a human raises it (was: a stop that ends it done)' },
  {
    id: 'incident-grouping',
    doc: 'an escalation whose evidence names a failing command joins its incident (joinIncident activity) instead of starting its own notifyWorkflow',
  },
  {
    id: 'continue-in-quiet-gap',
    doc: "a continue-as-new deferred for a quiet moment wakes the watch when the quiet gap after the latest turn has passed (was: only at the next turn or the watch's own deadlines)",
  },
] as const satisfies readonly { id: string; doc: string }[];

/** One id of PATCH_IDS. */
export type PatchId = (typeof PATCH_IDS)[number]['id'];
