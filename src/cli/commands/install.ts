/**
 * `warden install claude|codex` and `warden uninstall claude|codex`: put warden's hooks into
 * Claude Code's or Codex's settings (and take them out). The merge is src/hooks/install/; this
 * file finds the settings file, reads it, writes the result and says what it did.
 *
 *  - Claude Code: `<project>/.claude/settings.json` (`--project DIR`, default the current
 *    directory) or `~/.claude/settings.json` (`--user`; `$CLAUDE_CONFIG_DIR` when set).
 *  - Codex: `<project>/.codex/hooks.json` or `$CODEX_HOME/hooks.json` (`--user`, default
 *    ~/.codex). Codex reads hooks from `hooks.json` and from `[hooks]` tables in `config.toml`
 *    next to each config layer and runs them all; warden writes `hooks.json`, a file Codex only
 *    reads, so the `config.toml` Codex itself rewrites (its hook trust lives there) is never touched.
 *
 * The hooks hand their events to the resident hook endpoint (`warden serve`, on loopback): the
 * forwarder command (`warden-hook claude|codex`) on every event, and — in Claude Code's user
 * settings only — Claude Code's own http handler on the hot-path tool events, which carries the
 * endpoint's token literally (so never in a project's settings, which are often committed). Install
 * first makes sure the endpoint file (`$WARDEN_HOME/hook-endpoint.json`: where the endpoint listens,
 * its token) is there. The token is never printed: diffs and --json show it hidden.
 */
