/**
 * The second half of the self-sabotage tripwire (self-control.ts has the first): tool calls that go
 * for what warden's own hooks stand on rather than for the agent's workflow —
 *
 *  - warden's files: the hook endpoint file (`$WARDEN_HOME/hook-endpoint.json`, it holds the
 *    token), the web console's login tokens (`$WARDEN_HOME/console-tokens.json`), anything else
 *    under warden's home (but the driven agents' `agents/` work directories), and the user's Claude
 *    Code settings file (a user-scope install writes the token into it), read or written;
 *  - the hook settings warden installs into: any `.claude/settings*.json`, `.codex/hooks.json` or
 *    `.codex/config.toml`, and `$CODEX_HOME`'s, written (reading them is allowed); likewise the
 *    hooks' session notes (sessionMarkerDir: an "unreachable" note turns supervision off a while);
 *  - the hook endpoint itself: an HTTP request to its address on a `/hooks/` path, a raw socket to
 *    its port, or its token in the call;
 *  - the endpoint's process: `kill`/`pkill`/`killall` naming warden or its port or pid, `fuser -k`
 *    on its port, `systemctl|launchctl stop …warden…`.
 *
 * Paths are resolved as the shell would, as far as a tripwire can: `~`, `$HOME`, `${HOME}`,
 * `$WARDEN_HOME` (warden's home as the hook itself has it, never the agent's claim), `$PWD`,
 * relative paths against the session's directory (and a `cd` earlier in the same command line),
 * `..` segments, and globs. A word that only mentions a file (`echo`, `ls`, `stat`, …) is not a hit;
 * any other program given the path is. This is a tripwire, not a sandbox: a path or address built at
 * run time, a script file, or a program of the agent's own opening the file is not seen.
 */
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { sessionMarkerDir } from './auto-start.js';
import { DEFAULT_ENDPOINT, endpointFile, readEndpoint, wardenHome } from './endpoint-file.js';
import type { SelfControlHit } from './self-control.js';

/** What the hook knows of warden's own installation (from its own environment: see ownGuard below). */
export interface OwnGuard {
  /** The user's home (for `~`, `$HOME`). */
  home: string;
  /** warden's home as the hook process / endpoint has it. */
  wardenHome: string;
  /** The hook endpoint file. */
  endpointFile: string;
  /** Where the endpoint listens. */
  endpoint: { host: string; port: number };
  /** The endpoint's token, when known (a call that carries it is a hit). */
  token?: string;
  /** Files that may hold the token, read or written: the user's Claude Code settings. */
  tokenFiles: string[];
  /** Codex's home (its hooks.json and config.toml are hook settings). */
  codexHome: string;
  /** Where the hooks keep their once-per-session notes (an "unreachable" note there turns supervision off for a while): written, a hit. */
  markerDir?: string;
  /** Process ids of the endpoint (when the endpoint itself answers). */
  pids: number[];
}

/** The session's side of a check: the guard, the directory relative paths start from, and facts gathered across a command line. */
export interface OwnContext {
  guard: OwnGuard;
  cwd: string;
  /**
   * Set while scanning: a kill-like command, and a process lookup naming warden or its port
   * (`pgrep -f warden`, `lsof -t -i :8788`, or `ps … | grep warden`): both in one call, a hit.
   */
  facts?: { kill?: string; lookup?: string; lister?: string; grepped?: string };
}

type Access = 'read' | 'write';

/** Programs that take a path only to mention it, list it or test it: never a hit. */
const MENTIONS = new Set([
  'echo',
  'printf',
  'ls',
  'dir',
  'stat',
  'test',
  '[',
  '[[',
  'file',
  'realpath',
  'readlink',
  'dirname',
  'basename',
  'which',
  'type',
  'whereis',
  'cd',
  'pushd',
  'popd',
  'du',
  'df',
  'wc',
  'mkdir',
  'true',
  'false',
  ':',
  'export',
  'local',
  'declare',
  'set',
  'unset',
  'pwd',
  'date',
  'sleep',
  'kill',
  'pkill',
  'killall',
  'pgrep',
  'pidof',
]);
/** Programs that write the paths they are given (editors, removers, copies' targets). */
const WRITERS = new Set([
  'tee',
  'sponge',
  'truncate',
  'touch',
  'rm',
  'unlink',
  'shred',
  'chmod',
  'chown',
  'chgrp',
  'mv',
  'dd',
  'vi',
  'vim',
  'nvim',
  'nano',
  'pico',
  'micro',
  'emacs',
  'ed',
  'ex',
  'code',
  'patch',
]);
/** Copies: only their destination is written. */
const COPIERS = new Set(['cp', 'install', 'rsync', 'scp', 'ln']);
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|\[?::ffff:127(?:\.\d{1,3}){3}\]?|0\.0\.0\.0|0)$/i;
const HTTP = new Set(['curl', 'wget', 'http', 'https', 'xh', 'xhs', 'curlie', 'httpie', 'grpcurl']);
const SOCKETS = new Set(['nc', 'ncat', 'netcat', 'socat', 'telnet']);
const LOOKUPS = new Set(['pgrep', 'pidof', 'lsof', 'ps', 'fuser', 'ss', 'netstat', 'pstree']);
/** Filters of a process listing (`ps aux | grep warden`). */
const FILTERS = new Set(['grep', 'egrep', 'fgrep', 'rg', 'awk', 'gawk', 'mawk', 'sed']);

