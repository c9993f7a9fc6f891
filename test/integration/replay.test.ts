/**
 * Replay: every history committed under test/histories/ (recorded from the integration scenarios
 * with `npm run record-histories`) must replay against the current workflow code without a
 * nondeterminism error. A workflow change that breaks this needs `patched()`.
 */
import { bundleWorkflowCode, Worker, type WorkflowBundle } from '@temporalio/worker';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect, test } from 'vitest';
import { HISTORIES_DIR } from '../helpers/histories.js';
import { workflowBundle } from '../helpers/stack.js';
import { TRACED_BUNDLE_OPTIONS } from '../../workers/bundle.js';
import { workflowSpanSinks } from '../../src/telemetry/workflow-spans.js';

const files = readdirSync(HISTORIES_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

test('committed histories exist (escalation, crash, continue-as-new, bad input, idle, stop)', () => {
  expect(files.length).toBeGreaterThanOrEqual(7);
});

test.each(files)('replays %s', async (file) => {
  // The JSON of `temporal workflow show --output json`; the replayer converts it itself.
  const history = JSON.parse(readFileSync(join(HISTORIES_DIR, file), 'utf8')) as { events: unknown[] };
  expect(history.events.length).toBeGreaterThan(10);
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, recordedWorkflowId(history) ?? basename(file, '.json'));
});

/**
 * With the SDK's tracing workflow interceptors (the bundle of a worker that exports traces): they
 * add span headers to the commands they wrap and no command, so every history still replays.
 */
let traced: Promise<WorkflowBundle> | null = null;
const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } as never;
test.each(files)('replays %s with the tracing workflow interceptors', { timeout: 120_000 }, async (file) => {
  traced ??= bundleWorkflowCode({ ...TRACED_BUNDLE_OPTIONS, logger: quiet });
  const history = JSON.parse(readFileSync(join(HISTORIES_DIR, file), 'utf8')) as { events: unknown[] };
  await Worker.runReplayHistory({ workflowBundle: await traced, sinks: workflowSpanSinks() }, history, recordedWorkflowId(history) ?? basename(file, '.json'));
});

/**
 * The workflow id the history ran under (the JSON does not hold it): an agent's is agent-<agentId>,
 * from its spec, the start event's first argument; a group counter's is warden-group-<group>, from its input. The workflow checks it (patch
 * 'agent-workflow-id'), so a replay under another id would take a different path.
 */
function recordedWorkflowId(history: { events: unknown[] }): string | null {
  const started = history.events[0] as {
    eventType?: string;
    workflowExecutionStartedEventAttributes?: { workflowType?: { name?: string }; input?: { payloads?: Array<{ data?: string }> } };
  };
  const attrs = started.workflowExecutionStartedEventAttributes;
  const data = attrs?.input?.payloads?.[0]?.data;
  const type = attrs?.workflowType?.name;
  if ((type !== 'agentWorkflow' && type !== 'meshWorkflow' && type !== 'groupBudgetWorkflow') || !data) return null;
  try {
    const spec = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { agentId?: unknown; runId?: unknown; group?: unknown };
    if (type === 'groupBudgetWorkflow') return typeof spec.group === 'string' ? `warden-group-${spec.group}` : null; // a group's counter
    if (type === 'meshWorkflow') return typeof spec.runId === 'string' ? `mesh-${spec.runId}` : null; // a mesh is mesh-<runId>
    return typeof spec.agentId === 'string' ? `agent-${spec.agentId}` : null;
  } catch {
    return null;
  }
}
