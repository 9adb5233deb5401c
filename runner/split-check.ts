// Type-checking a session's new snippet apart from its earlier ones. The checks see a session
// as one program, and checking the whole of it on every call made each call cost more than the
// last (200 eight-line snippets: about 30 ms of checking a call, against 5 ms for the first).
// TypeScript checks only the files it is asked about, looking into the others only for what
// those use; so the checker is given the earlier snippets as one script file (its declarations
// global) and the new snippet as a module file beside it, and asked about the new one only.
//
// That gives the one program's verdict where the two readings agree, which they do unless a
// name means something else in one of them. So a snippet is checked apart only when:
// - no earlier snippet has module syntax but plain imports of tacit's own names, which are
//   globals of the same meaning anyway (the script form leaves those imports out);
// - the new snippet declares no top-level name an earlier one declared (redeclaration and
//   merging are for the one program to judge);
// - no earlier snippet declared a top-level name that is also a global of the language or of
//   tacit: in the one program (a module) it shadows the global, in a script it would merge
//   with it. The checker says so at the check in which the name was new (shadowsGlobal), and
//   from then on the session is checked whole.

/** What the checker is told of a snippet it may check apart. */
export interface SplitCheck {
  /** The checked code is the earlier snippets' text (this long) followed by the new snippet. */
  prefixLength: number;
  /** The earlier snippets as the checker's script file holds them: the same length, tacit imports blanked. */
  prefixForChecker: string;
  /** The new snippet's top-level names, for the checker to say whether any is already a global. */
  names: readonly string[];
}

/** The top-level declarations of one snippet, as far as checking apart is concerned. */
export interface SnippetShape {
  /** Every top-level name it binds (values, types, namespaces, imports), `var`s in blocks included. */
  bindings: string[];
  /** Those that could shadow a global: all but plain imports of tacit's names. */
  mayShadow: string[];
  /** Plain `import { name } from "tacit"` statements: [start, end) where the snippet stands in the program. */
  tacitImports: Array<[number, number]>;
  /** Module syntax the script form cannot hold: exports, renamed or namespace imports, `declare global`, `declare module "…"`. */
  moduleSyntax: boolean;
}

interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && typeof (value as Node).type === "string";

/** The names a binding pattern binds (`const { a, b: [c], ...d } = …`). */
function patternNames(pattern: unknown, into: string[]): void {
  if (!isNode(pattern)) return;
  switch (pattern.type) {
    case "Identifier":
      into.push(pattern.name as string);
      return;
    case "ObjectPattern":
      for (const property of pattern.properties as unknown[]) {
        if (isNode(property)) patternNames(property.type === "RestElement" ? property.argument : property.value, into);
      }
      return;
    case "ArrayPattern":
      for (const element of pattern.elements as unknown[]) patternNames(element, into);
      return;
    case "AssignmentPattern":
      patternNames(pattern.left, into);
      return;
    case "RestElement":
      patternNames(pattern.argument, into);
      return;
  }
}

/** `var`s declared in top-level blocks, loops and branches belong to the top level too (not those in functions). */
function nestedVars(statement: unknown, into: string[]): void {
  if (!isNode(statement)) return;
  switch (statement.type) {
    case "VariableDeclaration":
      if (statement.kind === "var") for (const d of statement.declarations as Node[]) patternNames(d.id, into);
      return;
    case "BlockStatement":
      for (const inner of statement.body as unknown[]) nestedVars(inner, into);
      return;
    case "IfStatement":
      nestedVars(statement.consequent, into);
      nestedVars(statement.alternate, into);
      return;
    case "ForStatement":
      nestedVars(statement.init, into);
      nestedVars(statement.body, into);
      return;
    case "ForInStatement":
    case "ForOfStatement":
      nestedVars(statement.left, into);
      nestedVars(statement.body, into);
      return;
    case "WhileStatement":
    case "DoWhileStatement":
    case "LabeledStatement":
      nestedVars(statement.body, into);
      return;
    case "TryStatement":
      nestedVars(statement.block, into);
      nestedVars((statement.handler as Node | null)?.body, into);
      nestedVars(statement.finalizer, into);
      return;
    case "SwitchStatement":
      for (const switchCase of statement.cases as Node[]) for (const inner of switchCase.consequent as unknown[]) nestedVars(inner, into);
      return;
  }
}

