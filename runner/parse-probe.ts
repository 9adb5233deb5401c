// Parses the script on stdin and exits 0: run in a child process (see nesting.ts) so that a
// script that crashes the native parser crashes this process, not the host.

import { readFileSync } from "node:fs";
import { parseSync } from "./parser.js";

parseSync("probe.ts", readFileSync(0, "utf8"), { lang: "ts", sourceType: "module", astType: "ts" });
process.exit(0);
