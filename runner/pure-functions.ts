// Functions passed to map/flatMap. On a Classified value they run in the pure evaluator,
// which receives only the function's source, the plaintext and the values it captures. Three
// jobs here:
//   - every inline function passed to `.map`/`.flatMap`, and every function the script
//     declares and passes there by name, gets its captured variables listed, so the rewriter
//     can hand them over at run time (on an array, nothing changes);
//   - where the receiver is known to be Classified, what the evaluator cannot allow is
//     rejected now, naming the identifier: printing and other tacit API calls, captured
//     capabilities and functions, assignment to outer variables, and a captured Classified
//     value read as text;
//   - a `<!--` in code is spaced, so the evaluator reads the source as the script does.

import type { Reference, Scope, ScopeManager, Variable } from "@typescript-eslint/scope-manager";
import { identifierSets } from "./globals.js";

export interface AstNode {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

/** Where the rewriter lists a map function's captured variables. */
export interface CaptureSite {
  /** The span of what the call passes (an inline function, or the name of a declared one) in the source. */
  start: number;
  end: number;
  /** Outer variables it uses, by name. */
  captures: string[];
}

/**
 * A `<!--` in code (`a <!--b`: `a < !(--b)` in a module), where the rewriter puts a space
 * between `<` and `!` (`start` = `end`: the `!`). The pure evaluator compiles a function's source
 * as a script, where `<!--` begins a comment (ECMAScript Annex B): `return v <!--n` and `+ 100`
 * on the next line became `return v + 100` there, a different value, kept without a word.
 */
export interface SpacingSite {
  start: number;
  end: number;
  space: true;
}

export type PureFunctionSite = CaptureSite | SpacingSite;

/** A spacing site if `node` is the `!--x` of a `<!--` in code, else null (see SpacingSite). */
export function htmlCommentLookalike(node: AstNode, code: string): SpacingSite | null {
  if (node.type !== "UnaryExpression" || node.operator !== "!") return null;
  const argument = node.argument as AstNode;
  if (argument.type !== "UpdateExpression" || argument.operator !== "--" || !argument.prefix || argument.start !== node.start + 1) return null;
  return code.slice(node.start - 1, node.start + 3) === "<!--" ? { start: node.start, end: node.start, space: true } : null;
}

export type Report = (offset: number, message: string, hint: string) => void;

/** Tacit globals the pure evaluator provides too. */
const PURE_EVALUATOR_GLOBALS: ReadonlySet<string> = new Set(["classify"]);

const HINT =
  "A map/flatMap function runs in a pure evaluator with the plaintext: it may use its argument, literals, captured plain data " +
  "and captured Classified values, and built-ins like Math, JSON and String. Do the printing or I/O outside, on the result.";

function isInlineFunction(node: unknown): boolean {
  const type = (node as AstNode | undefined)?.type;
  return type === "ArrowFunctionExpression" || type === "FunctionExpression";
}

/** Whether `call` is `x.map(…)` or `x.flatMap(…)`. */
function isPureCall(call: AstNode): boolean {
  const callee = call.callee as AstNode;
  if (callee.type !== "MemberExpression" || callee.computed) return false;
  const name = (callee.property as AstNode).name;
  return name === "map" || name === "flatMap";
}

/** A function a map/flatMap call passes, found where the script declares it: see declaredFunction. */
interface PassedFunction {
  /** The function's node. */
  fn: AstNode;
  /** What the call passes for it (the span the rewriter wraps with the capture list). */
  at: AstNode;
  /** For a function declaration, the variable of its own name, which its source binds (the evaluator runs it as a named function expression). */
  ownName: Variable | null;
  /** Passed by name: the scope of the call, where its capture list is read. Null for a function written in the call. */
  callScope: Scope | null;
}

/** How many names (`const g = f`) the checks follow to the function they hold. */
const ALIAS_DEPTH_LIMIT = 20;

/**
 * The function `argument` (or a branch of it) gives, where the script declares it: written
 * there (inline), `function helper(…) {…}`, `const helper = (…) => …` (or a `let` assigned once),
 * a method of a `const` object literal, or a name for one of these (`const g = helper`); else
 * null. `callScope`: the scope of the call, null for a function written in it. A function passed
 * by name reached the evaluator without the values it uses: `map(helper)` with helper using a
 * `const` declared beside it failed there every time (a ReferenceError, out of sight), and so did
 * `map(g)` with `const g = helper`. Now its captured variables are listed at the call as an inline
 * function's are, and checked the same way.
 */
function declaredFunction(argument: AstNode, index: ReferenceIndex, callScope: Scope | null, depth = 0): PassedFunction | null {
  const node = unwrapExpression(argument);
  if (isInlineFunction(node)) return { fn: node, at: argument, ownName: null, callScope };
  if (depth > ALIAS_DEPTH_LIMIT) return null;
  if (node.type === "Identifier") {
    const reference = index.referenceOf(node);
    const variable = reference?.resolved ?? null;
    const from = callScope ?? reference?.from ?? null;
    if (from === null) return null;
    const definition = variable?.defs.length === 1 ? variable.defs[0] : undefined;
    if (definition?.type === "FunctionName" && (definition.node as unknown as AstNode).type === "FunctionDeclaration") {
      return { fn: definition.node as unknown as AstNode, at: argument, ownName: variable, callScope: from };
    }
    const init = constInit(variable);
    if (init === null || (!isInlineFunction(init) && init.type !== "Identifier" && init.type !== "MemberExpression")) return null;
    const held = declaredFunction(init, index, from, depth + 1);
    return held && { ...held, at: argument };
  }
  if (node.type === "MemberExpression" && !node.computed && (node.object as AstNode).type === "Identifier") {
    const reference = index.referenceOf(node.object as AstNode);
    const from = callScope ?? reference?.from ?? null;
    const init = constInit(reference?.resolved ?? null);
    if (from === null || init?.type !== "ObjectExpression") return null;
    // One member of that name, a function: with two, the later one is what is called.
    const member = index.membersOf(init).get((node.property as AstNode).name as string);
    const value = member ? unwrapExpression(member.value as AstNode) : null;
    return value !== null && isInlineFunction(value) ? { fn: value, at: argument, ownName: null, callScope: from } : null;
  }
  return null;
}

/**
 * What a map/flatMap argument may pass: both branches of a condition (`cond ? f : g`, `f ?? g`),
 * however nested, else the argument itself. Each is checked as if passed alone: `x.map(cond ? f
 * : g)` is `cond ? x.map(f) : x.map(g)`. Refused whole before, though both branches were
 * functions whose values the checks could list.
 */
function branchesOf(argument: AstNode): AstNode[] {
  const branches: AstNode[] = [];
  const pending: AstNode[] = [argument];
  while (pending.length > 0) {
    const branch = pending.pop()!;
    const node = unwrapExpression(branch);
    if (node.type === "ConditionalExpression") pending.push(node.alternate as AstNode, node.consequent as AstNode);
    else if (node.type === "LogicalExpression") pending.push(node.right as AstNode, node.left as AstNode);
    else branches.push(branch);
  }
  return branches;
}

/**
 * The most captured names the calls that pass a declared function list, together. An inline
 * function's list is as long as its own text allows; a declared one's is written again at each
 * call that passes it, so hostile code (a function using 10,000 names, passed in 10,000 calls)
 * would make the rewritten script hundreds of megabytes. Past it, a call passes the function
 * with no list, as before such lists were made (what it uses fails in the evaluator, out of sight).
 */
const DECLARED_SITE_NAMES_LIMIT = 100_000;

/** The variable `name` means in `scope`, or null for a global. */
function visibleAs(scope: Scope | null, name: string): Variable | null {
  for (let at = scope; at !== null; at = at.upper) {
    const variable = at.set.get(name);
    if (variable) return variable;
  }
  return null;
}

/**
 * The initializer of a variable declared once, with `const`, or with `let`/`var` and never
 * assigned again (it holds that value wherever it is read), else null. A `let` function passed
 * to map reached the evaluator without the values it uses, as a function by name did before.
 */
function constInit(variable: Variable | null): AstNode | null {
  const declared = soleDeclarator(variable);
  if (declared === null) return null;
  const init = declared.declarator.init as AstNode | null | undefined;
  if (!init) return null;
  if (declared.kind !== "const" && assignedAgain(variable!)) return null;
  return unwrapExpression(init);
}

/**
 * The declarator (`name = init`) of a variable declared once, by `const`, `let` or `var` of its
 * name alone, and that declaration's kind; else null. `const { f } = helpers` holds a part of
 * what it is given, not that, and is no such declarator.
 */
function soleDeclarator(variable: Variable | null): { declarator: AstNode; kind: unknown } | null {
  const definition = variable?.defs.length === 1 ? variable.defs[0] : undefined;
  if (definition?.type !== "Variable") return null;
  const declarator = definition.node as unknown as AstNode;
  if ((declarator.id as AstNode).type !== "Identifier") return null;
  return { declarator, kind: (definition.parent as unknown as AstNode | null)?.kind };
}

/** Whether a variable is assigned after its declaration; asked once per variable (a `let` passed in 10,000 calls, read 10,000 times). */
const assignedAgainOf = new WeakMap<Variable, boolean>();
function assignedAgain(variable: Variable): boolean {
  let answer = assignedAgainOf.get(variable);
  if (answer === undefined) assignedAgainOf.set(variable, (answer = variable.references.some((ref) => ref.isWrite() && !ref.init)));
  return answer;
}

/**
 * Whether `call` calls, by name, a function of the script's that returns a function written in it
 * (a factory: `const make = (n) => (v) => v + n`). Other calls are left alone: a method returning
 * a method by reference may well be self-contained, and works.
 */
function makesFunction(call: AstNode, index: ReferenceIndex): boolean {
  const callee = unwrapExpression(call.callee as AstNode);
  if (callee.type !== "Identifier") return false;
  const variable = index.variableOf(callee);
  const definition = variable?.defs.length === 1 ? variable.defs[0] : undefined;
  const fn = definition?.type === "FunctionName" ? (definition.node as unknown as AstNode) : constInit(variable);
  if (fn === null || (fn.type !== "FunctionDeclaration" && !isInlineFunction(fn))) return false;
  return index.once(fn, returnsFunction);
}

/** Whether `fn` returns a function written in it (see makesFunction). */
function returnsFunction(fn: AstNode): boolean {
  const body = fn.body as AstNode;
  if (body.type !== "BlockStatement") return isInlineFunction(unwrapExpression(body));
  // A `return` of a function written there, anywhere in the body but inside functions of its own.
  const pending: unknown[] = [body];
  while (pending.length > 0) {
    const node = pending.pop() as AstNode;
    if (node.type === "ReturnStatement" && node.argument && isInlineFunction(unwrapExpression(node.argument as AstNode))) return true;
    for (const key in node) {
      const child = node[key];
      for (const item of Array.isArray(child) ? child : [child]) {
        const type = (item as AstNode | null)?.type;
        if (typeof type === "string" && type !== "FunctionDeclaration" && !isInlineFunction(item)) pending.push(item);
      }
    }
  }
  return false;
}

/**
 * Why the checks can tell that what `argument` gives map/flatMap is a function they cannot
 * analyse, or null: one made by a call (a factory's), chosen by a condition, taken from an array,
 * or held by a variable assigned again. Only its source reaches the pure evaluator, and the values
 * it captures (a factory's parameter, a name beside it) are not listed for it: the map failed
 * there every time it used one (a ReferenceError, out of the script's sight). Methods by
 * reference and parameters are left alone: they may well be self-contained, and work today.
 */
function unanalysableFunction(argument: AstNode, index: ReferenceIndex, depth = 0): string | null {
  const node = unwrapExpression(argument);
  if (node.type === "CallExpression") return makesFunction(node, index) ? "a function made by a call to a factory" : null;
  // Only behind a name (`const h = cond ? f : g`): one in the call has each branch checked (see branchesOf).
  if (node.type === "ConditionalExpression" || node.type === "LogicalExpression") return "a function chosen by a condition";
  if (node.type === "MemberExpression" && node.computed && (node.object as AstNode).type === "Identifier") {
    const init = constInit(index.variableOf(node.object as AstNode));
    return init?.type === "ArrayExpression" ? "an element of an array" : null;
  }
  if (node.type !== "Identifier" || depth > ALIAS_DEPTH_LIMIT) return null;
  const variable = index.variableOf(node);
  // A part of what a destructuring declaration is given (`const { f } = helpers`) is left alone, as a parameter is.
  const declared = soleDeclarator(variable);
  if (declared === null) return null;
  const init = declared.declarator.init as AstNode | null | undefined;
  const name = `\`${node.name as string}\``;
  // `let fn; fn = (v) => v + n;`: what it holds at the call is whatever was assigned last, which
  // the checks do not follow (never assigned, it is undefined, and the call says so at run time).
  if (!init) return assignedAgain(variable!) ? `${name}, a variable declared without a value and assigned later` : null;
  if (constInit(variable) === null) return `${name}, a variable assigned more than once`;
  const made = unanalysableFunction(init, index, depth + 1);
  if (made === null) return null;
  // A name for another (`const g = f`) is followed as far as the function it holds.
  return unwrapExpression(init).type === "Identifier" ? `${name}, which holds ${made}` : `${name}, ${made}`;
}

/** Nodes whose `this`, `super` and `new.target` are their own: an arrow inside one reads those, not the map function's surroundings. */
const OWN_THIS = new Set(["FunctionExpression", "FunctionDeclaration", "ClassExpression", "ClassDeclaration"]);

/** A `this`, `super` or `new.target` an arrow function reads from the code around it. */
interface OuterThis {
  node: AstNode;
  name: string;
}

/**
 * The first `this`, `super` or `new.target` an arrow function reads from the code around it, or
 * null. The pure evaluator runs the function's source alone, where none of them is what the
 * script's was: `this.prefix + v` in an arrow written in a method failed every time there
 * (`this` undefined, a TypeError out of the script's sight), and `super.x` did not compile.
 * `answers` keeps what each arrow reads, so that nested ones (maps in maps) are walked once, not
 * once for each map around them.
 */
function outerThis(fn: AstNode, answers: Map<AstNode, OuterThis | null>): OuterThis | null {
  if (fn.type !== "ArrowFunctionExpression") return null;
  const known = answers.get(fn);
  if (known !== undefined) return known;
  // Each arrow's own reads and the arrows directly inside it, parents before children.
  const order: Array<{ arrow: AstNode; own: OuterThis | null; inner: AstNode[] }> = [];
  const arrows: AstNode[] = [fn];
  while (arrows.length > 0) {
    const entry = { arrow: arrows.pop()!, own: null as OuterThis | null, inner: [] as AstNode[] };
    order.push(entry);
    const pending: unknown[] = [entry.arrow.body];
    while (pending.length > 0) {
      const node = pending.pop() as AstNode;
      if (node.type === "ArrowFunctionExpression") {
        entry.inner.push(node);
        if (!answers.has(node)) arrows.push(node);
        continue;
      }
      if (node.type === "ThisExpression") entry.own ??= { node, name: "this" };
      else if (node.type === "Super") entry.own ??= { node, name: "super" };
      else if (node.type === "MetaProperty" && (node.meta as AstNode).name === "new") entry.own ??= { node, name: "new.target" };
      for (const key in node) {
        const child = node[key];
        for (const item of Array.isArray(child) ? child : [child]) {
          const type = (item as AstNode | null)?.type;
          if (typeof type === "string" && !OWN_THIS.has(type)) pending.push(item);
        }
      }
    }
  }
  for (let at = order.length - 1; at >= 0; at--) {
    const { arrow, own, inner } = order[at]!;
    answers.set(arrow, own ?? inner.map((nested) => answers.get(nested) ?? null).find((found) => found !== null) ?? null);
  }
  return answers.get(fn) ?? null;
}

/** The text of a call, cut for a message. */
function callText(call: AstNode, code: string): string {
  const text = code.slice(call.start, call.end).replace(/\s+/g, " ");
  return text.length > 60 ? text.slice(0, 59) + "…" : text;
}

function propertyName(key: AstNode): string | null {
  if (key.type === "Identifier") return key.name as string;
  return key.type === "Literal" && typeof key.value === "string" ? key.value : null;
}

class ReferenceIndex {
  private readonly byIdentifier = new Map<unknown, Reference>();
  constructor(scopes: ScopeManager) {
    for (const scope of scopes.scopes) for (const ref of scope.references) this.byIdentifier.set(ref.identifier, ref);
  }
  variableOf(identifier: AstNode): Variable | null {
    return this.byIdentifier.get(identifier)?.resolved ?? null;
  }
  referenceOf(identifier: AstNode): Reference | null {
    return this.byIdentifier.get(identifier) ?? null;
  }
  private readonly answers = new Map<AstNode, boolean>();
  /**
   * `question(node)`, answered once per node: a factory's body is walked once, not once per call
   * that passes its function (10,000 calls of one large factory made the checks quadratic).
   */
  once(node: AstNode, question: (node: AstNode) => boolean): boolean {
    let answer = this.answers.get(node);
    if (answer === undefined) this.answers.set(node, (answer = question(node)));
    return answer;
  }
  private readonly members = new Map<AstNode, Map<string, AstNode | null>>();
  /**
   * An object literal's members by name (null for a name given twice, or one a computed key or
   * spread may give), made once per literal: looked up at each call, a literal of 100,000
   * members passed in 10,000 calls made the checks quadratic.
   */
  membersOf(literal: AstNode): ReadonlyMap<string, AstNode | null> {
    let byName = this.members.get(literal);
    if (byName === undefined) {
      byName = new Map();
      let unsure = false;
      for (const property of literal.properties as AstNode[]) {
        if (property.type !== "Property" || property.computed) {
          unsure = true;
          continue;
        }
        const name = propertyName(property.key as AstNode);
        if (name !== null) byName.set(name, byName.has(name) || property.kind !== "init" ? null : property);
      }
      // A spread or computed key may replace any member: none is sure.
      if (unsure) byName.clear();
      this.members.set(literal, byName);
    }
    return byName;
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

/** What a variable holds that cannot be sent to the pure evaluator (see heldUnsendable). */
interface Unsendable {
  /** "the capability `fs`", "`println`", "a function", "a class". */
  what: string;
  kind: "capability" | "tacit" | "function";
}

/**
 * What the variable, declared once (a `const`, or a `let` never assigned again), holds that the
 * pure evaluator cannot receive, where the code says: a capability (`const files = fs`, `const {
 * access } = fs`), a tacit global (`const say = println`), a function or class written there, a
 * name for one of these, or an object or array literal holding one. A map function capturing it
 * passed the checks, though the same function using `fs`, `println` or a helper declared with
 * `function` is refused, and failed at the call (a TypeError), after every effect the script had
 * made before it. Else null: a value the code does not show (a call's, a parameter's) is left
 * to the call. Answered once per variable (`answers`), and no deeper than ALIAS_DEPTH_LIMIT names.
 */
function heldUnsendable(variable: Variable, capabilityBlocks: ReadonlySet<unknown>, index: ReferenceIndex, answers: Map<Variable, Unsendable | null>, depth = 0): Unsendable | null {
  const known = answers.get(variable);
  if (known !== undefined) return known;
  if (depth > ALIAS_DEPTH_LIMIT) return null;
  // Unknown while it is worked out: a name met again on the way (a cycle) holds nothing found.
  answers.set(variable, null);
  let held: Unsendable | null = null;
  const declared = soleDeclarator(variable);
  if (declared === null) {
    // `const { access } = fs`: a part of a capability (its methods are functions of the host's stub).
    const definition = variable.defs.length === 1 ? variable.defs[0] : undefined;
    const declarator = definition?.type === "Variable" ? (definition.node as unknown as AstNode) : null;
    const init = declarator?.init ? unwrapExpression(declarator.init as AstNode) : null;
    const source = init?.type === "Identifier" ? index.variableOf(init) : null;
    if (source !== null && isCapabilityParameter(source, capabilityBlocks) && !assignedAgain(variable)) {
      held = { what: `a part of the capability \`${init!.name as string}\``, kind: "capability" };
    }
  } else {
    const init = constInit(variable);
    if (init !== null) held = unsendableIn(init, capabilityBlocks, index, answers, depth);
  }
  answers.set(variable, held);
  return held;
}

/** What an initializer gives that the pure evaluator cannot receive, or null (see heldUnsendable); literals walked without recursion. */
function unsendableIn(init: AstNode, capabilityBlocks: ReadonlySet<unknown>, index: ReferenceIndex, answers: Map<Variable, Unsendable | null>, depth: number): Unsendable | null {
  const pending: AstNode[] = [init];
  while (pending.length > 0) {
    const node = unwrapExpression(pending.pop()!);
    if (isInlineFunction(node)) return { what: "a function", kind: "function" };
    if (node.type === "ClassExpression") return { what: "a class", kind: "function" };
    if (node.type === "ObjectExpression") {
      for (const property of node.properties as AstNode[]) {
        // A getter gives its value, which may well be data; a spread, what it spreads.
        if (property.type === "SpreadElement") pending.push(property.argument as AstNode);
        else if (property.type === "Property" && property.kind === "init") pending.push(property.value as AstNode);
      }
      continue;
    }
    if (node.type === "ArrayExpression") {
      for (const element of node.elements as Array<AstNode | null>) {
        if (element !== null) pending.push(element.type === "SpreadElement" ? (element.argument as AstNode) : element);
      }
      continue;
    }
    if (node.type !== "Identifier") continue;
    const name = node.name as string;
    const variable = index.variableOf(node);
    if (variable === null) {
      if (identifierSets().tacitGlobals.has(name) && !PURE_EVALUATOR_GLOBALS.has(name)) return { what: `\`${name}\``, kind: "tacit" };
      continue;
    }
    if (isCapabilityParameter(variable, capabilityBlocks)) return { what: `the capability \`${name}\``, kind: "capability" };
    const kind = variable.defs[0]?.type;
    if (kind === "FunctionName") return { what: `the function \`${name}\``, kind: "function" };
    if (kind === "ClassName") return { what: `the class \`${name}\``, kind: "function" };
    const held = heldUnsendable(variable, capabilityBlocks, index, answers, depth + 1);
    if (held !== null) return held;
  }
  return null;
}

/** The problem with a captured variable that holds what the pure evaluator cannot receive (see heldUnsendable). */
function heldProblem(name: string, held: Unsendable): { message: string; hint: string } {
  if (held.kind === "capability") {
    return { message: `the map function captures \`${name}\`, which holds ${held.what}; capabilities cannot enter the pure evaluator`, hint: HINT };
  }
  if (held.kind === "tacit") {
    return { message: `the map function captures \`${name}\`, which holds ${held.what}; the pure evaluator does not have it (no printing, input or capabilities there)`, hint: HINT };
  }
  return {
    message: `the map function captures \`${name}\`, which holds ${held.what}; only data can be sent to the pure evaluator`,
    hint: "Define the helper inside the map function. " + HINT,
  };
}

/** What a classified map function may not use, by the variable (or global name) it uses: a problem to report, or null. */
function impurity(
  name: string,
  variable: Variable | null,
  capabilityBlocks: ReadonlySet<unknown>,
  held: (variable: Variable) => Unsendable | null,
): { message: string; hint: string } | null {
  if (!variable) {
    if (identifierSets().tacitGlobals.has(name) && !PURE_EVALUATOR_GLOBALS.has(name)) {
      return { message: `the map function uses \`${name}\`, which the pure evaluator does not have (no printing, input or capabilities there)`, hint: HINT };
    }
    return null;
  }
  const kind = variable.defs[0]?.type;
  // A function's own `arguments` (declared by nothing): in the evaluator the name is a parameter of
  // what makes the function, which strict mode refuses, and the map failed every time, out of sight.
  if (name === "arguments" && variable.defs.length === 0) {
    return {
      message: "the map function uses `arguments` of the function around it, which the pure evaluator cannot hand over (the map would fail)",
      hint: "Copy the values it needs into consts before the call: const suffix = arguments[1]; secret.map((value) => value + suffix). " + HINT,
    };
  }
  if (isCapabilityParameter(variable, capabilityBlocks)) {
    return { message: `the map function captures \`${name}\`, a capability; capabilities cannot enter the pure evaluator`, hint: HINT };
  }
  if (kind === "FunctionName" || kind === "ClassName" || kind === "ImportBinding") {
    return {
      message: `the map function captures \`${name}\`, ${kind === "ImportBinding" ? "an import" : kind === "ClassName" ? "a class" : "a function"}; only data can be sent to the pure evaluator`,
      hint: "Define the helper inside the map function. " + HINT,
    };
  }
  const unsendable = kind === "Variable" ? held(variable) : null;
  return unsendable === null ? null : heldProblem(name, unsendable);
}

/**
 * The operands `node` reads as text: both sides of a `+`, a template literal's expressions, and
 * the argument of String(…) or JSON.stringify(…).
 */
export function readAsText(node: AstNode): AstNode[] {
  if (node.type === "BinaryExpression" && node.operator === "+") return [node.left as AstNode, node.right as AstNode];
  if (node.type === "TemplateLiteral") return node.expressions as AstNode[];
  if (node.type !== "CallExpression") return [];
  const callee = node.callee as AstNode;
  const named =
    (callee.type === "Identifier" && callee.name === "String") ||
    (callee.type === "MemberExpression" && !callee.computed && (callee.object as AstNode).type === "Identifier" &&
      (callee.object as AstNode).name === "JSON" && (callee.property as AstNode).name === "stringify");
  const first = (node.arguments as AstNode[])[0];
  return named && first !== undefined ? [first] : [];
}

/**
 * A Classified value captured by a classified map function and read as text there (see
 * readAsText): it has no text in the evaluator (the map fails), so the script is told now.
 */
function classifiedAsText(ref: Reference, index: ReferenceIndex, textOperands: ReadonlySet<unknown>): { message: string; hint: string } | null {
  const identifier = ref.identifier as unknown as AstNode;
  if (!textOperands.has(identifier) || !isKnownClassified(identifier, index)) return null;
  const name = identifier.name as string;
  return {
    message: `the map function reads \`${name}\`, a Classified value, as text; inside a map function a Classified value has no text (the map would fail)`,
    hint: `Read its plaintext with map or flatMap on it: value.flatMap((v) => ${name}.map((inner) => v + inner)).`,
  };
}

/**
 * For each scope, the innermost of `marked` that holds it (itself included), or null. Scopes
 * come parents first (ScopeManager.scopes is in creation order).
 */
function innermostMarked(scopes: ScopeManager, marked: ReadonlySet<Scope>): Map<Scope, Scope | null> {
  const innermost = new Map<Scope, Scope | null>();
  for (const scope of scopes.scopes) innermost.set(scope, marked.has(scope) ? scope : scope.upper ? (innermost.get(scope.upper) ?? null) : null);
  return innermost;
}

/**
 * `calls`: every call expression in the script; `capabilityBlocks`: the functions passed to
 * request…() calls (their parameters are capabilities).
 *
 * Linear in the script: a reference is in a map function's \`through\` (a use of something
 * outside it) for every map function between the reference and where its variable is declared,
 * and nested map functions each holding the whole of the next one's \`through\` made walking
 * each function's list quadratic (hostile code nested maps some hundreds deep around
 * thousands of names). Here every reference is taken once, in source order, and climbs only
 * the map functions around it, stopping at the first that has its name already: that one's
 * outer map functions, up to the declaration, had it from the same climb before. The work is
 * then the number of references plus the number of names captured (the rewriter's output).
 */
export function analyzePureFunctions(
  code: string,
  calls: readonly AstNode[],
  capabilityBlocks: ReadonlySet<unknown>,
  scopes: ScopeManager,
  textOperands: ReadonlySet<unknown>,
  report: Report,
): CaptureSite[] {
  const index = new ReferenceIndex(scopes);
  /** Where the capture list goes (an inline function, or the argument naming a declared one), and the function's scope. */
  const sites: { at: AstNode; scope: Scope; declared: { callScope: Scope; classified: boolean } | null }[] = [];
  const mapScopes = new Set<Scope>();
  const classifiedScopes = new Set<Scope>();
  /** A declared function's own name, which its source binds: neither a capture nor a use of a function. */
  const ownNames = new Map<Scope, Variable>();
  /** Classified map functions already looked at for an outer `this`, and what each arrow reads of it (see outerThis). */
  const outerChecked = new Set<AstNode>();
  const outerReads = new Map<AstNode, OuterThis | null>();
  for (const call of calls) {
    const argument = (call.arguments as AstNode[])[0];
    if (argument === undefined || !isPureCall(call)) continue;
    const classified = isKnownClassified((call.callee as AstNode).object as AstNode, index);
    const branches = branchesOf(argument);
    for (const branch of branches) {
      // A branch written in the call is read where it is; a function by name, at the call.
      const found = declaredFunction(branch, index, null);
      const scope = found && scopes.acquire(found.fn as never);
      if (!found || !scope) {
        const unanalysable = classified ? unanalysableFunction(branch, index) : null;
        if (unanalysable !== null) {
          report(
            branch.start,
            `\`${callText(call, code)}\` passes${branches.length > 1 ? ", as one branch of its condition," : ""} ${unanalysable}: the checks cannot see ` +
              "which values it uses, and the pure evaluator receives its source alone, so a value it captures (a factory's parameter, " +
              "a name beside it) would be missing there and the map would fail",
            "Write the function in the call, as an inline arrow that uses what it needs by name: " +
              "const n = 5; secret.map((value) => value + n), or for a choice, cond ? f : g with f and g functions declared with const or function.",
          );
        }
        continue;
      }
      // Reported once, however many calls pass it.
      const outer = classified && !outerChecked.has(found.fn) ? outerThis(found.fn, outerReads) : null;
      if (classified) outerChecked.add(found.fn);
      if (outer) {
        report(
          outer.node.start,
          `the map function uses \`${outer.name}\` of the code around it; the pure evaluator runs the function alone, where \`${outer.name}\` is not the script's (the map would fail)`,
          `Copy what it needs into a const before the call: const prefix = this.prefix; secret.map((value) => prefix + value). ${HINT}`,
        );
      }
      sites.push({ at: found.at, scope, declared: found.callScope ? { callScope: found.callScope, classified } : null });
      mapScopes.add(scope);
      if (found.ownName) ownNames.set(scope, found.ownName);
      if (classified) classifiedScopes.add(scope);
    }
  }
  if (sites.length === 0) return [];

  const depth = new Map<Scope, number>();
  for (const scope of scopes.scopes) depth.set(scope, scope.upper ? depth.get(scope.upper)! + 1 : 0);
  const innermostMap = innermostMarked(scopes, mapScopes);
  const innermostClassified = innermostMarked(scopes, classifiedScopes);
  const outerOf = (scope: Scope, innermost: Map<Scope, Scope | null>) => (scope.upper ? (innermost.get(scope.upper) ?? null) : null);
  // `ref` passes through `fn` (a scope around it) when its variable is declared outside `fn`:
  // both are scopes around the reference, so the one nearer the top is outside the other.
  const passesThrough = (variable: Variable | null, fn: Scope) => variable === null || depth.get(variable.scope)! < depth.get(fn)!;
  const captures = new Map<Scope, Set<string>>();
  const checked = new Map<Scope, Set<string>>();
  const namesIn = (map: Map<Scope, Set<string>>, scope: Scope) => map.get(scope) ?? map.set(scope, new Set()).get(scope)!;

  const heldAnswers = new Map<Variable, Unsendable | null>();
  const held = (variable: Variable): Unsendable | null => heldUnsendable(variable, capabilityBlocks, index, heldAnswers);
  const references = scopes.scopes.flatMap((scope) => scope.references);
  references.sort((a, b) => (a.identifier as unknown as AstNode).start - (b.identifier as unknown as AstNode).start);
  for (const ref of references) {
    if (!ref.isValueReference) continue;
    const name = ref.identifier.name;
    const variable = ref.resolved;
    const identifier = ref.identifier as unknown as AstNode;
    // Captured, by every map function it passes through.
    if (variable) {
      for (let fn = innermostMap.get(ref.from) ?? null; fn !== null && passesThrough(variable, fn); fn = outerOf(fn, innermostMap)) {
        if (ownNames.size > 0 && ownNames.get(fn) === variable) continue;
        const names = namesIn(captures, fn);
        if (names.has(name)) break;
        names.add(name);
      }
    }
    if (ref.isWrite() && variable) {
      // Reported once, for the innermost classified map function it leaves: any outer one is left as well.
      const fn = innermostClassified.get(ref.from) ?? null;
      if (fn !== null && passesThrough(variable, fn)) {
        report(identifier.start, `the map function assigns to \`${name}\`, a variable outside it; the pure evaluator cannot change the script's variables`, "Return the new value from the function instead. " + HINT);
      }
      continue;
    }
    // What a classified map function may not use: at its first use in each such function (a use
    // inside several nested ones reported once, not once for each).
    // Worked out at the first classified map function it is checked for (most references are in none).
    let problem: { message: string; hint: string } | null | undefined;
    let reported = false;
    for (let fn = innermostClassified.get(ref.from) ?? null; fn !== null && passesThrough(variable, fn); fn = outerOf(fn, innermostClassified)) {
      if (variable !== null && ownNames.size > 0 && ownNames.get(fn) === variable) continue;
      const names = namesIn(checked, fn);
      if (names.has(name)) break;
      names.add(name);
      problem ??= impurity(name, variable, capabilityBlocks, held) ?? classifiedAsText(ref, index, textOperands);
      if (problem && !reported) report(identifier.start, problem.message, problem.hint);
      reported = true;
    }
  }

  let declaredNamesLeft = DECLARED_SITE_NAMES_LIMIT;
  return sites.flatMap(({ at, scope, declared }) => {
    const names = captures.get(scope);
    if (!names || names.size === 0) return [];
    if (declared !== null && (declaredNamesLeft -= names.size) < 0) return [];
    // A declared function's list is read where map is called, not where the function is: a name
    // declared again around the call would hand the evaluator that other variable's value.
    const shadowed = declared === null ? undefined : [...names].find((name) => visibleAs(declared.callScope, name) !== visibleAs(scope.upper, name));
    if (shadowed !== undefined) {
      if (declared!.classified) {
        report(
          at.start,
          `the map function uses \`${shadowed}\`, declared where the function is, but another \`${shadowed}\` is declared around this call, ` +
            "and the values a function passed by name uses are read at the call",
          `Rename one of the two, or write the function in the map call. ${HINT}`,
        );
      }
      return [];
    }
    return [{ start: at.start, end: at.end, captures: [...names] }];
  });
}