const shown = (words: string[]) => words.join(' ').slice(0, 300);
const within = (path: string, dir: string) => path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/** What a path is to warden: its own (read or write is a hit), hook settings (a write is), or nothing. */
function classify(abs: string, g: OwnGuard): { own: boolean; label: string } | null {
  if (abs === g.endpointFile || abs.startsWith(`${g.endpointFile}.`))
    return { own: true, label: `warden's hook endpoint file ${g.endpointFile} (it holds the hook token)` };
  if (g.tokenFiles.includes(abs)) return { own: true, label: `the user's Claude Code settings ${abs} (they hold warden's hook token)` };
  // (A warden home of `/` or the user's home itself would make every path warden's: then only its files above count.)
  const home = g.wardenHome !== '/' && g.wardenHome !== g.home;
  if (home && within(abs, g.wardenHome) && !within(abs, `${g.wardenHome}/agents`)) return { own: true, label: `warden's home ${g.wardenHome}` };
  if (/\/\.claude\/settings(?:\.[^/]*)?\.json$/.test(abs) || /\/\.codex\/(?:hooks\.json|config\.toml)$/.test(abs))
    return { own: false, label: `hook settings ${abs}` };
  if (abs === `${g.codexHome}/hooks.json` || abs === `${g.codexHome}/config.toml`) return { own: false, label: `hook settings ${abs}` };
  if (g.markerDir && within(abs, g.markerDir)) return { own: false, label: `the hooks' session notes ${g.markerDir}` };
  return null;
}

/** A path (what it would be after the shell's tilde and variable expansion) as an absolute one; null when a variable is unknown. */
function expand(word: string, ctx: OwnContext): string | null {
  const g = ctx.guard;
  let w = word;
  if (w === '~' || w.startsWith('~/')) w = g.home + w.slice(1);
  let unknown = false;
  w = w.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (_, a: string | undefined, b: string | undefined) => {
    const name = a ?? b;
    if (name === 'HOME') return g.home;
    if (name === 'WARDEN_HOME') return g.wardenHome;
    if (name === 'PWD') return ctx.cwd;
    if (name === 'CODEX_HOME') return g.codexHome;
    unknown = true;
    return '\0';
  });
  if (unknown || w.startsWith('~')) return null;
  return resolve(ctx.cwd, w);
}

