/**
 * The `warden` command's definition: every verb, option and help text (src/cli/verbs/). Each verb's
 * implementation (src/cli/commands/) is imported when that verb runs, never here: `warden --help`
 * and a hook must not pay for every verb's dependencies (a unit test, cli-lazy-imports, keeps it so).
 */
import { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { register as registerCases } from './verbs/cases.js';
import { register as registerBudget } from './verbs/budget.js';
import { register as registerDismiss } from './verbs/dismiss.js';
import { register as registerEvaluate } from './verbs/evaluate.js';
import { register as registerHook } from './verbs/hook.js';
import { register as registerInstall } from './verbs/install.js';
import { register as registerIrc } from './verbs/irc.js';
import { register as registerReport } from './verbs/report.js';
import { register as registerSchemas } from './verbs/schemas.js';
import { register as registerSignals } from './verbs/signals.js';
import { register as registerServe } from './verbs/serve.js';
import { register as registerSetup } from './verbs/setup.js';
import { register as registerDelegate } from './verbs/delegate.js';
import { register as registerStack } from './verbs/stack.js';
import { register as registerStart } from './verbs/start.js';
import { register as registerStatus } from './verbs/status.js';
import { register as registerTop } from './verbs/top.js';
import { register as registerMesh } from './verbs/mesh.js';
import { register as registerMcp } from './verbs/mcp.js';
import { register as registerTrust } from './verbs/trust.js';
import { register as registerGroup } from './verbs/group.js';

const pkg = JSON.parse(readFileSync(packageJsonUrl(), 'utf8')) as { version: string };
/** warden's version (package.json). */
export const VERSION = pkg.version;

/** warden's package.json, from the built place (dist/src/cli/) or from the source (src/cli/). */
function packageJsonUrl(): URL {
  const built = new URL('../../../package.json', import.meta.url);
  const source = new URL('../../package.json', import.meta.url);
  if (!existsSync(built)) return source;
  const name = (JSON.parse(readFileSync(built, 'utf8')) as { name?: string }).name;
  return name === 'warden' ? built : source;
}

/** Every verb in the order `warden --help` lists them, with the register function that defines it. */
const VERBS: [names: readonly string[], register: (program: Command) => void][] = [
  [['dev', 'server', 'worker'], registerStack],
  [['start'], registerStart],
  [['report'], registerReport],
  [['steer', 'interrupt', 'stop', 'pause', 'resume', 'abort', 'heartbeat'], registerSignals],
  [['dismiss'], registerDismiss],
  [['budget'], registerBudget],
  [['status', 'list'], registerStatus],
  [['evaluate'], registerEvaluate],
  [['cases'], registerCases],
  [['schemas'], registerSchemas],
  [['setup'], registerSetup],
  [['delegate'], registerDelegate],
  [['hook'], registerHook],
  [['install', 'uninstall'], registerInstall],
  [['top'], registerTop],
  [['irc'], registerIrc],
  [['serve'], registerServe],
  [['mcp'], registerMcp],
  [['mesh'], registerMesh],
  [['trust'], registerTrust],
  [['group'], registerGroup],
];

const GLOBAL_OPTIONS_WITH_VALUE = ['--address', '--namespace', '--task-queue'];

/**
 * The verb a command line runs (`warden --address x hook claude` → `hook`), when it is one of
 * warden's: the first word after the global options. Undefined for `--help`, `--version`, no verb
 * or an unknown one (the whole program is built then, so help and "did you mean" see every verb).
 */
export function verbOf(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const a = argv[i]!;
    if (GLOBAL_OPTIONS_WITH_VALUE.includes(a)) i++;
    else if (GLOBAL_OPTIONS_WITH_VALUE.some((o) => a.startsWith(`${o}=`))) continue;
    else if (a.startsWith('-')) return undefined;
    else return VERBS.some(([names]) => names.includes(a)) ? a : undefined;
  }
  return undefined;
}

/**
 * The program with every verb, or with `only` the verb given (see verbOf): running one verb then
 * defines only that verb's options (a hook, run at every tool call, builds its own and no other).
 */
export function buildProgram(only?: string): Command {
  const program = new Command('warden')
    .description('warden — a durable supervisor for AI coding agents, on Temporal')
    .version(pkg.version)
    .option('--address <host:port>', 'Temporal frontend (default $TEMPORAL_ADDRESS or 127.0.0.1:7233)')
    .option('--namespace <ns>', 'Temporal namespace (default $TEMPORAL_NAMESPACE or default)')
    .option('--task-queue <name>', 'task queue (default $WARDEN_TASK_QUEUE or warden)')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (str, write) => write(str) })
    .exitOverride()
    .addHelpText(
      'after',
      `
Exit codes: 0 ok, 1 failure, 2 bad usage or invalid input, 3 no such agent.
Quick start:
  warden dev                                        # dev server + Web UI + worker + a demo
  warden start fixer --task "make the build pass"   # supervise an agent
  warden status fixer --json`,
    );
  for (const [names, register] of VERBS) if (!only || names.includes(only)) register(program);
  return program;
}
