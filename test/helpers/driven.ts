/**
 * A driven turn's handlers as the workflow shell takes them (workflows/turn.ts): its start, its
 * end, a failure, a rate limit and the result's check.
 */
export { beginTurn, completeTask, resultChecked, turnFinished } from '../../src/domain/agent/driven.js';
export { turnFailed } from '../../src/domain/agent/rails.js';
export { retryAfterBlock, turnRateLimited } from '../../src/domain/agent/blocking.js';
export { claimWithResult } from '../../src/domain/agent/verification.js';
