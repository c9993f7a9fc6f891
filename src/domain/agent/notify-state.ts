/**
 * The notifications slice of the carried state: the newest alerts the agent sent to its channels,
 * each with its delivery id (docs/developing/architecture.md, "State slices"). notify.ts decides
 * what is sent; this file is the only one that assigns the field.
 */
import type { NotificationRecord } from '../contract/status.js';
import { keepLast } from './records.js';

/** The newest this-many notifications are kept (the status's `notifications`). */
export const KEEP_NOTIFICATIONS = 20;

export interface NotifyState {
  /** The newest notifications sent, oldest first (KEEP_NOTIFICATIONS). */
  notifications: NotificationRecord[];
}

export const freshNotify = (): NotifyState => ({ notifications: [] });

/** A notification went out (or joined its incident): remember it among the newest. */
export function recordNotificationSent(s: NotifyState, sent: NotificationRecord): void {
  s.notifications = keepLast(s.notifications, sent, KEEP_NOTIFICATIONS);
}
