// The static check that runs before anything executes. It works on the oxc AST with real
// scope analysis (not regexes), so comments, strings, template text, split tokens and
// unicode escapes cannot fool it. It exists for the agent's benefit — precise errors early,
// each with a rule id, position and a hint — and is not what keeps the host safe: the
// sandbox process holds no authority whatever this check lets through.

import { HINT_TOO_DEEP, type ParseRefusal, parseRefusal } from "./nesting.js";
import { printable } from "./printable.js";
import { analyze, type Scope } from "@typescript-eslint/scope-manager";
import { type ParsedProgram, parseSync, PROGRAM_OPTIONS } from "./parser.js";
import { analyzePureFunctions, htmlCommentLookalike, type PureFunctionSite, readAsText, type SpacingSite } from "./pure-functions.js";
import { scopesOpened } from "./scope-nesting.js";
import { declaredNamesWork } from "./declared-names.js";
import { DECLARED_NAMES_WORK_LIMIT, NESTED_NAME_USES_LIMIT } from "./limits.js";
import { lineColumnOf, lineStarts } from "./source-position.js";
import { forbiddenGlobal, HINT_IMPORT, identifierSets } from "./globals.js";
import { closestName, SuggestionBudget } from "./closest-name.js";
import { ECHO_GLOBAL, LIBRARY_GLOBAL, PUBLISH_GLOBAL, PURE_CAPTURES_GLOBAL } from "../library/protocol.js";

/**
 * Names the rewritten code calls (the library object, the map-capture wrapper, a session's
 * echo and its publishing of bindings): a declaration of one would take the call over, and a
 * snippet that swallowed its own publishing would leave later snippets' uses of its names to
 * reach the runtime's globals.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set([LIBRARY_GLOBAL, ECHO_GLOBAL, PUBLISH_GLOBAL, PURE_CAPTURES_GLOBAL]);

export type RuleId =
  | "syntax"
  | "ambient-authority"
  | "dynamic-code"
  | "unknown-global"
  | "forbidden-import"
  | "dynamic-import"
  | "import-meta"
  | "function-constructor"
  | "triple-slash-directive"
  | "ambient-declaration"
  | "impure-map"
  | "too-deep"
  | "parse-probe-failed"
  | "too-many-names"
  | "too-large";

export interface Diagnostic {
  rule: RuleId;
  line: number;
  column: number;
  message: string;
  hint: string;
}

/** One `import … from "tacit"` statement, for the rewriter. */
export interface TacitImport {
  start: number;
  end: number;
  /** `import * as name`; null when the import has only named (or no) bindings. */
  namespace: string | null;
  /** Value bindings as [exported name, local name]; type-only ones are left out. */
  named: Array<[string, string]>;
}

export interface ValidationResult {
  ok: boolean;
  diagnostics: Diagnostic[];
  tacitImports: TacitImport[];
  /** Functions passed to map/flatMap that capture outer variables, and the `<!--` to space for the pure evaluator. */
  pureFunctions: PureFunctionSite[];
}

// A minimal view of the ESTree nodes we inspect; the walker sees everything as this shape.
interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === "object" && value !== null && typeof (value as AstNode).type === "string";
}

/** `scopeDepth`: how many scopes (scope-nesting.ts) are around `node`, the program's own not counted. */
function walk(node: AstNode, parent: AstNode | null, visit: (node: AstNode, parent: AstNode | null, scopeDepth: number) => void, scopeDepth = 0): void {
  visit(node, parent, scopeDepth);
  const inner = scopeDepth + scopesOpened(node, parent);
  for (const key in node) {
    if (key === "parent") continue;
    const child = node[key];
    if (Array.isArray(child)) {
      for (const item of child) if (isNode(item)) walk(item, node, visit, inner);
    } else if (isNode(child)) {
      walk(child, node, visit, inner);
    }
  }
}

/** A `/// <reference …>`-style comment: a directive that makes the type checker load other files. */
function isTripleSlashDirective(comment: ParsedProgram["comments"][number]): boolean {
  return comment.type === "Line" && /^\/\s*<\s*[a-z-]+/i.test(comment.value);
}

/**
 * A node that names a module other than "tacit", which the type checker would read: an import
 * or re-export from one, `import … = require(…)`, `import("…")` in a type or an expression. The
 * validator refuses each (forbidden-import, dynamic-import); a re-export of "tacit" counts too.
 * So does `declare module "…" {}` (refused as ambient-declaration): in a module it augments the
 * module it names, which the checker resolves, reading the package.json of a directory the name
 * gives (a FIFO there held the checker until its time limit).
 */
