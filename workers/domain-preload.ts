/**
 * Loaded once per worker thread through the bundle's `preloadModules` (workers/bundle.ts): warden's
 * pure domain code that the workflows use, so that its module scope (every function object, every
 * constant, every export) is built once per thread and shared by every cached workflow, instead of
 * once per cached agent (docs/operating/capacity.md, "Memory per cached agent").
 *
 * Everything these modules import is shared too (the SDK puts every module loaded during the
 * preload in the thread's shared module cache) and deep-frozen: the SDK freezes what they export.
 * So these modules, and everything they import, must:
 * - hold no module-level mutable state (a `let`, a Map or Set that is written, a cache): it would be
 *   shared by every workflow of the thread. The two exceptions: `shared()`'s schema cache
 *   (src/domain/contract/shared.ts) and `turnBytes`'s WeakMap (src/domain/contract/window-budget.ts),
 *   keyed by a workflow's own turn objects, so no workflow sees another's entries;
 * - never have an exported object or array mutated (it is frozen: the write would throw inside a
 *   workflow); copy it instead (`{ ...RUN_LIMITS }`);
 * - not import @temporalio/* (the workflow API is per workflow) nor a module that exports a zod
 *   schema (zod writes to a schema on first use, and the freeze would make that throw). The modules
 *   that validate with a schema (contract/schemas and its parts, agent/reporting, agent/controls,
 *   agent/links, agent/delegation-spec, judgement/verdict, judgement/scoring, mesh/config,
 *   notify/notify) stay per workflow.
 * test/unit/domain-preload.test.ts holds all of this, and that the list below is complete.
 */
import '../src/domain/agent/blocking.js';
import '../src/domain/agent/budgets.js';
import '../src/domain/agent/bytes.js';
import '../src/domain/agent/compaction-state.js';
import '../src/domain/agent/compaction.js';
import '../src/domain/agent/core.js';
import '../src/domain/agent/delegation.js';
import '../src/domain/agent/dismissal.js';
import '../src/domain/agent/held.js';
import '../src/domain/agent/hold-state.js';
import '../src/domain/agent/human-wait.js';
import '../src/domain/agent/link-state.js';
import '../src/domain/agent/next-step.js';
import '../src/domain/agent/notify.js';
import '../src/domain/agent/rails.js';
import '../src/domain/agent/rate-limit.js';
import '../src/domain/agent/records.js';
import '../src/domain/agent/run-limits.js';
import '../src/domain/agent/session-end-state.js';
import '../src/domain/agent/session-end.js';
import '../src/domain/agent/slices/delegation.js';
import '../src/domain/agent/slices/driven.js';
import '../src/domain/agent/slices/judgement.js';
import '../src/domain/agent/slices/lifecycle.js';
import '../src/domain/agent/slices/spend.js';
import '../src/domain/agent/slices/turns.js';
import '../src/domain/agent/slices/whispers.js';
import '../src/domain/agent/state.js';
import '../src/domain/agent/stop.js';
import '../src/domain/agent/supervision.js';
import '../src/domain/agent/teaching-state.js';
import '../src/domain/agent/turn-input.js';
import '../src/domain/agent/verification-state.js';
import '../src/domain/agent/verification.js';
import '../src/domain/agent/visibility.js';
import '../src/domain/agent/waiting-state.js';
import '../src/domain/contract/activity-types.js';
import '../src/domain/contract/duration.js';
import '../src/domain/glob.js';
import '../src/domain/contract/limits.js';
import '../src/domain/contract/search-attributes.js';
import '../src/domain/contract/shared.js';
import '../src/domain/contract/states.js';
import '../src/domain/contract/undecodable.js';
import '../src/domain/contract/window-budget.js';
import '../src/domain/judgement/cases.js';
import '../src/domain/judgement/evidence.js';
import '../src/domain/judgement/finding.js';
import '../src/domain/judgement/handoff.js';
import '../src/domain/judgement/heuristic/admit.js';
import '../src/domain/judgement/heuristic/denied.js';
import '../src/domain/judgement/heuristic/drift.js';
import '../src/domain/judgement/heuristic/index.js';
import '../src/domain/judgement/heuristic/lookup.js';
import '../src/domain/judgement/heuristic/normalize.js';
import '../src/domain/judgement/heuristic/protected.js';
import '../src/domain/judgement/heuristic/reward.js';
import '../src/domain/judgement/heuristic/self-control.js';
import '../src/domain/judgement/heuristic/similarity.js';
import '../src/domain/judgement/heuristic/spiral.js';
import '../src/domain/judgement/heuristic/stall.js';
import '../src/domain/judgement/heuristic/types.js';
import '../src/domain/judgement/ladder.js';
import '../src/domain/judgement/tiered.js';
import '../src/domain/judgement/verdict-text.js';
import '../src/domain/judgement/window.js';
import '../src/domain/mesh/alert-text.js';
import '../src/domain/mesh/carried.js';
import '../src/domain/mesh/check.js';
import '../src/domain/mesh/finished.js';
import '../src/domain/mesh/gates.js';
import '../src/domain/mesh/hedge.js';
import '../src/domain/mesh/next-step.js';
import '../src/domain/mesh/notify.js';
import '../src/domain/mesh/policy.js';
import '../src/domain/mesh/render.js';
import '../src/domain/mesh/rules.js';
import '../src/domain/mesh/state.js';
import '../src/domain/mesh/worker.js';
import '../src/domain/notify/cause.js';
import '../src/domain/notify/chat-text.js';

export const domainPreloaded = true;
