// A session snippet as the module its live sandbox runs: the snippet's own text with tacit
// imports and map/flatMap captures rewritten (as for any script), its final expression
// statement passed to the echo, and a closing statement that publishes its top-level
// bindings (PUBLISH_GLOBAL) so later snippets, separate modules, read and assign them live.

import { analyze } from "@typescript-eslint/scope-manager";
import { parseSync, PROGRAM_OPTIONS } from "./parser.js";
import { ECHO_GLOBAL, PUBLISH_GLOBAL } from "../library/protocol.js";
import type { PureFunctionSite } from "./pure-functions.js";
import { type Edit, rewriteForSandbox } from "./rewrite-imports.js";
import type { TacitImport } from "./validator.js";

interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

/** A top-level binding a snippet publishes: its name, and whether later snippets may assign it. */
interface Binding {
  name: string;
  constant: boolean;
}

function patternNames(pattern: AstNode | null | undefined, into: string[]): void {
  if (!pattern) return;
  switch (pattern.type) {
    case "Identifier":
      into.push(pattern.name as string);
      return;
    case "ObjectPattern":
      for (const property of pattern.properties as AstNode[]) patternNames((property.type === "RestElement" ? property.argument : property.value) as AstNode, into);
      return;
    case "ArrayPattern":
      for (const element of pattern.elements as Array<AstNode | null>) patternNames(element, into);
      return;
    case "AssignmentPattern":
      patternNames(pattern.left as AstNode, into);
      return;
    case "RestElement":
      patternNames(pattern.argument as AstNode, into);
      return;
  }
}

/** The declaration a statement makes, looking through `export`; null for `export { … }`. */
function declarationOf(statement: AstNode): AstNode | null {
  return statement.type === "ExportNamedDeclaration" ? (statement.declaration as AstNode | null) : statement;
}

/**
 * Whether a namespace exists at run time: it does if it holds anything but types (a namespace
 * of types only is erased, and publishing it would publish a name that refers to itself).
 */
function isInstantiated(namespace: AstNode): boolean {
  const body = namespace.body as AstNode | null;
  if (!body) return false;
  if (body.type === "TSModuleDeclaration") return isInstantiated(body); // namespace A.B { … }
  return (body.body as AstNode[]).some((statement) => {
    const node = declarationOf(statement);
    if (!node) return false;
    if (node.type === "TSTypeAliasDeclaration" || node.type === "TSInterfaceDeclaration") return false;
    if (node.type === "TSModuleDeclaration") return isInstantiated(node);
    return true;
  });
}

/** The value bindings a top-level statement declares (types, `declare` and overloads have none). */
function declaredBindings(statement: AstNode): Binding[] {
  const node = declarationOf(statement);
  if (!node || node.declare === true) return [];
  const named = (constant: boolean): Binding[] => {
    const id = node.id as AstNode | null;
    return id?.type === "Identifier" ? [{ name: id.name as string, constant }] : [];
  };
  switch (node.type) {
    case "VariableDeclaration": {
      const names: string[] = [];
      for (const declarator of node.declarations as AstNode[]) patternNames(declarator.id as AstNode, names);
      const constant = node.kind !== "let" && node.kind !== "var";
      return names.map((name) => ({ name, constant }));
    }
    case "FunctionDeclaration":
    case "ClassDeclaration":
      return named(false);
    case "TSEnumDeclaration":
      return named(false); // a const enum too: see constEnumEdits

    case "TSModuleDeclaration":
      return isInstantiated(node) ? named(false) : [];
    default:
      return [];
  }
}

/** The value names declared in the module's own scope, with how: a variable's kind, or the definition type. */
function moduleScopeValues(program: unknown): Array<{ name: string; kind: string }> {
  const scopes = analyze(program as never, { sourceType: "module", lib: [] });
  const moduleScope = scopes.globalScope?.childScopes.find((scope) => scope.type === "module");
  const found: Array<{ name: string; kind: string }> = [];
  for (const variable of moduleScope?.variables ?? []) {
    if (!variable.isValueVariable) continue;
    const definition = variable.defs[0];
    if (!definition) continue;
    const kind = definition.type === "Variable" ? String((definition.parent as { kind?: string } | null)?.kind ?? "var") : definition.type;
    found.push({ name: variable.name, kind });
  }
  return found;
}

