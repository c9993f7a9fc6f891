/** All activities the warden worker registers, built around one pino logger. */
import type { Logger } from 'pino';
import type { WardenActivities } from '../src/domain/activity-types.js';
import { makeEvaluate } from './evaluate.js';
import { makeNotifyWebhook } from './notify.js';
import { makeRunTurn } from './turn.js';
import { checkResult } from './result.js';

export function createActivities(log: Logger): WardenActivities {
  return {
    evaluate: makeEvaluate(log),
    notifyWebhook: makeNotifyWebhook(log),
    runTurn: makeRunTurn(log),
    checkResult,
  };
}
