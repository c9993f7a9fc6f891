/**
 * Every field of the agent's carried state has one owner: the file of the slice that declares it
 * (src/domain/agent/slices/*.ts, the *-state.ts mixins, or state.ts for the run's own
 * bookkeeping). Only that file assigns it; the concern modules (controls, reporting, supervision,
 * rails, driven…) call the slice's functions. This test finds every write to a carried field in
 * src/domain/agent/** and workflows/** with the TypeScript compiler's checker (so an alias of the
 * state, of a field or of one of its elements counts too: test/helpers/carried-writes.ts) and
 * fails on one outside the owner, naming file:line and field.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CarriedWrite, carriedFields, carriedWrites, openProject } from '../helpers/carried-writes.js';

const ROOT = join(import.meta.dirname, '../..');
const STATE = join(ROOT, 'src/domain/agent/state.ts');

const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
const FILES = [...sources(join(ROOT, 'src/domain/agent')), ...sources(join(ROOT, 'workflows'))];

/**
 * Fields no slice owns yet: any file may still assign them. Shrinking this list is the way
 * forward; a field leaves it when its writes move into its slice's functions.
 */
const NOT_YET_OWNED: string[] = [];

let opened: ReturnType<typeof openProject>;
let fields: Map<string, string>;
/** Each field's owner file, relative to the root: where the field is declared (its part types, ChildRecord and the like, are declared there too). */
let owners: Map<string, string>;

beforeAll(() => {
  opened = openProject(ROOT);
  fields = carriedFields(opened.project, STATE, FILES);
  const byField = new Map<string, Set<string>>();
  for (const [decl, field] of fields) {
    const file = relative(ROOT, decl.slice(0, decl.lastIndexOf('#')));
    byField.set(field, (byField.get(field) ?? new Set()).add(file));
  }
  owners = new Map([...byField].map(([f, files]) => [f, [...files].join(' | ')]));
}, 60_000);

afterAll(() => opened?.close());

const writes = (files = FILES): CarriedWrite[] => carriedWrites(opened.project, ROOT, files, fields);
const stray = (ws: CarriedWrite[]) =>
  ws
    .filter((w) => !NOT_YET_OWNED.includes(w.field) && owners.get(w.field) !== w.file)
    .map((w) => `${w.file}:${w.line} writes ${w.field} (${w.text}); its owner is ${owners.get(w.field)}`);

describe('slice ownership of the carried state', () => {
  it('knows every carried field, and each has exactly one owner file', () => {
    expect(owners.size).toBeGreaterThan(60);
    for (const f of ['state', 'pendingWhispers', 'ladder', 'children', 'cases', 'heldBy', 'compaction', 'runs']) expect(owners.has(f), f).toBe(true);
    const shared = [...owners].filter(([, file]) => file.includes(' | '));
    expect(shared).toEqual([]);
  });

  it('every write to a carried field is in the file of its slice', () => {
    expect(stray(writes())).toEqual([]);
  });

  it('finds the writes: every owner file assigns what it owns', () => {
    const found = writes();
    expect(found.length).toBeGreaterThan(80);
    expect(new Set(found.map((w) => w.field)).size).toBeGreaterThan(55);
  });

  it('the allow-list names only fields that exist and are still written outside their owner', () => {
    const found = writes();
    for (const f of NOT_YET_OWNED) {
      expect(owners.has(f), f).toBe(true);
      expect(
        found.some((w) => w.field === f && owners.get(f) !== w.file),
        `${f} is owned now: take it off NOT_YET_OWNED`,
      ).toBe(true);
    }
  });

  it("docs/developing/architecture.md's slice table lists every field with its owner file", () => {
    const doc = readFileSync(join(ROOT, 'docs/developing/architecture.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### State slices'));
    const listed = new Map<string, string>();
    for (const m of section.matchAll(/^\| [^|]+ \| (`[^|]*`) \| `(src\/domain\/agent\/[^`]+)` \|$/gm)) {
      for (const f of m[1]!.matchAll(/`(\w+)`/g)) listed.set(f[1]!, m[2]!);
    }
    expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(owners));
  });
});
