/**
 * The whole change `warden install|uninstall` makes to one settings file, decided from its text
 * (or its absence) and what install remembered about it (record.ts). Pure: the command reads,
 * then writes what this returns.
 */
import type { HookAgent } from '../protocol.js';
import { sha256, type InstallRecord } from './record.js';
import { installHooks, uninstallHooks, type HookPlan } from './settings.js';

export interface FileChange {
  /** The file's text afterwards; null: the file is removed (or stays absent). */
  after: string | null;
  changed: boolean;
  actions: string[];
  /** The record to keep afterwards (null: none). */
  record: InstallRecord | null;
}

/** Install: merge the hooks; remember the text from before warden's first change. */
export function planInstall(path: string, before: string | null, record: InstallRecord | null, plan: HookPlan): FileChange {
  const r = installHooks(before, plan, path);
  // The record still describes this file when the file is what warden last wrote.
  const current = record && before !== null && sha256(before) === record.after ? record : null;
  if (!r.changed) return { after: before, changed: false, actions: ['already installed; nothing to change'], record: current };
  return { after: r.text, changed: true, actions: r.actions, record: { path, before: current ? current.before : before, after: sha256(r.text) } };
}

/**
 * Uninstall: when the file is exactly what install wrote, put back what was there before (remove
 * the file install created); otherwise take warden's hooks out and leave the rest as it is now.
 */
export function planUninstall(path: string, before: string | null, record: InstallRecord | null, agent: HookAgent): FileChange {
  if (record && before !== null && sha256(before) === record.after) {
    return {
      after: record.before,
      changed: record.before !== before,
      actions: [record.before === null ? 'removed the file (warden install created it)' : 'restored the file as it was before warden install'],
      record: null,
    };
  }
  const r = uninstallHooks(before, agent, path);
  if (!r.changed) return { after: before, changed: false, actions: ['no warden hooks there; nothing to change'], record: null };
  return { after: r.text, changed: true, actions: r.actions, record: null };
}