function namesAnotherModule(node: AstNode): boolean {
  switch (node.type) {
    case "ImportDeclaration":
      return (node.source as AstNode).value !== "tacit";
    case "ExportNamedDeclaration":
    case "ExportAllDeclaration":
      return Boolean(node.source);
    case "TSImportEqualsDeclaration":
      return (node.moduleReference as AstNode).type === "TSExternalModuleReference";
    case "TSImportType":
    case "ImportExpression":
      return true;
    case "TSModuleDeclaration":
      return (node.id as AstNode).type === "Literal";
    default:
      return false;
  }
}

/**
 * Whether the part of a parsed program from `offset` on (a session's new snippet, after earlier
 * ones that passed the validator) names no module but "tacit" (see namesAnotherModule) and holds
 * no triple-slash directive: the type checker then reads nothing the validator would refuse to
 * let it read, and may start on the program before the validator has passed it (checks.ts). A
 * snippet too deep to walk gets false.
 */
export function namesOnlyTacit(parsed: ParsedProgram, offset: number): boolean {
  if (parsed.errors.length > 0) return false;
  if (parsed.comments.some((comment) => comment.start >= offset && isTripleSlashDirective(comment))) return false;
  let other = false;
  try {
    for (const statement of (parsed.program as unknown as AstNode).body as AstNode[]) {
      if (statement.start < offset) continue;
      walk(statement, null, (node) => {
        if (namesAnotherModule(node)) other = true;
      });
    }
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return false;
  }
  return !other;
}

function isConstructorKey(node: unknown): boolean {
  if (!isNode(node)) return false;
  if (node.type === "Literal") return node.value === "constructor";
  if (node.type === "TemplateLiteral") {
    const quasis = node.quasis as Array<{ value: { cooked: string | null } }>;
    return quasis.length === 1 && quasis[0]?.value.cooked === "constructor";
  }
  return false;
}

/** A non-computed key: `constructor` or "constructor". */
function isConstructorName(key: AstNode): boolean {
  return key.name === "constructor" || key.value === "constructor";
}

function propertyIsConstructor(member: AstNode): boolean {
  const property = member.property as AstNode;
  return member.computed ? isConstructorKey(property) : isConstructorName(property);
}

/** Reflect.get(f, "constructor"), Object.getOwnPropertyDescriptor(p, "constructor") and the like. */
function isReflectiveCall(call: AstNode): boolean {
  const callee = call.callee as AstNode;
  if (callee.type !== "MemberExpression") return false;
  const object = callee.object as AstNode;
  return object.type === "Identifier" && (object.name === "Reflect" || object.name === "Object");
}

/** `x.constructor.name` and `a.constructor === B` cannot reach Function; anything else might. */
function isHarmlessConstructorUse(member: AstNode, parent: AstNode | null): boolean {
  if (!parent) return false;
  if (parent.type === "MemberExpression" && parent.object === member && !parent.computed) {
    return (parent.property as AstNode).name === "name";
  }
  if (parent.type === "BinaryExpression") {
    return ["===", "!==", "==", "!=", "instanceof"].includes(parent.operator as string);
  }
  return false;
}

/**
 * `fresh`: the part of `code` whose nesting has not been measured (see nesting.ts): a session's
 * new snippet. Earlier snippets each passed on their own, and snippets are siblings at the top
 * level, so the program nests no deeper than the deepest of them. `parsed`: where `code` is
 * parsed for the checks (a session joins the parse of its earlier snippets, kept, with the
 * new one's: session-parse.ts), or null to parse it whole; asked only once `fresh` is known
 * not to nest too deeply. `probed`: the verdict of nesting.ts's parseRefusalAsync on `fresh`,
 * where the caller has it already; without it the validator probes (synchronously).
 */
