// library/interface.d.ts, read once per process, with what the build derived from that same
// text (dist/interface-names.json, written by build/interface-names.mjs): the names it
// declares, for the validator, and its digest, for the type-check cache's identity. What the
// build wrote counts only while it was made from the very same text; otherwise both are
// worked out again from the text (parsing it costs 10-20 ms, the digest about 2 ms).

import { readFileSync } from "node:fs";
import { onFirstUse } from "./on-first-use.js";
import { interfaceNamesPath, interfacePath } from "./paths.js";

export interface InterfaceNames {
  /** Names agent code may import from "tacit". */
  exports: string[];
  /** The globals tacit itself provides (the API, console, timers…), as opposed to the language's. */
  globals: string[];
  /** Type-only names "tacit" exports (import type { FileSystem } from "tacit"). */
  typeExports: string[];
}

export interface InterfaceFile {
  source: string;
  /** The names the build read from this text; null when they must be parsed again. */
  names: InterfaceNames | null;
  /** textDigest(source), from the build; null when it must be computed again. */
  digest: string | null;
}

const isNameList = (list: unknown): list is string[] => Array.isArray(list) && list.every((name) => typeof name === "string");

export function readInterfaceFile(interfaceFile: string, prebuiltFile: string): InterfaceFile {
  const source = readFileSync(interfaceFile, "utf8");
  try {
    const prebuilt = JSON.parse(readFileSync(prebuiltFile, "utf8")) as Partial<InterfaceNames> & { source?: unknown; digest?: unknown };
    if (prebuilt.source === source) {
      const { globals, exports, typeExports, digest } = prebuilt;
      return {
        source,
        names: isNameList(globals) && isNameList(exports) && isNameList(typeExports) ? { globals, exports, typeExports } : null,
        digest: typeof digest === "string" && /^[0-9a-f]{28}$/.test(digest) ? digest : null,
      };
    }
  } catch {
    // Missing or unreadable: everything is worked out from the text.
  }
  return { source, names: null, digest: null };
}

/** The installed interface, read on first use. */
export const interfaceFile = onFirstUse(() => readInterfaceFile(interfacePath, interfaceNamesPath));
