/** The workflow bundle's entry: every workflow type the warden worker registers. */
export { agentWorkflow } from './agent.js';
export { notifyWorkflow } from './notify.js';
export { meshWorkflow } from './mesh/workflow.js';
export { incidentWorkflow } from './incident.js';
export { groupBudgetWorkflow } from './group.js';
