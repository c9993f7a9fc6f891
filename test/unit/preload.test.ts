/**
 * The preloaded code (workers/bundle.ts): the worker loads it once per thread and shares it with
 * every cached workflow. First zod (workers/zod-preload); then the workflow entry (workflows/index) with everything it loads:
 * the workflow shells, warden's domain code and the modules that validate with a zod schema.
 * Sharing is correct only while they hold no module-level mutable state and nothing writes to what
 * they export (the SDK deep-freezes it). The entry's schemas stay out of the freeze's reach because
 * webpack's scope hoisting makes the entry one module that exports only the workflow functions,
 * which the last test checks on the prebuilt bundle.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SHARED_ROOT = join(ROOT, 'workers/zod-preload.ts');
const rel = (f: string) => relative(ROOT, f);
const source = (f: string) => readFileSync(f, 'utf8');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

/** The modules a file imports for their values (what the compiled code loads): type-only imports are erased. */
function valueImports(file: string): string[] {
  const out: string[] = [];
  const text = source(file).replace(/\/\*[\s\S]*?\*\//g, '');
  for (const m of text.matchAll(/^(import|export)\s+(type\s+)?([^'";]*?)\s*(?:from\s+)?'([^']+)';/gm)) {
    const [, kind, typeOnly, what, spec] = m;
    if (typeOnly) continue;
    if (kind === 'export' && !/\bfrom\b/.test(m[0])) continue;
    const braces = what!.match(/\{([^}]*)\}/);
    const namedOnly =
      braces &&
      what!
        .replace(/\{[^}]*\}/, '')
        .replace(/,/g, '')
        .trim() === '';
    if (namedOnly && braces![1]!.split(',').every((s) => s.trim() === '' || /^type\s/.test(s.trim()))) continue;
    out.push(spec!.startsWith('.') ? resolve(dirname(file), spec!).replace(/\.js$/, '.ts') : spec!);
  }
  return out;
}

/** Every module `roots` load, themselves included (relative modules as paths, packages by name). */
function closure(roots: string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (f: string) => {
    if (seen.has(f)) return;
    seen.add(f);
    if (f.startsWith('/')) for (const d of valueImports(f)) visit(d);
  };
  for (const r of roots) visit(r);
  return seen;
}

const SHARED = [...closure([SHARED_ROOT])];
const SHARED_FILES = SHARED.filter((f) => f.startsWith('/'));
/** The workflow entry and the modules only it loads (preloaded after zod). */
const WORKFLOW_ENTRY = join(ROOT, 'workflows/index.ts');
const WORKFLOW_FILES = [...closure([WORKFLOW_ENTRY])].filter((f) => f.startsWith('/') && !SHARED_FILES.includes(f));
/** Every file of warden's that a worker thread shares between workflows. */
const PRELOADED_FILES = [...SHARED_FILES, ...WORKFLOW_FILES];

it("the separately preloaded module is zod's preload, which loads zod and nothing of warden's", () => {
  expect(SHARED_FILES.map(rel)).toEqual(['workers/zod-preload.ts']);
  expect(SHARED.filter((f) => !f.startsWith('/'))).toEqual(['zod']);
});

/** Module-level Maps/Sets/WeakMaps that are written, allowed because sharing them is harmless (the file says why). */
const SANCTIONED_CACHES = ['src/domain/contract/window-budget.ts:turnBytesCache'];

it("no module-level mutable state in the preloaded modules, the workflow entry's included (it would be shared by every workflow of a thread)", () => {
  expect(WORKFLOW_FILES.map(rel)).toEqual(
    expect.arrayContaining(['workflows/agent.ts', 'workflows/loop.ts', 'workflows/mesh/workflow.ts', 'src/domain/contract/schemas.ts']),
  );
  const problems: string[] = [];
  for (const f of PRELOADED_FILES) {
    const text = source(f);
    for (const m of text.matchAll(/^(?:export )?(let|var) (\w+)/gm)) problems.push(`${rel(f)}: module-level ${m[1]} ${m[2]}`);
    for (const m of text.matchAll(/^(?:export )?const (\w+)(?:\s*:[^=\n]+)? = new (Map|Set|WeakMap|WeakSet)\b/gm)) {
      const name = m[1]!;
      const written = new RegExp(`\\b${name}\\.(set|add|delete|clear)\\(`).test(text);
      if (written && !SANCTIONED_CACHES.includes(`${rel(f)}:${name}`)) problems.push(`${rel(f)}: ${name} (a module-level ${m[2]} that is written)`);
    }
    // A global or sticky regex keeps `lastIndex` between uses: at module level it is shared, unless every use
    // is one that starts from 0 and leaves it at 0 (replace, replaceAll, split; matchAll works on a copy).
    for (const m of text.matchAll(/^(export )?const (\w+)(?:\s*:[^=\n]+)? = \/.*\/[a-z]*[gy][a-z]*;?$/gm)) {
      const name = m[2]!;
      const uses = [...text.matchAll(new RegExp(`(.{0,12})\\b${name}\\b`, 'g'))].map((u) => u[1]!).slice(1);
      const stateless = uses.every((before) => /\.(replace|replaceAll|matchAll|split)\($/.test(before));
      if (m[1] || !stateless) problems.push(`${rel(f)}: ${name} (a module-level global or sticky regex: its lastIndex would be shared)`);
    }
  }
  expect(problems).toEqual([]);
  // the scan sees the sanctioned caches (so it would see another one)
  expect(SANCTIONED_CACHES.every((c) => PRELOADED_FILES.map(rel).includes(c.split(':')[0]!))).toBe(true);
});

it('nothing writes to an exported object or array of a preloaded module (the SDK freezes them)', () => {
  const exported = PRELOADED_FILES.flatMap((f) =>
    [...source(f).matchAll(/^export const (\w+)(?:\s*:[^=\n]+)? = (?:\[|\{|new |Object\.)/gm)].map((m) => ({ name: m[1]!, file: rel(f) })),
  );
  expect(exported.map((e) => e.name)).toContain('RUN_LIMITS');
  const users = [...files(join(ROOT, 'src')), ...files(join(ROOT, 'workflows'))];
  const problems: string[] = [];
  for (const { name } of exported) {
    const write = new RegExp(
      `\\b${name}(?:\\.\\w+|\\[[^\\]]+\\])*(?:\\.(?:push|pop|shift|unshift|splice|sort|reverse|fill|copyWithin|set|add|delete|clear)\\(|(?:\\.\\w+|\\[[^\\]]+\\])\\s*(?:[-+*/|&]?=(?!=)|\\+\\+|--))|Object\\.(?:assign|defineProperty)\\(\\s*${name}\\b|delete\\s+${name}\\b`,
    );
    for (const f of users) if (write.test(source(f))) problems.push(`${rel(f)} writes to ${name}`);
  }
  expect(problems).toEqual([]);
});

/** The SDK's deep freeze (node_modules/@temporalio/worker/lib/workflow/reusable-vm.js), applied to what a module exports. */
function deepFreeze(o: unknown, seen = new WeakSet<object>()): void {
  if (o == null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) return;
  seen.add(o);
  if (typeof o === 'object') for (const k of Reflect.ownKeys(o)) deepFreeze((o as Record<PropertyKey, unknown>)[k], seen);
  Object.freeze(o);
}

it('what the preloaded modules export survives the freeze: no Map or Set (left writable), no global regex', async () => {
  const problems: string[] = [];
  for (const f of SHARED_FILES) {
    const mod = (await import(pathToFileURL(f).href)) as Record<string, unknown>;
    const walk = (v: unknown, path: string, seen: Set<unknown>) => {
      if (v == null || typeof v !== 'object' || seen.has(v)) return;
      seen.add(v);
      if (v instanceof Map || v instanceof Set) problems.push(`${path}: a ${v.constructor.name} (the freeze leaves it writable: shared mutable state)`);
      if (v instanceof RegExp && (v.global || v.sticky)) problems.push(`${path}: a global or sticky regex (lastIndex is written, and frozen)`);
      for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k], `${path}.${k}`, seen);
    };
    for (const [k, v] of Object.entries(mod)) walk(v, `${rel(f)}:${k}`, new Set());
    expect(() => deepFreeze({ ...mod }), rel(f)).not.toThrow();
  }
  expect(problems).toEqual([]);
});

it('the prebuilt bundle preloads the workflow entry as one module whose exports are the workflow functions: no zod schema is frozen', () => {
  const bundlePath = join(ROOT, 'dist/workflow-bundle.js');
  expect(existsSync(bundlePath), 'dist/workflow-bundle.js is missing: run `npm run build`').toBe(true);
  const code = source(bundlePath);
  // The preload function requires the entry last, after zod.
  const preload = /exports\.preloadModules = function preloadModules\(\) \{([\s\S]*?)\n\}/.exec(code)?.[1] ?? '';
  const required = [...preload.matchAll(/__webpack_require__\([^)]*"([^"]+)"\)/g)].map((m) => m[1]);
  expect(required.at(-1)).toBe('./dist/workflows/index.js');
  expect(required).toContain('./dist/workers/zod-preload.js');
  // Every module only the entry loads is inlined into it (a `;// path` section of the entry's
  // concatenated module), never a webpack module of its own whose exports the SDK would freeze.
  const own = new Set([...code.matchAll(/^\/\*\*\*\/ "([^"]+)"/gm)].map((m) => m[1]));
  const inlined = new Set([...code.matchAll(/^;\/\/ (\.\/dist\/\S+\.js)$/gm)].map((m) => m[1]));
  const asBundled = (f: string) => `./dist/${rel(f).replace(/\.ts$/, '.js')}`;
  // (Modules the payload converter loads too stay separate: they are in two groups. They export no schema.)
  const converter = new Set([...closure([join(ROOT, 'src/converter/payload-converter.ts')])].filter((f) => f.startsWith('/')).map(asBundled));
  expect(converter).toContain('./dist/src/domain/contract/undecodable.js');
  const separate = WORKFLOW_FILES.map(asBundled).filter((m) => m !== './dist/workflows/index.js' && !converter.has(m) && (own.has(m) || !inlined.has(m)));
  expect(separate).toEqual([]);
  expect(own.has('./dist/workflows/index.js')).toBe(true);
  // The entry exports workflow functions only (what the freeze reaches): one `export { x } from` line each.
  const entryExports = [...source(WORKFLOW_ENTRY).matchAll(/^export (.*)$/gm)].map((m) => m[1]!);
  expect(entryExports.length).toBeGreaterThan(0);
  for (const e of entryExports) expect(e).toMatch(/^\{ \w+Workflow \} from '\.\/[\w/-]+\.js';$/);
});
