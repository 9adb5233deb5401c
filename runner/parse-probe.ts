// Parses the script on stdin, writes the size of its syntax tree (programSize) to stdout and
// exits 0: run in a child process (see nesting.ts) so that a script that crashes the native
// parser crashes this process, not the host, and one whose tree is too large for the host's
// heap is refused before the host builds it.

import { readFileSync, writeSync } from "node:fs";
import { TOO_LARGE_TO_HAND_OVER } from "./limits.js";
import { PROGRAM_OPTIONS, programSize } from "./parser.js";

let size: string;
try {
  size = String(programSize("probe.ts", readFileSync(0, "utf8"), PROGRAM_OPTIONS));
} catch (error) {
  // A tree whose JSON is longer than V8's longest string (about 512 Mi characters: some 5 MiB
  // of dense code) cannot be handed over at all.
  if (!(error instanceof Error && /string/i.test(error.message))) throw error;
  size = TOO_LARGE_TO_HAND_OVER;
}
writeSync(1, size);
process.exit(0);
