/** What `warden evaluate --cases --by` groups cases by (no dependencies: the CLI's option definition reads it). */
export const GROUP_BY = ['source', 'split'] as const;
export type GroupBy = (typeof GROUP_BY)[number];
