// A line reader for the TOML of tools' configurations that tacit judges (mise's, direnv's): it
// finds each key's value and the strings in it, not a full TOML parser. Reading errs toward
// finding more: any string in a value counts, whatever the quoting around it.

/** One `key = value` of a TOML text: the key with its table in front (`env._.source`), the value as written (an array or inline table with the lines it runs on to). */
export interface TomlAssignment {
  key: string;
  value: string;
}

/** Each assignment of `text`, in order. */
export function* tomlAssignments(text: string): Generator<TomlAssignment> {
  const lines = text.split("\n");
  let table = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/^\s+/, "");
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    if (header) {
      table = header[1]!.replace(/\s+/g, "").replace(/"/g, "");
      continue;
    }
    const assignment = /^([A-Za-z0-9_.\-"' ]+?)\s*=\s*(.*)$/.exec(line);
    if (!assignment) continue;
    const key = assignment[1]!.replace(/\s+/g, "").replace(/["']/g, "");
    let value = assignment[2]!;
    // A value that opens an array or an inline table runs on to the line that closes it.
    if (/^[[{]/.test(value)) {
      const close = value.startsWith("[") ? "]" : "}";
      while (!value.includes(close) && i + 1 < lines.length) value += `\n${lines[++i]}`;
    }
    yield { key: table === "" ? key : `${table}.${key}`, value };
  }
}

/** The string literals in `text` (TOML's basic and literal strings, escapes as written). */
export const tomlStrings = (text: string): string[] =>
  [...text.matchAll(/"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'/g)].map((m) => (m[1] ?? m[2])!.replace(/\\(.)/g, "$1"));
