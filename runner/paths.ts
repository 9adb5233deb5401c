// Where the runner finds its own parts and the two native tools it drives.

import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isWithin, resolveRealOrSelf } from "./fs/containment.js";
import { npxTacitPrograms } from "./launch-files.js";

const require = createRequire(import.meta.url);

function findPackageRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`tacit: cannot find package.json above ${start}`);
    dir = parent;
  }
  return dir;
}

/** The installed package (works from source under vitest and from dist/). */
export const packageRoot = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The sandbox entry point, bundled into one file (rolldown.config.mjs). Deno runs this file, never the agent's code. */
export const bootstrapPath = path.join(packageRoot, "dist", "sandbox", "bootstrap.js");

/** The pure evaluator's entry point (map/flatMap on classified plaintext), bundled into one file like the sandbox's. */
export const pureEvaluatorPath = path.join(packageRoot, "dist", "pure", "evaluator.js");

/** The agent-facing API, also what `tacit interface` prints. */
export const interfacePath = path.join(packageRoot, "library", "interface.d.ts");

/** The names interface.d.ts declares, written by the build (build/interface-names.mjs). */
export const interfaceNamesPath = path.join(packageRoot, "dist", "interface-names.json");

let denoPath: string | undefined;
/** The Deno binary shipped by the `deno` npm package (spawned directly, not via its Node wrapper). */
export function denoExecutable(): string {
  if (denoPath) return denoPath;
  // The package's install step leaves the binary beside its package.json, where its own
  // runInstall() looks first; loading that module (and node:os with it) costs about 1 ms of
  // the time before the sandbox is spawned, so it is asked only when the binary is elsewhere.
  const installed = path.join(path.dirname(packageJsonOf("deno")), process.platform === "win32" ? "deno.exe" : "deno");
  denoPath = existsSync(installed) ? installed : (require("deno/install_api.cjs") as { runInstall(): string }).runInstall();
  return denoPath;
}

/**
 * The package.json of package `name` as `from` would find it: in the nearest node_modules on
 * its lookup path that has it, symlinks resolved, as require does. Asking require for
 * "name/package.json" instead goes through the package's exports map, and matching that map
 * cost 1.5-3.5 ms of start-up per package here. require.resolve decides if the walk finds nothing.
 */
export function packageJsonOf(name: string, from: NodeJS.Require = require): string {
  for (const dir of from.resolve.paths(name) ?? []) {
    const candidate = path.join(dir, name, "package.json");
    if (existsSync(candidate)) return realpathSync(candidate);
  }
  return from.resolve(`${name}/package.json`);
}

let typescriptPackage: string | undefined;
/** typescript's package.json: both the checker's version and its binary are found from it. */
function typescriptPackageJson(): string {
  typescriptPackage ??= packageJsonOf("typescript");
  return typescriptPackage;
}

let typescriptPackageVersion: string | undefined;
/** The version of the pinned typescript package, whose checker decides what is a type error. */
export function typescriptVersion(): string {
  typescriptPackageVersion ??= (require(typescriptPackageJson()) as { version: string }).version;
  return typescriptPackageVersion;
}

let tscPath: string | undefined;
/** The native TypeScript 7 checker binary shipped by the `typescript` package. */
export function tscExecutable(): string {
  if (tscPath) return tscPath;
  const pkg = `@typescript/typescript-${process.platform}-${process.arch}`;
  // Resolved from typescript's own location, where npm puts its platform package.
  const fromTypescript = createRequire(typescriptPackageJson());
  const resolved = path.join(path.dirname(packageJsonOf(pkg, fromTypescript)), "lib", "tsc");
  if (!existsSync(resolved)) throw new Error(`tacit: TypeScript's native checker is missing at ${resolved}; reinstall with npm ci`);
  tscPath = resolved;
  return tscPath;
}

let codeLocations: readonly string[] | undefined;

/**
 * Every place tacit's own code is, or would be loaded from: this package, and each package it
 * depends on (transitively, optional and peer ones too), both where it really is and each place
 * Node's resolution would look for it first (a directory or file created there would shadow it),
 * and the Node binary that runs tacit. tacit runs
 * this code with your full authority, and Deno and the type checker are among it, so a script
 * must not change it (see fs/protected-paths.ts). Found once per process.
 */
