// Deciding whether a rule asks about a command takes time in proportion to the command line,
// whatever the script puts in it. Under the README's own rule `{ command: "git", args: "push*",
// tier: "always-ask" }`, with git permitted, the rule is also tried through every word of a
// command that runs others (git does, through its aliases): each word naming git had the args
// glob tried on all the words after it, so a command line of n words cost n² on the host's
// main thread. A security review ran `git --version "git git git …"`: 20,000 words held the
// host 119 s past its 30 s limit (the limit's timer could not fire), and 400,000 would hold a
// tacit serve, every session of it, for days. The test sends 40,000: quadratic, that holds the
// host some 8 minutes (4 × the review's 20,000), far past the other session's 40 s; linear, well
// under a second. With the fix undone (the args glob tried after every word naming git), the
// other session's call times out at 40,000 words as at 400,000, which only cost the suite 10 s
// more of CPU.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";

let dir: string;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-rule-cost-"));
  const config = path.join(dir, "tacit.json");
  writeFileSync(
    config,
    JSON.stringify({
      libraryConfig: { commandPermissions: ["git"] },
      policy: { rules: [{ action: "exec", command: "git", args: "push*", tier: "always-ask" }] },
    }),
  );
  client = await connectServe(["--no-check", "--config", config], dir);
});

afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a command line of 40,000 words is judged without holding the server; the rule still asks, and other sessions are answered", async () => {
  const other = await createSession(client);
  const flood = await createSession(client);
  const flooding = runInSession(
    client,
    flood,
    `requestExecPermission(["git"], (p) => p.exec("git", ["--version", "git ".repeat(40_000)]).exitCode)`,
    40_000,
  );
  // Answered whatever the flood's state: a server held by it would answer neither.
  expect(await runInSession(client, other, `1 + 1`, 40_000)).toMatchObject({ exitCode: 0, stdout: "2\n" });
  const flooded = await flooding;
  // The last word names git with nothing after it: the rule asks, and no one can be asked here.
  expect(flooded.exitCode).toBe(1);
  expect(flooded.error).toContain("the policy requires a person's approval (always-ask)");
  // The rule is still tried through later words: a push named after them is asked about too.
  const pushed = await runInSession(client, flood, `requestExecPermission(["git"], (p) => p.exec("git", ["--version", "git ".repeat(1000) + "push"]).exitCode)`, 40_000);
  expect(pushed.error).toContain("the policy requires a person's approval (always-ask)");
  expect(await runInSession(client, flood, `requestExecPermission(["git"], (p) => p.exec("git", ["--version"]).exitCode)`, 40_000)).toMatchObject({
    exitCode: 0,
    stdout: "0\n",
  });
}, 60_000);

// The same rule, tried through each word, asks whether the word names a shell or interpreter
// (by its words without version tails: python3.11 is python). The tail was cut with an
// expression that tried each digit of a run as its start, to the run's end: one argument of
// 40,000 digits ending in "!" held the host 3 s, twelve of 100,000 (within what a command may
// be given) some minutes.
it("arguments of 100,000 digits are read for a program's name without holding the server", async () => {
  const other = await createSession(client);
  const flood = await createSession(client);
  const flooding = runInSession(
    client,
    flood,
    `requestExecPermission(["git"], (p) => p.exec("git", ["--version", ...Array.from({ length: 12 }, () => "1".repeat(100_000) + "!")]).exitCode)`,
    40_000,
  );
  // Answered whatever the flood's state: a server held by it would answer neither.
  expect(await runInSession(client, other, `1 + 1`, 40_000)).toMatchObject({ exitCode: 0, stdout: "2\n" });
  // Nothing in it names git, a shell or an interpreter: git runs (and ignores the argument).
  expect(await flooding).toMatchObject({ exitCode: 0, stdout: "0\n" });
  // A word naming a versioned interpreter is still read as one: the rule asks.
  const viaPython = await runInSession(client, flood, `requestExecPermission(["git"], (p) => p.exec("git", ["--version", "python3.11"]).exitCode)`, 40_000);
  expect(viaPython.error).toContain("the policy requires a person's approval (always-ask)");
}, 60_000);
