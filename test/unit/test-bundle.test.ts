/**
 * The tests' choice of workflow code (test/helpers/bundle.ts): the prebuilt bundle only while no
 * TypeScript module it was compiled from is newer. A scratch "bundle" stands in for the real one
 * (`WARDEN_WORKFLOW_BUNDLE` names it); its mtime is set around the sources' own.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { existsSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { currentPrebuiltBundle } from '../helpers/bundle.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'warden-test-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeBundle(name: string, modules: string[], mtimeMs: number): string {
  const file = join(dir, name);
  writeFileSync(file, modules.map((m) => `/***/ "${m}":\n`).join(''));
  utimesSync(file, mtimeMs / 1000, mtimeMs / 1000);
  return file;
}

describe('the workflow bundle the tests run', () => {
  test.skipIf(!existsSync(join(ROOT, 'dist/workers/bundle.js')))(
    'the prebuilt bundle while its sources are older; bundled from source once one is newer',
    async () => {
      // The newest of the two sources (a checkout or a merge writes them at different times).
      const entry = Math.max(...['workflows/index.ts', 'src/domain/agent/effects.ts'].map((f) => statSync(join(ROOT, f)).mtimeMs));
      const modules = ['./dist/workflows/index.js', './dist/src/domain/agent/effects.js'];
      const current = fakeBundle('current.js', modules, entry + 60_000);
      expect(await currentPrebuiltBundle({ WARDEN_WORKFLOW_BUNDLE: current })).toBe(current);
      const stale = fakeBundle('stale.js', modules, entry - 60_000);
      expect(await currentPrebuiltBundle({ WARDEN_WORKFLOW_BUNDLE: stale })).toBeNull();
      // A module without its TypeScript source, or a bundle that names none: from source.
      expect(await currentPrebuiltBundle({ WARDEN_WORKFLOW_BUNDLE: fakeBundle('gone.js', ['./dist/workflows/gone.js'], entry + 60_000) })).toBeNull();
      expect(await currentPrebuiltBundle({ WARDEN_WORKFLOW_BUNDLE: fakeBundle('empty.js', [], entry + 60_000) })).toBeNull();
      // The worker's own switches: always from source, and never the stack-trace-free prebuilt bundle.
      expect(await currentPrebuiltBundle({ WARDEN_WORKFLOW_BUNDLE: '0' })).toBeNull();
      expect(await currentPrebuiltBundle({ WARDEN_WORKFLOW_STACK_TRACES: '1' })).toBeNull();
    },
  );
});