import type { Command } from 'commander';
import {
  chmodSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readlinkSync,
  closeSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import {
  DEFAULT_ENDPOINT,
  endpointFile,
  endpointLog,
  endpointUrl,
  ensureEndpoint,
  HOOK_ROUTE,
  readEndpoint,
  type HookEndpoint,
} from '../../hooks/endpoint-file.js';
import { planInstall, planUninstall, type FileChange } from '../../hooks/install/change.js';
import { unifiedDiff } from '../../hooks/install/diff.js';
import { SettingsError } from '../../hooks/install/json-edit.js';
import { dropRecord, readRecord, writeRecord } from '../../hooks/install/record.js';
import { HOOK_EVENTS, isLoopbackHost, type HookPlan } from '../../hooks/install/settings.js';
import type { HookAgent } from '../../hooks/protocol.js';
import { projectPart } from '../../hooks/session.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { print, printJson } from '../output.js';

const SETTINGS_MAX_BYTES = 1024 * 1024;

interface InstallOptions {
  project?: string;
  user?: boolean;
  dryRun?: boolean;
  /** Where the hook endpoint listens, `host:port` on loopback (install; uninstall only checks it). */
  endpoint?: string;
}

/** The settings file for an agent and a scope. */
export function settingsPath(agent: HookAgent, o: InstallOptions, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  if (o.user && o.project !== undefined)
    throw new UsageError('--project and --user: choose one (--project DIR for one project, --user for every session of this user)');
  const home = env.HOME || homedir();
  if (o.user)
    return agent === 'claude'
      ? join(env.CLAUDE_CONFIG_DIR || join(home, '.claude'), 'settings.json')
      : join(env.CODEX_HOME || join(home, '.codex'), 'hooks.json');
  const project = resolve(cwd, o.project ?? '.');
  if (!existsSync(project) || !statSync(project).isDirectory()) throw new UsageError(`--project: no such directory: ${project}`);
  return agent === 'claude' ? join(project, '.claude', 'settings.json') : join(project, '.codex', 'hooks.json');
}

const shellQuote = (s: string) => (/^[A-Za-z0-9_./:@=+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function realpathOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    return null;
  }
}

/** The first `name` on PATH, or null. */
function onPath(name: string, env: NodeJS.ProcessEnv): string | null {
  return (
    (env.PATH ?? '')
      .split(delimiter)
      .map((d) => d && join(d, name))
      .find((p) => p && existsSync(p)) || null
  );
}

interface Connection {
  address?: string;
  namespace?: string;
  taskQueue?: string;
}

/**
 * The command each hook runs: the hook forwarder, `warden-hook <agent>` when the `warden` and the
 * `warden-hook` on PATH are this very CLI's, else this CLI's forwarder by its full path (node and
 * `…/dist/src/hooks/forward.js`, next to the CLI's `…/dist/src/cli/main.js`). Connection flags
 * given to install (`--address`, `--namespace`, `--task-queue`) go along.
 */
export function hookCommand(agent: HookAgent, g: Connection, env: NodeJS.ProcessEnv = process.env, argv1: string | undefined = process.argv[1]): string {
  const script = argv1 ? realpathOrNull(argv1) : null;
  if (!script) throw new Error(`cannot find this warden CLI (${argv1 ?? 'no script path'}) to point the hooks at`);
  const forwarder = join(dirname(script), '..', 'hooks', 'forward.js');
  if (!existsSync(forwarder)) throw new Error(`this warden has no hook forwarder at ${forwarder}; build it (npm run build) and run install again`);
  const warden = onPath('warden', env);
  const wardenHook = onPath('warden-hook', env);
  const mine = warden !== null && wardenHook !== null && realpathOrNull(warden) === script && realpathOrNull(wardenHook) === realpathOrNull(forwarder);
  const program = mine ? 'warden-hook' : `${shellQuote(process.execPath)} ${shellQuote(forwarder)}`;
  const flags = [
    ...(g.address ? ['--address', g.address] : []),
    ...(g.namespace ? ['--namespace', g.namespace] : []),
    ...(g.taskQueue ? ['--task-queue', g.taskQueue] : []),
  ].map(shellQuote);
  return [program, agent, ...flags].join(' ');
}

/**
 * `--endpoint host:port` (as `warden serve --listen` takes it), on this machine: the hook endpoint
 * answers on loopback only, and the hooks send it their token in the clear.
 */
export function parseEndpoint(raw: string): string {
  const bad = (why: string) => new UsageError(`--endpoint: ${JSON.stringify(raw.slice(0, 100))} ${why}`);
  const m = /^(?:(\[[0-9A-Fa-f:.]+\])|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) throw bad('is not host:port (e.g. 127.0.0.1:8788, [::1]:8788, localhost:8788)');
  if (port === 0) throw bad('names port 0: the hooks need the port the endpoint listens on');
  const host = m[1] ?? m[2]!;
  if (!isLoopbackHost(host)) throw bad('is not on this machine: the hook endpoint listens on loopback only (127.0.0.1, [::1], localhost)');
  return `${host}:${port}`;
}

/** The URL Claude Code's http hook posts to: the endpoint's route, with install's connection flags in the query string. */
export function httpHookUrl(endpoint: string, agent: HookAgent, g: Connection): string {
  const q = new URLSearchParams();
  if (g.address) q.set('address', g.address);
  if (g.namespace) q.set('namespace', g.namespace);
  if (g.taskQueue) q.set('task_queue', g.taskQueue);
  const query = q.toString();
  return `${endpoint}${HOOK_ROUTE[agent]}${query ? `?${query}` : ''}`;
}

/** Text to print with the endpoint's token (and any bearer token) hidden. */
export function hideTokens(text: string, tokens: Array<string | undefined>): string {
  let out = text.replace(/(Bearer\s+)[0-9a-f]{64}\b/gi, '$1<token hidden>');
  for (const t of tokens) if (t) out = out.split(t).join('<token hidden>');
  return out;
}

/**
 * The hook endpoint install writes the hooks for: the endpoint file, created (or told the new
 * `--endpoint`) first — on a dry run only read, and what it would say when it is not there yet.
 */
async function endpointFor(o: InstallOptions, env: NodeJS.ProcessEnv): Promise<{ endpoint: HookEndpoint; action: string | null }> {
  const listen = o.endpoint === undefined ? undefined : parseEndpoint(o.endpoint);
  const file = endpointFile(env);
  if (o.dryRun) {
    const old = readEndpoint(env);
    const url = listen ? endpointUrl(listen) : (old?.url ?? endpointUrl(DEFAULT_ENDPOINT));
    const action = !old ? `would create ${file} (${url}, a new token)` : old.url !== url ? `would set ${file} to ${url} (the token kept)` : null;
    return { endpoint: { url, token: old?.token ?? '0'.repeat(64) }, action };
  }
  const r = await ensureEndpoint(env, listen); // (awaited: the endpoint file's functions may load node:crypto lazily)
  const action = r.created ? `created ${file} (${r.endpoint.url}, a new token)` : r.changed ? `set ${file} to ${r.endpoint.url} (the token kept)` : null;
  return { endpoint: r.endpoint, action };
}

/** Where `path` points when it is a symlink (at any depth) to nothing, else null. */
function danglingLinkTarget(path: string): string | null {
  try {
    if (!lstatSync(path).isSymbolicLink()) return null;
  } catch {
    return null;
  }
  let target = path;
  for (let i = 0; i < 40; i++) {
    try {
      if (!lstatSync(target).isSymbolicLink()) break;
      target = resolve(dirname(target), readlinkSync(target));
    } catch {
      break;
    }
  }
  return target;
}

/**
 * The settings file's text, or null when there is none. Refuses what is not a regular file, or too
 * big; for install, also a symlink to nothing (writing the file would replace the link).
 */
function readSettings(path: string, verb: 'install' | 'uninstall'): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      // A symlink to nothing (dotfiles not checked out yet): writing a file here would replace the link.
      const target = verb === 'install' ? danglingLinkTarget(path) : null;
      if (target !== null)
        throw new UsageError(`${path} is a symlink to ${target}, which does not exist; create it (or remove the link) first — warden leaves the link as it is`);
      return null;
    }
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UsageError(`${path} is not a regular file; warden leaves it as it is`);
    if (st.size > SETTINGS_MAX_BYTES) throw new UsageError(`${path} is ${st.size} bytes; warden edits settings files of at most ${SETTINGS_MAX_BYTES} bytes`);
    const buf = Buffer.alloc(st.size);
    let got = 0;
    for (let n; got < buf.length && (n = readSync(fd, buf, got, buf.length - got, got)) > 0; ) got += n;
    return buf.subarray(0, got).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Write the new text next to the file and rename it over (keeping the file's mode), or remove the
 * file. `secret`: the text holds a token — a new file is 0600, an existing one loses group/other bits.
 */
function writeSettings(path: string, text: string | null, existed: boolean, secret = false): void {
  if (text === null) {
    rmSync(path, { force: true }); // only a file install created: a symlink is never that
    return;
  }
  // A settings file that is a symlink (dotfiles) is written where it points, and stays a symlink.
  if (!existed && danglingLinkTarget(path) !== null) throw new UsageError(`${path} became a symlink while warden read it; run install again`);
  const target = existed ? realpathSync(path) : path;
  mkdirSync(dirname(target), { recursive: true });
  const old = existed ? fstatMode(target) : null;
  const mode = old === null ? (secret ? 0o600 : 0o644) : secret && old & 0o044 ? 0o600 : old;
  const tmp = join(dirname(target), `.${basename(target)}.warden-${process.pid}.tmp`);
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, target);
}

