// Parses the script on stdin, writes the size of its syntax tree (programSize) to stdout and
// exits 0: run in a child process (see nesting.ts) so that a script that crashes the native
// parser crashes this process, not the host, and one whose tree is too large for the host's
// heap is refused before the host builds it.

import { readFileSync, writeSync } from "node:fs";
import { PROGRAM_OPTIONS, programSize } from "./parser.js";

writeSync(1, String(programSize("probe.ts", readFileSync(0, "utf8"), PROGRAM_OPTIONS)));
process.exit(0);
