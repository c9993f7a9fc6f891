/**
 * Self-sabotage tripwire (pure): whether a tool call of a supervised session targets warden's
 * controls of that same agent — `warden dismiss|resume|block|… <self>`, or a Temporal signal,
 * update, terminate, reset or cancel of `agent-<self>` through the `temporal` or `tctl` CLI (or
 * Temporal's HTTP API with curl). The hooked agent runs as its user, with TEMPORAL_ADDRESS, so it
 * *can* do these; PreToolUse denies them and records the attempt as REWARD_HACKING evidence
 * (src/hooks/handle.ts).
 *
 * This reads the command line the way a shell would split it (quotes, `\` escapes, `;` `&&` `||`
 * `|` `&`, newlines, `$(…)` and backticks, `sh -c '…'`, `eval`, env prefixes and wrappers such as
 * `env`, `sudo`, `timeout`, `npx`), nothing more. It is a tripwire, not a sandbox: a command built
 * at run time (`$(printf …)`, a variable holding the verb, a script file, a base64 blob, a program
 * of its own talking gRPC) is not seen. Reading is never a hit: `warden status <self>`, `temporal
 * workflow describe|show|query`, and a file or an `echo` that merely mentions the words.
 *
 * Given warden's own installation (an OwnContext), the same reading also catches a call that goes
 * for what the hooks stand on: warden's files and the hook settings, the hook endpoint, the
 * endpoint's process (own-files.ts).
 */
import { resolve } from 'node:path';
import { killLookupHit, ownCommandHit, ownInputHit, redirectHit, type OwnContext } from './own-files.js';

/** What a denied call was: the program and verb (`warden dismiss`, `temporal workflow signal`), and the command that holds it. */
export interface SelfControlHit {
  what: string;
  command: string;
}

/** warden verbs that act on an agent (everything but reading: status, list, top, cases export, schemas, evaluate, …). */
const WARDEN_ACTING = new Set([
  'steer',
  'interrupt',
  'stop',
  'pause',
  'resume',
  'abort',
  'heartbeat',
  'dismiss',
  'block',
  'unblock',
  'report',
  'start',
  'hook',
]);
/** warden's global options that take a value. */
const WARDEN_VALUE_OPTS = new Set(['--address', '--namespace', '--task-queue']);

/** `temporal|tctl workflow <sub>` that change a workflow (reads: describe, show, query, list, count, stack, trace, result). */
const WORKFLOW_ACTING = new Set(['signal', 'signal-with-start', 'update', 'terminate', 'reset', 'cancel', 'delete', 'update-options', 'pause', 'unpause']);
/** `temporal activity <sub>` that change one of the workflow's activities. */
const ACTIVITY_ACTING = new Set(['complete', 'fail', 'pause', 'unpause', 'reset', 'update-options']);
const TEMPORAL_BOOL_OPTS = new Set(['-y', '--yes', '--detach', '--tls', '--raw', '--follow', '-f', '--no-json-shorthand-payloads', '--help', '-h']);
const WORKFLOW_ID_OPTS = new Set(['-w', '--workflow-id', '--workflow_id', '--wid']);
const QUERY_OPTS = new Set(['-q', '--query']);

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'fish', 'busybox']);
const NODES = new Set(['node', 'nodejs', 'bun', 'tsx', 'ts-node']);
/** Wrappers that run the rest of their words as a command (their own options dropped). */
const WRAPPERS = new Set([
  'env',
  'sudo',
  'doas',
  'nohup',
  'time',
  'exec',
  'command',
  'builtin',
  'nice',
  'ionice',
  'stdbuf',
  'setsid',
  'xargs',
  'watch',
  'chronic',
  'unbuffer',
]);
/** Package runners: `npx warden …`, `npm exec warden -- …`, `pnpm dlx warden …`, `yarn warden …`, `bunx warden …`. */
const RUNNERS = new Set(['npx', 'bunx', 'pnpx']);
const RUNNER_SUBS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const HTTP_CLIENTS = new Set(['curl', 'wget', 'http', 'https', 'xh', 'grpcurl']);
const MAX_DEPTH = 6;

