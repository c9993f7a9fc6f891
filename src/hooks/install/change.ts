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

/**
 * Install: merge the hooks; remember the text from before warden's first change. When the user
 * changed the file since install wrote it (the record is for other bytes) and warden's hooks are
 * still in it, the file as it is now is not what it was without warden: no record is kept then,
 * and uninstall takes the hooks out (keeping the user's edit).
 */
export function planInstall(path: string, before: string | null, record: InstallRecord | null, plan: HookPlan): FileChange {
  const r = installHooks(before, plan, path);
  // The record still describes this file when the file is what warden last wrote.
  const current = record && before !== null && sha256(before) === record.after ? record : null;
  // A record for other bytes, and warden hooks in the file: they are (most likely) that install's,
  // kept through the user's edits — not something to put back. No record: uninstall takes them out.
  const stale = record !== null && current === null && before !== null && uninstallHooks(before, plan.agent, path).changed;
  if (!r.changed) return { after: before, changed: false, actions: ['already installed; nothing to change', ...r.kept], record: current };
  return {
    after: r.text,
    changed: true,
    actions: [...r.actions, ...r.kept],
    record: stale ? null : { path, before: current ? current.before : before, after: sha256(r.text) },
  };
}

/**
 * Uninstall: when the file is exactly what install wrote, put back what was there before (remove
 * the file install created); otherwise take warden's hooks out and leave the rest as it is now.
 */
export function planUninstall(path: string, before: string | null, record: InstallRecord | null, agent: HookAgent): FileChange {
  if (record && before !== null && sha256(before) === record.after) {
    // What install found there may have had warden hooks of its own (written by hand): say so.
    const hadHooks = record.before !== null && uninstallHooks(record.before, agent, path).changed;
    return {
      after: record.before,
      changed: record.before !== before,
      actions: [
        record.before === null
          ? 'removed the file (warden install created it)'
          : `restored the file as it was before warden install${hadHooks ? ' (with the warden hooks it had then)' : ''}`,
      ],
      record: null,
    };
  }
  const r = uninstallHooks(before, agent, path);
  if (!r.changed) return { after: before, changed: false, actions: ['no warden hooks there; nothing to change', ...r.kept], record: null };
  return { after: r.text, changed: true, actions: [...r.actions, ...r.kept], record: null };
}
