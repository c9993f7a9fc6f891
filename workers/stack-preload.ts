/**
 * Loaded first through the bundle's `preloadModules` (workers/bundle.ts), once per worker thread:
 * turns off the stack trace that the Temporal SDK captures for every promise made in workflow code.
 *
 * The SDK keeps, for its stack-trace query (the Web UI's "Stack Trace" tab), the stack of every
 * pending promise of every cached workflow: a promise hook creates an Error for each promise and
 * formats its frames through the bundle's source map. Measured on warden's agent workflow, that is
 * about a quarter of the worker's CPU per replayed turn and ~17 KiB of heap per cached agent
 * (docs/operating/capacity.md, "Stack traces in workflow code"). With `Error.stackTraceLimit` at 0
 * in the workflow sandbox the hook still runs but captures no frame.
 *
 * What it costs: the stack-trace query answers with empty stacks, and errors raised in workflow
 * code carry their message without a stack. What an agent is waiting for is in its status
 * (`warden status`, the workflow's current details in the Web UI). `WARDEN_WORKFLOW_STACK_TRACES=1`
 * on the worker brings the SDK's stack traces back (the worker then bundles without this module).
 *
 * The SDK deep-freezes the sandbox's globals after the preload, so workflow code cannot change this.
 */
Error.stackTraceLimit = 0;

export const workflowStackFrames = 0;
