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
//   globals of the same meaning anyway (the script form leaves those imports out), nor uses
//   `this` outside functions (undefined in a module, globalThis in a script);
// - the new snippet declares no top-level name an earlier one declared (redeclaration and
//   merging are for the one program to judge: such a snippet is checked whole);
// - no earlier snippet declared a top-level name that is also a global of the language or of
//   tacit: in the one program (a module) it shadows the global, in a script it would merge
//   with it. The checker says so for every snippet, checked apart or whole (shadowsGlobal,
//   answered just after the verdict: the lookups cost about a millisecond, which the caller
//   need not wait for), and from a snippet that shadows one on the session is checked whole.
// A short session is checked whole anyway (APART_FROM_CHARS).

/**
 * Below this much text of earlier snippets, checking the whole program costs less than the
 * second file does (measured: the whole check grows about 0.4 ms a KiB; apart costs about
 * 0.7 ms more on a short session), so the snippet is checked whole, its names still asked about.
 */
export const APART_FROM_CHARS = 4096;

/** TypeScript's pragma that turns off checking of the file it opens (case-insensitive, as TypeScript reads it). */
const NO_CHECK_PRAGMA = /@ts-nocheck/i;

/** What the checker is told of a session's new snippet. */
export interface SnippetCheck {
  /** The snippet's top-level names: the checker says, after the verdict, whether any is a global already. */
  names: readonly string[];
  /** Present when the snippet is checked apart from the earlier ones. */
  apart: {
    /** The checked code is the earlier snippets' text (this long) followed by the new snippet. */
    prefixLength: number;
    /** The earlier snippets as the checker's script file holds them: the same length, tacit imports blanked. */
    prefixForChecker: string;
  } | null;
}

/** The top-level declarations of one snippet, as far as checking apart is concerned. */
export interface SnippetShape {
  /** Every top-level name it binds (values, types, namespaces, imports), `var`s in blocks included. */
  bindings: string[];
  /** Those that could shadow a global: all but plain imports of tacit's names. */
  mayShadow: string[];
  /** Plain `import { name } from "tacit"` statements: [start, end) where the snippet stands in the program. */
  tacitImports: Array<[number, number]>;
  /**
   * What a script would read otherwise: exports, renamed or namespace imports, `declare global`,
   * `declare module "…"`, and `this` outside functions (undefined in a module, globalThis in a script).
   */
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

/** The names a top-level statement binds (none for most statements; the `var`s of a block or loop). */
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

/**
 * Whether `this` appears outside every function (class members included, conservatively: a
 * field's initializer means the instance, but telling those apart is not worth the risk).
 */
function usesThisOutsideFunctions(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) {
      for (const item of value) pending.push(item);
      continue;
    }
    if (!isNode(value)) continue;
    if (value.type === "ThisExpression") return true;
    if (value.type === "FunctionDeclaration" || value.type === "FunctionExpression") continue;
    for (const key in value) {
      if (key === "parent") continue; // a tree, walked down only
      const child = value[key];
      if (typeof child === "object" && child !== null) pending.push(child);
    }
  }
  return false;
}

/** The shape of a snippet from its top-level statements (oxc's syntax tree, as session-parse keeps it). */
export function snippetShape(statements: readonly unknown[]): SnippetShape {
  const shape: SnippetShape = { bindings: [], mayShadow: [], tacitImports: [], moduleSyntax: usesThisOutsideFunctions(statements) };
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
   * Settled once the checker has answered for the last snippet appended. Those before it were
   * answered already: its own plan (checkFor) waited for them.
   */
  private answered: Promise<void> = Promise.resolve();
  /** Whether `answered` is still to settle (then a plan must wait for it). */
  private awaitingAnswer = false;

  /**
   * How to check a new snippet (its shape from its parse in the whole program): apart from the
   * earlier snippets, or whole with its names asked about; null once the session is checked
   * whole for good.
   */
  checkFor(prefix: string, snippet: SnippetShape): SnippetCheck | null | Promise<SnippetCheck | null> {
    // Answered long since, as a rule: the plan is then made at once (see checkInStages).
    if (this.awaitingAnswer) return this.answered.then(() => this.checkFor(prefix, snippet));
    if (!this.usable) return null;
    // A name bound again is the whole program's to judge; the earlier snippets stay one file
    // (the checker's script), so what they merge among themselves means there what it means whole.
    // A `// @ts-nocheck` that opens the program turns off the one program's check; apart, it would
    // reach only the earlier snippets' file (any mention of it, anywhere, is simply checked whole).
    if (prefix.length < APART_FROM_CHARS || snippet.bindings.some((name) => this.names.has(name)) || NO_CHECK_PRAGMA.test(prefix)) {
      return { names: snippet.mayShadow, apart: null };
    }
    let prefixForChecker = prefix;
    for (const [start, end] of this.blanks) prefixForChecker = prefixForChecker.slice(0, start) + " ".repeat(end - start) + prefixForChecker.slice(end);
    return { names: snippet.mayShadow, apart: { prefixLength: prefix.length, prefixForChecker } };
  }

  /**
   * Records a snippet that succeeded; `shadowsGlobal` is the checker's answer for its names
   * (null: none was asked for). An answer that fails counts as yes.
   */
  append(snippet: SnippetShape | null, shadowsGlobal: Promise<boolean> | null): void {
    if (!this.usable) return;
    if (snippet === null || snippet.moduleSyntax || shadowsGlobal === null) {
      this.usable = false;
      return;
    }
    for (const name of snippet.bindings) this.names.add(name);
    this.blanks.push(...snippet.tacitImports);
    this.awaitingAnswer = true;
    const answered = shadowsGlobal.then(
      (shadows) => {
        if (shadows) this.usable = false;
      },
      () => {
        this.usable = false;
      },
    );
    this.answered = answered;
    void answered.then(() => {
      if (this.answered === answered) this.awaitingAnswer = false;
    });
  }
}
