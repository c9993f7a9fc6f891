/** The AgentSpec of one mesh attempt: a driven agentWorkflow child, in its worktree, told where to write. */
import type { AgentSpecInput } from '../contract/schemas.js';
import type { MeshSpec, MeshTask } from './config.js';
import { workerPrompt } from './render.js';
import type { Attempt } from './state.js';

export function workerSpec(args: {
  spec: MeshSpec;
  task: MeshTask;
  attempt: Attempt;
  base: string;
  parentWorkflowId: string;
  rebaseNote?: string;
}): AgentSpecInput {
  const { spec, task, attempt: a } = args;
  const env = { WARDEN_MESH_RUN: spec.runId, WARDEN_MESH_TASK: task.slug, WARDEN_MESH_CHECKPOINT: a.checkpointPath, WARDEN_MESH_PATCH: a.patchPath };
  return {
    agentId: a.agentId,
    task: workerPrompt({ runId: spec.runId, task, attempt: a, base: args.base, tunables: spec.tunables, rebaseNote: args.rebaseNote }),
    driver: spec.driver.kind === 'command' ? { ...spec.driver, env } : spec.driver,
    driven: { workDir: a.worktree, maxTurns: spec.workerMaxTurns, killGraceMs: spec.killGraceMs, heartbeatTimeoutMs: spec.workerHeartbeatTimeoutMs },
    ...(spec.supervisor ? { supervisor: spec.supervisor } : {}),
    ...(spec.evaluator ? { evaluator: spec.evaluator } : {}),
    notify: spec.notify,
    searchAttributes: spec.searchAttributes,
    // Workers do not spawn sub-agents; the mesh is their parent (WardenParent, spend).
    delegation: { mode: 'solo', maxDepth: 1 },
    parent: { agentId: `mesh-${spec.runId}`, workflowId: args.parentWorkflowId, depth: 1 },
    // The mesh alone may hold the worker (a `block` until its rebase turn): it keeps the token.
    ...(a.holdToken ? { safety: { holdToken: a.holdToken } } : {}),
  };
}

/**
 * Why a worker's agent is `blocked` while the mesh holds its rebase request for a human (past the
 * conflict budget): `waiting for its rebase turn (mesh RUN task N): the mesh waits for a human
 * (conflict budget spent (3))`. `why` is the mesh's own reason; its first clause is kept.
 */
export function rebaseWaitReason(runId: string, taskIndex: number, why: string): string {
  const first = why.split(';')[0]!.trim();
  return `waiting for its rebase turn (mesh ${runId} task ${taskIndex})${first ? `: the mesh waits for a human (${first})` : ''}`;
}
