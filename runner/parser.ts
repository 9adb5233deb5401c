// The oxc parser, loaded the short way. oxc-parser's entry is an ES module graph that finds
// the native binding for the platform; loading it cost `tacit run` 15-25 ms before its
// sandbox could be sent the program. Where the binding is one of the known glibc or macOS
// builds, it is loaded directly (about 4 ms) and its result unwrapped exactly as
// oxc-parser's own wrap() does (src-js/wrap.js, same pinned version); anywhere else, and
// whenever anything about the binding is unexpected, oxc-parser itself is loaded.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { ParseResult, ParserOptions } from "oxc-parser";
import { packageJsonOf } from "./paths.js";

export type { ParserOptions };
export type Parsed = Pick<ParseResult, "program" | "module" | "comments" | "errors">;
/** What the checks read of a parse. */
export type ParsedProgram = Pick<Parsed, "program" | "comments" | "errors">;

/** How the checks parse a script: TypeScript, as an ES module, with ranges for the scope analysis. */
export const PROGRAM_OPTIONS: ParserOptions = { lang: "ts", sourceType: "module", astType: "ts", range: true };
type ParseSync = (filename: string, sourceText: string, options?: ParserOptions) => Parsed;

/** What the binding's parseSync returns: the program as JSON, with paths to literals JSON cannot carry. */
interface NativeParseResult {
  readonly program: string;
  readonly module: Parsed["module"];
  readonly comments: Parsed["comments"];
  readonly errors: Parsed["errors"];
}

interface NativeBinding {
  parseSync(filename: string, sourceText: string, options?: ParserOptions): NativeParseResult;
}

/** The npm package napi-rs publishes the binding in, for this platform; null where the entry decides. */
function bindingPackageName(): string | null {
  const { platform, arch } = process;
  if (platform === "darwin" && (arch === "arm64" || arch === "x64")) return `@oxc-parser/binding-darwin-${arch}`;
  if (platform !== "linux" || (arch !== "x64" && arch !== "arm64")) return null;
  // glibc or musl, decided as napi-rs does first; if that cannot tell, the entry decides.
  try {
    return readFileSync("/usr/bin/ldd", "latin1").includes("musl") ? null : `@oxc-parser/binding-linux-${arch}-gnu`;
  } catch {
    return null;
  }
}

function loadBinding(): NativeBinding | null {
  const name = bindingPackageName();
  if (name === null) return null;
  try {
    const entry = packageJsonOf("oxc-parser");
    const fromParser = createRequire(entry);
    const version = (fromParser("./package.json") as { version: string }).version;
    // A binding of another version may read its options differently: only the matching one.
    if ((fromParser(`${name}/package.json`) as { version: string }).version !== version) return null;
    const binding = fromParser(name) as Partial<NativeBinding>;
    return typeof binding.parseSync === "function" ? (binding as NativeBinding) : null;
  } catch {
    return null;
  }
}

/** oxc-parser's jsonParseAst: BigInt and RegExp literal values are rebuilt where the JSON lists them. */
function programFromJson(json: string): Parsed["program"] {
  const { node, fixes } = JSON.parse(json) as { node: Parsed["program"]; fixes: Array<Array<string | number>> };
  for (const fix of fixes) {
    let literal: Record<string | number, unknown> = node as unknown as Record<string | number, unknown>;
    for (const key of fix) literal = literal[key] as Record<string | number, unknown>;
    if (typeof literal.bigint === "string") {
      literal.value = BigInt(literal.bigint);
    } else {
      const regex = literal.regex as { pattern: string; flags: string };
      try {
        literal.value = new RegExp(regex.pattern, regex.flags);
      } catch {
        // A pattern this Node cannot compile keeps value null, as oxc-parser leaves it.
      }
    }
  }
  return node;
}

function fromBinding(binding: NativeBinding): ParseSync {
  return (filename, sourceText, options) => {
    const result = binding.parseSync(filename, sourceText, options);
    // Every field is taken at once, as wrap() does: each native getter frees its Rust-side copy.
    const { module, comments, errors } = result;
    let json: string | null = result.program;
    let program: Parsed["program"] | undefined;
    return {
      get program() {
        if (program === undefined) {
          program = programFromJson(json!);
          json = null;
        }
        return program;
      },
      module,
      comments,
      errors,
    };
  };
}

let parser: { parseSync: ParseSync; source: "binding" | "package" } | undefined;
let loadedBinding: NativeBinding | null = null;

function load(): NonNullable<typeof parser> {
  const binding = loadBinding();
  loadedBinding = binding;
  if (binding !== null) return { parseSync: fromBinding(binding), source: "binding" };
  const entry = createRequire(import.meta.url)("oxc-parser") as { parseSync: ParseSync };
  return { parseSync: entry.parseSync, source: "package" };
}

/** oxc-parser's parseSync. */
export function parseSync(filename: string, sourceText: string, options?: ParserOptions): Parsed {
  return (parser ??= load()).parseSync(filename, sourceText, options);
}

/**
 * How large `sourceText`'s syntax tree is, as the characters of its JSON (what the host's heap
 * holds while the checks read it is a few bytes for each: see nesting.ts), without building it.
 */
export function programSize(filename: string, sourceText: string, options?: ParserOptions): number {
  const loaded = (parser ??= load());
  if (loaded.source === "binding") return loadedBinding!.parseSync(filename, sourceText, options).program.length;
  return JSON.stringify(loaded.parseSync(filename, sourceText, options).program, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value)).length;
}

/** How the parser was loaded: straight from the native binding, or through oxc-parser's entry. */
export function parserSource(): "binding" | "package" {
  return (parser ??= load()).source;
}
