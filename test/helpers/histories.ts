/**
 * Replay histories: integration scenarios save their workflow histories under test/histories/
 * when WARDEN_RECORD_HISTORIES=1 (`npm run record-histories`); test/integration/replay.test.ts
 * replays every committed file against the current workflow code.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './stack.js';

export const HISTORIES_DIR = join(ROOT, 'test/histories');

export async function recordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  if (process.env.WARDEN_RECORD_HISTORIES !== '1') return;
  const history = await handle.fetchHistory();
  mkdirSync(HISTORIES_DIR, { recursive: true });
  writeFileSync(join(HISTORIES_DIR, `${name}.json`), historyToJSON(history));
}
