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
import { planInstall, planUninstall, type FileChange } from '../../hooks/install/change.js';
import { unifiedDiff } from '../../hooks/install/diff.js';
import { SettingsError } from '../../hooks/install/json-edit.js';
import { dropRecord, readRecord, writeRecord } from '../../hooks/install/record.js';
import { HOOK_EVENTS } from '../../hooks/install/settings.js';
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

/**
 * The command each hook runs: `warden hook <agent>` when the `warden` on PATH is this very CLI,
 * else this CLI by its full path (node and the script). Connection flags given to install
 * (`--address`, `--namespace`, `--task-queue`) go along; without them the hook uses the
 * environment of the agent it runs in (TEMPORAL_ADDRESS, …).
 */
export function hookCommand(
  agent: HookAgent,
  g: { address?: string; namespace?: string; taskQueue?: string },
  env: NodeJS.ProcessEnv = process.env,
  argv1: string | undefined = process.argv[1],
): string {
  const script = argv1 ? realpathOrNull(argv1) : null;
  const onPath = (env.PATH ?? '')
    .split(delimiter)
    .map((d) => d && join(d, 'warden'))
    .find((p) => p && existsSync(p));
  const program = script && onPath && realpathOrNull(onPath) === script ? 'warden' : `${shellQuote(process.execPath)} ${shellQuote(script ?? 'warden')}`;
  const flags = [
    ...(g.address ? ['--address', g.address] : []),
    ...(g.namespace ? ['--namespace', g.namespace] : []),
    ...(g.taskQueue ? ['--task-queue', g.taskQueue] : []),
  ].map(shellQuote);
  return [program, 'hook', agent, ...flags].join(' ');
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

/** Write the new text next to the file and rename it over (keeping the file's mode), or remove the file. */
function writeSettings(path: string, text: string | null, existed: boolean): void {
  if (text === null) {
    rmSync(path, { force: true }); // only a file install created: a symlink is never that
    return;
  }
  // A settings file that is a symlink (dotfiles) is written where it points, and stays a symlink.
  if (!existed && danglingLinkTarget(path) !== null) throw new UsageError(`${path} became a symlink while warden read it; run install again`);
  const target = existed ? realpathSync(path) : path;
  mkdirSync(dirname(target), { recursive: true });
  const mode = existed ? fstatMode(target) : 0o644;
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

function nextSteps(agent: HookAgent, path: string, o: InstallOptions): string[] {
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
    '  The hooks need a running warden (`warden dev`, or a worker and TEMPORAL_ADDRESS); without one the session runs unsupervised and says so once.',
    "  Auto-start off: WARDEN_AUTO_START=0 in the agent's environment, or `hooks: {auto_start: false}` in warden.yaml.",
  );
  return lines;
}

export function run(verb: 'install' | 'uninstall') {
  return async (agentArg: string, o: InstallOptions, cmd: Command): Promise<void> => {
    if (agentArg !== 'claude' && agentArg !== 'codex') throw new UsageError(`${verb}: the agent must be claude or codex, not ${JSON.stringify(agentArg)}`);
    const agent: HookAgent = agentArg;
    const g = globals(cmd);
    const path = settingsPath(agent, o);
    const before = readSettings(path, verb);
    const record = readRecord(path);
    const command = hookCommand(agent, g);
    let change: FileChange;
    try {
      change = verb === 'install' ? planInstall(path, before, record, { agent, command }) : planUninstall(path, before, record, agent);
    } catch (err) {
      if (err instanceof SettingsError) throw new UsageError(err.message);
      throw err;
    }
    const diff = unifiedDiff(before, change.after, path);
    const inline = agent === 'codex' && verb === 'install' ? inlineCodexHooks(path) : null;
    if (!o.dryRun && change.changed) {
      writeSettings(path, change.after, before !== null);
      if (change.record) writeRecord(change.record);
      else dropRecord(path);
    } else if (!o.dryRun && verb === 'uninstall') dropRecord(path);
    const summary = {
      verb,
      agent,
      file: path,
      dryRun: Boolean(o.dryRun),
      changed: change.changed,
      created: before === null && change.after !== null,
      removed: before !== null && change.after === null,
      actions: change.actions,
      ...(verb === 'install' && { command }),
      diff,
    };
    if (g.json) return printJson(summary);
    print(`${o.dryRun ? `${verb} (dry run, nothing written)` : verb} ${agent}: ${path}`);
    for (const a of change.actions) print(`  ${a}`);
    if (diff) print(`\n${diff.trimEnd()}`);
    if (inline) print(`\nNote: ${inline} has [hooks] tables too; Codex runs the hooks of both files (and warns at startup).`);
    if (verb === 'install' && !o.dryRun) for (const l of nextSteps(agent, path, o)) print(l);
  };
}
