// How much work the scope analysis does for the names one declaration binds, before it does it.
// @typescript-eslint/scope-manager keeps, for each node that declares names (a declarator, a
// `const`/`let`/`var` statement, a function's parameters, an import), the list of its variables,
// and checks the whole list (`includes`) before adding each one: a node binding N names costs
// N²/2 comparisons. `const [a0, a1, …, a39999] = …` (270 KB) took the host's main thread 1.6 s
// for every check, and a REPL session re-checks its earlier snippets with each new one: a session
// with 110,000 such names took 4.8 s of the main thread for each later snippet, `1 + 1` included,
// holding every other call and session up. The validator counts in the walk it makes anyway and
// refuses a script past DECLARED_NAMES_WORK_LIMIT before the analysis starts.

import type { AstNode } from "./pure-functions.js";

/** Function-like nodes whose parameters the scope analysis declares on the node itself. */
const FUNCTION_LIKE: ReadonlySet<string> = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "TSDeclareFunction",
  "TSEmptyBodyFunctionExpression",
]);

const isNode = (value: unknown): value is AstNode => typeof value === "object" && value !== null && typeof (value as AstNode).type === "string";

/** The names binding patterns bind (`{ a, b: [c], ...d }`, a parameter property), counted without recursion. */
function bindingCount(patterns: readonly unknown[]): number {
  let count = 0;
  const pending: unknown[] = [...patterns];
  while (pending.length > 0) {
    const pattern = pending.pop();
    if (!isNode(pattern)) continue;
    switch (pattern.type) {
      case "Identifier":
        count++;
        break;
      case "ObjectPattern":
        for (const property of pattern.properties as unknown[]) {
          if (isNode(property)) pending.push(property.type === "RestElement" ? property.argument : property.value);
        }
        break;
      case "ArrayPattern":
        for (const element of pattern.elements as unknown[]) pending.push(element);
        break;
      case "AssignmentPattern":
        pending.push(pattern.left);
        break;
      case "RestElement":
        pending.push(pattern.argument);
        break;
      case "TSParameterProperty":
        pending.push(pattern.parameter);
        break;
    }
  }
  return count;
}

/** The comparisons the scope analysis makes adding `names` variables to one node's list. */
const listWork = (names: number): number => (names * (names - 1)) / 2;

/**
 * The scope analysis's list work for the names `node` declares (0 for a node that declares none),
 * and how many names its largest list holds.
 */
export function declaredNamesWork(node: AstNode): { work: number; names: number } {
  switch (node.type) {
    case "VariableDeclaration": {
      // Each declarator's names are listed on the declarator and, all of them, on the statement.
      let work = 0;
      let all = 0;
      for (const declarator of node.declarations as unknown[]) {
        if (!isNode(declarator)) continue;
        const names = bindingCount([declarator.id]);
        work += listWork(names);
        all += names;
      }
      return { work: work + listWork(all), names: all };
    }
    case "ImportDeclaration": {
      const names = (node.specifiers as unknown[]).length;
      return { work: listWork(names), names };
    }
    case "CatchClause": {
      const names = bindingCount([node.param]);
      return { work: listWork(names), names };
    }
    default: {
      if (!FUNCTION_LIKE.has(node.type)) return { work: 0, names: 0 };
      const names = bindingCount(node.params as unknown[]);
      return { work: listWork(names), names };
    }
  }
}
