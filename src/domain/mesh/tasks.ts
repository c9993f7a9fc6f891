/**
 * The task file (the mesh's input contract): a numbered or bulleted list in the task template,
 * with per-task `Agent:`, `Skills:`, `Mode:`, `Scope:`, `Done when:` lines and an optional
 * "Tunable thresholds" block; or JSON (an array of tasks, or `{tasks, tunables?, validate?}`).
 * Text without any list item is one task (a single task is a one-item list). Tasks are
 * used verbatim: nothing is invented, nothing is split.
 */
import { z } from 'zod';
import { describeZodError } from '../contract/schemas.js';
import { MeshTaskSchema, TunablesSchema, type MeshTaskInput, type TunablesInput } from './config.js';

export interface ParsedTaskFile {
  tasks: MeshTaskInput[];
  tunables: TunablesInput;
  validate?: string;
}

export class TaskFileError extends Error {
  override name = 'TaskFileError';
}

const JsonFile = z.union([
  z.array(z.unknown()),
  z.object({ tasks: z.array(z.unknown()), tunables: z.record(z.string(), z.unknown()).optional(), validate: z.string().optional() }).strict(),
]);

const TASK_FIELDS: Record<string, 'agent' | 'skills' | 'mode' | 'scope' | 'doneWhen' | 'verify'> = {
  agent: 'agent',
  skills: 'skills',
  mode: 'mode',
  scope: 'scope',
  'done when': 'doneWhen',
  verify: 'verify',
};
const TUNABLE_KEYS: Record<string, keyof TunablesInput> = {
  cap: 'cap',
  'conflict budget': 'conflictBudget',
  'tick interval': 'tickInterval',
  'checkpoint interval': 'checkpointInterval',
  'time budget': 'timeBudget',
  'ack sla': 'ackSla',
  'patch draft timeout': 'patchDraftTimeout',
  'first edit target': 'firstEditTarget',
  'continue waiting': 'continueWaiting',
  'hedge budget': 'hedgeBudget',
  'stall threshold': 'stallThreshold',
  'missing-artifact strikes': 'missingArtifactStrikes',
  'check attempts': 'checkAttempts',
};
const NUMERIC = new Set<keyof TunablesInput>(['cap', 'conflictBudget', 'hedgeBudget', 'stallThreshold', 'missingArtifactStrikes', 'checkAttempts']);