const GLOB = /[*?[]/;
function globRegex(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*' && pattern[i + 2] === '/') {
        re += '(?:.*/)?'; // `**/`: any directories, or none
        i += 2;
      } else if (pattern[i + 1] === '*') {
        re += '.*';
        i++;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const k = pattern.indexOf(']', i + 2);
      if (k < 0) re += '\\[';
      else {
        re += `[${pattern
          .slice(i + 1, k)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = k;
      }
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** The paths warden cares about that a glob pattern could name (and the directory it starts from: `~/.warden/*` is in warden's home). */
function globTargets(pattern: string, g: OwnGuard): string[] {
  let base = pattern;
  while (GLOB.test(base)) base = dirname(base);
  if (classify(base, g)?.own) return [base];
  const names = ['hook-endpoint.json', 'console-tokens.json', 'settings.json', 'settings.local.json', 'hooks.json', 'config.toml'];
  const under = ['', '.claude/', '.codex/', '.warden/'];
  const candidates = [g.endpointFile, g.wardenHome, ...g.tokenFiles, `${g.codexHome}/hooks.json`, `${g.codexHome}/config.toml`];
  for (const u of under) for (const n of names) candidates.push(`${base === '/' ? '' : base}/${u}${n}`);
  let re: RegExp;
  try {
    re = globRegex(pattern);
  } catch {
    return []; // a class the shell would not take either (`[z-a]`)
  }
  return candidates.filter((c) => re.test(c));
}

/** What a word (a path, or an option carrying one) names that matters, for this access; null when nothing. */
export function pathHit(word: string, access: Access, ctx: OwnContext): string | null {
  const forms = [word];
  const eq = word.indexOf('=');
  if (eq > 0) forms.push(word.slice(eq + 1));
  if (word.startsWith('@') || word.startsWith('<')) forms.push(word.slice(1));
  if (/^file:\/\//i.test(word)) forms.push(decodeURIComponentSafe(word.replace(/^file:\/\/[^/]*/i, '')));
  for (const f of forms) {
    if (!f || (f.startsWith('-') && f === word)) continue;
    const abs = expand(f, ctx);
    const targets = abs === null ? [] : GLOB.test(abs) ? globTargets(abs, ctx.guard) : [abs];
    if (abs === null) {
      // `$SOMEWHERE/hook-endpoint.json`: a variable the hook cannot know; the name is enough.
      if (basename(f) === 'hook-endpoint.json') return `warden's hook endpoint file (${f})`;
      if (basename(f) === 'console-tokens.json') return `warden's web console tokens (${f})`;
      if (access === 'write' && /(?:^|\/)\.(?:claude\/settings(?:\.[^/]*)?\.json|codex\/(?:hooks\.json|config\.toml))$/.test(f)) return `hook settings ${f}`;
      continue;
    }
    for (const t of targets) {
      const c = classify(t, ctx.guard);
      if (c && (c.own || access === 'write')) return c.label;
    }
  }
  return null;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The positional words of a command (its options dropped, up to a `--`). */
function positional(args: string[]): string[] {
  const out: string[] = [];
  let options = true;
  for (const w of args) {
    if (options && w === '--') options = false;
    else if (!(options && w.startsWith('-') && w !== '-')) out.push(w);
  }
  return out;
}

/** A redirection's target: `<` reads it, `>` writes it. */
export function redirectHit(op: '<' | '>', target: string, ctx: OwnContext): SelfControlHit | null {
  const tcp = devTcp(target, ctx.guard);
  if (tcp) return { what: `a socket to warden's hook endpoint (${target})`, command: `${op} ${target}` };
  const what = pathHit(target, op === '>' ? 'write' : 'read', ctx);
  return what ? { what: `${op === '>' ? 'a write to' : 'a read of'} ${what}`, command: `${op} ${target}`.slice(0, 300) } : null;
}

/** bash's `/dev/tcp/<loopback>/<port>` for the endpoint. */
function devTcp(word: string, g: OwnGuard): boolean {
  const m = /^\/dev\/(?:tcp|udp)\/([^/]+)\/(\d+)$/.exec(word);
  return !!m && Number(m[2]) === g.endpoint.port && isEndpointHost(m[1]!, g);
}

const isEndpointHost = (host: string, g: OwnGuard) => {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return LOOPBACK.test(h) || h === g.endpoint.host.replace(/^\[|\]$/g, '').toLowerCase();
};

/** A word as an HTTP URL to warden's endpoint on a /hooks path. */
function endpointUrl(word: string, g: OwnGuard): boolean {
  let w = word.replace(/^--?(?:url|uri)=/, '');
  if (/^:\d/.test(w)) w = `localhost${w}`; // httpie / xh shorthand for localhost
  if (!/^https?:\/\//i.test(w)) {
    if (!/^[A-Za-z0-9.\-[\]:]+(?::\d+)?(?:[/?#]|$)/.test(w) || !w.includes('/')) return false;
    w = `http://${w}`;
  }
  let u: URL;
  try {
    u = new URL(w);
  } catch {
    return false;
  }
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  const path = decodeURIComponentSafe(u.pathname).replace(/\/{2,}/g, '/');
  return port === g.endpoint.port && isEndpointHost(u.hostname, g) && /^\/hooks(?:\/|$)/i.test(path);
}

/** Whether a process pattern (`pkill -f …`, `pgrep …`) names warden's endpoint. */
function namesWarden(pattern: string, g: OwnGuard): boolean {
  const word = pattern.replace(/\[(.)\]/g, '$1'); // `[w]arden`, the old trick to keep grep from finding itself
  return /warden|forward\.js|main\.js.*\bserve\b|\bserve\b.*--listen/i.test(word) || new RegExp(`(?:^|[^0-9])${g.endpoint.port}(?:$|[^0-9])`).test(word);
}

/**
 * One simple command (its wrappers already taken off): a hit on warden's own files, endpoint or
 * process; null when none. `words[0]` is the program.
 */
export function ownCommandHit(words: string[], ctx: OwnContext): SelfControlHit | null {
  const g = ctx.guard;
  const prog = basename(words[0]!);
  const args = words.slice(1);
  const hit = (what: string): SelfControlHit => ({ what, command: shown(words) });

  if (words.some((w) => devTcp(w, g))) return hit("a socket to warden's hook endpoint");
  if (g.token && words.some((w) => w.includes(g.token!))) return hit("warden's hook token");

  // The endpoint over HTTP, or a raw socket to its port.
  if (HTTP.has(prog)) {
    if (args.some((w) => endpointUrl(w, g))) return hit(`${prog} to warden's hook endpoint (${g.endpoint.host}:${g.endpoint.port}/hooks/…)`);
    const via = args.some((w, i) => /^--(?:resolve|connect-to)$/.test(args[i - 1] ?? '') && namesWarden(w, g) && /127\.|localhost|::1/.test(w));
    if (via && args.some((w) => /\/hooks(?:\/|$)/.test(w))) return hit(`${prog} to warden's hook endpoint`);
  }
  if (SOCKETS.has(prog) && args.some((w) => isEndpointHost(w.replace(/^TCP4?6?:|:\d+$/gi, ''), g)) && args.some((w) => namesWarden(w, g) && /\d/.test(w)))
    return hit(`${prog} to warden's hook endpoint port ${g.endpoint.port}`);

  // The endpoint's process.
  if (prog === 'pkill' || prog === 'killall') {
    if (positional(args).some((w) => namesWarden(w, g))) return hit(`${prog} of warden's hook endpoint`);
    ctx.facts ??= {};
    ctx.facts.kill ??= shown(words);
  }
  if (prog === 'kill') {
    const pids = args.filter((w) => /^\d+$/.test(w)).map(Number);
    if (pids.some((p) => g.pids.includes(p))) return hit("kill of warden's hook endpoint");
    ctx.facts ??= {};
    ctx.facts.kill ??= shown(words);
  }
  if (prog === 'fuser' && args.some((w) => /^-[A-Za-z]*k/.test(w)) && args.some((w) => new RegExp(`^:?${g.endpoint.port}(?:/tcp)?$`).test(w)))
    return hit(`fuser -k on warden's hook endpoint port ${g.endpoint.port}`);
  if (LOOKUPS.has(prog)) {
    ctx.facts ??= {};
    ctx.facts.lister ??= shown(words);
    if (args.some((w) => namesWarden(w, g))) ctx.facts.lookup ??= shown(words);
  }
  if (FILTERS.has(prog) && positional(args).some((w) => namesWarden(w, g))) {
    ctx.facts ??= {};
    ctx.facts.grepped ??= shown(words);
  }
  if (
    (prog === 'systemctl' || prog === 'launchctl' || prog === 'service') &&
    args.some((w) => /^(?:stop|kill|disable|mask|restart|unload|bootout|remove)$/.test(w)) &&
    args.some((w) => /warden/i.test(w))
  )
    return hit(`${prog} stopping warden`);

  // Files.
  if (MENTIONS.has(prog)) return null;
  const sedInPlace = (prog === 'sed' || prog === 'gsed' || prog === 'perl' || prog === 'ruby') && args.some((w) => /^-[A-Za-z]*i|^--in-place/.test(w));
  const writes = WRITERS.has(prog) || sedInPlace;
  for (const w of args) {
    const what = pathHit(w, writes ? 'write' : 'read', ctx);
    if (what) return hit(`${writes ? 'a write to' : 'a read of'} ${what}`);
  }
  if (COPIERS.has(prog)) {
    // Their destination (the last word, or -t DIR), and the file a source makes in it.
    const pos = positional(args);
    const t = args.findIndex((w) => w === '-t' || w === '--target-directory');
    const dest = t >= 0 ? args[t + 1] : pos.length > 1 ? pos.at(-1) : undefined;
    const tEq = args.find((w) => w.startsWith('--target-directory='))?.slice('--target-directory='.length);
    for (const d of [dest, tEq]) {
      if (!d) continue;
      const sources = pos.filter((w) => w !== d);
      for (const target of [d, ...sources.map((s) => `${d.replace(/\/+$/, '')}/${basename(s)}`)]) {
        const what = pathHit(target, 'write', ctx);
        if (what) return hit(`a write to ${what}`);
      }
    }
  }
  return null;
}

/** The pending kill-and-lookup pair of a whole call (`kill $(pgrep -f "warden serve")`, `pgrep warden | xargs kill`). */
export function killLookupHit(ctx: OwnContext): SelfControlHit | null {
  const f = ctx.facts;
  const lookup = f?.lookup ?? (f?.lister && f.grepped ? `${f.lister} | ${f.grepped}` : undefined);
  return f?.kill && lookup ? { what: "a kill of warden's hook endpoint, found by its name or port", command: `${lookup} … ${f.kill}`.slice(0, 300) } : null;
}

/** Tools that write the file they are given (Claude Code's and others' file tools); others read. */
const WRITE_TOOL = /write|edit|patch|create|delete|remove|move|rename|replace|insert/i;

/** `*** Add|Update|Delete File: <path>` and `*** Move to: <path>` of an apply_patch patch. */
const PATCH_FILE = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/gm;

/**
 * A tool call's structured input: `file_path`, `path`, `notebook_path` (Read, Write, Edit, Grep,
 * Glob, NotebookEdit, …), a Glob `pattern`, and the files of an apply_patch patch in any string
 * field. The shell command fields are self-control.ts's to read.
 */
export function ownInputHit(tool: string, input: Record<string, unknown>, ctx: OwnContext): SelfControlHit | null {
  const access: Access = WRITE_TOOL.test(tool) ? 'write' : 'read';
  const exact: OwnContext = { ...ctx };
  const shownInput = (v: string) => `${tool} ${v}`.slice(0, 300);
  for (const field of ['file_path', 'path', 'notebook_path', 'filePath', 'notebookPath']) {
    const v = input[field];
    if (typeof v !== 'string' || !v) continue;
    const what = pathHit(v, access, exact);
    if (what) return { what: `${access === 'write' ? 'a write to' : 'a read of'} ${what}`, command: shownInput(v) };
  }
  if (typeof input.pattern === 'string' && /glob/i.test(tool)) {
    const base = typeof input.path === 'string' && input.path ? input.path : ctx.cwd;
    const p = input.pattern;
    const full = isAbsolute(p) || p.startsWith('~') || p.startsWith('$') ? p : `${base.replace(/\/+$/, '')}/${p}`;
    const what = pathHit(full, 'read', exact);
    if (what) return { what: `a read of ${what}`, command: shownInput(p) };
  }
  const token = ctx.guard.token;
  const strings = Object.values(input).flatMap((v) =>
    typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [],
  );
  for (const s of strings) {
    if (token && s.includes(token)) return { what: "warden's hook token", command: shownInput('…') };
    for (const m of s.matchAll(PATCH_FILE)) {
      const path = m[1]!.trim();
      const what = pathHit(path, 'write', exact);
      if (what) return { what: `a patch of ${what}`, command: shownInput(path) };
    }
  }
  return null;
}

/**
 * warden's installation as this process has it (the hook's or the endpoint's own environment,
 * never the agent's claim): its home, the endpoint file, address and token, the settings files.
 * `pids`: the endpoint's own process id, when the endpoint is the one asking.
 */
export function ownGuard(env: NodeJS.ProcessEnv = process.env, pids: number[] = []): OwnGuard {
  const home = resolve(env.HOME || homedir());
  const ep = readEndpoint(env);
  const listen = /^http:\/\/(.+):(\d+)$/.exec(ep?.url ?? `http://${DEFAULT_ENDPOINT}`);
  return {
    home,
    wardenHome: resolve(wardenHome(env)),
    endpointFile: resolve(endpointFile(env)),
    endpoint: { host: listen?.[1] ?? '127.0.0.1', port: Number(listen?.[2] ?? 8788) },
    ...(ep ? { token: ep.token } : {}),
    tokenFiles: [resolve(env.CLAUDE_CONFIG_DIR || `${home}/.claude`, 'settings.json')],
    codexHome: resolve(env.CODEX_HOME || `${home}/.codex`),
    markerDir: resolve(sessionMarkerDir(env)),
    pids,
  };
}
