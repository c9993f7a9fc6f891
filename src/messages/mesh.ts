/** Message definitions of meshWorkflow. */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { MeshStatus } from '../domain/mesh/state.js';

export const meshStatusQuery = defineQuery<MeshStatus>('meshStatus');
/** Stop every worker and end the mesh (nothing is merged). */
export const meshCancelSignal = defineSignal<[{ reason?: string }?]>('cancel');
/** A human answers an awaiting-input mesh (conflict budget spent): another conflict budget. */
export const meshResumeSignal = defineSignal<[{ note?: string }?]>('resume');
/** Merge the integration branch into the user's branch; refused while tasks are open. */
export const meshApplyUpdate = defineUpdate<{ commit: string; branch: string }, []>('apply');
