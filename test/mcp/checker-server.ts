// A tacit serve for the tests that watch its type checker (TypeScript's native tsc, a process of
// its own): its time limit is far past any test's, so a check that is not stopped runs on for its
// whole length, which shows as the checker's CPU time (read from /proc, not timed).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll } from "vitest";
import { tscExecutable } from "../../runner/paths.js";
import { connectServeProcess } from "../helpers.js";
import { commandLineOf, descendantsOf, isRunning } from "../processes.js";

export interface CheckerServer {
  /** The server's client, once the file's tests start. */
  readonly client: Client;
  /** The server's type checker processes, running. */
  checkers(): number[];
}

/** A server started before the file's tests (in a directory named from `prefix`) and closed after them. */
export function serveWatchingCheckers(prefix: string): CheckerServer {
  let dir: string | null = null;
  let client: Client | null = null;
  let serverPid = 0;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), prefix));
    ({ client, pid: serverPid } = await connectServeProcess(["--exec-timeout-ms", "600000"], dir, { env: { TACIT_HOME: path.join(dir, "home") } }));
  });
  afterAll(async () => {
    await client?.close();
    if (dir !== null) rmSync(dir, { recursive: true, force: true });
  });
  return {
    get client(): Client {
      if (client === null) throw new Error("the server starts before the file's tests");
      return client;
    },
    checkers(): number[] {
      const tsc = tscExecutable();
      return descendantsOf(serverPid).filter((pid) => commandLineOf(pid).split("\0")[0] === tsc && isRunning(pid));
    },
  };
}