/** `<60s|off>`, `45m (after this …)` → the first token. */
const firstToken = (v: string) =>
  v
    .replace(/^<|>$/g, '')
    .trim()
    .split(/[\s(|]/)[0] ?? '';

function tunableValue(key: keyof TunablesInput, raw: string): unknown {
  const v = firstToken(raw).toLowerCase();
  if (NUMERIC.has(key)) return /^\d+$/.test(v) ? Number(v) : v;
  if (key === 'continueWaiting') return v === 'yes' || v === 'true' ? true : v === 'no' || v === 'false' ? false : v;
  return v;
}

function fieldValue(field: string, raw: string): unknown {
  const v = raw.trim();
  switch (field) {
    case 'skills':
      return /^(none|"none")$/i.test(v)
        ? []
        : v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
    case 'scope':
      return /^(unconstrained|"unconstrained"|none)$/i.test(v)
        ? []
        : v
            .split(/[,\s]+/)
            .map((s) => s.replace(/^`|`$/g, ''))
            .filter(Boolean);
    case 'mode': {
      const m = v.toLowerCase();
      if (m.startsWith('analysis')) return 'analysis-only';
      if (m.startsWith('direct')) return 'direct-edit';
      if (m.startsWith('patch')) return 'patch-first';
      return m;
    }
    case 'agent':
      return firstToken(v).toLowerCase();
    case 'verify': {
      // yes/true and no/false as before; anything else is the task's check command (backticks stripped).
      // `yes`, `no (a note)`, `<yes|no>`: the yes/no as before (its first word).
      const yesNo = /^<?\s*(yes|true|no|false)\s*(?:$|[(|>])/i.exec(v);
      if (yesNo) return /^(yes|true)$/i.test(yesNo[1]!);
      const cmd = v.replace(/^`+|`+$/g, '').trim();
      return cmd || v;
    }
    default:
      return v;
  }
}

export function parseTaskFile(text: string): ParsedTaskFile {
  const trimmed = text.trim();
  if (!trimmed) throw new TaskFileError('the task file is empty');
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) return parseJson(trimmed);
  return parseMarkdown(trimmed);
}

function parseJson(text: string): ParsedTaskFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new TaskFileError(`the task file is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const file = JsonFile.safeParse(raw);
  if (!file.success) throw new TaskFileError(`invalid task file: ${describeZodError(file.error)}`);
  const tasks = Array.isArray(file.data) ? file.data : file.data.tasks;
  const out: ParsedTaskFile = { tasks: tasks.map((t, i) => checkTask(typeof t === 'string' ? { title: t } : t, i + 1)), tunables: {} };
  if (!Array.isArray(file.data)) {
    out.tunables = checkTunables(file.data.tunables ?? {});
    if (file.data.validate) out.validate = file.data.validate;
  }
  return out;
}

function checkTask(t: unknown, n: number): MeshTaskInput {
  const r = MeshTaskSchema.safeParse(t);
  if (!r.success) throw new TaskFileError(`task ${n}: ${describeZodError(r.error)}`);
  return t as MeshTaskInput;
}

function checkTunables(t: unknown): TunablesInput {
  const r = TunablesSchema.safeParse(t);
  if (!r.success) throw new TaskFileError(`tunables: ${describeZodError(r.error)}`);
  return t as TunablesInput;
}

const NUMBERED = /^\s*(\d+)[.)]\s+(.+)$/;
const BULLET = /^(\s*)[-*+]\s+(.+)$/;
const KEY_VALUE = /^([A-Za-z][A-Za-z -]*?)\s*:\s*(.*)$/;

function parseMarkdown(text: string): ParsedTaskFile {
  const lines = text.split(/\r?\n/);
  const numbered = lines.some((l) => NUMBERED.test(l));
  const tasks: Record<string, unknown>[] = [];
  const tunables: Record<string, unknown> = {};
  let validate: string | undefined;
  let section: 'tasks' | 'tunables' = 'tasks';
  for (const line of lines) {
    if (!line.trim()) continue;
    if (/^\s*#*\s*tunable thresholds/i.test(line)) {
      section = 'tunables';
      continue;
    }
    const num = numberedTitle(line, numbered);
    const bullet = BULLET.exec(line);
    const kv = bullet ? KEY_VALUE.exec(bullet[2]!) : null;
    const key = kv?.[1]?.toLowerCase().trim();
    if (kv && key === 'validate') {
      validate = kv[2]!.trim().replace(/^`|`$/g, '');
      continue;
    }
    if (kv && key && section === 'tunables' && key in TUNABLE_KEYS) {
      const k = TUNABLE_KEYS[key]!;
      tunables[k] = tunableValue(k, kv[2]!);
      continue;
    }
    if (kv && key && key in TASK_FIELDS && tasks.length) {
      const f = TASK_FIELDS[key]!;
      tasks[tasks.length - 1]![f] = fieldValue(f, kv[2]!);
      continue;
    }
    if (kv && key === 'subtasks') continue;
    if (num) {
      section = 'tasks';
      tasks.push({ title: num.trim() });
      continue;
    }
    if (!numbered && bullet && bullet[1]!.length === 0 && section === 'tasks') tasks.push({ title: bullet[2]!.trim() });
  }
  if (!tasks.length) tasks.push({ title: text.replace(/\s+/g, ' ').slice(0, 2_000) });
  return {
    tasks: tasks.map((t, i) => checkTask(t, i + 1)),
    tunables: checkTunables(tunables),
    ...(validate ? { validate } : {}),
  };
}

function numberedTitle(line: string, numbered: boolean): string | null {
  if (!numbered) return null;
  const m = NUMBERED.exec(line);
  return m ? m[2]! : null;
}
