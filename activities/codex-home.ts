/**
 * What the codex evaluator and the codex driver share: finding the binary, the credentials copied
 * into a per-agent or per-evaluation CODEX_HOME, the overrides that keep codex quiet (no analytics,
 * no update checks, no MCP servers from a copied config.toml), and stderr tails for errors.
 */
import { accessSync, constants as fsConstants, existsSync, statSync } from 'node:fs';
import { copyFile, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Files copied from the credentials home into each throwaway CODEX_HOME, when they exist. */
export const CODEX_CREDENTIAL_FILES = ['auth.json', 'config.toml'] as const;
const STDERR_TAIL_LINES = 12;
/**
 * `-c` overrides that keep an evaluation offline except for the model provider. Unknown keys are
 * ignored by codex with a warning (unlike `--disable <feature>`, which fails on an unknown name),
 * so these survive codex upgrades.
 */
export const CODEX_QUIET_OVERRIDES: readonly string[] = [
  'analytics.enabled=false',
  'otel.metrics_exporter="none"',
  'check_for_update_on_startup=false',
  'web_search="disabled"',
  'notify=[]',
  'features.plugins=false',
  'features.remote_plugin=false',
  'features.apps=false',
  'features.hooks=false',
];

/**
 * `-c mcp_servers.<name>.enabled=false` for every MCP server a copied config.toml declares with a
 * `[mcp_servers.<name>]` table header (an override of `mcp_servers={}` does not remove them). An
 * evaluator only reads a transcript: it has no use for the user's tools.
 */
export function mcpServerOverrides(configToml: string): string[] {
  const names = new Set<string>();
  const re = /^\s*\[\s*mcp_servers\s*\.\s*(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_-]+))\s*[\].]/gm;
  for (const m of configToml.matchAll(re)) names.add((m[1] ?? m[2] ?? m[3])!);
  return [...names].map((n) => `mcp_servers.${/^[A-Za-z0-9_-]+$/.test(n) ? n : JSON.stringify(n)}.enabled=false`);
}

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** The project root: two levels up from dist/activities, one from activities. */
const PROJECT_ROOT = resolve(HERE, /[\\/]dist[\\/]activities[\\/]?$/.test(HERE) ? '../..' : '..');

/** The project's own codex (the `@openai/codex` devDependency). */
export const PROJECT_CODEX_CANDIDATES: readonly string[] = [join(PROJECT_ROOT, 'node_modules', '.bin', 'codex')];

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Find the codex binary: `config.codexPath`, else `$WARDEN_CODEX_PATH`, else `codex` on PATH, else
 * the project's own `node_modules/.bin/codex`. Throws when there is none.
 */
export function resolveCodexBinary(
  config: { codexPath?: string },
  env: NodeJS.ProcessEnv = process.env,
  projectCandidates: readonly string[] = PROJECT_CODEX_CANDIDATES,
): string {
  if (config.codexPath) return config.codexPath;
  if (env.WARDEN_CODEX_PATH) return env.WARDEN_CODEX_PATH;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'codex');
    if (isExecutableFile(p)) return p;
  }
  for (const p of projectCandidates) if (isExecutableFile(p)) return p;
  throw new Error('codex binary not found: set evaluator.codexPath or WARDEN_CODEX_PATH, put `codex` on PATH, or install @openai/codex');
}

/** Where credentials are copied from: `credentialsHome`, else `$CODEX_HOME`, else `~/.codex`. */
export function credentialsSource(config: { credentialsHome?: string }, env: NodeJS.ProcessEnv = process.env): string {
  return config.credentialsHome ?? env.CODEX_HOME ?? join(homedir(), '.codex');
}

/**
 * Copy the credential files (`auth.json`, `config.toml`) that exist in `source` into `codexHome`
 * (which must exist). Returns the names copied.
 */
export async function copyCodexCredentials(source: string, codexHome: string): Promise<string[]> {
  const copied: string[] = [];
  for (const name of CODEX_CREDENTIAL_FILES) {
    const from = join(source, name);
    if (!existsSync(from)) continue;
    await copyFile(from, join(codexHome, name));
    copied.push(name);
  }
  return copied;
}

/** The overrides derived from `<codexHome>/config.toml` (its MCP servers switched off); none without one. */
export async function configTomlOverrides(codexHome: string): Promise<string[]> {
  const file = join(codexHome, 'config.toml');
  return existsSync(file) ? mcpServerOverrides(await readFile(file, 'utf8')) : [];
}

/** The last lines of a process's stderr, bounded, for an error message. */
export function stderrTail(stderr: string): string {
  const lines = stderr.split(/\r?\n/).filter((l) => l.trim() !== '');
  const t = lines.slice(-STDERR_TAIL_LINES).join('\n');
  return t ? (t.length > 2_000 ? `…${t.slice(-2_000)}` : t) : '(empty)';
}
