/**
 * The `codex` evaluator: one short-lived `codex exec` per evaluation.
 *
 * - read-only sandbox, `-m <model>`, `--skip-git-repo-check`, `--ephemeral`, the prompt on stdin
 *   (`-`), the final message captured with `--output-last-message <file>`;
 * - a throwaway CODEX_HOME per evaluation (mkdtemp), into which the credentials (`auth.json`, and
 *   `config.toml` if present) are copied from `credentialsHome ?? $CODEX_HOME ?? ~/.codex`; it is
 *   removed in a `finally`, also on timeout and cancellation;
 * - everything that would reach a host other than the configured model provider is switched off
 *   (analytics, OTel metrics export, plugin sync, apps, hosted web search, MCP servers and `notify`
 *   from a copied config.toml); the `config` overrides of the spec come last, so they can undo that;
 * - codex runs in its own process group (the npm `codex` is a Node wrapper that spawns the native
 *   binary): on abort the whole group gets SIGTERM, then SIGKILL after a grace period, and
 *   `evaluate` returns only once every process of that group (and every process still carrying
 *   this evaluation's CODEX_HOME) is gone and the home directory is removed.
 *
 * Secrets never go into argv: credentials travel as files in the throwaway home, API keys through
 * the environment — only the names the worker's operator passes on (WARDEN_SUBPROCESS_ENV_ALLOW, see
 * src/config/worker.ts), since a spec's `-c` overrides could otherwise point `env_key` at any secret.
 */
import { PROXY_ENV, subprocessEnv } from '../../src/config/worker.js';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EvaluatorConfig } from '../../src/domain/contract/schemas.js';
import type { Evaluator } from './types.js';
import { CODEX_QUIET_OVERRIDES, configTomlOverrides, copyCodexCredentials, credentialsSource, resolveCodexBinary, stderrTail } from '../codex-home.js';

// Shared with the codex driver (activities/codex-home.ts); re-exported for existing importers.
export {
  CODEX_CREDENTIAL_FILES,
  CODEX_QUIET_OVERRIDES,
  PROJECT_CODEX_CANDIDATES,
  configTomlOverrides,
  copyCodexCredentials,
  credentialsSource,
  mcpServerOverrides,
  resolveCodexBinary,
  stderrTail,
} from '../codex-home.js';
import { runInGroup } from '../process-group.js';

export type CodexEvaluatorConfig = Extract<EvaluatorConfig, { kind: 'codex' }>;

/** Grace period between SIGTERM and SIGKILL when an evaluation is aborted. */
export const CODEX_KILL_GRACE_MS = 2_000;

export interface CodexArgsInput {
  model: string;
  /** Where codex writes its final message. */
  lastMessageFile: string;
  /** The (empty) working directory codex runs in. */
  workDir: string;
  /** Overrides derived from the copied config.toml (e.g. MCP servers switched off). */
  derivedOverrides?: readonly string[];
  /** The spec's own `-c` overrides; last, so they win. */
  overrides?: readonly string[];
}

/** The argv for `codex exec`, after the binary. The prompt is not in it: it goes on stdin (`-`). */
export function buildCodexArgs(input: CodexArgsInput): string[] {
  const args = [
    'exec',
    '--sandbox',
    'read-only',
    '--skip-git-repo-check',
    '--ephemeral',
    '--color',
    'never',
    '-m',
    input.model,
    '-C',
    input.workDir,
    '--output-last-message',
    input.lastMessageFile,
  ];
  for (const o of [...CODEX_QUIET_OVERRIDES, ...(input.derivedOverrides ?? []), ...(input.overrides ?? [])]) args.push('-c', o);
  args.push('-');
  return args;
}

export function codexEvaluator(config: CodexEvaluatorConfig): Evaluator {
  return {
    name: 'codex',
    async evaluate(req, ctx) {
      if (ctx.signal.aborted) throw new Error('codex evaluation aborted before it started');
      const file = resolveCodexBinary(config);
      const root = await mkdtemp(join(tmpdir(), 'warden-codex-'));
      const codexHome = join(root, 'home');
      const workDir = join(root, 'work');
      const lastMessageFile = join(root, 'last-message.txt');
      let pid: number | undefined;
      try {
        await mkdir(codexHome, { mode: 0o700 });
        await mkdir(workDir);
        const source = credentialsSource(config);
        const copied = await copyCodexCredentials(source, codexHome);
        const derivedOverrides = await configTomlOverrides(codexHome);

        const args = buildCodexArgs({ model: req.model, lastMessageFile, workDir, derivedOverrides, overrides: config.config });
        const started = Date.now();
        const result = await runInGroup(
          file,
          args,
          {
            input: req.prompt,
            cwd: workDir,
            extendEnv: false,
            env: subprocessEnv({ CODEX_HOME: codexHome, NO_COLOR: '1' }, { passThrough: PROXY_ENV }),
            stdout: 'pipe',
            stderr: 'pipe',
            maxBuffer: 20_000_000,
          },
          {
            signal: ctx.signal,
            killGraceMs: CODEX_KILL_GRACE_MS,
            marker: `CODEX_HOME=${codexHome}`,
            onSpawn: (p) => {
              pid = p;
              ctx.log.debug({ codexHome, pid, file, copied, credentialsFrom: source }, 'codex exec started');
            },
          },
        );
        const ms = Date.now() - started;
        if (ctx.signal.aborted) throw new Error(`codex exec stopped after ${ms} ms: ${abortReason(ctx.signal)}`);
        if (result.failed && result.exitCode === undefined && !result.signal) {
          throw new Error(`could not run ${file}: ${result.shortMessage ?? result.message}`);
        }
        if (result.exitCode !== 0) {
          const how = result.exitCode !== undefined ? `exited with code ${result.exitCode}` : `was killed by ${result.signal}`;
          throw new Error(`codex exec ${how} after ${ms} ms; stderr: ${stderrTail(String(result.stderr ?? ''))}`);
        }
        const last = existsSync(lastMessageFile) ? (await readFile(lastMessageFile, 'utf8')).trim() : '';
        const answer = last || String(result.stdout ?? '').trim();
        if (!answer) throw new Error(`codex exec produced no final message; stderr: ${stderrTail(String(result.stderr ?? ''))}`);
        ctx.log.debug({ codexHome, pid, ms }, 'codex exec finished');
        const tokens = codexTokensUsed(`${String(result.stderr ?? '')}\n${String(result.stdout ?? '')}`);
        return { text: answer, ...(tokens !== undefined && { usage: { tokens } }) };
      } finally {
        try {
          await rm(root, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
          ctx.log.debug({ codexHome, pid }, 'codex home removed');
        } catch (err) {
          ctx.log.warn({ codexHome, err: String(err) }, 'could not remove the throwaway codex home');
        }
      }
    },
  };
}

/**
 * The total that `codex exec` prints at the end of a run (`tokens used` and the number on the next
 * line, or after a colon; thousands separated by commas). Codex prints no split into input and
 * output and no price, so the evaluator spend counts it as a total. Undefined when absent.
 */
export function codexTokensUsed(output: string): number | undefined {
  const all = [...output.matchAll(/tokens used[:\s]*([\d][\d,]*)/gi)];
  const last = all.at(-1)?.[1];
  if (!last) return undefined;
  const n = Number(last.replace(/,/g, ''));
  return Number.isFinite(n) ? n : undefined;
}

function abortReason(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  if (r instanceof Error) return r.name === 'TimeoutError' ? 'deadline reached' : r.message;
  return r === undefined ? 'aborted' : String(r);
}
