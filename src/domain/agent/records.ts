/** Bounded record lists and timestamps, shared by the state's slices (no imports: any slice may use them). */

export const KEEP_RECORDS = 10; // how many transitions and refusals status keeps

export const keepLast = <T>(list: T[], item: T, n = KEEP_RECORDS): T[] => [...list, item].slice(-n);
export const iso = (ms: number): string => new Date(ms).toISOString();
