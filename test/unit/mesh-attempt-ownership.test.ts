/**
 * Every field of a mesh attempt (`Attempt`, src/domain/mesh/state.ts, and the interfaces it extends)
 * has one owner: the file that declares it. The rule modules own what they decide — the monitor
 * (src/domain/mesh/rules.ts) what a tick saw, the gates (finished.ts) whether a finished attempt may
 * integrate, the integration waits (waits.ts) what the mesh asked the agent for, the hedge (hedge.ts)
 * whether a hedge runs beside it — and state.ts the attempt's identity and its place in the task
 * state table. Only the owner assigns a field; the shell (workflows/mesh/) and the other rules call
 * the owner's functions. Found with the TypeScript checker (test/helpers/carried-writes.ts), so an
 * alias of an attempt counts too.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CarriedWrite, carriedFields, carriedWrites, openProject } from '../helpers/carried-writes.js';

const ROOT = join(import.meta.dirname, '../..');
const STATE = join(ROOT, 'src/domain/mesh/state.ts');
const sources = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
const FILES = [...sources(join(ROOT, 'src/domain/mesh')), ...sources(join(ROOT, 'workflows/mesh'))];
/** A task check's result is part of the attempt's `check` field. */
const PARTS = { TaskCheckResult: 'check' };

let opened: ReturnType<typeof openProject>;
let fields: Map<string, string>;
let owners: Map<string, string>;

beforeAll(() => {
  opened = openProject(ROOT);
  fields = carriedFields(opened.project, STATE, FILES, 'Attempt', PARTS);
  const byField = new Map<string, Set<string>>();
  for (const [decl, field] of fields) {
    const file = decl.slice(0, decl.lastIndexOf('#')).replace(`${ROOT}/`, '');
    byField.set(field, (byField.get(field) ?? new Set()).add(file));
  }
  owners = new Map([...byField].map(([f, files]) => [f, [...files].join(' | ')]));
}, 60_000);

afterAll(() => opened?.close());

const writes = (): CarriedWrite[] => carriedWrites(opened.project, ROOT, FILES, fields);

describe("ownership of a mesh attempt's fields", () => {
  it('knows every field, each with one owner file', () => {
    expect(owners.size).toBeGreaterThan(40);
    for (const f of ['state', 'ready', 'waitingFor', 'hedged', 'lastTickAt', 'gates']) expect(owners.has(f), f).toBe(true);
    expect([...owners].filter(([, file]) => file.includes(' | '))).toEqual([]);
  });

  it('every write to a field is in its owner file', () => {
    const stray = writes()
      .filter((w) => owners.get(w.field) !== w.file)
      .map((w) => `${w.file}:${w.line} writes ${w.field} (${w.text}); its owner is ${owners.get(w.field)}`);
    expect(stray).toEqual([]);
  });

  it('finds the writes (it would catch a stray one)', () => {
    const found = writes();
    expect(found.length).toBeGreaterThan(30);
    expect(new Set(found.map((w) => w.field)).size).toBeGreaterThan(20);
  });
});
