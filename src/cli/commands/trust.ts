/**
 * `warden trust [DIR]`: the user's decision that a project's `warden.yaml` may configure the
 * sessions hooked there as it is (src/config/trust.ts has the model). `--revoke` takes the decision
 * back, `--list` shows the decisions and whether each file is still the one trusted.
 */
import type { Command } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseConfig, projectConfigFile, readConfigText } from '../../config/file.js';
import {
  configDigest,
  describeConfig,
  isTrusted,
  projectKey,
  readTrustStore,
  trustFilePath,
  withTrusted,
  withoutProject,
  writeTrustStore,
  type TrustEntry,
} from '../../config/trust.js';
import { globals } from '../context.js';
import { UsageError } from '../exit.js';
import { print, printJson } from '../output.js';

interface TrustOptions {
  revoke?: boolean;
  list?: boolean;
}

/** A trusted project now: `trusted` (its file is the one trusted), `changed` (untrusted until trusted again), `missing`. */
function entryState(e: TrustEntry): 'trusted' | 'changed' | 'missing' {
  const file = projectConfigFile(e.dir);
  if (!existsSync(file)) return 'missing';
  try {
    return configDigest(readConfigText(file)) === e.sha256 ? 'trusted' : 'changed';
  } catch {
    return 'changed';
  }
}

function projectDir(dir: string | undefined): string {
  const d = resolve(dir ?? '.');
  if (!existsSync(d) || !statSync(d).isDirectory()) throw new UsageError(`no such directory: ${d}`);
  return d;
}

export async function trustAction(dir: string | undefined, o: TrustOptions, cmd: Command): Promise<void> {
  const json = Boolean(globals(cmd).json);
  if (o.list && o.revoke) throw new UsageError('--list and --revoke: choose one');
  if (o.list) {
    if (dir !== undefined) throw new UsageError('--list takes no directory: it lists every trusted project');
    const list = readTrustStore().map((e) => ({ ...e, state: entryState(e) }));
    if (json) return printJson({ file: trustFilePath(), projects: list });
    if (!list.length) return print('no trusted projects');
    for (const e of list) print(`${e.state.padEnd(8)} ${e.dir}  (sha256 ${e.sha256.slice(0, 12)}…, trusted ${e.trustedAt})`);
    return;
  }
  const d = projectDir(dir);
  const entries = readTrustStore();
  if (o.revoke) {
    const after = withoutProject(entries, d);
    const was = after.length !== entries.length;
    if (was) writeTrustStore(after);
    if (json) return printJson({ dir: projectKey(d), revoked: was });
    return print(was ? `revoked: ${projectKey(d)} is no longer trusted` : `${projectKey(d)} was not trusted; nothing to revoke`);
  }
  const file = projectConfigFile(d);
  if (!existsSync(file)) throw new Error(`no warden.yaml in ${d}: there is nothing to trust`);
  const text = readConfigText(file);
  const cfg = parseConfig(text, file); // a file warden cannot use is not trusted
  const sha256 = configDigest(text);
  const already = isTrusted(entries, d, sha256);
  if (!already) writeTrustStore(withTrusted(entries, d, sha256));
  const effects = describeConfig(cfg);
  if (json) return printJson({ dir: projectKey(d), file, sha256, trusted: true, changed: !already, effects });
  print(`${already ? 'already trusted' : 'trusted'}: ${file} (sha256 ${sha256.slice(0, 12)}…)`);
  if (effects.length) {
    print('Hooked sessions in this project now use it as it is:');
    for (const l of effects) print(`  ${l}`);
  } else print('It sets nothing beyond the defaults.');
  print('A change to the file makes it untrusted again until you run `warden trust` again.');
}
