/**
 * Which workflow code the tests' in-process workers and replays run: the prebuilt bundle that
 * `npm test` builds first (dist/workflow-bundle.js), when it is current.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * The prebuilt bundle as the worker itself would pick it: `prebuiltBundlePath()` of the compiled
 * dist/workers/bundle.js (null when the bundle is missing or older than the compiled workflow code,
 * with `WARDEN_WORKFLOW_BUNDLE=0`, or with `WARDEN_WORKFLOW_STACK_TRACES=1`), and then only if no
 * TypeScript module the bundle was compiled from (each `./dist/….js` it names) changed since it
 * was built: a test run right after an edit, without `npm run build`, bundles the edited source.
 * (Under vitest, workers/bundle.ts itself is the .ts source, whose `prebuiltBundlePath()` never
 * picks up the dist bundle.)
 */
export async function currentPrebuiltBundle(env: NodeJS.ProcessEnv = process.env): Promise<string | null> {
  const compiled = join(ROOT, 'dist/workers/bundle.js');
  if (!existsSync(compiled)) return null;
  const { prebuiltBundlePath } = (await import(pathToFileURL(compiled).href)) as typeof import('../../workers/bundle.js');
  const codePath = prebuiltBundlePath(env);
  if (!codePath || !existsSync(codePath)) return null;
  const built = statSync(codePath).mtimeMs;
  const modules = new Set([...readFileSync(codePath, 'utf8').matchAll(/"\.\/dist\/([\w./-]+)\.js"/g)].map((m) => m[1]!));
  if (modules.size === 0) return null;
  for (const m of modules) {
    const source = join(ROOT, `${m}.ts`);
    if (!existsSync(source) || statSync(source).mtimeMs > built) return null;
  }
  return codePath;
}
