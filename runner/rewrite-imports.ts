// Turns `import … from "tacit"` into reads of the sandbox's library object, keeping every
// other character where it was so that line:column in errors still point at the agent's
// own source. (A blob: module cannot resolve the bare specifier "tacit".)

import { LIBRARY_GLOBAL } from "../library/protocol.js";
import type { TacitImport } from "./validator.js";

function replacementFor(entry: TacitImport): string {
  const parts: string[] = [];
  if (entry.namespace) parts.push(`const ${entry.namespace} = ${LIBRARY_GLOBAL};`);
  if (entry.named.length > 0) {
    const bindings = entry.named.map(([name, local]) => (name === local ? name : `${name}: ${local}`));
    parts.push(`const { ${bindings.join(", ")} } = ${LIBRARY_GLOBAL};`);
  }
  return parts.join(" ");
}

export function rewriteTacitImports(code: string, imports: readonly TacitImport[]): string {
  let result = "";
  let cursor = 0;
  for (const entry of [...imports].sort((a, b) => a.start - b.start)) {
    const original = code.slice(entry.start, entry.end);
    const newlines = original.split("\n").length - 1;
    result += code.slice(cursor, entry.start) + replacementFor(entry) + "\n".repeat(newlines);
    cursor = entry.end;
  }
  return result + code.slice(cursor);
}
