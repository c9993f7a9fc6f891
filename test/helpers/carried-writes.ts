/**
 * Every write to a field of the agent's carried state (`CarriedState`, src/domain/agent/state.ts,
 * with its mixins) in the given source files, found with the TypeScript compiler's API (the
 * checker, so a field is known by its declaration whatever name reaches it: `ctx.core.s.x`,
 * `s.x`, `core.s.x`, a `Pick` of the state, or a local alias of a field or of one of its elements).
 *
 * A write is an assignment or compound assignment (`=`, `+=`, `??=`, `length =`…), `++`/`--`,
 * `delete`, a destructuring assignment, `Object.assign(target, …)`, or a call of an array method
 * that changes the array in place (push, splice, shift, pop, unshift, sort, reverse, fill,
 * copyWithin). Its field is the outermost carried field on the path to the written place: a write
 * to `s.children[i].stopSent` writes `children`.
 */
import { relative } from 'node:path';
import { API } from 'typescript/unstable/sync';
import { type Node, type SourceFile, SyntaxKind } from 'typescript/unstable/ast';

export interface CarriedWrite {
  /** The file, relative to the root. */
  file: string;
  /** 1-based. */
  line: number;
  field: string;
  /** The written expression as the code spells it. */
  text: string;
}

const MUTATORS = new Set(['push', 'splice', 'shift', 'pop', 'unshift', 'sort', 'reverse', 'fill', 'copyWithin']);
/** Array methods whose result (or callback argument) is an element of the array, so writing it writes the array's field. */
const ELEMENT_OF = new Set(['find', 'findLast', 'at', 'filter', 'forEach', 'map', 'some', 'every', 'flatMap', 'reduce']);
const PATH_OF = (n: Node) => n as unknown as Record<string, Node & { text?: string; kind: SyntaxKind }>;

/** The interfaces whose properties are the carried fields: CarriedState and every interface it extends. */
const CARRIED = 'CarriedState';

type Api = InstanceType<typeof API>;
type Project = NonNullable<ReturnType<ReturnType<Api['updateSnapshot']>['getDefaultProjectForFile']>>;
type Checker = Project['checker'];

/** Open the project once: the checker runs in the compiler's own process (closed by `close`). */
export function openProject(root: string): { project: Project; close(): void } {
  const api = new API({ cwd: root });
  const snapshot = api.updateSnapshot({ openProject: `${root}/tsconfig.json` });
  const project = snapshot.getProjects()[0];
  if (!project) throw new Error('no project for tsconfig.json');
  return { project, close: () => api.close() };
}

/**
 * The types of the parts of carried fields that code may change in place: a property of one is the
 * field it belongs to (`rec.state = 'done'` on a ChildRecord writes `children`).
 */
export const PART_TYPES: Record<string, string> = {
  ChildRecord: 'children',
  EvalJob: 'evalQueue',
  Delivery: 'deliveredAt',
  SpendBucket: 'spendHistory',
  Compaction: 'compaction',
  UsedLink: 'usedLinks',
  Dismissal: 'lastDismissal',
};

/**
 * The carried fields: their names, and the declarations (as `path#index`) that make a property one
 * (a field of `root`, CarriedState unless told, or a property of a part type declared in `partFiles`).
 */
export function carriedFields(
  project: Project,
  stateFile: string,
  partFiles: string[] = [],
  root: string = CARRIED,
  partTypes: Record<string, string> = PART_TYPES,
): Map<string, string> {
  const sf = project.program.getSourceFile(stateFile);
  if (!sf) throw new Error(`${stateFile} is not in the project`);
  let name: Node | undefined;
  sf.forEachChild((n) => {
    if (n.kind === SyntaxKind.InterfaceDeclaration && PATH_OF(n).name?.text === root) name = PATH_OF(n).name;
  });
  if (!name) throw new Error(`no interface ${root} in ${stateFile}`);
  const { checker } = project;
  const sym = checker.getSymbolAtLocation(name);
  if (!sym) throw new Error(`no symbol for ${root}`);
  const byDecl = new Map<string, string>();
  for (const p of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym))) {
    for (const d of p.declarations) byDecl.set(`${d.path}#${d.index}`, p.name);
  }
  for (const file of partFiles) {
    project.program.getSourceFile(file)?.forEachChild((n) => {
      const part = n.kind === SyntaxKind.InterfaceDeclaration ? partTypes[PATH_OF(n).name!.text!] : undefined;
      const ps = part ? checker.getSymbolAtLocation(PATH_OF(n).name!) : undefined;
      if (!part || !ps) return;
      for (const p of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(ps))) {
        for (const d of p.declarations) byDecl.set(`${d.path}#${d.index}`, part);
      }
    });
  }
  return byDecl;
}

