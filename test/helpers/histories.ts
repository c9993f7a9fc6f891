/**
 * Replay histories: integration scenarios save their workflow histories under test/histories/
 * when WARDEN_RECORD_HISTORIES=1 (`npm run record-histories`), using the platform's own tool
 * (`temporal workflow show --output json`); test/integration/replay.test.ts replays every
 * committed file against the current workflow code.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './stack.js';
import { temporalCli } from './temporal-cli.js';

export const HISTORIES_DIR = join(ROOT, 'test/histories');

/** The handle's current run, or the run `runId` of its workflow. */
export async function recordHistory(address: string, handle: WorkflowHandle, name: string, runId?: string): Promise<void> {
  if (process.env.WARDEN_RECORD_HISTORIES !== '1') return;
  const r = await temporalCli(address, ['workflow', 'show', '--workflow-id', handle.workflowId, ...(runId ? ['--run-id', runId] : []), '--output', 'json']);
  if (r.exitCode !== 0) throw new Error(`temporal workflow show failed: ${r.all}`);
  JSON.parse(String(r.stdout)); // must be JSON
  mkdirSync(HISTORIES_DIR, { recursive: true });
  writeFileSync(join(HISTORIES_DIR, `${name}.json`), String(r.stdout));
}
