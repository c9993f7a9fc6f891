/**
 * What a mesh carries across continue-as-new, kept within a byte budget. The status grows with the
 * tasks and their attempts (each attempt keeps its patch's file names, up to 8 KiB, and its last
 * output, up to 1,000 characters); the continue-as-new input must stay well under Temporal's 2 MB
 * payload limit, or the run could never continue. Detail only shown to people goes first: the
 * file names of attempts already observed (the next observation of a live attempt reads them
 * again), then closed attempts' last outputs, then the older log lines. The decisions the mesh
 * takes (states, gates, shas, counters) are never trimmed.
 */
import { jsonBytes } from '../contract/limits.js';
import type { MeshStatus } from './state.js';

/** The budget for the carried status (the input's task list comes on top: at most MESH_MAX_TASKS tasks). */
export const MESH_CARRIED_MAX_BYTES = 1024 * 1024;
/** File names an attempt keeps once trimmed (the rest is counted in the last entry). */
const KEEP_FILES = 20;
/** Log lines kept once trimmed. */
const KEEP_LOG = 50;

export interface FittedMesh {
  status: MeshStatus;
  bytesBefore: number;
  bytesAfter: number;
  /** What was trimmed, in order; empty when the status fitted as it was. */
  trimmed: string[];
}

const fewerFiles = (files: string[]): string[] =>
  files.length <= KEEP_FILES ? files : [...files.slice(0, KEEP_FILES - 1), `… ${files.length - KEEP_FILES + 1} more`];

export function fitMeshCarried(status: MeshStatus, maxBytes = MESH_CARRIED_MAX_BYTES): FittedMesh {
  const bytesBefore = jsonBytes(status);
  const trimmed: string[] = [];
  let s = status;
  const steps: Array<[string, (m: MeshStatus) => MeshStatus]> = [
    [
      'file names of observed patches',
      (m) => ({ ...m, tasks: m.tasks.map((r) => ({ ...r, attempts: r.attempts.map((a) => ({ ...a, patchFiles: fewerFiles(a.patchFiles) })) })) }),
    ],
    [
      "closed attempts' last outputs",
      (m) => ({ ...m, tasks: m.tasks.map((r) => ({ ...r, attempts: r.attempts.map((a) => (a.closed ? { ...a, lastOutput: null } : a)) })) }),
    ],
    ['older log lines', (m) => ({ ...m, log: m.log.slice(-KEEP_LOG) })],
  ];
  for (const [what, step] of steps) {
    if (jsonBytes(s) <= maxBytes) break;
    s = step(s);
    trimmed.push(what);
  }
  return { status: s, bytesBefore, bytesAfter: trimmed.length ? jsonBytes(s) : bytesBefore, trimmed };
}
