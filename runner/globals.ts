// Which free identifiers a tacit script may use. The tacit part is read from
// library/interface.d.ts, the one source of truth for the agent-facing API, so the validator
// and the type checker can never disagree about what exists.

import { parseSync } from "./parser.js";
import { type InterfaceFile, interfaceFile, type InterfaceNames, readInterfaceFile } from "./interface-file.js";
import { onFirstUse } from "./on-first-use.js";
import type { RuleId } from "./validator.js";

/** The language's own globals (lib es2023): pure, no authority. */
const LANGUAGE_GLOBALS = [
  "undefined", "NaN", "Infinity",
  "Object", "Array", "Number", "Boolean", "String", "Symbol", "BigInt", "Math", "JSON", "Date", "RegExp",
  "Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError", "AggregateError",
  "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry", "Promise", "Proxy", "Reflect",
  "ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics", "Intl",
  "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
  "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
  "parseInt", "parseFloat", "isNaN", "isFinite",
  "encodeURI", "encodeURIComponent", "decodeURI", "decodeURIComponent",
];

interface DeclarationNode {
  type: string;
  declare?: boolean;
  id?: { type: string; name?: string; value?: string } | null;
  declarations?: Array<{ id: { name: string } }>;
  body?: { body?: DeclarationNode[] } | null;
  declaration?: DeclarationNode | null;
}

function declaredNames(statements: readonly DeclarationNode[]): string[] {
  const names: string[] = [];
  for (const statement of statements) {
    const node = statement.type === "ExportNamedDeclaration" && statement.declaration ? statement.declaration : statement;
    if (node.type === "FunctionDeclaration" || node.type === "TSDeclareFunction" || node.type === "ClassDeclaration") {
      if (node.id?.name) names.push(node.id.name);
    } else if (node.type === "VariableDeclaration") {
      for (const d of node.declarations ?? []) names.push(d.id.name);
    }
  }
  return [...new Set(names)];
}

function declaredTypeNames(statements: readonly DeclarationNode[]): string[] {
  return statements
    .map((statement) => (statement.type === "ExportNamedDeclaration" && statement.declaration ? statement.declaration : statement))
    .filter((node) => node.type === "TSTypeAliasDeclaration" || node.type === "TSInterfaceDeclaration")
    .map((node) => node.id?.name ?? "")
    .filter((name) => name !== "");
}

export type { InterfaceNames };

/** The names interface.d.ts declares, read from its syntax tree. */
export function namesFromInterface(source: string): InterfaceNames {
  const { program } = parseSync("interface.d.ts", source, { lang: "dts", astType: "ts" });
  const body = program.body as unknown as DeclarationNode[];
  const tacitModule = body.find((n) => n.type === "TSModuleDeclaration" && n.id?.value === "tacit");
  const moduleBody = tacitModule?.body?.body ?? [];
  return { globals: declaredNames(body), exports: declaredNames(moduleBody), typeExports: declaredTypeNames(moduleBody) };
}

/**
 * The names, from the file the build wrote (dist/interface-names.json) when it was made from
 * this very interface text, or else from parsing the interface. Parsing it is 10-20 ms of a
 * run's start-up; comparing the text is not.
 */
export function loadInterfaceNames(interfaceFile: string, prebuiltFile: string): InterfaceNames {
  return namesOf(readInterfaceFile(interfaceFile, prebuiltFile));
}

/** The names the build wrote for this text, or else parsed from it. */
function namesOf(read: InterfaceFile): InterfaceNames {
  return read.names ?? namesFromInterface(read.source);
}

export interface IdentifierSets {
  tacitExports: ReadonlySet<string>;
  tacitGlobals: ReadonlySet<string>;
  tacitTypeExports: ReadonlySet<string>;
  /** Every free identifier a script may use as a value. */
  allowedGlobals: ReadonlySet<string>;
}

