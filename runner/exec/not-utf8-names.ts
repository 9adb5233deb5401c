// Names in a directory that are not UTF-8. Node reads a directory's names as UTF-8 strings, and a
// byte sequence that is not UTF-8 comes back with U+FFFD in its place: a path that leads elsewhere
// (to nothing, or to a decoy made with that character), so what the real entry holds goes unseen.
// The confinement's walk (confinement.ts) and its look for new repositories (new-repositories.ts)
// read such a directory again as bytes.

import { isUtf8 } from "node:buffer";
import { readdirSync } from "node:fs";

/** Whether a listing read as UTF-8 may stand for a name that is not (it holds U+FFFD): worth reading again as bytes. */
export function mayHoldNotUtf8(entries: ReadonlyArray<{ name: string }>): boolean {
  return entries.some((entry) => entry.name.includes("\uFFFD"));
}

/** The names in `dir` that are not UTF-8, as bytes; throws as readdirSync does. */
export function notUtf8Names(dir: string): Buffer[] {
  return readdirSync(dir, { encoding: "buffer" }).filter((name) => !isUtf8(name));
}

/** A name that is not UTF-8, shown: printable ASCII as it is, every other byte (and the backslash) as \xNN. */
export function shownName(name: Buffer): string {
  return [...name].map((byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, "0")}`)).join("");
}
