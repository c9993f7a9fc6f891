/**
 * Small, text-preserving edits of a JSON settings file: add a property or an array element, replace
 * a value, remove one. Everything outside the edited range stays byte for byte as the user wrote it
 * (their indentation, key order, comments, trailing newline). jsonc-parser gives the offsets; the
 * edits themselves are written here, so that an element added and then removed leaves exactly the
 * text that was there before (jsonc-parser's own `modify` re-formats neighbouring elements).
 */
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { jsonTooDeep } from '../../json-depth.js';

/** A settings file warden will not touch (not JSON, or not the shape it must have). */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

export interface Edit {
  offset: number;
  length: number;
  content: string;
}

export const applyEdit = (text: string, e: Edit) => text.slice(0, e.offset) + e.content + text.slice(e.offset + e.length);

function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/**
 * The file's syntax tree (comments allowed, kept as they are; trailing commas refused). `null` for
 * an empty or whitespace-only file. Anything else that is not one JSON object is a SettingsError.
 */
export function parseSettings(text: string, source: string): Node | null {
  if (!text.trim()) return null;
  const deep = jsonTooDeep(text, source);
  if (deep) throw new SettingsError(`${deep}; fix it first — warden leaves it as it is`);
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: false, disallowComments: false });
  if (errors.length) {
    const e = errors[0]!;
    throw new SettingsError(
      `${source} is not valid JSON (${printParseErrorCode(e.error)} at ${lineCol(text, e.offset)}); fix it first — warden leaves it as it is`,
    );
  }
  if (!root || root.type !== 'object') throw new SettingsError(`${source} is not a JSON object; fix it first — warden leaves it as it is`);
  return root;
}

/** The value node of `key` in an object node. */
export function prop(obj: Node, key: string): Node | undefined {
  const p = obj.children?.find((c) => c.type === 'property' && c.children?.[0]?.value === key);
  return p?.children?.[1];
}

/** The indentation of the line `offset` is on. */
function lineIndent(text: string, offset: number): string {
  const start = text.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(start))![0];
}

/** Whether `offset` is the first non-blank character of its line. */
const startsLine = (text: string, offset: number) => /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', offset - 1) + 1, offset));

/** The file's indentation unit (its first indented line), two spaces when it has none. */
export function indentUnit(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  return m ? m[1]! : '  ';
}

/** `value` as JSON indented with `unit`, its lines after the first shifted by `indent`. */
export function render(value: unknown, unit: string, indent: string): string {
  return JSON.stringify(value, null, unit).split('\n').join(`\n${indent}`);
}

/** `value` as JSON on one line, with a space after each colon and comma (JSON strings hold no raw newline). */
export const oneLine = (value: unknown) => JSON.stringify(value, null, 1).replace(/\n */g, ' ');

const end = (n: Node) => n.offset + n.length;

/** The property nodes or elements of a container (object or array) node. */
const items = (container: Node) => container.children ?? [];

/**
 * Append `value` to a container: an array element, or (with `key`) an object property. It goes on
 * its own line, indented like its siblings; in a one-line container it stays on that line.
 */
export function appendEdit(text: string, container: Node, value: unknown, key?: string): Edit {
  const unit = indentUnit(text);
  const head = key === undefined ? '' : `${JSON.stringify(key)}: `;
  const children = items(container);
  if (children.length) {
    const last = children.at(-1)!;
    if (!text.slice(container.offset, last.offset).includes('\n')) {
      return { offset: end(last), length: 0, content: `, ${head}${oneLine(value)}` };
    }
    const indent = startsLine(text, last.offset) ? lineIndent(text, last.offset) : lineIndent(text, container.offset) + unit;
    return { offset: end(last), length: 0, content: `,\n${indent}${head}${render(value, unit, indent)}` };
  }
  const outer = lineIndent(text, container.offset);
  const inner = outer + unit;
  return { offset: container.offset + 1, length: container.length - 2, content: `\n${inner}${head}${render(value, unit, inner)}\n${outer}` };
}

/** Replace a value node with `value`, indented where it stands. */
export function replaceEdit(text: string, node: Node, value: unknown): Edit {
  return { offset: node.offset, length: node.length, content: render(value, indentUnit(text), lineIndent(text, node.offset)) };
}

/**
 * Remove one child (a property node or an array element) of a container, with the comma and the
 * space that joined it to its neighbour; the only child leaves the container empty (`{}`, `[]`).
 */
export function removeEdit(container: Node, child: Node): Edit {
  const children = items(container);
  const i = children.indexOf(child);
  if (i < 0) throw new Error('removeEdit: not a child of that container');
  if (children.length === 1) return { offset: container.offset + 1, length: container.length - 2, content: '' };
  if (i > 0) {
    const prev = children[i - 1]!;
    return { offset: end(prev), length: end(child) - end(prev), content: '' };
  }
  return { offset: child.offset, length: children[1]!.offset - child.offset, content: '' };
}

/** The property node (key and value) whose value is `value`. */
export const propertyOf = (value: Node): Node => {
  if (value.parent?.type !== 'property') throw new Error('propertyOf: not a property value');
  return value.parent;
};
