// Functions passed to map/flatMap. On a Classified value they run in the pure evaluator,
// which receives only the function's source, the plaintext and the values it captures. Two
// jobs here:
//   - every inline function passed to `.map`/`.flatMap` gets its captured variables listed,
//     so the rewriter can hand them over at run time (on an array, nothing changes);
//   - where the receiver is known to be Classified, what the evaluator cannot allow is
//     rejected now, naming the identifier: printing and other tacit API calls, captured
//     capabilities and functions, and assignment to outer variables.

import type { Reference, Scope, ScopeManager, Variable } from "@typescript-eslint/scope-manager";
import { identifierSets } from "./globals.js";

export interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

export interface PureFunctionSite {
  /** The inline function's span in the source. */
  start: number;
  end: number;
  /** Outer variables it uses, by name. */
  captures: string[];
}

export type Report = (offset: number, message: string, hint: string) => void;

/** Tacit globals the pure evaluator provides too. */
const PURE_EVALUATOR_GLOBALS: ReadonlySet<string> = new Set(["classify"]);

const HINT =
  "A map/flatMap function runs in a pure evaluator with the plaintext: it may use its argument, literals, captured plain data " +
  "and captured Classified values, and built-ins like Math, JSON and String. Do the printing or I/O outside, on the result.";

function isInlineFunction(node: unknown): node is AstNode {
  const type = (node as AstNode | undefined)?.type;
  return type === "ArrowFunctionExpression" || type === "FunctionExpression";
}

/** `x.map(fn)` / `x.flatMap(fn)` with an inline function: its function node, else null. */
export function pureCallFunction(call: AstNode): AstNode | null {
  const callee = call.callee as AstNode;
  if (callee.type !== "MemberExpression" || callee.computed) return null;
  const name = (callee.property as AstNode).name;
  if (name !== "map" && name !== "flatMap") return null;
  const first = (call.arguments as unknown[])[0];
  return isInlineFunction(first) ? first : null;
}

class ReferenceIndex {
  private readonly byIdentifier = new Map<unknown, Reference>();
  constructor(scopes: ScopeManager) {
    for (const scope of scopes.scopes) for (const ref of scope.references) this.byIdentifier.set(ref.identifier, ref);
  }
  variableOf(identifier: AstNode): Variable | null {
    return this.byIdentifier.get(identifier)?.resolved ?? null;
  }
}

function unwrapExpression(node: AstNode): AstNode {
  let current = node;
  while (["AwaitExpression", "TSAsExpression", "TSNonNullExpression", "ParenthesizedExpression", "TSSatisfiesExpression"].includes(current.type)) {
    current = (current.argument ?? current.expression) as AstNode;
  }
  return current;
}

function annotatedClassified(node: AstNode | undefined): boolean {
  const annotation = (node?.typeAnnotation as AstNode | undefined)?.typeAnnotation as AstNode | undefined;
  return annotation?.type === "TSTypeReference" && (annotation.typeName as AstNode).name === "Classified";
}

/** A conservative guess from the code alone: true only where the value is surely Classified. */
function isKnownClassified(expression: AstNode, index: ReferenceIndex, depth = 0): boolean {
  if (depth > 20) return false;
  const node = unwrapExpression(expression);
  if (node.type === "CallExpression") {
    const callee = node.callee as AstNode;
    if (callee.type === "Identifier") return callee.name === "classify" && index.variableOf(callee) === null;
    if (callee.type === "MemberExpression" && !callee.computed) {
      const method = (callee.property as AstNode).name;
      if (method === "readClassified") return true;
      if (method === "map" || method === "flatMap") return isKnownClassified(callee.object as AstNode, index, depth + 1);
    }
    return false;
  }
  if (node.type === "Identifier") {
    const variable = index.variableOf(node);
    const definition = variable?.defs[0];
    if (!definition) return false;
    const declared = definition.name as unknown as AstNode;
    if (annotatedClassified(declared)) return true;
    if (definition.type === "Variable" && variable!.defs.length === 1) {
      const declarator = definition.node as unknown as AstNode;
      const kind = (definition.parent as unknown as AstNode | null)?.kind;
      if (kind === "const" && declarator.init) return isKnownClassified(declarator.init as AstNode, index, depth + 1);
    }
  }
  return false;
}

/** The variable is a parameter of a block passed to requestFileSystem & co.: a capability. */
function isCapabilityParameter(variable: Variable, capabilityBlocks: ReadonlySet<unknown>): boolean {
  const definition = variable.defs[0];
  return definition?.type === "Parameter" && capabilityBlocks.has(definition.node);
}

function checkPurity(fnScope: Scope, capabilityBlocks: ReadonlySet<unknown>, report: Report): void {
  const seen = new Set<string>();
  for (const ref of fnScope.through) {
    const identifier = ref.identifier as unknown as AstNode;
    const name = ref.identifier.name;
    const variable = ref.resolved;
    if (ref.isWrite() && variable) {
      report(identifier.start, `the map function assigns to \`${name}\`, a variable outside it; the pure evaluator cannot change the script's variables`, "Return the new value from the function instead. " + HINT);
      continue;
    }
    if (!ref.isValueReference || seen.has(name)) continue;
    seen.add(name);
    if (!variable) {
      if (identifierSets().tacitGlobals.has(name) && !PURE_EVALUATOR_GLOBALS.has(name)) {
        report(identifier.start, `the map function uses \`${name}\`, which the pure evaluator does not have (no printing, input or capabilities there)`, HINT);
      }
      continue;
    }
    const kind = variable.defs[0]?.type;
    if (isCapabilityParameter(variable, capabilityBlocks)) {
      report(identifier.start, `the map function captures \`${name}\`, a capability; capabilities cannot enter the pure evaluator`, HINT);
    } else if (kind === "FunctionName" || kind === "ClassName" || kind === "ImportBinding") {
      report(
        identifier.start,
        `the map function captures \`${name}\`, ${kind === "ImportBinding" ? "an import" : kind === "ClassName" ? "a class" : "a function"}; only data can be sent to the pure evaluator`,
        "Define the helper inside the map function. " + HINT,
      );
    }
  }
}

/**
 * `calls`: every call expression in the script; `capabilityBlocks`: the functions passed to
 * request…() calls (their parameters are capabilities).
 */
export function analyzePureFunctions(
  calls: readonly AstNode[],
  capabilityBlocks: ReadonlySet<unknown>,
  scopes: ScopeManager,
  report: Report,
): PureFunctionSite[] {
  const index = new ReferenceIndex(scopes);
  const sites: PureFunctionSite[] = [];
  for (const call of calls) {
    const fn = pureCallFunction(call);
    const fnScope = fn ? scopes.acquire(fn as never) : null;
    if (!fn || !fnScope) continue;
    const captures = [
      ...new Set(fnScope.through.filter((ref) => ref.resolved !== null && ref.isValueReference).map((ref) => ref.identifier.name)),
    ];
    if (isKnownClassified((call.callee as AstNode).object as AstNode, index)) checkPurity(fnScope, capabilityBlocks, report);
    if (captures.length > 0) sites.push({ start: fn.start, end: fn.end, captures });
  }
  return sites;
}
