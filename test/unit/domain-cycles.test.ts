/**
 * No import cycle in src/domain/: a walk over the value imports of its TypeScript files (a regex on
 * `import … from` / `export … from`; `import type` and imports of types only are left out, as the
 * compiler erases them). A cycle between modules is an owner missing: the shared function belongs
 * in one place both can import.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

/** The relative modules a source imports for their values (type-only imports are erased by the compiler). */
function valueImports(source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/^\s*(import|export)\s+([^;'"]*?)\s*from\s+['"]([^'"]+)['"]/gm)) {
    const clause = m[2]!.trim();
    if (/^type\b/.test(clause)) continue; // import type { … } / export type { … }
    const braces = /^\{([\s\S]*)\}$/.exec(clause);
    if (braces) {
      const names = braces[1]!
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      if (names.length > 0 && names.every((n) => /^type\s/.test(n))) continue; // import { type A, type B }
    }
    out.push(m[3]!);
  }
  for (const m of source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) out.push(m[1]!); // side-effect imports
  return out.filter((s) => s.startsWith('.'));
}

/** Every cycle's modules (strongly connected components of more than one module, or a self-import). */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index += 1;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) visit(v);
  return found;
}

function domainGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files(join(ROOT, 'src/domain'))) {
    const deps = valueImports(readFileSync(f, 'utf8')).map((s) => relative(ROOT, resolve(dirname(f), s.replace(/\.js$/, '.ts'))));
    graph.set(relative(ROOT, f), deps);
  }
  return graph;
}

describe('import cycles in src/domain/', () => {
  it('there are none among value imports', () => {
    expect(cycles(domainGraph()).map((c) => c.join(' <-> '))).toEqual([]);
  });

  it('the walk sees the imports and resolves them to files', () => {
    const graph = domainGraph();
    expect(graph.get('src/domain/agent/rails.ts')).toContain('src/domain/agent/stop.ts');
    for (const deps of graph.values()) for (const d of deps) expect(graph.has(d), d).toBe(true);
  });

  it('type-only imports are left out; value imports, mixed ones and re-exports count', () => {
    const src = [
      "import type { A } from './a.js';",
      "import { type B, type C } from './b.js';",
      "import { type D, e } from './d.js';",
      'import {\n  f,\n  g,\n} from "./f.js";',
      "export { h } from './h.js';",
      "export type { I } from './i.js';",
      "export * from './j.js';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(valueImports(src)).toEqual(['./d.js', './f.js', './h.js', './j.js']);
  });

  it('finds a cycle, however long, and not a diamond', () => {
    const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    expect(cycles(g({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] }))).toEqual([['a', 'b', 'c']]);
    expect(cycles(g({ a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }))).toEqual([]);
    expect(cycles(g({ a: ['a'] }))).toEqual([['a']]);
  });
});
