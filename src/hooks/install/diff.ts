/** A unified diff of two small texts (a settings file before and after), as `diff -u` prints it. */

type Op = { kind: ' ' | '-' | '+'; line: string };

/** The line operations from `a` to `b` (longest common subsequence; settings files are small). */
function ops(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  if (n * m > 4_000_000) return [...a.map((line) => ({ kind: '-' as const, line })), ...b.map((line) => ({ kind: '+' as const, line }))];
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: ' ', line: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ kind: '-', line: a[i++]! });
    else out.push({ kind: '+', line: b[j++]! });
  }
  while (i < n) out.push({ kind: '-', line: a[i++]! });
  while (j < m) out.push({ kind: '+', line: b[j++]! });
  return out;
}

/** Lines of a text; a missing final newline is marked as diff marks it. */
function lines(text: string): string[] {
  if (!text) return [];
  const l = text.split('\n');
  if (l.at(-1) === '') l.pop();
  else l[l.length - 1] += '\n\\ No newline at end of file';
  return l;
}

/** `diff -u` of two texts (`null`: the file does not exist), with 3 lines of context; '' when equal. */
export function unifiedDiff(before: string | null, after: string | null, name: string, context = 3): string {
  if (before === after) return '';
  const all = ops(lines(before ?? ''), lines(after ?? ''));
  const out = [`--- ${before === null ? '/dev/null' : name}`, `+++ ${after === null ? '/dev/null' : name}`];
  let k = 0;
  while (k < all.length) {
    if (all[k]!.kind === ' ') {
      k++;
      continue;
    }
    // One hunk: from `context` lines before this change to `context` lines after the last change near it.
    let start = Math.max(0, k - context);
    let stop = k;
    while (stop < all.length) {
      let next = stop;
      while (next < all.length && all[next]!.kind !== ' ') next++;
      let gap = next;
      while (gap < all.length && all[gap]!.kind === ' ') gap++;
      if (gap < all.length && gap - next <= 2 * context) stop = gap;
      else {
        stop = Math.min(all.length, next + context);
        break;
      }
    }
    const hunk = all.slice(start, stop);
    const aStart = all.slice(0, start).filter((o) => o.kind !== '+').length;
    const bStart = all.slice(0, start).filter((o) => o.kind !== '-').length;
    const aLen = hunk.filter((o) => o.kind !== '+').length;
    const bLen = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aLen ? aStart + 1 : aStart},${aLen} +${bLen ? bStart + 1 : bStart},${bLen} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
    k = stop;
    start = stop;
  }
  return `${out.join('\n')}\n`;
}
