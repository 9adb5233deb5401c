// Reading the script: a file, or standard input for `-`. Light, so the CLI can start the
// checks before it loads the rest.

import { readFileSync } from "node:fs";
import { readStdin } from "./stdin.js";
import { UsageError } from "./usage.js";

/** What stack frames and messages call a script that came from standard input. */
export const STDIN_DISPLAY_NAME = "script.ts";

export interface ScriptSource {
  code: string;
  displayName: string;
  fromStdin: boolean;
}

export async function readScript(target: string): Promise<ScriptSource> {
  if (target === "-") {
    return { code: await readStdin({ limitBytes: Number.POSITIVE_INFINITY, emptyWhenInteractive: false }), displayName: STDIN_DISPLAY_NAME, fromStdin: true };
  }
  try {
    return { code: readFileSync(target, "utf8"), displayName: target, fromStdin: false };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read the script "${target}": ${code === "ENOENT" ? "no such file" : (code ?? String(error))}. Pass a .ts file, or - to read the script from standard input.`,
    );
  }
}
