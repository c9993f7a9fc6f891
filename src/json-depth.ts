/**
 * A bound on how deeply nested the JSON warden reads may be. `JSON.parse` copes with any depth, but
 * what comes after it does not: jsonc-parser's tree, `JSON.stringify` (Temporal's payload
 * converter), zod — all recurse, and a file of 200,000 brackets ends in "Maximum call stack size
 * exceeded". Every JSON input of the CLI (settings files install edits, hook events on stdin,
 * `warden report` turns, task specs, `--cases` and `--script` files, transcripts) is checked here
 * first, so that such input is refused with a message that names it.
 */

/** The deepest nesting of arrays and objects warden reads; real settings, turns and specs use a handful. */
export const MAX_JSON_DEPTH = 512;

/**
 * Null when `text` nests arrays and objects at most `max` deep; otherwise what is wrong, naming
 * `what` and where the limit is crossed. Strings (with their escapes) and comments (`//`, `/* *\/`,
 * which settings files may have) are skipped; the text need not be valid JSON otherwise.
 */
export function jsonTooDeep(text: string, what: string, max = MAX_JSON_DEPTH): string | null {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 /* \n */) {
      line++;
      lineStart = i + 1;
    } else if (c === 34 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34 || d === 10) break; // a raw newline ends an unterminated string (the parser refuses it)
      }
      if (text.charCodeAt(i) === 10) {
        line++;
        lineStart = i + 1;
      }
    } else if (c === 47 /* / */ && text.charCodeAt(i + 1) === 47) {
      const nl = text.indexOf('\n', i);
      i = (nl < 0 ? text.length : nl) - 1;
    } else if (c === 47 && text.charCodeAt(i + 1) === 42 /* * */) {
      const close = text.indexOf('*/', i + 2);
      const stop = close < 0 ? text.length : close + 2;
      for (let j = i; j < stop; j++)
        if (text.charCodeAt(j) === 10) {
          line++;
          lineStart = j + 1;
        }
      i = stop - 1;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > max)
        return `${what} nests arrays and objects deeper than ${max} levels (at line ${line}, column ${i - lineStart + 1}); warden reads JSON nested at most ${max} deep`;
    } else if (c === 93 /* ] */ || c === 125 /* } */) {
      if (depth > 0) depth--;
    }
  }
  return null;
}
