/**
 * Terminal-safe text. Everything an agent, its tools, a driver or a mesh worker writes is untrusted,
 * and warden shows much of it to an operator's terminal: a task, turn text, tool names, arguments
 * and results, steer and whisper text, a driver's error, a mesh checkpoint. Raw, such text could
 * drive the terminal — clear the screen (`ESC [2J`), set the window title (`ESC ]0;…`), write the
 * clipboard (OSC 52), plant a hyperlink (OSC 8), overwrite a line with a lone carriage return, or
 * reorder what the operator reads with bidi overrides. `visible` shows every such character as
 * plain text instead, so nothing is interpreted:
 *
 * - ESC is `␛` and the rest of its sequence stays as printable text (`␛[2J`, `␛]52;c;…␇`);
 * - the other C0 controls are their Unicode Control Pictures (`\r` is `␍`, BEL is `␇`, NUL `␀`);
 *   `\t` is kept, and `\n` is kept only where a multi-line block is meant (`multiline`);
 * - DEL is `␡`;
 * - C1 controls (U+0080–U+009F, e.g. the 8-bit CSI 0x9B) are `\x9b`-style text;
 * - the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) are `\u202e`-style text.
 *
 * Pure and cheap: a string with nothing to show differently is returned as it is after one regex
 * test, so the `warden top` render loop can call it on every cell of every frame. It is
 * idempotent: its output contains none of the characters it replaces.
 */

export interface VisibleOptions {
  /** Keep `\n` (and treat `\r\n` as `\n`): the text is a multi-line block. Default: one line (`\n` is `␊`). */
  multiline?: boolean;
}

// Everything replaced, one line / multi-line (the latter keeps \n; \t is kept in both).
const UNSAFE_LINE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_BLOCK = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_LINE_G = new RegExp(UNSAFE_LINE.source, 'g');
const UNSAFE_BLOCK_G = new RegExp(UNSAFE_BLOCK.source, 'g');

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

/** The visible form of one unsafe character. */
export function visibleChar(ch: string): string {
  const c = ch.charCodeAt(0);
  if (c < 0x20) return String.fromCharCode(0x2400 + c); // ␀ … ␟ (ESC is ␛, CR is ␍)
  if (c === 0x7f) return '\u2421'; // ␡
  if (c <= 0x9f) return `\\x${hex(c, 2)}`; // C1: \x9b
  return `\\u${hex(c, 4)}`; // bidi controls: \u202e
}

// Precomputed replacements (the replace callback is then one table read per character).
const TABLE = new Map<string, string>();
for (let c = 0; c <= 0x9f; c++) if (c < 0x20 || c >= 0x7f) TABLE.set(String.fromCharCode(c), visibleChar(String.fromCharCode(c)));
for (const c of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069])
  TABLE.set(String.fromCharCode(c), visibleChar(String.fromCharCode(c)));
const swap = (ch: string) => TABLE.get(ch)!;

/** `text` with every terminal control shown as plain text (see the module comment). */
export function visible(text: string, opts: VisibleOptions = {}): string {
  if (opts.multiline) {
    if (!UNSAFE_BLOCK.test(text)) return text;
    return text.replace(/\r\n/g, '\n').replace(UNSAFE_BLOCK_G, swap);
  }
  if (!UNSAFE_LINE.test(text)) return text;
  return text.replace(UNSAFE_LINE_G, swap);
}

/** A multi-line block (`\n` kept): what `print` and the error printers apply to all human output. */
export const visibleBlock = (text: string): string => visible(text, { multiline: true });

/**
 * `value` with every string in it (object values and array items, recursively) made visible as one
 * line — for a whole status or mesh answer before it is formatted for people. Other values are kept.
 */
export function visibleDeep<T>(value: T, opts: VisibleOptions = {}): T {
  if (typeof value === 'string') return visible(value, opts) as T;
  if (Array.isArray(value)) return value.map((v) => visibleDeep(v, opts)) as T;
  if (value && typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = visibleDeep(v, opts);
    return out as T;
  }
  return value;
}
