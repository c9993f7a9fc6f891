/** The `warden` command's definition: every verb, option and help text (src/cli/commands/). */
import { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { register as registerCases } from './commands/cases.js';
import { register as registerDismiss } from './commands/dismiss.js';
import { register as registerEvaluate } from './commands/evaluate.js';
import { register as registerHook } from './commands/hook.js';
import { register as registerInstall } from './commands/install.js';
import { register as registerIrc } from './commands/irc.js';
import { register as registerReport } from './commands/report.js';
import { register as registerSchemas } from './commands/schemas.js';
import { register as registerSignals } from './commands/signals.js';
import { register as registerServe } from './commands/serve.js';
import { register as registerSetup } from './commands/setup.js';
import { register as registerDelegate } from './commands/delegate.js';
import { register as registerStack } from './commands/stack.js';
import { register as registerStart } from './commands/start.js';
import { register as registerStatus } from './commands/status.js';
import { register as registerTop } from './commands/top.js';
import { register as registerMesh } from './commands/mesh.js';
import { register as registerTrust } from './commands/trust.js';

const pkg = JSON.parse(readFileSync(packageJsonUrl(), 'utf8')) as { version: string };

/** warden's package.json, from the built place (dist/src/cli/) or from the source (src/cli/). */
function packageJsonUrl(): URL {
  const built = new URL('../../../package.json', import.meta.url);
  const source = new URL('../../package.json', import.meta.url);
  if (!existsSync(built)) return source;
  const name = (JSON.parse(readFileSync(built, 'utf8')) as { name?: string }).name;
  return name === 'warden' ? built : source;
}

export function buildProgram(): Command {
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
  registerStack(program);
  registerStart(program);
  registerReport(program);
  registerSignals(program);
  registerDismiss(program);
  registerStatus(program);
  registerEvaluate(program);
  registerCases(program);
  registerSchemas(program);
  registerSetup(program);
  registerDelegate(program);
  registerHook(program);
  registerInstall(program);
  registerTop(program);
  registerIrc(program);
  registerServe(program);
  registerMesh(program);
  registerTrust(program);
  return program;
}