function fstatMode(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).mode & 0o7777;
  } finally {
    closeSync(fd);
  }
}

/** An inline `[hooks.<Event>]` table in the config.toml beside a Codex hooks.json (Codex runs both). */
function inlineCodexHooks(hooksJson: string): string | null {
  const toml = join(dirname(hooksJson), 'config.toml');
  try {
    const text = readFileSync(toml, 'utf8');
    return /^\s*\[\[?\s*hooks\s*\.\s*(?!state\b)"?\w+/m.test(text) ? toml : null;
  } catch {
    return null;
  }
}

/** A settings file that holds the token and lets group or others read it (mode, or null: it does not). */
function readableByOthers(path: string): number | null {
  try {
    const mode = fstatMode(path);
    return mode & 0o044 ? mode : null;
  } catch {
    return null;
  }
}

function nextSteps(
  agent: HookAgent,
  path: string,
  o: InstallOptions,
  hook: { endpoint: string; command: string; http: boolean },
  env: NodeJS.ProcessEnv,
): string[] {
  const { endpoint, command, http } = hook;
  const forwarder = command.startsWith('warden-hook ') ? `\`${command}\`` : `the forwarder (\`${command}\`)`;
  const where = o.user ? 'any directory' : resolve(o.project ?? '.');
  const events = HOOK_EVENTS[agent].map((e) => e.event).join(', ');
  const lines = ['', 'Check it:'];
  if (agent === 'claude') {
    lines.push(`  run \`claude\` in ${where} and type /hooks: warden's hook is listed under ${events}.`);
  } else {
    lines.push(
      `  Codex runs a new or changed hook only once you trust it: run \`codex\` in ${where}, open /hooks and trust warden's hooks`,
      '  (for automation that checks its own config: `codex exec --dangerously-bypass-hook-trust …`).',
    );
    if (!o.user) lines.push(`  Codex reads ${dirname(path)} only in a trusted project: trust the folder when codex asks.`);
  }
  lines.push(
    `  Every session ${o.user ? '' : 'here '}gets its own agent at its first prompt, named ${o.user ? '<project>' : projectPart(where)}-<session>: see \`warden list\` or \`warden top\`.`,
    '',
    'What runs where:',
    http
      ? `  Claude Code posts PreToolUse, PostToolUse and PostToolUseFailure itself to warden's hook endpoint at ${endpoint} (http hooks, with the token from ${endpointFile(env)}); every other event runs ${forwarder}, which forwards it there.`
      : `  Every hook runs ${forwarder}, which hands the event to warden's hook endpoint at ${endpoint}.`,
    `  The endpoint is \`warden serve\`: the first hook that finds it absent starts it in the background, logging to ${endpointLog(env)};`,
    `  or run \`warden serve --listen ${endpoint.replace(/^http:\/\//, '')}\` yourself, or as a service.`,
    '  It needs a running warden (`warden dev`, or a worker and TEMPORAL_ADDRESS); without one the session runs unsupervised and says so once.',
    "  Auto-start off: WARDEN_AUTO_START=0 in the agent's environment, or `hooks: {auto_start: false}` in warden.yaml.",
  );
  return lines;
}

export function run(verb: 'install' | 'uninstall') {
  return async (agentArg: string, o: InstallOptions, cmd: Command): Promise<void> => {
    if (agentArg !== 'claude' && agentArg !== 'codex') throw new UsageError(`${verb}: the agent must be claude or codex, not ${JSON.stringify(agentArg)}`);
    const agent: HookAgent = agentArg;
    const g = globals(cmd);
    const env = process.env;
    if (o.endpoint !== undefined) parseEndpoint(o.endpoint); // a bad flag before anything else
    const path = settingsPath(agent, o);
    const before = readSettings(path, verb);
    const record = readRecord(path);
    let change: FileChange;
    let command: string | undefined;
    let endpoint: HookEndpoint | undefined;
    let plan: HookPlan | undefined;
    const actions: string[] = [];
    try {
      if (verb === 'install') {
        command = hookCommand(agent, g);
        const ep = await endpointFor(o, env);
        endpoint = ep.endpoint;
        if (ep.action) actions.push(ep.action);
        // The http handler carries the token: only in the user's own Claude Code settings.
        const http = agent === 'claude' && o.user;
        if (http && !isLoopbackHost(new URL(endpoint.url).hostname))
          throw new UsageError(`${endpointFile(env)} says the endpoint is ${endpoint.url}, not on this machine; run install with --endpoint 127.0.0.1:PORT`);
        plan = { agent, command, ...(http && { http: { url: httpHookUrl(endpoint.url, agent, g), token: endpoint.token } }) };
        change = planInstall(path, before, record, plan);
      } else change = planUninstall(path, before, record, agent);
    } catch (err) {
      if (err instanceof SettingsError) throw new UsageError(err.message);
      throw err;
    }
    const secret = plan?.http !== undefined && change.after !== null && change.after.includes(plan.http.token);
    const exposed = secret && before !== null ? readableByOthers(path) : null;
    if (!o.dryRun && change.changed) {
      writeSettings(path, change.after, before !== null, secret);
      if (change.record) writeRecord(change.record);
      else dropRecord(path);
    } else if (!o.dryRun && verb === 'uninstall') dropRecord(path);
    const after: string[] = [];
    if (exposed !== null) {
      if (!o.dryRun && !change.changed) chmodSync(path, 0o600);
      after.push(
        `${o.dryRun ? 'would make' : 'made'} the file mode 0600 (it was 0${(exposed & 0o777).toString(8)}, readable by others): it holds the hook endpoint's token`,
      );
    }
    const tokens = [endpoint?.token, readEndpoint(env)?.token];
    const diff = hideTokens(unifiedDiff(before, change.after, path), tokens);
    const inline = agent === 'codex' && verb === 'install' ? inlineCodexHooks(path) : null;
    // The endpoint file made, or the mode tightened, while the hooks were there: not "nothing to change".
    const settingsActions =
      !change.changed && (actions.length || after.length) && change.actions[0] === 'already installed; nothing to change'
        ? ['the hooks were already installed', ...change.actions.slice(1)]
        : change.actions;
    const allActions = [...actions, ...settingsActions, ...after].map((a) => hideTokens(a, tokens));
    const summary = {
      verb,
      agent,
      file: path,
      dryRun: Boolean(o.dryRun),
      changed: change.changed,
      created: before === null && change.after !== null,
      removed: before !== null && change.after === null,
      actions: allActions,
      ...(verb === 'install' && { command, endpoint: endpoint!.url, endpointFile: endpointFile(env) }),
      diff,
    };
    if (g.json) return printJson(summary);
    print(`${o.dryRun ? `${verb} (dry run, nothing written)` : verb} ${agent}: ${path}`);
    for (const a of allActions) print(`  ${a}`);
    if (diff) print(`\n${diff.trimEnd()}`);
    if (inline) print(`\nNote: ${inline} has [hooks] tables too; Codex runs the hooks of both files (and warns at startup).`);
    if (verb === 'install' && !o.dryRun)
      for (const l of nextSteps(agent, path, o, { endpoint: endpoint!.url, command: command!, http: plan?.http !== undefined }, env)) print(l);
  };
}