/**
 * A top-level `const enum` becomes a plain enum: the transpiler inlines a const enum's members
 * where they are used in the same module and emits no object, so a later snippet (another
 * module) would find nothing. Blanks keep every column in place.
 */
function constEnumEdits(snippet: string, body: readonly AstNode[]): Edit[] {
  const edits: Edit[] = [];
  for (const statement of body) {
    const node = declarationOf(statement);
    if (node?.type === "TSEnumDeclaration" && node.const === true && snippet.startsWith("const", node.start)) {
      edits.push({ at: node.start, length: "const".length, text: " ".repeat("const".length) });
    }
  }
  return edits;
}

/**
 * The snippet's own edits: its final expression statement passed to the echo, and a closing
 * statement that publishes its top-level bindings (reached only if the snippet's body completes).
 */
function snippetEdits(snippet: string, imports: readonly TacitImport[]): { edits: Edit[]; publish: string } {
  const { program, errors } = parseSync("snippet.ts", snippet, PROGRAM_OPTIONS);
  if (errors.length > 0) return { edits: [], publish: "" }; // The checks have reported it.
  const body = program.body as unknown as AstNode[];
  const bindings = new Map<string, boolean>();
  for (const statement of body) for (const { name, constant } of declaredBindings(statement)) bindings.set(name, constant);
  const edits: Edit[] = constEnumEdits(snippet, body);
  for (const entry of imports) {
    if (entry.namespace) bindings.set(entry.namespace, true);
    for (const [, local] of entry.named) bindings.set(local, true);
  }
  // Every other value name the module declares (a `var` inside a block, `export default
  // function f`, `import a = N.b`, …): the checks saw later snippets' uses of it resolve to
  // this declaration, so it must not fall through to a global of the same name at run time.
  const hidden = new Map<string, string>();
  for (const { name, kind } of moduleScopeValues(program)) {
    if (bindings.has(name) || hidden.has(name)) continue;
    if (kind === "var" || kind === "let" || kind === "FunctionName" || kind === "ClassName") bindings.set(name, false);
    else if (kind === "const" || kind === "using" || kind === "await using") bindings.set(name, true);
    else hidden.set(name, name);
  }
  const last = body[body.length - 1];
  const expression = last?.type === "ExpressionStatement" ? (last.expression as AstNode) : null;
  if (expression) {
    edits.push({ at: expression.start, length: 0, text: `${ECHO_GLOBAL}((` }, { at: expression.end, length: 0, text: "))" });
  }
  if (bindings.size === 0 && hidden.size === 0) return { edits, publish: "" };
  const entries = [...bindings].map(([name, constant]) => {
    const value = name === "value__" ? "value___" : "value__";
    // A computed key: a plain "__proto__" key would set the object's prototype, not add an entry.
    return `[${JSON.stringify(name)}]: [() => ${name}, ${constant ? "null" : `(${value}) => { ${name} = ${value}; }`}]`;
  });
  // Not referenced here (a type-only alias would then be kept, and fail): later snippets find
  // the name taken, holding undefined, instead of the runtime's global. (Not a getter that
  // throws: the runtime's own code reads some of these names, globalThis for one.)
  for (const name of hidden.keys()) entries.push(`[${JSON.stringify(name)}]: [() => undefined, null]`);
  return { edits, publish: `\n;${PUBLISH_GLOBAL}({ ${entries.join(", ")} });\n` };
}

/**
 * The snippet as its module in the session's sandbox. `imports` and `pureFunctions` were
 * found in the whole program; those inside the snippet (from `offset`) are moved to its text.
 */
export function snippetForSandbox(snippet: string, offset: number, imports: readonly TacitImport[], pureFunctions: readonly PureFunctionSite[]): string {
  const own = imports.filter((entry) => entry.start >= offset).map((entry) => ({ ...entry, start: entry.start - offset, end: entry.end - offset }));
  const sites = pureFunctions.filter((site) => site.start >= offset).map((site) => ({ ...site, start: site.start - offset, end: site.end - offset }));
  const { edits, publish } = snippetEdits(snippet, own);
  return rewriteForSandbox(snippet, own, sites, edits) + publish;
}