/** What the validator checks identifiers against, read once on first use. */
export const identifierSets = onFirstUse((): IdentifierSets => {
  const names = namesOf(interfaceFile());
  return {
    tacitExports: new Set(names.exports),
    tacitGlobals: new Set(names.globals),
    tacitTypeExports: new Set(names.typeExports),
    allowedGlobals: new Set([...LANGUAGE_GLOBALS, ...names.globals]),
  };
});

export interface ForbiddenGlobal {
  rule: Extract<RuleId, "ambient-authority" | "dynamic-code">;
  reason: string;
  hint: string;
}

const API = "Run `tacit interface` to see what a script can do.";
const RUNTIME: Omit<ForbiddenGlobal, "rule"> = {
  reason: "a tacit script has no direct access to the runtime or the machine",
  hint: `Use requestFileSystem(root, fs => …) for files, requestExecPermission([...], proc => …) for commands, println() to print, readInput() for piped data. ${API}`,
};
const GLOBAL_OBJECT: Omit<ForbiddenGlobal, "rule"> = {
  reason: "the global object is not reachable from a tacit script",
  hint: `Use the globals directly (println, readInput, Math, JSON, …). ${API}`,
};
const NETWORK: Omit<ForbiddenGlobal, "rule"> = {
  reason: "a tacit script has no network access of its own",
  hint: `Use requestNetwork(["api.example.com"], net => net.httpGet(url)); the operator permits hosts with --network-permissions. ${API}`,
};
const STORAGE: Omit<ForbiddenGlobal, "rule"> = {
  reason: "a tacit script has no persistent storage",
  hint: `Keep data in variables; print results with println(). ${API}`,
};
const WORKERS: Omit<ForbiddenGlobal, "rule"> = {
  reason: "a tacit script cannot start workers or other threads",
  hint: "Use async functions and promises for concurrency within the script.",
};
export const HINT_IMPORT =
  'Only "tacit" can be imported, and its API is also available as globals: ' +
  'import { println, readInput } from "tacit". ' + API;
const MODULES: Omit<ForbiddenGlobal, "rule"> = {
  reason: "a tacit script cannot load modules",
  hint: HINT_IMPORT,
};
const DYNAMIC: Omit<ForbiddenGlobal, "rule"> = {
  reason: "code built from strings cannot be checked before it runs",
  hint: "Write the code directly in the script instead of evaluating strings.",
};

const FORBIDDEN: Record<string, ForbiddenGlobal> = {
  ...Object.fromEntries(["Deno", "process", "Bun", "navigator", "performance", "addEventListener", "removeEventListener", "dispatchEvent", "close", "alert", "confirm", "prompt", "reportError"].map((n) => [n, { rule: "ambient-authority", ...RUNTIME }])),
  ...Object.fromEntries(["globalThis", "self", "window", "global", "top", "parent", "frames"].map((n) => [n, { rule: "ambient-authority", ...GLOBAL_OBJECT }])),
  ...Object.fromEntries(["fetch", "WebSocket", "WebSocketStream", "XMLHttpRequest", "EventSource", "Request", "Response", "Headers"].map((n) => [n, { rule: "ambient-authority", ...NETWORK }])),
  ...Object.fromEntries(["localStorage", "sessionStorage", "caches", "indexedDB", "BroadcastChannel"].map((n) => [n, { rule: "ambient-authority", ...STORAGE }])),
  ...Object.fromEntries(["Worker", "SharedWorker", "importScripts", "MessageChannel"].map((n) => [n, { rule: "ambient-authority", ...WORKERS }])),
  ...Object.fromEntries(["require", "module", "exports", "__dirname", "__filename"].map((n) => [n, { rule: "ambient-authority", ...MODULES }])),
  ...Object.fromEntries(["eval", "Function", "WebAssembly"].map((n) => [n, { rule: "dynamic-code", ...DYNAMIC }])),
};

export function forbiddenGlobal(name: string): ForbiddenGlobal | undefined {
  return Object.hasOwn(FORBIDDEN, name) ? FORBIDDEN[name] : undefined;
}