const basename = (w: string) => w.replace(/^.*\//, '');

/** A word of `id` alone (not a prefix of another id, nor a child `id.child`). */
const idIn = (text: string, id: string) => new RegExp(`(?:^|[^A-Za-z0-9._-])${id.replace(/[.]/g, '\\.')}(?:$|[^A-Za-z0-9._-])`).test(text);

/** warden's own installation and the session's directory, for the checks of own-files.ts (and the tool's name). */
export interface OwnCheck {
  guard: OwnContext['guard'];
  /** The session's working directory (the hook input's `cwd`). */
  cwd: string;
  /** The tool's name (Read, Write, Bash, …): whether its structured input reads or writes. */
  tool?: string;
}

/** warden's MCP tools (`warden mcp`) that act on an agent; reading (`list_agents`, `agent_status`) and `start` are not hits. */
const MCP_ACTING = new Set(['steer', 'pause', 'resume', 'dismiss', 'abort']);

/**
 * A call of warden's own MCP tools on the agent itself: `mcp__<server>__resume` (whatever name the
 * user gave the server in its MCP config) with `agentId` this agent. A lead session steering other
 * agents is what the tools are for; a supervised agent dismissing its own finding or resuming
 * itself is not.
 */
export function mcpSelfControl(tool: string, toolInput: unknown, agentId: string): SelfControlHit | null {
  const m = /^mcp__.+__([a-z_]+)$/.exec(tool);
  if (!m || !MCP_ACTING.has(m[1]!)) return null;
  const target = toolInput && typeof toolInput === 'object' ? (toolInput as Record<string, unknown>).agentId : undefined;
  if (typeof target !== 'string' || (target.trim() !== agentId && target.trim() !== `agent-${agentId}`)) return null;
  return { what: `${m[1]} through warden's MCP tools (${tool})`, command: `${tool} ${JSON.stringify(toolInput).slice(0, 300)}` };
}

/**
 * Whether this tool call (its `tool_input`: a shell command as a string, or as argv) targets
 * warden's controls of agent `agentId` itself; the first such command, or null. With `own`, also
 * warden's own files, endpoint and process (own-files.ts), in the shell command and in the
 * structured input of file tools.
 */
export function selfControlCall(toolInput: unknown, agentId: string, own?: OwnCheck): SelfControlHit | null {
  if (!toolInput || typeof toolInput !== 'object') return null;
  const o = toolInput as Record<string, unknown>;
  const mcp = own?.tool ? mcpSelfControl(own.tool, toolInput, agentId) : null;
  if (mcp) return mcp;
  const ctx: OwnContext | undefined = own ? { guard: own.guard, cwd: own.cwd, facts: {} } : undefined;
  for (const field of ['command', 'cmd']) {
    const v = o[field];
    if (typeof v === 'string') {
      const hit = scanScript(v, agentId, 0, ctx);
      if (hit) return hit;
    } else if (Array.isArray(v) && v.every((w) => typeof w === 'string')) {
      const hit = scanWords(v as string[], agentId, 0, ctx);
      if (hit) return hit;
    }
  }
  if (!ctx) return null;
  return killLookupHit(ctx) ?? ownInputHit(own?.tool ?? '', o, ctx);
}

/** Every simple command of a shell script, checked (command substitutions too). */
export function scanScript(script: string, agentId: string, depth: number, own?: OwnContext): SelfControlHit | null {
  if (depth > MAX_DEPTH) return null;
  const { commands, substitutions, redirects, heredocs } = splitShell(script);
  // A `cd` moves the directory later relative paths start from (for this line; subshells alike).
  const ctx = own && { ...own };
  for (const words of commands) {
    if (ctx && (words[0] === 'cd' || words[0] === 'pushd')) {
      const to = words.slice(1).find((w) => !w.startsWith('-'));
      ctx.cwd = resolveDir(to, ctx);
    }
    const hit = scanWords(words, agentId, depth, ctx);
    if (hit) return hit;
  }
  if (ctx)
    for (const r of redirects) {
      const hit = redirectHit(r.op, r.target, ctx);
      if (hit) return hit;
    }
  for (const s of substitutions) {
    const hit = scanScript(s, agentId, depth + 1, ctx);
    if (hit) return hit;
  }
  // A here-document a shell reads is a script (`bash <<EOF`, `sudo sh -s <<'EOF'`); one for `cat` or `tee` is data.
  for (const h of heredocs) {
    if (!h.command.some((w) => SHELLS.has(basename(w)) || w === 'eval')) continue;
    const hit = scanScript(h.body, agentId, depth + 1, ctx);
    if (hit) return hit;
  }
  return null;
}

/** Where `cd <to>` goes (its own directory when the target is a variable the hook cannot know). */
function resolveDir(to: string | undefined, ctx: OwnContext): string {
  if (!to || to === '~') return ctx.guard.home;
  const w = to
    .replace(/^~(?=\/)/, ctx.guard.home)
    .replace(/\$\{?(HOME|WARDEN_HOME)\}?(?![A-Za-z0-9_])/g, (_, n: string) => (n === 'HOME' ? ctx.guard.home : ctx.guard.wardenHome));
  if (w.includes('$') || w === '-') return ctx.cwd;
  return resolve(ctx.cwd, w);
}

/** One simple command, as words. */
function scanWords(input: string[], agentId: string, depth: number, own?: OwnContext): SelfControlHit | null {
  if (depth > MAX_DEPTH) return null;
  let words = input.filter((w) => w !== '');
  /** A hit on the agent's controls, else (given warden's installation) on its own files, endpoint or process. */
  const mine = (hit: SelfControlHit | null) => hit ?? (own ? ownCommandHit(words, own) : null);
  for (;;) {
    while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words = words.slice(1); // FOO=bar cmd
    if (!words.length) return null;
    const prog = basename(words[0]!);
    if (WRAPPERS.has(prog)) {
      words = dropOptions(words.slice(1), prog === 'sudo' || prog === 'doas' ? ['-u', '-g', '-C', '-D'] : ['-n', '-u', '-C', '-S', '-i', '-o', '-e']);
      continue;
    }
    if (prog === 'timeout') {
      words = dropOptions(words.slice(1), ['-s', '-k', '--signal', '--kill-after']).slice(1); // the duration
      continue;
    }
    if (RUNNERS.has(prog)) {
      words = dropOptions(words.slice(1), ['-p', '--package', '-c', '--call']);
      continue;
    }
    if (RUNNER_SUBS.has(prog)) {
      // npm exec warden -- …, pnpm exec|dlx warden …, yarn [exec|dlx] warden …, bun x warden …
      let rest = dropOptions(words.slice(1), ['-w', '--workspace', '-C', '--dir', '--prefix', '-p', '--package']);
      if (['exec', 'x', 'dlx', 'run'].includes(rest[0] ?? '')) rest = dropOptions(rest.slice(1), ['-p', '--package', '-c', '--call']);
      if (!rest.length) return null;
      words = rest.filter((w, i) => !(w === '--' && i === 1));
      continue;
    }
    if (SHELLS.has(prog)) {
      const flag = words.findIndex((w, i) => i > 0 && /^-[A-Za-z]*c[A-Za-z]*$/.test(w));
      return flag > 0 && words[flag + 1] !== undefined ? scanScript(words[flag + 1]!, agentId, depth + 1, own) : mine(null);
    }
    if (prog === 'eval') return scanScript(words.slice(1).join(' '), agentId, depth + 1, own);
    if (NODES.has(prog)) {
      const rest = dropOptions(words.slice(1), ['-r', '--require', '--import', '--loader', '--env-file', '-C', '--conditions']);
      const script = rest[0];
      if (!script) return mine(null);
      if (/warden/i.test(script) || /^(?:main|cli)\.[cm]?[jt]s$/.test(basename(script))) return mine(wardenHit(rest.slice(1), agentId, words));
      return mine(null);
    }
    if (/^warden(?:\.[cm]?js)?$/.test(prog)) return mine(wardenHit(words.slice(1), agentId, words));
    if (prog === 'temporal' || prog === 'tctl') return mine(temporalHit(prog, words.slice(1), agentId, words));
    if (HTTP_CLIENTS.has(prog)) return mine(httpHit(prog, words.slice(1), agentId, words));
    return mine(null);
  }
}

/** Words less their leading options (`-x`, `--x=v`, and for `withValue` options, the next word too), and a `--`. */
function dropOptions(words: string[], withValue: string[]): string[] {
  let i = 0;
  while (i < words.length && words[i]!.startsWith('-') && words[i] !== '-') {
    if (words[i] === '--') return words.slice(i + 1);
    i += withValue.includes(words[i]!) ? 2 : 1;
  }
  // env's own assignments: `env FOO=bar warden …`
  while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) i++;
  return words.slice(i);
}

