/** `warden dev` (dev server + worker + a demo), `warden server`, `warden worker`. */
import { type Command } from 'commander';
import { port } from '../flags.js';
import { lazy } from './lazy.js';

function addServerFlags(c: Command): Command {
  return c
    .option('--port <port>', 'Temporal frontend (gRPC) port', port('--port'), 7233)
    .option('--ui-port <port>', 'Temporal Web UI port', port('--ui-port'), 8233)
    .option('--db <file>', 'SQLite file; state survives restarts', '.warden/temporal.db')
    .option('--ip <ip>', 'address to bind', '127.0.0.1')
    .option('--headless', 'no Web UI');
}

export function register(program: Command): void {
  addServerFlags(
    program
      .command('dev')
      .description('the embedded stack: Temporal dev server (with Web UI) + warden worker, then a short demo of supervision')
      .option('--no-demo', 'skip the demo agent')
      .option(
        '--console-port <port>',
        'port of the web console (the fleet in a browser; its address, with a login token, is printed)',
        port('--console-port'),
        8789,
      ),
  ).action(
    lazy(
      () => import('../commands/stack.js'),
      (m) => m.devAction,
    ),
  );

  addServerFlags(program.command('server').description('only the Temporal dev server (with Web UI and warden search attributes)')).action(
    lazy(
      () => import('../commands/stack.js'),
      (m) => m.serverAction,
    ),
  );

  program
    .command('worker')
    .description('only the warden worker (connects with TEMPORAL_ADDRESS / --address)')
    .addHelpText(
      'after',
      `
Tuning, by environment (docs/operating/capacity.md, "Worker tuning", says why each default):
  WARDEN_MAX_CACHED_WORKFLOWS   agents kept cached (an evicted agent replays its run on its next turn)
  WARDEN_STICKY_TIMEOUT_MS      sticky schedule-to-start timeout, default 5000
  WARDEN_WFT_CONCURRENCY        workflow task slots;  WARDEN_WFT_POLLERS  workflow task pollers
  WARDEN_NONSTICKY_POLL_RATIO   share of pollers on the task queue (new agents, continued runs)
  WARDEN_WORKFLOW_THREADS       workflow threads
  WARDEN_METRICS_ADDRESS        host:port to serve the SDK's Prometheus metrics
  WARDEN_WORKFLOW_BUNDLE        a workflow bundle to load, or 0 to bundle from source
  WARDEN_WORKFLOW_STACK_TRACES  1: keep the SDK's stack traces in workflow code (the Web UI's
                                Stack Trace tab; off by default: it costs worker CPU per turn)
  WARDEN_LOG_LEVEL              level of the JSON log lines on stderr: info (default) logs every
                                flagged verdict, debug also every OK one
  WARDEN_NOTIFY_GROUP_WINDOW    how long agents escalating on one cause are gathered into one
                                notification (docs/using/notifications.md), default 60s; 0: off`,
    )
    .action(
      lazy(
        () => import('../commands/stack.js'),
        (m) => m.workerAction,
      ),
    );
}
