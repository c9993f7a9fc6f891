/** The columns `warden top` sorts by (no dependencies: `warden top --help` lists them without loading the roster model). */
export const SORT_KEYS = ['priority', 'id', 'state', 'intent', 'model', 'tokens', 'cost', 'supervision', 'tool', 'burn', 'elapsed', 'step'] as const;
export type SortKey = (typeof SORT_KEYS)[number];