const shown = (words: string[]) => words.join(' ').slice(0, 300);

/** `warden <verb> … <self>`: an acting verb with the agent's own id as an argument or option value. */
function wardenHit(args: string[], agentId: string, all: string[]): SelfControlHit | null {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) i += WARDEN_VALUE_OPTS.has(args[i]!) ? 2 : 1;
  const verb = args[i];
  if (!verb) return null;
  if (verb === 'uninstall') return { what: "warden uninstall (takes warden's hooks out)", command: shown(all) };
  if (!WARDEN_ACTING.has(verb)) return null;
  const targets = args.slice(i + 1).some((w) => w === agentId || w.endsWith(`=${agentId}`));
  return targets ? { what: `warden ${verb} ${agentId}`, command: shown(all) } : null;
}

/** `temporal|tctl [opts] workflow <acting sub> … -w agent-<self>` (or a --query naming it); `temporal activity …` likewise. */
function temporalHit(prog: string, args: string[], agentId: string, all: string[]): SelfControlHit | null {
  const positional: string[] = [];
  const values: Array<[string, string]> = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (!w.startsWith('-') || w === '-') {
      positional.push(w);
      continue;
    }
    const eq = w.indexOf('=');
    if (eq > 0) values.push([w.slice(0, eq), w.slice(eq + 1)]);
    else if (/^-w./.test(w))
      values.push(['-w', w.slice(2)]); // -wagent-x
    else if (!TEMPORAL_BOOL_OPTS.has(w) && i + 1 < args.length) values.push([w, args[++i]!]);
  }
  const [group, sub, subsub] = positional;
  const acting =
    ((group === 'workflow' || group === 'wf') &&
      sub !== undefined &&
      WORKFLOW_ACTING.has(sub) &&
      !(sub === 'update' && (subsub === 'describe' || subsub === 'result'))) ||
    (group === 'activity' && sub !== undefined && ACTIVITY_ACTING.has(sub)) ||
    (group === 'batch' && sub === 'start');
  if (!acting) return null;
  const workflowId = `agent-${agentId}`;
  const targets = values.some(([k, v]) => (WORKFLOW_ID_OPTS.has(k) && v === workflowId) || (QUERY_OPTS.has(k) && idIn(v, workflowId)));
  return targets ? { what: `${prog} ${group} ${sub} of ${workflowId}`, command: shown(all) } : null;
}

