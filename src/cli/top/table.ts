/**
 * The roster as a table of fixed-width text cells: column layout for a terminal width, and one row's
 * cells. Pure; the Ink view and `--once` (text) both draw from it.
 */
import { visible } from '../../text/sanitize.js';
import { downsample, sparkline } from '../../roster/sparkline.js';
import { badge, formatCost, formatCount, formatElapsed, formatRate, formatStep, type Row, type SortKey } from '../../roster/rows.js';

export interface Column {
  /** A sort key, or a column no sort follows (`rate`: supervision per agent-hour). */
  key: SortKey | 'rate';
  title: string;
  width: number;
  align: 'left' | 'right';
}

const ID_MIN = 18;
const SESSION_TAIL = 13;
const ID_MAX = 34;
/** The intent column keeps at least this much when the id column grows. */
const INTENT_KEEP = 24;

/** The id cell's text before fitting: indented by lineage. */
const idText = (r: Pick<Row, 'depth' | 'shortId'>) => `${'  '.repeat(r.depth)}${r.depth ? '└ ' : ''}${r.shortId}`;

/** The longest id cell of these rows (for layoutColumns). */
export const longestId = (rows: Array<Pick<Row, 'depth' | 'shortId'>>) => rows.reduce((m, r) => Math.max(m, [...idText(r)].length), 0);

/**
 * Columns for a terminal `width` characters wide: the intent takes what the others leave. The id
 * column grows (to ID_MAX) for ids longer than ID_MIN — a session's agent is `<project>-<session>`,
 * told apart from its neighbours by its end — as long as the intent keeps INTENT_KEEP.
 */
export function layoutColumns(width: number, idLongest = 0): Column[] {
  // The sparkline gives up what the two supervision columns take (17), so the others keep their width.
  const spark = width >= 200 ? 43 : width >= 160 ? 13 : 10;
  const fixed: Column[] = [
    { key: 'id', title: 'AGENT', width: ID_MIN, align: 'left' },
    { key: 'state', title: 'STATE', width: 16, align: 'left' },
    { key: 'intent', title: 'INTENT', width: 0, align: 'left' },
    { key: 'model', title: 'MODEL', width: 12, align: 'left' },
    { key: 'tokens', title: 'TOK IN/OUT', width: 11, align: 'right' },
    { key: 'cost', title: 'COST', width: 8, align: 'right' },
    // What supervising the agent cost (its evaluator's model calls), and that per agent-hour.
    { key: 'supervision', title: 'SUPV $', width: 7, align: 'right' },
    { key: 'rate', title: 'SUPV/H', width: 8, align: 'right' },
    { key: 'tool', title: 'TOOL', width: 12, align: 'left' },
    { key: 'burn', title: 'BURN', width: spark, align: 'left' },
    { key: 'elapsed', title: 'ELAPSED', width: 7, align: 'right' },
    { key: 'step', title: 'ESC', width: 4, align: 'right' },
  ];
  const used = fixed.reduce((a, c) => a + c.width, 0) + fixed.length - 1;
  const room = Math.max(0, width - used - INTENT_KEEP);
  fixed[0]!.width = ID_MIN + Math.min(room, Math.max(0, Math.min(idLongest, ID_MAX) - ID_MIN));
  fixed[2]!.width = Math.max(12, width - used - (fixed[0]!.width - ID_MIN));
  return fixed;
}

/** Fit `s` into `w` characters (an ellipsis marks a cut), padded. */
export function fit(s: string, w: number, align: 'left' | 'right' = 'left'): string {
  const chars = [...s];
  const cut = chars.length > w ? `${chars.slice(0, Math.max(0, w - 1)).join('')}…` : s;
  const pad = ' '.repeat(Math.max(0, w - [...cut].length));
  return align === 'right' ? pad + cut : cut + pad;
}

/**
 * Fit an id into `w` characters, cut in the middle when it is too long: its start and its end stay
 * (`my-w…-1f3a9c0b2d4e`), since ids of one project's sessions differ only at the end.
 */
export function fitMiddle(s: string, w: number): string {
  const chars = [...s];
  if (chars.length <= w) return s + ' '.repeat(w - chars.length);
  if (w <= 1) return '…'.slice(0, w);
  // The end a session's id is told apart by (`-<12 hex digits>`), or half, whichever is more.
  const tail = Math.max(0, Math.min(w - 2, Math.max(SESSION_TAIL, Math.ceil((w - 1) / 2))));
  return `${chars.slice(0, w - 1 - tail).join('')}…${chars.slice(chars.length - tail).join('')}`;
}

/** A cell's text as one line a terminal shows and never interprets (agent text may carry escape sequences). */
export function cellText(s: string): string {
  const v = visible(s);
  return v.includes('\t') ? v.replace(/\t/g, ' ') : v;
}

/** The text of each cell of `r` under `cols` (the id indented by lineage), terminal controls made visible. */
export function cells(r: Row, cols: Column[]): string[] {
  return cols.map((c) => {
    let v: string;
    switch (c.key) {
      case 'id':
        return fitMiddle(cellText(idText(r)), c.width);
      case 'state':
        v = badge(r.state).text;
        break;
      case 'intent':
        v = r.intent ?? '—';
        break;
      case 'model':
        v = r.model ?? '—';
        break;
      case 'tokens':
        v = r.tokensIn === null ? '—' : `${formatCount(r.tokensIn)}/${formatCount(r.tokensOut)}`;
        break;
      case 'cost':
        v = formatCost(r.costUsd);
        break;
      case 'supervision':
        v = formatCost(r.supervisionUsd);
        break;
      case 'rate':
        v = formatRate(r.supervisionUsdPerHour);
        break;
      case 'tool':
        v = r.tool ?? '—';
        break;
      case 'burn':
        v = r.detailed ? sparkline(downsample(r.burn, c.width)) : '';
        break;
      case 'elapsed':
        v = formatElapsed(r.elapsedMs);
        break;
      case 'step':
        v = formatStep(r);
        break;
      default:
        v = '';
    }
    return fit(cellText(v), c.width, c.align);
  });
}

export function headerCells(cols: Column[], sort: { key: SortKey; desc: boolean }): string[] {
  return cols.map((c) => fit(c.key === sort.key ? `${c.title}${sort.desc ? '↓' : '↑'}` : c.title, c.width, c.align));
}

/** The whole roster as plain text lines (for `--once` without `--json`). */
export function renderText(rows: Row[], width: number, sort: { key: SortKey; desc: boolean }): string[] {
  const cols = layoutColumns(width, longestId(rows));
  return [headerCells(cols, sort).join(' ').trimEnd(), ...rows.map((r) => cells(r, cols).join(' ').trimEnd())];
}
