/**
 * Start `temporal server start-dev` as a child process: SQLite file (state kept across restarts),
 * Web UI, warden's search attributes registered, and wait until the frontend answers.
 */
import { Connection } from '@temporalio/client';
import { execa, type ResultPromise } from 'execa';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SEARCH_ATTRIBUTES } from '../domain/contract/search-attributes.js';
import { reclaimLeftover, removePidFile, startWatchdog, writePidFile } from './guard.js';
import { freePorts, isPortFree } from './ports.js';
import { ensureTemporalCli } from './temporal-cli.js';

export interface DevServerOptions {
  /** gRPC frontend port (default 7233). */
  port?: number;
  /** Web UI port (default 8233); `false` runs headless. */
  uiPort?: number | false;
  /** SQLite file; state survives restarts. */
  dbFile: string;
  ip?: string;
  namespace?: string;
  /** Extra dynamic config, e.g. { 'limit.historyCount.suggestContinueAsNew': 40 }. */
  dynamicConfig?: Record<string, string | number | boolean>;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** Where the server's own output goes (default: discarded). */
  output?: 'inherit' | 'ignore' | 'pipe';
  /** Append the server's output to this file instead. */
  logFile?: string;
  /** Own process group, so a terminal's Ctrl-C reaches only warden, which then stops the server in order. */
  detached?: boolean;
  /**
   * The server must not outlive this process, even when it is SIGKILLed: a watchdog stops it, and
   * a pid file beside the database lets the next start stop a leftover (src/devserver/guard.ts).
   */
  guard?: boolean;
  /** The search attributes to register (default: all of warden's; a test may leave some out). */
  searchAttributes?: Readonly<Record<string, string>>;
  say?: (msg: string) => void;
  startTimeoutMs?: number;
}

export interface DevServer {
  address: string;
  uiUrl: string | null;
  port: number;
  uiPort: number | null;
  dbFile: string;
  namespace: string;
  /** The temporal CLI that runs this server (absolute path): what printed commands should call. */
  temporalCli: string;
  process: ResultPromise;
  /** SIGTERM, wait up to 10 s, then SIGKILL. */
  stop(): Promise<void>;
}

export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  const cli = await ensureTemporalCli(opts.say);
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port ?? 7233;
  const namespace = opts.namespace ?? 'default';
  const dbFile = resolve(opts.dbFile);
  if (opts.guard) await reclaimLeftover(dbFile, opts.say ?? (() => {}));
  if (!(await isPortFree(port, ip))) {
    throw new Error(`port ${port} on ${ip} is in use (is a Temporal server already running? use --port to pick another)`);
  }
  const uiPort = opts.uiPort === false ? null : (opts.uiPort ?? 8233);
  if (uiPort !== null && !(await isPortFree(uiPort, ip))) throw new Error(`Web UI port ${uiPort} is in use (use --ui-port)`);
  const [httpPort, metricsPort] = await freePorts(2, uiPort === null ? [port] : [port, uiPort]);
  mkdirSync(dirname(dbFile), { recursive: true });
  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--metrics-port',
    String(metricsPort),
    '--db-filename',
    dbFile,
    '--namespace',
    namespace,
    '--log-level',
    opts.logLevel ?? 'warn',
  ];
  if (uiPort === null) args.push('--headless');
  else args.push('--ui-port', String(uiPort), '--ui-ip', ip, '--ui-disable-news-fetch');
  for (const [name, type] of Object.entries(opts.searchAttributes ?? SEARCH_ATTRIBUTES)) args.push('--search-attribute', `${name}=${type}`);
  for (const [k, v] of Object.entries(opts.dynamicConfig ?? {})) args.push('--dynamic-config-value', `${k}=${JSON.stringify(v)}`);

  const output = opts.logFile ? { file: opts.logFile, append: true } : (opts.output ?? 'ignore');
  const child = execa(cli, args, { stdin: 'ignore', stdout: output, stderr: output, reject: false, cleanup: true, detached: opts.detached ?? false });
  const address = `${ip}:${port}`;
  let exited: string | null = null;
  if (opts.guard && child.pid !== undefined) {
    writePidFile({ wardenPid: process.pid, temporalPid: child.pid, port, dbFile, startedAt: new Date().toISOString() });
    startWatchdog(process.pid, child.pid);
    const pid = child.pid;
    void child.finally(() => removePidFile(dbFile, pid)).catch(() => {});
  }
  void child.then((r) => {
    const out = r.stderr ? String(r.stderr) : opts.logFile ? tailOf(opts.logFile) : '';
    exited = `exit ${r.exitCode ?? r.signal}${out ? `: ${out.slice(-600)}` : ''}`;
  });
  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited) throw new Error(`temporal server start-dev exited before it was ready (${exited})`);
    try {
      const conn = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await conn.workflowService.describeNamespace({ namespace });
      } finally {
        await conn.close();
      }
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`temporal dev server on ${address} not ready after ${opts.startTimeoutMs ?? 60_000} ms: ${String(err)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return {
    address,
    uiUrl: uiPort === null ? null : `http://${ip === '0.0.0.0' ? '127.0.0.1' : ip}:${uiPort}`,
    port,
    uiPort,
    dbFile,
    namespace,
    temporalCli: cli,
    process: child,
    async stop() {
      if (child.exitCode !== null || exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await child.catch(() => undefined);
      clearTimeout(timer);
    },
  };
}

function tailOf(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-6).join('\n');
  } catch {
    return '';
  }
}