/** The carried field a resolved property symbol is, if any. */
function fieldOf(sym: { declarations: readonly { path: string; index: number }[] } | undefined, fields: Map<string, string>): string | undefined {
  for (const d of sym?.declarations ?? []) {
    const f = fields.get(`${d.path}#${d.index}`);
    if (f) return f;
  }
  return undefined;
}

const unwrap = (n: Node): Node => {
  let e = n;
  while (
    e.kind === SyntaxKind.ParenthesizedExpression ||
    e.kind === SyntaxKind.NonNullExpression ||
    e.kind === SyntaxKind.AsExpression ||
    e.kind === SyntaxKind.SatisfiesExpression
  )
    e = PATH_OF(e).expression!;
  return e;
};

/**
 * The carried field that `expr` is, or is inside: the outermost property on its access path that
 * is a carried field (or a property of one of its parts), following a local variable back to what
 * it was made from. A local object made by a literal (`{ ...s }`) is a new value, not the state.
 */
function reach(expr: Node, checker: Checker, fields: Map<string, string>, depth = 0): string | undefined {
  if (depth > 8) return undefined;
  let e = unwrap(expr);
  let found: string | undefined;
  for (;;) {
    if (e.kind === SyntaxKind.PropertyAccessExpression) {
      found ??= fieldOf(checker.getSymbolAtLocation(PATH_OF(e).name!), fields);
      e = unwrap(PATH_OF(e).expression!);
    } else if (e.kind === SyntaxKind.ElementAccessExpression) {
      e = unwrap(PATH_OF(e).expression!);
    } else if (e.kind === SyntaxKind.CallExpression && !found) {
      // `s.children.find(…)`: an element of the field.
      const callee = unwrap(PATH_OF(e).expression!);
      if (callee.kind !== SyntaxKind.PropertyAccessExpression || !ELEMENT_OF.has(PATH_OF(callee).name!.text!)) return undefined;
      e = unwrap(PATH_OF(callee).expression!);
    } else if (e.kind === SyntaxKind.Identifier) {
      if (found) return madeByLiteral(e, checker) ? undefined : found;
      return aliasOf(e, checker, fields, depth);
    } else return found;
  }
}

/** A local variable whose value is an object literal of its own. */
function madeByLiteral(id: Node, checker: Checker): boolean {
  const decl = checker.getSymbolAtLocation(id)?.valueDeclaration?.resolve();
  const init = decl?.kind === SyntaxKind.VariableDeclaration ? PATH_OF(decl).initializer : undefined;
  return init !== undefined && unwrap(init).kind === SyntaxKind.ObjectLiteralExpression;
}

