/** What an agent carries of the action links it acted on (part of CarriedState; links.ts uses it). */

/** At most this many unexpired used token ids are kept (links used within their lifetime, default 1 h). */
export const MAX_USED_LINKS = 256;

export interface UsedLink {
  /** The token id. */
  id: string;
  /** The link's expiry, unix seconds: the id is forgotten after it. */
  until: number;
}

export interface LinkState {
  /** Token ids of links the agent acted on, until each link expires (bounded: MAX_USED_LINKS). */
  usedLinks: UsedLink[];
  /**
   * The newest escalation (its number, as `escalations` in status counts them) a link acted on:
   * every other link issued for it, or for an earlier one, is void. 0: none yet.
   */
  linkedEscalation: number;
}
export const freshLinks = (): LinkState => ({ usedLinks: [], linkedEscalation: 0 });

/*
 * The only function that assigns the link fields (docs/developing/architecture.md, "State
 * slices"); the rules are in links.ts.
 */

/** A link was used: its token id joins the kept ones (`usedLinks`: already pruned by the caller); its escalation, if any, voids older links. */
export function recordLinkUsed(s: LinkState, usedLinks: UsedLink[], escalation: number | undefined): void {
  s.usedLinks = usedLinks;
  if (escalation) s.linkedEscalation = Math.max(s.linkedEscalation ?? 0, escalation);
}
