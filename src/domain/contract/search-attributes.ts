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
/** Supervision's own spend: what the agent's evaluator's model calls cost (`WardenEvaluatorCostUsd > 1`). */
export const WardenEvaluatorCostUsd: SearchAttributeKey<'DOUBLE'> = { name: 'WardenEvaluatorCostUsd', type: 'DOUBLE' };
/** Delegation: the parent agent's id, on children (`WardenParent = "boss"` lists a subtree). */
export const WardenParent: SearchAttributeKey<'KEYWORD'> = { name: 'WardenParent', type: 'KEYWORD' };
/**
 * An agent's labels as `key=value` values (`WardenLabels = 'team=payments'`), set once when it
 * starts (never upserted): how a group's counter finds its agents (src/domain/group/).
 */
export const WardenLabels: SearchAttributeKey<'KEYWORD_LIST'> = { name: 'WardenLabels', type: 'KEYWORD_LIST' };

/**
 * Attributes added after agents were already running in the field. A namespace upgraded without
 * registering one would fail every workflow task that upserts it, so an agent's run sends such an
 * attribute only when it started with it (the client sets it at start once it is registered; a
 * parent gives it to its children; continue-as-new keeps it): a run from before the upgrade, or
 * on a namespace without it, never sends it.
 */
export const LATER_SEARCH_ATTRIBUTES: readonly string[] = ['WardenEvaluatorCostUsd'];

/** name → the type word `temporal server start-dev --search-attribute` and `operator` expect. */
export const SEARCH_ATTRIBUTES: Record<string, 'Keyword' | 'Int' | 'Bool' | 'Double' | 'KeywordList'> = {
  WardenState: 'Keyword',
  WardenEscalationStep: 'Int',
  WardenPaused: 'Bool',
  WardenCostUsd: 'Double',
  WardenTokens: 'Int',
  WardenParent: 'Keyword',
  WardenEvaluatorCostUsd: 'Double',
  WardenLabels: 'KeywordList',
};

/**
 * The attributes an agent's own upserts need: all of them registered, or the agent publishes none
 * (AgentSpec.searchAttributes false). Not among them: those added later (LATER_SEARCH_ATTRIBUTES,
 * sent only by runs that started with them) and `WardenLabels` (set at start, never upserted). A
 * namespace registered before those existed runs agents exactly as before; labelled ones without
 * `WardenLabels` run unseen by their groups, and `warden start` says so.
 */
export const AGENT_SEARCH_ATTRIBUTES: readonly string[] = [
  'WardenState',
  'WardenEscalationStep',
  'WardenPaused',
  'WardenCostUsd',
  'WardenTokens',
  'WardenParent',
];
