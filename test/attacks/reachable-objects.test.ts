// What a script can reach from what it can name, through the real CLI. The validator refuses the
// names of the runtime and of the global object (Deno, process, globalThis, …), but a script can
// walk from the names it may use: own properties, getters and setters, prototypes, the `this`
// its callbacks are called with (a timer's is a Node-style Timeout object), and the receivers
// and functions Error.prepareStackTrace's call sites give of the library's own frames. None of
// that may lead to the runtime, to the global object, or to the library's channel and its
// input and output (a way to the host's pipe without going through the library's calls).

import { describe, expect, it } from "vitest";
import { identifierSets } from "../../runner/globals.js";
import { runScript, tempDirWithHome } from "../helpers.js";

/** A script that walks everything reachable from `roots` (global names) and prints what it found as JSON. */
function walkingScript(roots: readonly string[]): string {
  return `
const seen = new Set<unknown>();
const suspicious: string[] = [];
const paths = new Map<unknown, string>();
const queue: Array<[unknown, string]> = [];
const visit = (value: unknown, path: string): void => {
  if (value === null || (typeof value !== "object" && typeof value !== "function") || seen.has(value)) return;
  seen.add(value);
  paths.set(value, path);
  queue.push([value, path]);
};
/** The global object (it holds both), the runtime, or the library's channel and its io. */
const isSuspicious = (keys: ReadonlyArray<string | symbol>): boolean => {
  const has = (key: string): boolean => keys.includes(key);
  return (has("println") && has("setTimeout")) || has("Deno") || has("process") || has("Bun") || has("__tacit") ||
    (has("readSync") && has("writeSync")) || (has("request") && has("post") && has("readStart"));
};
const walk = (): void => {
  while (queue.length > 0) {
    const [value, path] = queue.shift()!;
    const object = value as object;
    let keys: Array<string | symbol> = [];
    try { keys = Reflect.ownKeys(object); } catch { continue; }
    if (isSuspicious(keys)) suspicious.push(path);
    for (const key of keys) {
      let descriptor: PropertyDescriptor | undefined;
      try { descriptor = Reflect.getOwnPropertyDescriptor(object, key); } catch { continue; }
      const name = typeof key === "symbol" ? "[" + String(key) + "]" : key;
      if (descriptor === undefined) continue;
      if ("value" in descriptor) visit(descriptor.value, path + "." + name);
      visit(descriptor.get, path + ".get " + name);
      visit(descriptor.set, path + ".set " + name);
    }
    try { visit(Reflect.getPrototypeOf(object), path + ".__proto__"); } catch { /* a revoked proxy */ }
  }
};
${roots.map((name) => `visit(${name}, ${JSON.stringify(name)});`).join("\n")}
/** What call sites give of each frame up to here: its receiver and function (undefined in strict code). */
const frames = (where: string): void => {
  const original = (Error as any).prepareStackTrace;
  (Error as any).prepareStackTrace = (_error: unknown, sites: any[]) => sites;
  const sites = (new Error() as any).stack as any[];
  (Error as any).prepareStackTrace = original;
  sites.forEach((site, index) => {
    visit(site.getThis(), where + " frame " + index + " this");
    visit(site.getFunction(), where + " frame " + index + " function");
  });
};
// The walk's control: an object that looks like the global object is found.
visit({ println: 1, setTimeout: 1 }, "control");
const secret = classify("s");
visit(secret, "classified");
frames("top level");
requestFileSystem(".", (fs) => {
  visit(fs, "fs");
  visit(fs.access("x"), "entry");
  frames("requestFileSystem's op");
});
const timer = setTimeout(function (this: unknown) {
  visit(this, "a timer's this");
  frames("a timer");
  queueMicrotask(function (this: unknown) {
    visit(this, "a microtask's this");
    walk();
    println(JSON.stringify({ reached: seen.size, fs: paths.has(requestFileSystem), timer: [...paths.values()].some((p) => p.startsWith("a timer's this")), suspicious }));
  });
}, 0);
void timer;
`;
}

describe("objects a script can reach from the names it may use", () => {
  it("lead to neither the runtime, the global object, nor the library's channel", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-reachable-");
    try {
      const roots = [...identifierSets().allowedGlobals].filter((name) => !["undefined", "NaN", "Infinity"].includes(name));
      const r = await runScript(walkingScript(roots), ["--no-check"], { cwd: dir, env });
      expect(r.stderr).toBe("");
      const found = JSON.parse(r.stdout) as { reached: number; fs: boolean; timer: boolean; suspicious: string[] };
      // The walk ran: it went through the library's objects and the Timeout a timer's callback gets.
      expect(found.fs && found.timer && found.reached > 500, r.stdout).toBe(true);
      expect(found.suspicious).toEqual(["control"]);
    } finally {
      cleanup();
    }
  });
});
