/**
 * `warden --help`, `--version` and every verb must start at once: the command definitions
 * (src/cli/program.ts and src/cli/verbs/) import nothing heavy, and each verb's implementation
 * (src/cli/commands/) is imported only when it runs. This reads the static import statements of
 * the sources (dynamic `import()` is what the actions use, and is allowed) and follows them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** The modules a source file imports statically and at run time (`import type` and type-only specifier lists are erased by tsc). */
function staticImports(source: string): string[] {
  const out: string[] = [];
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const re = /^\s*(import|export)\s+([^;'"]*?)\s*from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[4]) {
      out.push(m[4]); // import 'x' (for its side effects)
      continue;
    }
    const clause = m[2]!;
    if (/^type\s/.test(clause)) continue;
    const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
    if (braces) {
      const names = braces[1]!
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (names.length > 0 && names.every((n) => n.startsWith('type '))) continue;
    }
    out.push(m[3]!);
  }
  return out;
}

/** The source file a relative specifier names (`./x.js` → `./x.ts`). */
function sourceOf(from: string, spec: string): string {
  const js = resolve(dirname(from), spec);
  const ts = js.replace(/\.js$/, '.ts');
  const tsx = js.replace(/\.js$/, '.tsx');
  return existsSync(ts) ? ts : existsSync(tsx) ? tsx : js;
}

/** Every module reachable from `entry` by static imports: source files (relative to ROOT) and packages, each with the chain that reaches it. */
function staticGraph(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const start = join(ROOT, entry);
  const queue: [string, string[]][] = [[start, [entry]]];
  seen.set(entry, [entry]);
  while (queue.length) {
    const [file, chain] = queue.shift()!;
    for (const spec of staticImports(readFileSync(file, 'utf8'))) {
      if (spec.startsWith('.')) {
        const target = sourceOf(file, spec);
        const key = relative(ROOT, target);
        if (seen.has(key)) continue;
        seen.set(key, [...chain, key]);
        queue.push([target, [...chain, key]]);
      } else {
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
        if (!seen.has(pkg)) seen.set(pkg, [...chain, pkg]);
      }
    }
  }
  return seen;
}

/** Packages the definitions may load: commander builds them, node's own modules cost nothing. */
const LIGHT_PACKAGES = (name: string) => name === 'commander' || name.startsWith('node:');

/** What `entry` must not reach statically: a verb's implementation, or any package but the light ones. */
function heavy(entry: string): string[] {
  const found: string[] = [];
  for (const [mod, chain] of staticGraph(entry)) {
    const isSource = mod.startsWith('src/') || mod.startsWith('workers/') || mod.startsWith('activities/') || mod.startsWith('workflows/');
    if (isSource ? mod.startsWith('src/cli/commands/') : !LIGHT_PACKAGES(mod)) found.push(chain.join(' → '));
  }
  return found;
}

test('staticImports reads the import statements tsc keeps', () => {
  const src = `
import { a } from './a.js';
import type { B } from './b.js';
import { type C, type D } from './c.js';
import { type E, f } from './e.js';
import {
  g,
  h,
} from 'pkg';
import './side.js';
export { x } from './x.js';
// import { no } from './comment.js';
const later = () => import('./dynamic.js');
`;
  expect(staticImports(src)).toEqual(['./a.js', './e.js', 'pkg', './side.js', './x.js']);
});

test('program.ts imports no command module statically', () => {
  const imports = staticImports(readFileSync(join(ROOT, 'src/cli/program.ts'), 'utf8'));
  expect(imports.filter((s) => /(^|\/)commands\//.test(s))).toEqual([]);
});

test('the command definitions (main.ts, program.ts) reach nothing heavy by static imports', () => {
  expect(heavy('src/cli/program.ts')).toEqual([]);
  expect(heavy('src/cli/main.ts')).toEqual([]);
});

test('the hook loads only what a hook needs: no terminal UI, no other verb', () => {
  const graph = staticGraph('src/cli/commands/hook.ts');
  const bad = [...graph]
    .filter(
      ([mod]) =>
        ['ink', 'react', 'execa', 'pino', 'irc-framework', '@temporalio/worker'].includes(mod) || /^src\/cli\/(commands\/(?!hook\.ts)|top\/)/.test(mod),
    )
    .map(([, chain]) => chain.join(' → '));
  expect(bad).toEqual([]);
});

test('verbOf finds the verb after the global options, and nothing for help, version or an unknown word', async () => {
  const { verbOf } = await import('../../src/cli/program.js');
  const argv = (...a: string[]) => ['node', 'warden', ...a];
  expect(verbOf(argv('hook', 'claude'))).toBe('hook');
  expect(verbOf(argv('--address', '127.0.0.1:7233', '--task-queue=q', 'status', 'x'))).toBe('status');
  expect(verbOf(argv('--namespace', 'hook', 'report', 'x'))).toBe('report');
  expect(verbOf(argv('steer', 'a', 'text'))).toBe('steer');
  expect(verbOf(argv('--help'))).toBeUndefined();
  expect(verbOf(argv('--version'))).toBeUndefined();
  expect(verbOf(argv('help', 'start'))).toBeUndefined();
  expect(verbOf(argv('statsu', 'x'))).toBeUndefined();
  expect(verbOf(argv())).toBeUndefined();
});

test('a program built for one verb defines that verb exactly as the whole program does', async () => {
  const { buildProgram } = await import('../../src/cli/program.js');
  const { renderCliReference } = await import('../../src/cli/reference.js');
  const whole = buildProgram();
  for (const c of whole.commands) {
    const one = buildProgram(c.name());
    expect(one.commands.map((x) => x.name())).toContain(c.name());
    const section = (text: string) =>
      text
        .slice(text.indexOf(`\n## warden ${c.name()}\n`))
        .split('\n## warden ')
        .slice(0, 1 + c.commands.length)
        .join('\n## warden ');
    expect(section(renderCliReference(one))).toBe(section(renderCliReference(whole)));
  }
});