export function tacitCodeLocations(): readonly string[] {
  if (codeLocations) return codeLocations;
  const found = packageCodeLocations(packageRoot);
  // And the Node that runs tacit: a script that replaced it (a Node installed under your home,
  // with the home an allowed root) would run as tacit the next time tacit starts.
  for (const node of [path.resolve(process.execPath), resolveRealOrSelf(process.execPath)]) found.add(node);
  codeLocations = outermost(found);
  return codeLocations;
}

/**
 * A package and each package it depends on (transitively, optional and peer ones too), both where
 * each really is and each place Node's resolution would look for it first.
 */
function packageCodeLocations(root: string): Set<string> {
  const found = new Set<string>([root]);
  const seen = new Set<string>();
  const visit = (packageJson: string): void => {
    let manifest: { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
    try {
      manifest = JSON.parse(readFileSync(packageJson, "utf8")) as typeof manifest;
    } catch {
      return;
    }
    const from = createRequire(packageJson);
    const names = [manifest.dependencies, manifest.optionalDependencies, manifest.peerDependencies].flatMap((listed) => Object.keys(listed ?? {}));
    for (const name of new Set(names)) {
      // A package found nowhere is an optional one for another platform, never loaded here.
      const looked: string[] = [];
      for (const dir of from.resolve.paths(name) ?? []) {
        const candidate = path.join(dir, name);
        // require() also takes a file there (name.js, name.json, name.node) before a directory.
        looked.push(candidate, `${candidate}.js`, `${candidate}.json`, `${candidate}.node`);
        if (!existsSync(path.join(candidate, "package.json"))) continue;
        for (const place of looked) found.add(place);
        const real = realpathSync(candidate);
        found.add(real);
        if (!seen.has(real)) {
          seen.add(real);
          visit(path.join(real, "package.json"));
        }
        break;
      }
    }
  };
  seen.add(root);
  visit(path.join(root, "package.json"));
  return found;
}

/** The places, less those inside another (checked on every change a script asks for: most are). */
function outermost(found: Iterable<string>): string[] {
  const places = [...found].sort();
  return places.filter((place, index) => !places.slice(0, index).some((outer) => isWithin(place, outer)));
}

let npxCodeLocations: readonly string[] | undefined;

/**
 * The code of the tacit `npx tacit` runs in tacit's start directory when that is not the tacit
 * running (a project with its own copy in node_modules while a global tacit runs): the package its
 * node_modules/.bin/tacit leads into, in that directory or the nearest above that has one (where
 * npx looks first), and node_modules/tacit beside it, each with the packages it loads from there.
 * Shown through the real CLI: a script of the global tacit, with requestFileSystem(".") alone,
 * rewrote node_modules/tacit/dist/main.js of such a project, and the next `npx tacit` there ran it
 * with your full authority. Found once per process, like tacitCodeLocations; a package outside any
 * node_modules (a project's own bin named tacit) is launch-files.ts's concern, not code to keep.
 */
export function npxTacitCodeLocations(cwd: string = process.cwd()): readonly string[] {
  if (npxCodeLocations) return npxCodeLocations;
  const found = new Set<string>();
  for (const bin of npxTacitPrograms(cwd)) {
    const nodeModules = path.dirname(path.dirname(bin));
    const roots = [path.join(nodeModules, "tacit")];
    try {
      const program = installedPackageOf(realpathSync(bin));
      if (program !== null) roots.push(program);
    } catch {
      continue; // No program there: npx looks further up.
    }
    const running = resolveRealOrSelf(packageRoot);
    for (const root of new Set(roots)) {
      const real = resolveRealOrSelf(root);
      if (!existsSync(path.join(real, "package.json")) || isWithin(running, real) || isWithin(real, running)) continue;
      for (const place of [root, real, ...packageCodeLocations(real)]) found.add(place);
    }
    break; // npx runs the first it finds.
  }
  npxCodeLocations = outermost(found);
  return npxCodeLocations;
}

/** The installed package (one inside a node_modules) that holds `file`, or null. */
function installedPackageOf(file: string): string | null {
  for (let dir = path.dirname(file); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const parent = path.dirname(dir);
    const installed = path.basename(parent) === "node_modules" || (path.basename(parent).startsWith("@") && path.basename(path.dirname(parent)) === "node_modules");
    if (installed && existsSync(path.join(dir, "package.json"))) return dir;
    if (path.basename(dir) === "node_modules") return null;
  }
  return null;
}