/** Temporal's HTTP API: a request naming `agent-<self>` and an acting path (`…/workflows/agent-x/signal/resume`). */
function httpHit(prog: string, args: string[], agentId: string, all: string[]): SelfControlHit | null {
  const workflowId = `agent-${agentId}`;
  const target = args.find(
    (w) =>
      idIn(w, workflowId) &&
      /\/workflows\/[^/\s]+\/(?:signal|update|terminate|reset|cancel)\b|(?:Signal|Update|Terminate|Reset|Request(?:Cancel))WorkflowExecution/.test(w),
  );
  if (!target && !(args.some((w) => idIn(w, workflowId)) && args.some((w) => /(?:Signal|Update|Terminate|Reset|RequestCancel)WorkflowExecution/.test(w))))
    return null;
  return { what: `${prog} to Temporal's API for ${workflowId}`, command: shown(all) };
}

// ---------- a shell's word splitting, as far as a tripwire needs it ----------

/** The `$(…)` and backtick substitutions of an unquoted here-document's body (quotes are text there). */
function bodySubstitutions(body: string): string[] {
  const out: string[] = [];
  for (let j = 0; j < body.length; j++) {
    if (body[j] === '\\') j++;
    else if (body[j] === '$' && body[j + 1] === '(') {
      let depth = 0;
      let k = j + 1;
      for (; k < body.length; k++) {
        if (body[k] === '(') depth++;
        else if (body[k] === ')' && --depth === 0) break;
      }
      out.push(body.slice(j + 2, k));
      j = k;
    } else if (body[j] === '`') {
      const k = body.indexOf('`', j + 1);
      out.push(body.slice(j + 1, k < 0 ? body.length : k));
      j = k < 0 ? body.length : k;
    }
  }
  return out;
}

/**
 * A shell script as simple commands (each a list of words, quotes and escapes resolved) and the
 * bodies of its command substitutions (`$(…)`, backticks), to be read as scripts of their own.
 * Redirections end a command's words (their targets are read as a command of their own, which is
 * harmless), and their targets are listed in `redirects` (`<` reads, `>` writes; `<>` and `>>`
 * write); `#` starts a comment at the start of a word. A here-document's body is not read as
 * commands: it is listed in `heredocs` with the words of the command it feeds (a shell runs it; `cat`
 * does not), and the `$(…)` and backticks of an unquoted one are substitutions.
 */