export function validate(
  code: string,
  fileName = "script.ts",
  fresh: string = code,
  parsed: () => ParsedProgram | null = () => null,
  probed?: ParseRefusal | null,
): ValidationResult {
  try {
    return validateUnguarded(code, fileName, fresh, parsed, probed === undefined ? parseRefusal(fresh) : probed);
  } catch (error) {
    // The checks walk the tree recursively: one a few thousand deep (a chain of 3,000 "+")
    // exhausts the stack. That is the script's shape, not a fault of tacit's.
    if (!(error instanceof RangeError)) throw error;
    const diagnostic: Diagnostic = {
      rule: "too-deep",
      line: 1,
      column: 1,
      message: "the script nests too deeply for tacit's checks (an expression some thousands of levels deep)",
      hint: HINT_TOO_DEEP,
    };
    return { ok: false, diagnostics: [diagnostic], tacitImports: [], pureFunctions: [] };
  }
}

function validateUnguarded(code: string, fileName: string, fresh: string, parsedAlready: () => ParsedProgram | null, refusal: ParseRefusal | null): ValidationResult {
  const starts = lineStarts(code);
  const diagnostics: Diagnostic[] = [];
  const tacitImports: TacitImport[] = [];
  const report = (rule: RuleId, offset: number, message: string, hint: string): void => {
    const { line, column } = lineColumnOf(starts, offset);
    diagnostics.push({ rule, line, column, message, hint });
  };

  if (refusal !== null) {
    report(refusal.rule, 0, refusal.message, refusal.hint);
    return { ok: false, diagnostics, tacitImports, pureFunctions: [] };
  }
  const parsed = parsedAlready() ?? parseSync(fileName, code, PROGRAM_OPTIONS);
  if (parsed.errors.length > 0) {
    for (const error of parsed.errors) {
      report("syntax", error.labels[0]?.start ?? 0, error.message, error.helpMessage ?? "Fix the syntax error; the script is TypeScript (an ES module).");
    }
    return { ok: false, diagnostics, tacitImports, pureFunctions: [] };
  }

  for (const comment of parsed.comments) {
    if (isTripleSlashDirective(comment)) {
      report(
        "triple-slash-directive",
        comment.start,
        "triple-slash directives (/// <reference …>) are not allowed: they make the checker load other files",
        "Remove the directive; the tacit API is already in scope.",
      );
    }
  }

  const program = parsed.program as unknown as AstNode;
  const calls: AstNode[] = [];
  // Identifiers in `typeof X` type queries: erased before running, so no reach at run time.
  const typeQueryNames = new Set<number>();
  const capabilityBlocks = new Set<unknown>();
  // `export const/let/var` inside a namespace, and the enums: see isNamespaceExportInEnum.
  const namespaceExports = new Set<unknown>();
  const enums: AstNode[] = [];
  // `<!--` in code, spaced for the pure evaluator (see SpacingSite).
  const spacings: SpacingSite[] = [];
  // Names read as text (see readAsText), for the map checks.
  const textOperands = new Set<unknown>();
  // Each identifier once for every scope around it: a bound on the scope analysis's work (scope-nesting.ts).
  let nestedNameUses = 0;
  // The scope analysis's work on each declaration's list of names, and the declaration with the most (declared-names.ts).
  let declaredWork = 0;
  let largestDeclaration: { node: AstNode; names: number } | null = null;
  walk(program, null, (node, parent, scopeDepth) => {
    if (node.type === "Identifier") nestedNameUses += scopeDepth;
    const declared = declaredNamesWork(node);
    if (declared.work > 0) {
      declaredWork += declared.work;
      if (declared.names > (largestDeclaration?.names ?? 0)) largestDeclaration = { node, names: declared.names };
    }
    if (node.type === "ExportNamedDeclaration" && parent?.type === "TSModuleBlock" && (node.declaration as AstNode | null)?.type === "VariableDeclaration") {
      namespaceExports.add(node.declaration);
    }
    if (node.type === "TSEnumDeclaration") enums.push(node);
    const spacing = htmlCommentLookalike(node, code);
    if (spacing !== null) spacings.push(spacing);
    for (const operand of readAsText(node)) if (operand.type === "Identifier") textOperands.add(operand);
    if (node.type === "TSTypeQuery") {
      walk(node, null, (inner) => {
        if (inner.type === "Identifier") typeQueryNames.add(inner.start);
      });
    }
    switch (node.type) {
      case "ImportDeclaration": {
        const source = (node.source as AstNode).value as string;
        if (namesAnotherModule(node)) {
          report("forbidden-import", node.start, `import of "${source}" is not allowed`, HINT_IMPORT);
          return;
        }
        collectTacitImport(node);
        return;
      }
      case "ExportNamedDeclaration":
      case "ExportAllDeclaration":
        if (namesAnotherModule(node)) {
          report("forbidden-import", node.start, `re-export from "${(node.source as AstNode).value as string}" is not allowed`, HINT_IMPORT);
        }
        return;
      case "TSImportEqualsDeclaration":
        if (namesAnotherModule(node)) {
          report("forbidden-import", node.start, "import … = require(…) is not allowed", HINT_IMPORT);
        }
        return;
      case "TSImportType":
        report("forbidden-import", node.start, 'type imports of other modules (import("…") in a type) are not allowed', HINT_IMPORT);
        return;
      case "ImportExpression":
        report("dynamic-import", node.start, "dynamic import() is not allowed", HINT_IMPORT);
        return;
      case "MetaProperty":
        if ((node.meta as AstNode).name === "import") {
          report("import-meta", node.start, "import.meta is not available in a tacit script", "The script has no location of its own; remove the use of import.meta.");
        }
        return;
      case "TSModuleDeclaration":
      case "VariableDeclaration":
      case "FunctionDeclaration":
      case "TSDeclareFunction":
      case "ClassDeclaration":
      case "TSEnumDeclaration":
        // `declare` introduces a name without a value: at run time the name means whatever the
        // runtime has under it (declare const Deno: any). Scripts declare by defining.
        if (node.declare === true || (node.type === "TSModuleDeclaration" && ((node.id as AstNode).type === "Literal" || node.kind === "global"))) {
          report(
            "ambient-declaration",
            node.start,
            "`declare` statements are not allowed: they name things the script does not define, which at run time means the runtime's own globals",
            "Define what you need (const, function, class), or use the tacit API; `tacit interface` lists it.",
          );
        }
        return;
      case "MemberExpression":
        if (propertyIsConstructor(node) && !isHarmlessConstructorUse(node, parent)) {
          report(
            "function-constructor",
            (node.property as AstNode).start,
            "`.constructor` can reach the Function constructor (code from strings), so it is only allowed as `x.constructor.name` or in a comparison",
            "Call functions directly; use `instanceof` or `x.constructor.name` to inspect a value's class.",
          );
        }
        return;
      case "Property":
        if (parent?.type === "ObjectPattern" && (node.computed ? isConstructorKey(node.key) : isConstructorName(node.key as AstNode))) {
          report("function-constructor", node.start, "destructuring `constructor` can reach the Function constructor", "Use `instanceof` or `x.constructor.name` to inspect a value's class.");
        }
        return;
      case "CallExpression":
      case "NewExpression":
        if (node.type === "CallExpression") {
          calls.push(node);
          const callee = node.callee as AstNode;
          if (callee.type === "Identifier" && /^request[A-Z]/.test(callee.name as string)) {
            for (const argument of node.arguments as AstNode[]) capabilityBlocks.add(argument);
          }
        }
        for (const argument of isReflectiveCall(node) ? (node.arguments as AstNode[]) : []) {
          if (isConstructorKey(argument)) {
            report("function-constructor", argument.start, 'passing "constructor" as a property name can reach the Function constructor', "Use `instanceof` or `x.constructor.name` to inspect a value's class.");
          }
        }
        return;
      default:
        return;
    }
  });

  function collectTacitImport(node: AstNode): void {
    const entry: TacitImport = { start: node.start, end: node.end, namespace: null, named: [] };
    const typeOnly = node.importKind === "type";
    for (const spec of node.specifiers as AstNode[]) {
      const local = (spec.local as AstNode).name as string;
      if (spec.type === "ImportDefaultSpecifier") {
        report("forbidden-import", spec.start, '"tacit" has no default export', 'Use import * as tacit from "tacit", or named imports: import { println } from "tacit".');
      } else if (spec.type === "ImportNamespaceSpecifier") {
        if (!typeOnly) entry.namespace = local;
      } else {
        const imported = spec.imported as AstNode;
        const name = (imported.type === "Literal" ? imported.value : imported.name) as string;
        const { tacitExports, tacitTypeExports } = identifierSets();
        // A value first: an error class is both a value and a type (HttpStatusError), and its value is bound.
        if (tacitExports.has(name)) {
          if (!typeOnly && spec.importKind !== "type") entry.named.push([name, local]);
        } else if (tacitTypeExports.has(name)) {
          // A type only: nothing to bind at run time.
        } else {
          report("forbidden-import", spec.start, `"tacit" has no export named "${name}"`, `Available: ${[...tacitExports, ...tacitTypeExports].join(", ")}. Run \`tacit interface\` to see the API.`);
        }
      }
    }
    tacitImports.push(entry);
  }

  if (nestedNameUses > NESTED_NAME_USES_LIMIT) {
    report(
      "too-deep",
      0,
      `the script uses names too deep inside nested functions and blocks for tacit's checks: counted once for each function or block ` +
        `around it, its names come to ${nestedNameUses.toLocaleString("en-US")} uses, and the limit is ${NESTED_NAME_USES_LIMIT.toLocaleString("en-US")}`,
      "Nest less: define helpers at the top level and pass them what they need as arguments, or split nested calls into steps " +
        "(const a = x.map(…); const b = a.map(…);).",
    );
    return { ok: false, diagnostics, tacitImports, pureFunctions: [] };
  }
  if (declaredWork > DECLARED_NAMES_WORK_LIMIT && largestDeclaration !== null) {
    const { node, names } = largestDeclaration as { node: AstNode; names: number };
    report(
      "too-many-names",
      node.start,
      `the script binds too many names in single declarations for tacit's checks: this one binds ${names.toLocaleString("en-US")} ` +
        "names, and the checks' work grows with the square of the names one declaration, parameter list or import binds " +
        `(${Math.round(declaredWork).toLocaleString("en-US")} steps in all; the limit is ${DECLARED_NAMES_WORK_LIMIT.toLocaleString("en-US")}, ` +
        "about 10,000 names in one declaration; in a REPL session the earlier snippets' declarations count too)",
      "Keep many values in one array or object (const values = [...]; values[i]) instead of a name for each, " +
        "or split the declaration into several statements of at most a few thousand names.",
    );
    return { ok: false, diagnostics, tacitImports, pureFunctions: [] };
  }
  const scopes = analyze(parsed.program as never, { sourceType: "module", lib: [] });
  for (const scope of scopes.scopes) {
    for (const variable of scope.variables) {
      if (!RESERVED_NAMES.has(variable.name)) continue;
      for (const identifier of variable.identifiers) {
        report(
          "ambient-authority",
          (identifier as unknown as AstNode).start,
          `\`${variable.name}\` is a name tacit reserves for the code it runs, and cannot be declared`,
          "Rename it.",
        );
      }
    }
  }
  // Names the scope analysis binds but the transpiler erases (a type-only import, a namespace
  // with no values): a value use of one reaches the runtime's global of that name, so it is
  // checked as a global.
  const boundImports = new Set<string>();
  for (const entry of tacitImports) {
    if (entry.namespace) boundImports.add(entry.namespace);
    for (const [, local] of entry.named) boundImports.add(local);
  }
  const erasedUses = scopes.scopes.flatMap((scope) =>
    scope.references.filter(
      (reference) =>
        reference.isValueReference &&
        reference.resolved !== null &&
        (isErasedAtRunTime(reference.resolved, boundImports) ||
          isEnumMemberNotYetDeclared(reference.resolved, reference.identifier as unknown as AstNode) ||
          isNamespaceExportInEnum(reference.resolved, reference.identifier as unknown as AstNode, namespaceExports, enums)),
    ),
  );
  // One budget for the whole script's "Did you mean" (see SuggestionBudget).
  const suggestions = new SuggestionBudget();
  for (const reference of [...(scopes.globalScope?.through ?? []), ...erasedUses]) {
    if (!reference.isValueReference) continue;
    const name = reference.identifier.name;
    const offset = (reference.identifier as unknown as AstNode).start;
    if (typeQueryNames.has(offset)) continue;
    const forbidden = forbiddenGlobal(name);
    if (forbidden) {
      report(forbidden.rule, offset, `\`${name}\` is not available: ${forbidden.reason}`, forbidden.hint);
    } else if (!identifierSets().allowedGlobals.has(name)) {
      const meant = suggestions.spent ? null : closestName(name, namesVisibleFrom(reference.from), suggestions);
      report(
        "unknown-global",
        offset,
        `\`${name}\` is not defined in a tacit script`,
        `${meant === null ? "" : `Did you mean \`${meant}\`? `}` +
          "Declare it before use, or use the tacit API (run `tacit interface`). Only the language's built-ins and tacit's globals exist.",
      );
    }
  }

  const pureFunctions: PureFunctionSite[] = [
    ...analyzePureFunctions(code, calls, capabilityBlocks, scopes, textOperands, (offset, message, hint) => report("impure-map", offset, message, hint)),
    ...spacings,
  ];

  diagnostics.sort((a, b) => a.line - b.line || a.column - b.column);
  return { ok: diagnostics.length === 0, diagnostics, tacitImports, pureFunctions };
}

/**
 * What a name used in `scope` could have meant: the script's own names in reach there (the
 * nearest scope's first), then tacit's globals, then the language's.
 */
function* namesVisibleFrom(scope: Scope): Generator<string> {
  // Made as they are compared: listed first, they cost each unknown name every name in reach,
  // within the suggestions' budget or not.
  for (let at: Scope | null = scope; at !== null; at = at.upper) {
    for (const variable of at.variables) yield variable.name;
  }
  const { tacitGlobals, allowedGlobals } = identifierSets();
  yield* tacitGlobals;
  yield* allowedGlobals;
}

/**
 * Whether a namespace surely has a value at run time: it declares a variable, function, class
 * or (non-const) enum, or holds a namespace that does. Anything else may be erased.
 */
function namespaceHasValue(namespace: AstNode): boolean {
  const body = namespace.body as AstNode | null;
  if (!body || namespace.declare === true) return false;
  if (body.type === "TSModuleDeclaration") return namespaceHasValue(body);
  return (body.body as AstNode[]).some((statement) => {
    const node = statement.type === "ExportNamedDeclaration" ? (statement.declaration as AstNode | null) : statement;
    if (!node || node.declare === true) return false;
    switch (node.type) {
      case "VariableDeclaration":
      case "FunctionDeclaration":
      case "ClassDeclaration":
        return true;
      case "TSEnumDeclaration":
        return node.const !== true;
      case "TSModuleDeclaration":
        return namespaceHasValue(node);
      default:
        return false;
    }
  });
}

/**
 * A use of an enum member by its bare name, in the enum's own initializers, before the member's
 * declaration has ended (a later member, or its own initializer): the transpiler rewrites only
 * uses of members already declared, and leaves this one to mean the global of that name.
 */
function isEnumMemberNotYetDeclared(variable: { defs: ReadonlyArray<{ type: string; node: unknown }> }, identifier: AstNode): boolean {
  return variable.defs.some((definition) => definition.type === "TSEnumMemberName" && identifier.start < (definition.node as AstNode).end);
}

/**
 * A variable a namespace exports (`export const x` in a namespace lives as N.x), used inside an
 * enum: the transpiler rewrites such uses everywhere else in the namespace, but not in an
 * enum's initializers, where the bare name means the global of that name.
 */
function isNamespaceExportInEnum(
  variable: { defs: ReadonlyArray<{ type: string; parent: unknown }> },
  identifier: AstNode,
  namespaceExports: ReadonlySet<unknown>,
  enums: readonly AstNode[],
): boolean {
  if (!variable.defs.some((definition) => definition.type === "Variable" && namespaceExports.has(definition.parent))) return false;
  return enums.some((declaration) => declaration.start <= identifier.start && identifier.start < declaration.end);
}

/** A variable every definition of which the transpiler erases (see erasedUses). */
function isErasedAtRunTime(variable: { defs: ReadonlyArray<{ type: string; node: unknown }> }, boundImports: ReadonlySet<string>): boolean {
  if (variable.defs.length === 0) return false;
  return variable.defs.every((definition) => {
    const node = definition.node as AstNode;
    if (definition.type === "ImportBinding") {
      if (node.type === "TSImportEqualsDeclaration") return false; // kept, as `var a = N.b`
      return !boundImports.has((node.local as AstNode).name as string);
    }
    if (definition.type === "TSModuleName") return !namespaceHasValue(node);
    return false;
  });
}

/**
 * A diagnostic as one line of tacit's (and its hint): the message quotes what the script wrote
 * (a module name, an export name, the parser's view of a token), so it is escaped with
 * printable(): a carriage return in a module name brought the cursor back over
 * "script.ts:1:1 error …" to write "script.ts: ok" there, what `tacit check` says of a script
 * that passed, and a line feed began a line of the script's choosing. The hint too: its "Did
 * you mean" names a name of the script's (a zero-width joiner in it was shown raw).
 */
export function formatDiagnostic(fileName: string, d: Diagnostic): string {
  return `${fileName}:${d.line}:${d.column} error [${d.rule}] ${printable(d.message)}\n  hint: ${printable(d.hint)}`;
}
