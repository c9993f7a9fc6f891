/** All activities the warden worker registers, built around one pino logger. */
import type { Logger } from 'pino';
import type { WardenActivities } from '../src/domain/contract/activity-types.js';
import type { IncidentActivities } from '../src/domain/notify/incident-activity.js';
import { makeEvaluate } from './evaluate.js';
import { makeNotifyWebhook } from './notify.js';
import { makeJoinIncident } from './incident.js';
import { makeRunTurn } from './turn.js';
import { checkResult } from './result.js';
import { makeProtectedDiff, makeStartCommit, makeVerifyDone } from './verify.js';
import { makeMeshActivities } from './mesh/index.js';
import type { MeshActivities } from '../src/domain/mesh/activity-types.js';
import type { GroupActivities } from '../src/domain/group/activity-types.js';
import { listGroupAgents } from './group.js';

export function createActivities(log: Logger): WardenActivities & MeshActivities & IncidentActivities & GroupActivities {
  return {
    evaluate: makeEvaluate(log),
    notifyWebhook: makeNotifyWebhook(log),
    runTurn: makeRunTurn(log),
    checkResult,
    verifyDone: makeVerifyDone(log),
    startCommit: makeStartCommit(log),
    protectedDiff: makeProtectedDiff(log),
    joinIncident: makeJoinIncident(log),
    listGroupAgents,
    ...makeMeshActivities(log),
  };
}
