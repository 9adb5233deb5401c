// How much work the scope analysis will do, before it does it. @typescript-eslint/scope-manager
// lists, in every scope a use of a name passes on its way to the declaration, that use (the
// scope's `through`): a name used N scopes deep is listed up to N times, so the work and memory
// grow with nesting times names. Hostile code makes that product large in little code: 20,000
// uses of one name inside 400 nested functions, 47 KB, made 8 M entries and took the host's main
// thread 4 s. The validator counts in the walk it makes anyway, and refuses a script past
// NESTED_NAME_USES_LIMIT before the analysis starts (bench/validator.ts measures the growth).

import type { AstNode } from "./pure-functions.js";

/** Nodes the scope analysis opens a scope for (an over-count where it does only sometimes). */
const SCOPE_NODES: ReadonlySet<string> = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "TSDeclareFunction",
  "TSEmptyBodyFunctionExpression",
  "BlockStatement",
  "StaticBlock",
  "ForStatement",
  "ForInStatement",
  "ForOfStatement",
  "CatchClause",
  "SwitchStatement",
  "WithStatement",
  "ClassDeclaration",
  "ClassExpression",
  "PropertyDefinition",
  "AccessorProperty",
  "TSModuleDeclaration",
  "TSEnumDeclaration",
  "TSConditionalType",
  "TSMappedType",
  "TSFunctionType",
  "TSConstructorType",
  "TSCallSignatureDeclaration",
  "TSConstructSignatureDeclaration",
  "TSMethodSignature",
  "TSTypeAliasDeclaration",
  "TSInterfaceDeclaration",
]);

const FUNCTIONS: ReadonlySet<string> = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/**
 * The scopes `node` opens (a function's body is the function's scope, a named function
 * expression's name has one more). The validator's walk sums, over every identifier, the scopes
 * around it: at least as many entries as the scope analysis can list in its scopes' `through`,
 * but for those of the global and module scopes (one or two for each use: the script's size).
 */
export function scopesOpened(node: AstNode, parent: AstNode | null): number {
  if (!SCOPE_NODES.has(node.type)) return 0;
  if (node.type === "BlockStatement" && parent !== null && FUNCTIONS.has(parent.type) && parent.body === node) return 0;
  return node.type === "FunctionExpression" && node.id ? 2 : 1;
}