export function splitShell(src: string): {
  commands: string[][];
  substitutions: string[];
  redirects: Array<{ op: '<' | '>'; target: string }>;
  heredocs: Array<{ body: string; command: string[] }>;
} {
  const commands: string[][] = [];
  const substitutions: string[] = [];
  const redirects: Array<{ op: '<' | '>'; target: string }> = [];
  const heredocs: Array<{ body: string; command: string[] }> = [];
  /** Here-documents whose bodies start at the next newline. */
  let pending: Array<{ delim: string; quoted: boolean; tabs: boolean; command: string[] }> = [];
  /** The command a chain of redirections belongs to (`cat > f <<EOF`: cat). */
  let owner: string[] | null = null;
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let redirect: '<' | '>' | null = null;
  const endWord = () => {
    if (inWord) {
      if (redirect && !words.length) redirects.push({ op: redirect, target: word });
      redirect = null;
      words.push(word);
    }
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    const reserved = new Set(['{', '}', '!', 'then', 'do', 'else', 'elif', 'if', 'while', 'until', 'time']);
    while (words.length && reserved.has(words[0]!)) words.shift();
    if (words.length) commands.push(words);
    words = [];
  };
  /** The end of a `$(…)` starting at `open` (the index of `(`), counting nested parentheses and skipping quotes. */
  const closing = (open: number): number => {
    let depth = 0;
    for (let j = open; j < src.length; j++) {
      const c = src[j]!;
      if (c === '\\') j++;
      else if (c === "'") {
        const k = src.indexOf("'", j + 1);
        j = k < 0 ? src.length : k;
      } else if (c === '(') depth++;
      else if (c === ')' && --depth === 0) return j;
    }
    return src.length;
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      if (src[i + 1] === '\n') i += 2;
      else {
        word += src[i + 1] ?? '';
        inWord = true;
        i += 2;
      }
    } else if (c === "'") {
      const k = src.indexOf("'", i + 1);
      word += src.slice(i + 1, k < 0 ? src.length : k);
      inWord = true;
      i = k < 0 ? src.length : k + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      while (i < src.length && src[i] !== '"') {
        const d = src[i]!;
        if (d === '\\' && '"\\$`\n'.includes(src[i + 1] ?? '')) {
          if (src[i + 1] !== '\n') word += src[i + 1];
          i += 2;
        } else if (d === '$' && src[i + 1] === '(') {
          const end = closing(i + 1);
          substitutions.push(src.slice(i + 2, end));
          i = end + 1;
        } else if (d === '`') {
          const k = src.indexOf('`', i + 1);
          substitutions.push(src.slice(i + 1, k < 0 ? src.length : k));
          i = k < 0 ? src.length : k + 1;
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === '$' && src[i + 1] === '(') {
      const end = closing(i + 1);
      substitutions.push(src.slice(i + 2, end));
      inWord = true;
      i = end + 1;
    } else if (c === '`') {
      const k = src.indexOf('`', i + 1);
      substitutions.push(src.slice(i + 1, k < 0 ? src.length : k));
      inWord = true;
      i = k < 0 ? src.length : k + 1;
    } else if (c === '#' && !inWord) {
      const k = src.indexOf('\n', i);
      i = k < 0 ? src.length : k;
    } else if (c === '<' && src[i + 1] === '<' && src[i + 2] !== '<') {
      // A here-document: `<<[-]WORD`, its body from the next line to the line WORD.
      endWord();
      const command: string[] = owner ?? [...words];
      owner = command;
      endCommand();
      redirect = null;
      i += 2;
      const tabs = src[i] === '-';
      if (tabs) i++;
      while (src[i] === ' ' || src[i] === '\t') i++;
      const m = /^(?:'[^'\n]*'|"[^"\n]*"|\\?[^\s;&|<>()]+)+/.exec(src.slice(i)) ?? [''];
      const delim = m[0].replace(/['"\\]/g, '');
      i += m[0].length;
      if (delim) pending.push({ delim, quoted: /['"\\]/.test(m[0]), tabs, command });
    } else if (c === '\n' && pending.length) {
      endCommand();
      owner = null;
      redirect = null;
      i++;
      for (const h of pending) {
        const lines: string[] = [];
        while (i < src.length) {
          const k = src.indexOf('\n', i);
          const line = src.slice(i, k < 0 ? src.length : k);
          i = k < 0 ? src.length : k + 1;
          if ((h.tabs ? line.replace(/^\t+/, '') : line) === h.delim) break;
          lines.push(line);
        }
        const body = lines.join('\n');
        heredocs.push({ body, command: h.command });
        if (!h.quoted) substitutions.push(...bodySubstitutions(body));
      }
      pending = [];
    } else if (';&|\n()<>'.includes(c)) {
      if ((c === '<' || c === '>') && owner === null) {
        endWord();
        owner = [...words];
      } else if (c !== '<' && c !== '>') owner = null;
      endCommand();
      redirect = c === '>' ? '>' : c === '<' ? (redirect === null ? '<' : redirect) : null;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      endWord();
      i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  endCommand();
  return { commands, substitutions, redirects, heredocs };
}