/** A local variable (or parameter of an array method's callback) made from a carried field. */
function aliasOf(id: Node, checker: Checker, fields: Map<string, string>, depth: number): string | undefined {
  const decl = checker.getSymbolAtLocation(id)?.valueDeclaration?.resolve();
  if (!decl) return undefined;
  if (decl.kind === SyntaxKind.VariableDeclaration) {
    const init = PATH_OF(decl).initializer;
    if (init) return reach(init, checker, fields, depth + 1);
    const loop = decl.parent?.parent; // for (const x of s.field)
    if (loop?.kind === SyntaxKind.ForOfStatement) return reach(PATH_OF(loop).expression!, checker, fields, depth + 1);
    return undefined;
  }
  if (decl.kind === SyntaxKind.BindingElement) {
    // const { field } = s: the property named by the binding.
    const pattern = decl.parent;
    const holder = pattern?.parent;
    if (pattern?.kind !== SyntaxKind.ObjectBindingPattern || holder?.kind !== SyntaxKind.VariableDeclaration) return undefined;
    const source = PATH_OF(holder).initializer;
    if (!source) return undefined;
    const prop = PATH_OF(decl).propertyName ?? PATH_OF(decl).name!;
    const type = checker.getTypeAtLocation(source);
    const f = type ? fieldOf(checker.getPropertyOfType(type, prop.text!), fields) : undefined;
    return f ?? reach(source, checker, fields, depth + 1);
  }
  if (decl.kind === SyntaxKind.Parameter) {
    // s.children.forEach((c) => …): an element of the field.
    const fn = decl.parent;
    const call = fn?.parent;
    if (call?.kind !== SyntaxKind.CallExpression) return undefined;
    const callee = unwrap(PATH_OF(call).expression!);
    if (callee.kind !== SyntaxKind.PropertyAccessExpression || !ELEMENT_OF.has(PATH_OF(callee).name!.text!)) return undefined;
    return reach(PATH_OF(callee).expression!, checker, fields, depth + 1);
  }
  return undefined;
}

/** The places a node writes: assignment targets (destructured ones each), ++/-- and delete operands, mutated arrays. */
function targets(n: Node): Node[] {
  const p = PATH_OF(n);
  if (n.kind === SyntaxKind.BinaryExpression) {
    const op = p.operatorToken!.kind;
    if (op < SyntaxKind.FirstAssignment || op > SyntaxKind.LastAssignment) return [];
    return destructured(p.left!);
  }
  if (n.kind === SyntaxKind.PrefixUnaryExpression || n.kind === SyntaxKind.PostfixUnaryExpression) {
    const op = (n as unknown as { operator: SyntaxKind }).operator;
    return op === SyntaxKind.PlusPlusToken || op === SyntaxKind.MinusMinusToken ? [p.operand!] : [];
  }
  if (n.kind === SyntaxKind.DeleteExpression) return [p.expression!];
  if (n.kind === SyntaxKind.CallExpression) {
    const callee = unwrap(p.expression!);
    const args = (n as unknown as { arguments: Node[] }).arguments;
    if (callee.kind !== SyntaxKind.PropertyAccessExpression) return [];
    const method = PATH_OF(callee).name!.text!;
    const obj = unwrap(PATH_OF(callee).expression!);
    if (method === 'assign' && obj.kind === SyntaxKind.Identifier && (obj as unknown as { text: string }).text === 'Object' && args[0]) return [args[0]];
    return MUTATORS.has(method) ? [obj] : [];
  }
  return [];
}

function destructured(left: Node): Node[] {
  const l = unwrap(left);
  if (l.kind === SyntaxKind.ArrayLiteralExpression) return (l as unknown as { elements: Node[] }).elements.flatMap(destructured);
  if (l.kind === SyntaxKind.ObjectLiteralExpression) {
    return (l as unknown as { properties: Node[] }).properties.flatMap((pr) =>
      pr.kind === SyntaxKind.PropertyAssignment
        ? destructured(PATH_OF(pr).initializer!)
        : pr.kind === SyntaxKind.ShorthandPropertyAssignment
          ? [PATH_OF(pr).name!]
          : [],
    );
  }
  if (l.kind === SyntaxKind.SpreadElement) return destructured(PATH_OF(l).expression!);
  return [l];
}

/** Every write to a carried field in `files` (absolute paths). */
export function carriedWrites(project: Project, root: string, files: string[], fields: Map<string, string>): CarriedWrite[] {
  const out: CarriedWrite[] = [];
  for (const file of files) {
    const sf = project.program.getSourceFile(file);
    if (!sf) throw new Error(`${file} is not in the project`);
    const visit = (n: Node) => {
      for (const t of targets(n)) {
        const field = reach(t, project.checker, fields);
        if (field) out.push({ file: relative(root, file), line: lineOf(sf, t), field, text: t.getText(sf) });
      }
      n.forEachChild(visit);
    };
    sf.forEachChild(visit);
  }
  return out;
}

const lineOf = (sf: SourceFile, n: Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
