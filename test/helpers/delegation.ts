/**
 * A delegation's handlers and raising a budget as the workflow shell takes them: a child's end
 * (workflows/children.ts), the subtree stopped with its parent and a queued child admitted
 * (workflows/agent.ts, workflows/loop.ts), the `raiseBudget` update.
 */
export { admitted, childEnded, stopChildren } from '../../src/domain/agent/delegation.js';
export { raiseBudget } from '../../src/domain/agent/budget-raise.js';