/** The names a top-level declaration binds; null for a statement that binds none at the top level. */
function declaredNames(node: Node): string[] {
  const names: string[] = [];
  const id = node.id as Node | null | undefined;
  switch (node.type) {
    case "VariableDeclaration":
      for (const d of node.declarations as Node[]) patternNames(d.id, names);
      break;
    case "FunctionDeclaration":
    case "TSDeclareFunction":
    case "ClassDeclaration":
    case "TSInterfaceDeclaration":
    case "TSTypeAliasDeclaration":
    case "TSEnumDeclaration":
    case "TSModuleDeclaration":
      if (id?.type === "Identifier") names.push(id.name as string);
      break;
    default:
      nestedVars(node, names);
  }
  return names;
}

/** The shape of a snippet from its top-level statements (oxc's syntax tree, as session-parse keeps it). */
export function snippetShape(statements: readonly unknown[]): SnippetShape {
  const shape: SnippetShape = { bindings: [], mayShadow: [], tacitImports: [], moduleSyntax: false };
  for (const statement of statements) {
    if (!isNode(statement)) continue;
    if (statement.type === "ImportDeclaration") {
      const specifiers = statement.specifiers as Node[];
      const plain = specifiers.length > 0 && specifiers.every((s) => s.type === "ImportSpecifier" && (s.imported as Node).name === (s.local as Node).name);
      for (const specifier of specifiers) shape.bindings.push((specifier.local as Node).name as string);
      if (plain) shape.tacitImports.push([statement.start, statement.end]);
      else {
        shape.moduleSyntax = true;
        for (const specifier of specifiers) shape.mayShadow.push((specifier.local as Node).name as string);
      }
      continue;
    }
    let declaration: Node = statement;
    if (statement.type.startsWith("Export") || statement.type === "TSExportAssignment" || statement.type === "TSImportEqualsDeclaration" || statement.type === "TSNamespaceExportDeclaration") {
      shape.moduleSyntax = true;
      if (!isNode(statement.declaration)) continue;
      declaration = statement.declaration;
    }
    // declare global { … } and declare module "…" { … } mean something else in a script.
    if (declaration.type === "TSModuleDeclaration" && (declaration.kind === "global" || (declaration.id as Node | null)?.type !== "Identifier")) {
      shape.moduleSyntax = true;
      continue;
    }
    const names = declaredNames(declaration);
    shape.bindings.push(...names);
    shape.mayShadow.push(...names);
  }
  return shape;
}

/**
 * What a session knows of its earlier snippets for checking apart: the names they bound, where
 * their tacit imports are, and whether checking apart still gives the one program's verdict.
 */
export class SplitState {
  private readonly names = new Set<string>();
  private readonly blanks: Array<[number, number]> = [];
  private usable = true;

  /**
   * The split check for a new snippet (statements from its parse in the whole program), or
   * null where the session must be checked whole.
   */
  checkFor(prefix: string, snippet: SnippetShape): SplitCheck | null {
    if (!this.usable || snippet.bindings.some((name) => this.names.has(name))) return null;
    let prefixForChecker = prefix;
    for (const [start, end] of this.blanks) prefixForChecker = prefixForChecker.slice(0, start) + " ".repeat(end - start) + prefixForChecker.slice(end);
    return { prefixLength: prefix.length, prefixForChecker, names: snippet.mayShadow };
  }

  /** Records a snippet that succeeded; `shadowsGlobal` is the checker's answer for its names (null: not checked apart). */
  append(snippet: SnippetShape | null, shadowsGlobal: boolean | null): void {
    if (!this.usable) return;
    if (snippet === null || snippet.moduleSyntax || shadowsGlobal !== false) {
      this.usable = false;
      return;
    }
    for (const name of snippet.bindings) this.names.add(name);
    this.blanks.push(...snippet.tacitImports);
  }
}
