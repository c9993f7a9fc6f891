/** The mesh's own alerts as text: its run, what happened, and the `warden mesh` command that answers it. Pure. */
import { MESH_EVENTS, type MeshEvent, type NotificationEvent } from '../contract/activity-types.js';
import { chatText, markdownNeutralise, oneLine, slackEscape } from './chat-text.js';
import { truncate } from '../contract/limits.js';

/** A mesh alert's run id (its `agentId` is `mesh-<run>`), or null for an agent's alert. */
export function meshRunOf(e: NotificationEvent): string | null {
  return (MESH_EVENTS as readonly string[]).includes(e.event) ? e.agentId.replace(/^mesh-/, '') : null;
}
/** A mesh alert's reason without the `mesh ready:` / `mesh failed:` its title already says. */
export const meshReason = (e: NotificationEvent) => e.reason.replace(/^mesh (ready|failed): /, '');

/** What to do about a mesh alert, as `warden mesh` commands. */
export function meshHint(event: MeshEvent, run: string): string {
  if (event === 'mesh-ready') return `next: warden mesh apply ${run} (merge) · warden mesh cancel ${run} · warden mesh status ${run}`;
  if (event === 'mesh-awaiting-input') return `answer: warden mesh resume ${run} [--note text] · warden mesh cancel ${run} · warden mesh status ${run}`;
  return `see: warden mesh status ${run} (the mesh has ended; its workers were stopped)`;
}

/** A mesh alert for chat: the phase, what happened, and the `warden mesh` command that answers it. */
export function meshSlackBody(e: NotificationEvent, run: string, heading: string, deliveryId?: string): { text: string; blocks: Record<string, unknown>[] } {
  const title = `warden: ${heading.toLowerCase()} — ${chatText(run, 200)}`;
  const hint = meshHint(e.event as MeshEvent, run)
    .replace(/^\w+: /, '')
    .split(' · ')
    .map((c) => `\`${c}\``)
    .join(' · ');
  const context = [hint, `workflow ${e.workflowId}`, e.at, ...(deliveryId ? [`delivery ${deliveryId}`] : [])].join(' · ');
  return {
    text: `${title}: ${chatText(meshReason(e), 300)}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: false } },
      { type: 'section', text: { type: 'mrkdwn', text: `*What happened:* ${chatText(meshReason(e), 500)}` } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: slackEscape(markdownNeutralise(oneLine(context, 2000))) }] },
    ],
  };
}
