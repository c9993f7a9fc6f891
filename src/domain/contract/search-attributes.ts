/**
 * warden's custom search attributes. Plain key objects (no runtime import), so workflow code and the
 * client share them. `warden dev`/`warden server` register them on the dev server; on a production
 * cluster run the `temporal operator search-attribute create` commands in docs/operating/production.md.
 */
/** Same shape as @temporalio/common's SearchAttributeKey. */
export interface SearchAttributeKey<T extends string> {
  name: string;
  type: T;
}

export const WardenState: SearchAttributeKey<'KEYWORD'> = { name: 'WardenState', type: 'KEYWORD' };
export const WardenEscalationStep: SearchAttributeKey<'INT'> = { name: 'WardenEscalationStep', type: 'INT' };
export const WardenPaused: SearchAttributeKey<'BOOL'> = { name: 'WardenPaused', type: 'BOOL' };
/** Spend, for finding runaway agents: `WardenCostUsd > 5`, `WardenTokens > 1000000`. */
export const WardenCostUsd: SearchAttributeKey<'DOUBLE'> = { name: 'WardenCostUsd', type: 'DOUBLE' };
export const WardenTokens: SearchAttributeKey<'INT'> = { name: 'WardenTokens', type: 'INT' };
/** Delegation: the parent agent's id, on children (`WardenParent = "boss"` lists a subtree). */
export const WardenParent: SearchAttributeKey<'KEYWORD'> = { name: 'WardenParent', type: 'KEYWORD' };
/**
 * An agent's labels as `key=value` values (`WardenLabels = 'team=payments'`), set once when it
 * starts (never upserted): how a group's counter finds its agents (src/domain/group/).
 */
export const WardenLabels: SearchAttributeKey<'KEYWORD_LIST'> = { name: 'WardenLabels', type: 'KEYWORD_LIST' };

/** name → the type word `temporal server start-dev --search-attribute` and `operator` expect. */
export const SEARCH_ATTRIBUTES: Record<string, 'Keyword' | 'Int' | 'Bool' | 'Double' | 'KeywordList'> = {
  WardenState: 'Keyword',
  WardenEscalationStep: 'Int',
  WardenPaused: 'Bool',
  WardenCostUsd: 'Double',
  WardenTokens: 'Int',
  WardenParent: 'Keyword',
  WardenLabels: 'KeywordList',
};

/**
 * The attributes an agent's own upserts need: all of them registered, or the agent publishes none
 * (AgentSpec.searchAttributes false). `WardenLabels` is not among them: a namespace registered
 * before it existed runs unlabelled agents exactly as before, and labelled ones without it (their
 * groups cannot find them, and `warden start` says so).
 */
export const AGENT_SEARCH_ATTRIBUTES: readonly string[] = [
  'WardenState',
  'WardenEscalationStep',
  'WardenPaused',
  'WardenCostUsd',
  'WardenTokens',
  'WardenParent',
];
