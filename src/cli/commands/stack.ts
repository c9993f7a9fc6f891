/** `warden dev` (dev server + worker + a demo), `warden server`, `warden worker`. */
import type { Command } from 'commander';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { startDevServer, type DevServer } from '../../devserver/server.js';
import { createLogger } from '../../logger.js';
import { startWorker } from '../../../workers/main.js';
import { print } from '../output.js';
import { globals } from '../context.js';
import { runDemo } from '../demo.js';
import { commandFor, wardenCommand } from '../invocation.js';
import { startConsoleListener, type ConsoleListener } from '../../serve/console/listen.js';

interface ServerFlags {
  port: number;
  uiPort: number;
  db: string;
  ip: string;
  headless?: boolean;
  ui?: boolean;
}

async function startServer(o: ServerFlags): Promise<DevServer> {
  const db = resolve(o.db);
  print(`starting Temporal dev server (db ${db}) …`);
  return startDevServer({
    port: o.port,
    uiPort: o.headless ? false : o.uiPort,
    dbFile: db,
    ip: o.ip,
    logFile: join(resolve(db, '..'), 'server.log'),
    detached: true, // Ctrl-C reaches warden only, which stops the worker, then the server
    guard: true, // and the server never outlives warden, even a SIGKILLed one
    say: (m) => print(m),
  });
}

function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((res) => {
    const on = (s: NodeJS.Signals) => res(s);
    process.once('SIGINT', on);
    process.once('SIGTERM', on);
  });
}

export const devAction = async (o: ServerFlags & { demo: boolean; consolePort: number }, cmd: Command) => {
  const server = await startServer(o);
  // The worker's JSON log lines go to a file beside server.log, not into the terminal, where
  // they would land in the middle of the demo's text.
  const workerLog = join(resolve(server.dbFile, '..'), 'worker.log');
  const log = pino(
    { name: 'warden-worker', level: process.env.WARDEN_LOG_LEVEL ?? 'info', base: { pid: process.pid } },
    pino.destination({ dest: workerLog, mkdir: true, sync: true }),
  );
  let worker;
  try {
    worker = await startWorker({ address: server.address, namespace: server.namespace, taskQueue: globals(cmd).taskQueue, log });
  } catch (err) {
    await server.stop();
    throw err;
  }
  // The web console (the pages `warden serve` answers under /console), on a port of its own.
  let webConsole: ConsoleListener | null = null;
  let consoleProblem = '';
  try {
    webConsole = await startConsoleListener({ host: o.ip, port: o.consolePort, address: server.address, namespace: server.namespace, log });
  } catch (err) {
    consoleProblem = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
  }
  // Printed commands work as pasted: the real paths of warden and temporal unless PATH has them.
  const w = `${server.address === '127.0.0.1:7233' ? '' : `TEMPORAL_ADDRESS=${server.address} `}${wardenCommand()}`;
  const temporal = commandFor('temporal', server.temporalCli);
  print('');
  print(`warden is up: Temporal at ${server.address}, worker on task queue ${worker.settings.taskQueue}`);
  if (server.uiUrl) print(`Web UI: ${server.uiUrl}/namespaces/${server.namespace}/workflows`);
  if (webConsole) print(`Web console: ${webConsole.url}`);
  else print(`Web console: not started (--console-port ${o.consolePort}: ${consoleProblem})`);
  print(`server log: ${join(resolve(server.dbFile, '..'), 'server.log')}`);
  print(`worker log: ${workerLog} (JSON lines; escalations are logged there too)`);
  print('');
  print('Try, in another terminal:');
  print(`  ${w} start my-agent --task "make the failing build pass"`);
  print(`  echo '{"id":"t1","text":"retrying","toolCalls":[{"name":"shell","args":"npm run build","ok":false}]}' | ${w} report my-agent`);
  print(`  ${w} status my-agent`);
  print(`  ${temporal} workflow list --address ${server.address}`);
  print('');
  const stopping = untilSignal();
  if (o.demo) {
    try {
      await runDemo(server, worker.settings.taskQueue, stopping);
    } catch (err) {
      print(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  print('Ctrl-C stops the worker and the server.');
  await stopping;
  print('\nshutting down: worker …');
  await webConsole?.close();
  await worker.shutdown();
  print('shutting down: Temporal dev server …');
  await server.stop();
  print('stopped.');
};

export const serverAction = async (o: ServerFlags) => {
  const server = await startServer(o);
  print(`Temporal dev server at ${server.address}${server.uiUrl ? `, Web UI ${server.uiUrl}` : ''}; Ctrl-C stops it.`);
  await untilSignal();
  await server.stop();
  print('stopped.');
};

export const workerAction = async (_o: unknown, cmd: Command) => {
  const g = globals(cmd);
  const worker = await startWorker({ address: g.address, namespace: g.namespace, taskQueue: g.taskQueue, log: createLogger('warden-worker') });
  print(`worker running on task queue ${worker.settings.taskQueue} at ${worker.settings.connectionOptions.address}; Ctrl-C stops it.`);
  await worker.done; // the SDK shuts the worker down gracefully on SIGINT/SIGTERM
};
