/**
 * The mesh, client side: start a meshWorkflow (`mesh-<runId>`), read its status, apply its
 * integration branch, cancel it. Used by `warden mesh` and by services and tests.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { MeshInputSchema, type MeshInput, type MeshSpec } from '../domain/mesh/config.js';
import type { MeshStatus } from '../domain/mesh/state.js';
import { WardenState } from '../domain/contract/search-attributes.js';
import { meshApplyUpdate, meshCancelSignal, meshResumeSignal, meshStatusQuery } from '../messages/mesh.js';
import { AgentNotFoundError, InvalidInputError, agentAttributesRegistered, parseOrThrow, type WardenClient } from './index.js';

export const MESH_WORKFLOW_TYPE = 'meshWorkflow';
export const meshWorkflowId = (runId: string) => `mesh-${runId}`;
export const newRunId = () => `r${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;

/** No mesh with that run id (CLI exit code 3). */
export class MeshNotFoundError extends AgentNotFoundError {
  override name = 'MeshNotFoundError';
  constructor(readonly runId: string) {
    super(runId);
    this.message = `no such mesh run: ${runId} (workflow ${meshWorkflowId(runId)} not found)`;
  }
}
/** `apply` refused (open tasks, or the mesh is not ready): CLI exit code 1. */
export class MeshApplyRefusedError extends Error {
  override name = 'MeshApplyRefusedError';
}

export async function startMesh(w: WardenClient, input: MeshInput): Promise<{ runId: string; workflowId: string; spec: MeshSpec }> {
  const parsed = parseOrThrow(MeshInputSchema, { ...input, repo: resolve(input.repo) }, 'mesh input');
  const registered = await w.registeredSearchAttributes();
  const spec: MeshSpec = { ...parsed, searchAttributes: parsed.searchAttributes && agentAttributesRegistered(registered) };
  try {
    const handle = await w.client.workflow.start(MESH_WORKFLOW_TYPE, {
      taskQueue: w.taskQueue,
      workflowId: meshWorkflowId(spec.runId),
      args: [spec],
      workflowIdConflictPolicy: 'FAIL',
      staticSummary: `Mesh ${spec.runId}: ${spec.tasks.length} tasks, cap ${spec.tunables.cap}, in ${spec.repo}`,
      ...(spec.searchAttributes ? { typedSearchAttributes: [{ key: WardenState, value: 'setting-up' }] } : {}),
    } as Parameters<Client['workflow']['start']>[1]);
    return { runId: spec.runId, workflowId: handle.workflowId, spec };
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw new InvalidInputError(`mesh run ${spec.runId} already exists; pick another --run-id`);
    throw err;
  }
}

const notFound = (err: unknown) =>
  err instanceof WorkflowNotFoundError || (err as { code?: number })?.code === 5 || /not found/i.test((err as Error)?.message ?? '');

export async function meshStatus(w: WardenClient, runId: string): Promise<MeshStatus> {
  try {
    return await w.client.workflow.getHandle(meshWorkflowId(runId)).query(meshStatusQuery);
  } catch (err) {
    if (notFound(err)) throw new MeshNotFoundError(runId);
    throw err;
  }
}

export async function applyMesh(w: WardenClient, runId: string): Promise<{ commit: string; branch: string }> {
  const handle = w.client.workflow.getHandle(meshWorkflowId(runId));
  try {
    return await handle.executeUpdate(meshApplyUpdate, { args: [] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      // The innermost cause: an activity's refusal (MeshApplyError) arrives wrapped in "Activity task failed".
      let cause: unknown = err.cause;
      while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
      throw new MeshApplyRefusedError(cause instanceof Error ? cause.message : err.message);
    }
    if (notFound(err)) {
      const d = await handle.describe().catch(() => null);
      if (!d) throw new MeshNotFoundError(runId);
      throw new MeshApplyRefusedError(`mesh ${runId} has ended (${d.status.name.toLowerCase()}); nothing to apply`);
    }
    throw err;
  }
}

export async function cancelMesh(w: WardenClient, runId: string, reason?: string): Promise<void> {
  try {
    await w.client.workflow.getHandle(meshWorkflowId(runId)).signal(meshCancelSignal, reason ? { reason } : {});
  } catch (err) {
    if (notFound(err)) throw new MeshNotFoundError(runId);
    throw err;
  }
}

/**
 * Answer a mesh awaiting input (its conflict budget spent): it gets another conflict budget. The
 * mesh ignores it in any other phase. Checks the run exists first (MeshNotFoundError).
 */
export async function resumeMesh(w: WardenClient, runId: string, note?: string): Promise<void> {
  await meshStatus(w, runId);
  try {
    await w.client.workflow.getHandle(meshWorkflowId(runId)).signal(meshResumeSignal, note ? { note } : {});
  } catch (err) {
    if (notFound(err)) throw new MeshNotFoundError(runId);
    throw err;
  }
}

/** Wait until the mesh's status satisfies `pred` (polling the query). */
export async function waitForMesh(w: WardenClient, runId: string, pred: (s: MeshStatus) => boolean, timeoutMs = 60_000): Promise<MeshStatus> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await meshStatus(w, runId).catch(() => null);
    if (s && pred(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for mesh ${runId}${s ? ` (phase ${s.phase})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
