/**
 * workers/domain-preload: the pure domain modules the worker loads once per thread and shares with
 * every cached workflow. Sharing is correct only while they hold no module-level mutable state,
 * nothing writes to what they export (the SDK deep-freezes it), and they import neither the
 * workflow API nor a zod schema (zod writes to a schema on first use). These tests hold that, and
 * that the list is complete: every domain module the workflow bundle uses is listed, or validates
 * with a schema.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const ENTRY = join(ROOT, 'workers/domain-preload.ts');
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

const LISTED = valueImports(ENTRY);
const SHARED = [...closure(LISTED)];
const SHARED_FILES = SHARED.filter((f) => f.startsWith('/'));

it('the preload list names src/domain modules that exist', () => {
  expect(LISTED.length).toBeGreaterThan(40);
  for (const f of LISTED) {
    expect(rel(f)).toMatch(/^src\/domain\//);
    expect(existsSync(f), rel(f)).toBe(true);
  }
});

it('everything the preloaded modules import is listed too (the list is what the thread shares)', () => {
  const unlisted = SHARED_FILES.filter((f) => !LISTED.includes(f)).map(rel);
  expect(unlisted).toEqual([]);
});

it('the preloaded modules import no package: not @temporalio (per-workflow API), not zod (a schema would be frozen)', () => {
  expect(SHARED.filter((f) => !f.startsWith('/'))).toEqual([]);
});

it('the list is complete: a domain module the workflows use is listed, or loads a zod schema', () => {
  const bundled = [...closure([join(ROOT, 'workflows/index.ts')])].filter((f) => f.startsWith(join(ROOT, 'src/domain/')));
  const loadsZod = (f: string) => closure([f]).has('zod');
  const missing = bundled.filter((f) => !LISTED.includes(f) && !loadsZod(f)).map(rel);
  expect(missing).toEqual([]);
  // and the per-workflow rest is what we expect: the modules that validate with a schema
  expect(bundled.filter((f) => !LISTED.includes(f)).length).toBeLessThan(20);
});

/** Module-level Maps/Sets/WeakMaps that are written, allowed because sharing them is harmless (the file says why). */
const SANCTIONED_CACHES = ['src/domain/contract/shared.ts:built', 'src/domain/contract/window-budget.ts:turnBytesCache'];

it('no module-level mutable state in the preloaded modules (it would be shared by every workflow of a thread)', () => {
  const problems: string[] = [];
  for (const f of SHARED_FILES) {
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
  expect(SANCTIONED_CACHES.every((c) => SHARED_FILES.map(rel).includes(c.split(':')[0]!))).toBe(true);
});

it('nothing writes to an exported object or array of a preloaded module (the SDK freezes them)', () => {
  const exported = SHARED_FILES.flatMap((f) =>
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
