/**
 * The ids of workflow changes that alter replay (Temporal's `patched()`): the agent core asks them
 * with `ctx.ports.patched(id)`, the mesh workflow with `patched()` directly. The committed
 * histories are this version's baseline; a change made after it adds its id here with one line on
 * what it changed (docs/versioning.md). Types and constants only: no imports.
 */
export const PATCH_IDS = [
  { id: 'interrupt-while-blocked', doc: 'Interrupt ends a blocked wait (awaiting-input) instead of being refused.' },
  { id: 'steer-joins-retry', doc: 'A steer while a turn waits to be retried joins the input of the retry.' },
  { id: 'blocked-time-limit', doc: 'A rate-limited agent blocked for safety.maxBlockedMs in all fails (circuit open).' },
  {
    id: 'continue-at-quiet-moment',
    doc: 'A long run of an agent whose turns come back to back continues as new at a quiet moment, not at once (src/domain/agent/run-limits.ts).',
  },
  { id: 'mesh-continue-as-new', doc: 'The mesh continues as new when its history is long (workflows/mesh/loop.ts), runs from before never do.' },
  { id: 'mesh-attempt-cleanup', doc: 'A mesh removes the worktree and branch of a replaced attempt once its agent ended (workflows/mesh/attempts.ts).' },
  {
    id: 'mesh-removal-while-ready',
    doc: 'A replaced attempt whose agent ends after the mesh is ready is removed then, not only at clean-up (workflows/mesh/loop.ts).',
  },
  {
    id: 'mesh-rebase-hold',
    doc: 'A mesh holding a rebase request for a human tells the agent of the worker with a block signal (workflows/mesh/attempts.ts).',
  },
  { id: 'mesh-task-check', doc: 'The verify command of a mesh task runs on its gated patch before integration (workflows/mesh/tick.ts).' },
  {
    id: 'protect-any-change',
    doc: 'Any change to a protected file (not only a deletion or lost assertions) fails a done-claim (src/domain/agent/verification.ts).',
  },
  {
    id: 'mesh-check-on-integration',
    doc: "A mesh task's check runs in a worktree warden makes from the integration head plus the gated patch (meshTaskCheck), not in the worker's (workflows/mesh/check.ts).",
  },
  {
    id: 'mesh-first-edit-target',
    doc: 'A mesh attempt with no real change in its patch draft by the first edit target is restarted (src/domain/mesh/rules.ts, asked when it would fire).',
  },
  {
    id: 'mesh-hedging',
    doc: 'A mesh with a hedge budget over 1 keeps an attempt that misses the ack SLA or stalls and starts a hedge beside it (workflows/mesh/tick.ts).',
  },
  {
    id: 'block-holder',
    doc: "A `block` needs the holder's token (safety.holdToken), a hold ends after safety.maxHeldMs, and a held external agent's turns are judged (src/domain/agent/held.ts).",
  },
  { id: 'mesh-holder-token', doc: 'A mesh gives each worker a holder token and sends it with its `block` (workflows/mesh/attempts.ts).' },
] as const;

/** One id of PATCH_IDS. */
export type PatchId = (typeof PATCH_IDS)[number]['id'];
