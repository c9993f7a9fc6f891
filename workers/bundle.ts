/**
 * The workflow bundle: how warden's workflow code is packaged for the worker.
 *
 * With the SDK's reusable V8 context, every cached workflow evaluates again the module scope of
 * every module of the bundle that is not preloaded (the SDK keeps a module cache per workflow):
 * each function object, each module-level constant, each module's exports object would be rebuilt
 * per agent (docs/operating/capacity.md, "Memory per cached agent"). So everything warden's
 * workflows run is preloaded: `preloadModules` are evaluated once per worker thread and shared by
 * every workflow of it:
 * - zod itself (workers/zod-preload: it also runs zod's lazy one-time initialisation before the
 *   freeze);
 * - last, the workflow entry itself (workflows/index: the workflow shells, their messages, warden's
 *   domain code and the modules that validate with a zod schema). Nothing in it holds per-workflow state at module
 *   level: every workflow's state lives in what its workflow function builds when it runs
 *   (test/unit/preload.test.ts holds that for every module the entry loads).
 * The SDK deep-freezes what a preloaded module exports, and zod writes to a schema on first use
 * ("Cannot define property …, object is not extensible"), so no zod schema may be reachable from a
 * preloaded module's exports: webpack's scope
 * hoisting (`concatenateModules`, off in the SDK's development-mode config) makes the workflow
 * entry and the schema modules one module whose only exports are the workflow functions; the
 * schemas are variables inside it, which the freeze does not reach. Modules that an earlier
 * preload also loads stay separate (webpack only inlines a module into the one group that imports
 * it), so they stay shared. A unit test checks the prebuilt bundle for that shape.
 *
 * `npm run build` prebuilds the bundle into dist/workflow-bundle.js (`node dist/workers/bundle.js`),
 * so a production worker starts without running webpack; the worker falls back to bundling from
 * `workflowsPath` when the prebuilt file is missing or older than the compiled workflow code.
 */
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PAYLOAD_CONVERTER_PATH } from '../src/converter/path.js';

const ext = extname(fileURLToPath(import.meta.url));
const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

export const WORKFLOWS_PATH = here(`../workflows/index${ext}`);

/**
 * `WARDEN_WORKFLOW_STACK_TRACES=1`: keep the SDK's stack traces in workflow code (the Web UI's
 * "Stack Trace" tab, stacks on errors raised in workflow code) at the cost of worker CPU and
 * memory per agent; workers/stack-preload says how much. Off by default.
 */
export function keepsStackTraces(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.WARDEN_WORKFLOW_STACK_TRACES;
  return v === '1' || v === 'true';
}

/** zod and the schema cache: preloaded before any module that builds a schema (also the bare side of bench/agent-memory with --preload-zod). */
export const ZOD_PRELOADS: string[] = [here(`./zod-preload${ext}`)];

/**
 * Shared by every workflow of a worker thread, in load order (workers/stack-preload and zod-preload
 * say why that is safe; the workflow entry last, see above). A separate preload of the pure domain
 * code, and a per-thread cache of the schemas, no longer pay since the entry itself is preloaded:
 * measured with bench/agent-memory, 77 KiB per cached agent at 400 agents with them and without.
 */
export function preloadModules(env: NodeJS.ProcessEnv = process.env): string[] {
  const shared = [...ZOD_PRELOADS, WORKFLOWS_PATH];
  return keepsStackTraces(env) ? shared : [here(`./stack-preload${ext}`), ...shared];
}

export const PRELOAD_MODULES: string[] = preloadModules();

type WebpackConfig = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** Scope hoisting: the per-workflow modules become one (see above). */
export const webpackConfigHook = (config: WebpackConfig): WebpackConfig => ({ ...config, optimization: { ...config.optimization, concatenateModules: true } });

/** What the worker passes when it bundles from source (workers/main.ts). */
export const BUNDLER_OPTIONS = { preloadModules: PRELOAD_MODULES, webpackConfigHook };

/**
 * Options for `bundleWorkflowCode` (and the worker's own bundling): the same everywhere, tests
 * included. The tolerant payload converter (src/converter) goes into the bundle, so an undecodable
 * signal or start reaches the workflow as a refusal instead of failing its task.
 */
export const BUNDLE_OPTIONS = { workflowsPath: WORKFLOWS_PATH, payloadConverterPath: PAYLOAD_CONVERTER_PATH, ...BUNDLER_OPTIONS };

/**
 * The Temporal SDK's OpenTelemetry workflow interceptors (a span for the workflow's run, for each
 * activity it schedules, child it starts, signal it sends or handles), registered in the bundle
 * only when the worker exports traces: the worker then bundles from source with them
 * (`interceptors.workflowModules`, workers/main.ts). They add a header to the commands they wrap
 * and never a command (test/integration/replay.test.ts replays every committed history with them).
 * Not in the prebuilt bundle: evaluated per workflow (they hold a tracer), they would cost every
 * cached agent memory while nothing is exported.
 */
export const TRACING_INTERCEPTOR_MODULES: string[] = [
  createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** The bundle with the tracing interceptors, as the worker builds it when it exports traces. */
export const TRACED_BUNDLE_OPTIONS = { ...BUNDLE_OPTIONS, workflowInterceptorModules: TRACING_INTERCEPTOR_MODULES };

/** Where `npm run build` writes the prebuilt bundle (dist/workflow-bundle.js). */
export const PREBUILT_BUNDLE_PATH = here('../workflow-bundle.js');

function newestMtimeMs(dir: string): number {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtimeMs(p));
    else if (entry.name.endsWith('.js')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * The prebuilt bundle's path when it is usable: it exists, and it is at least as new as every
 * compiled module it was built from (dist/workflows, dist/src/domain, dist/workers: the preload entries). `WARDEN_WORKFLOW_BUNDLE`
 * overrides: a path to use that bundle, or `0` to always bundle from source. With
 * `WARDEN_WORKFLOW_STACK_TRACES=1` the worker bundles from source (the prebuilt bundle has them off).
 */
export function prebuiltBundlePath(env: NodeJS.ProcessEnv = process.env): string | null {
  const override = env.WARDEN_WORKFLOW_BUNDLE;
  if (override === '0') return null;
  if (override) return override;
  if (keepsStackTraces(env)) return null; // the prebuilt bundle turns stack traces off
  if (ext !== '.js' || !existsSync(PREBUILT_BUNDLE_PATH)) return null;
  const built = statSync(PREBUILT_BUNDLE_PATH).mtimeMs;
  const sources = Math.max(newestMtimeMs(here('../workflows')), newestMtimeMs(here('../src/domain')), newestMtimeMs(here('.')));
  return built >= sources ? PREBUILT_BUNDLE_PATH : null;
}

export async function buildWorkflowBundle(outFile = PREBUILT_BUNDLE_PATH): Promise<{ path: string; bytes: number }> {
  const { code } = await bundleWorkflowCode({
    ...BUNDLE_OPTIONS,
    logger: {
      trace() {},
      debug() {},
      info() {},
      warn: (m: string) => process.stderr.write(`${m}\n`),
      error: (m: string) => process.stderr.write(`${m}\n`),
      log() {},
    } as never,
  });
  writeFileSync(outFile, code);
  return { path: outFile, bytes: Buffer.byteLength(code) };
}

// `node dist/workers/bundle.js [OUT]`: part of `npm run build`.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildWorkflowBundle(process.argv[2]).then(
    ({ path, bytes }) => process.stderr.write(`workflow bundle: ${path} (${Math.round(bytes / 1024)} KiB)\n`),
    (err) => {
      process.stderr.write(`workflow bundle failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
