/**
 * Agent labels (`--label team=payments`): short keys and values, at most LABELS_MAX per agent.
 * Every label is also a group: `warden-group-<key>=<value>` counts the spend of the agents that
 * carry it (src/domain/group/), found through the `WardenLabels` search attribute. Pure.
 */
import { z } from 'zod';

export const LABEL_PART_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const LABELS_MAX = 8;
const PART = 'letters, digits, ".", "_" or "-", at most 63, starting with a letter or digit';

export const LabelsSchema = z
  .record(z.string().regex(LABEL_PART_RE, `label key: ${PART}`), z.string().regex(LABEL_PART_RE, `label value: ${PART}`))
  .refine((r) => Object.keys(r).length <= LABELS_MAX, `labels: at most ${LABELS_MAX}`);
export type Labels = z.output<typeof LabelsSchema>;

/** `key=value` (a flag's or a group's spelling) as a pair, or an error naming what is wrong. */
export function parseLabel(text: string): { key: string; value: string } | { error: string } {
  const i = text.indexOf('=');
  if (i <= 0) return { error: `${JSON.stringify(text)} is not key=value` };
  const key = text.slice(0, i);
  const value = text.slice(i + 1);
  if (!LABEL_PART_RE.test(key)) return { error: `label key ${JSON.stringify(key)}: ${PART}` };
  if (!LABEL_PART_RE.test(value)) return { error: `label value ${JSON.stringify(value)}: ${PART}` };
  return { key, value };
}

/** The group a label names, as `key=value`. */
export const groupOf = (key: string, value: string): string => `${key}=${value}`;
/** The groups of an agent's labels, sorted: also the values of its `WardenLabels` search attribute. */
export const groupsOf = (labels: Labels | undefined): string[] =>
  Object.entries(labels ?? {})
    .map(([k, v]) => groupOf(k, v))
    .sort();
/** `WardenLabels` values back into labels (anything that is not a label is skipped). */
export function labelsFromGroups(values: readonly unknown[] | undefined): Labels {
  const out: Labels = {};
  for (const v of values ?? []) {
    if (typeof v !== 'string') continue;
    const l = parseLabel(v);
    if (!('error' in l)) out[l.key] = l.value;
  }
  return out;
}
/** The workflow id of a group's counter. */
export const groupWorkflowId = (group: string): string => `warden-group-${group}`;
/** A group name checked: `key=value` as a label, or null. */
export const isGroup = (group: string): boolean => !('error' in parseLabel(group));
