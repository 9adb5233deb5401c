// A script names the host patterns of its own network scope (requestNetwork), and each request's
// host is checked against them on the host's main thread. The patterns were regular
// expressions (`[a-z0-9-]*` for each `*`), which backtrack exponentially in their `*`s: with
// any network permission at all, a security review's pattern of 9 `*`s held tacit 10 s on an
// 80-character host (each `*` more about four times as long), past the script's time limit,
// whose timer cannot fire meanwhile; 20 hold a tacit serve, every session of it, for years.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { connectServe, createSession, runInSession } from "../helpers.js";

let dir: string;
let client: Client;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-host-pattern-cost-"));
  const config = path.join(dir, "tacit.json");
  writeFileSync(config, JSON.stringify({ libraryConfig: { networkPermissions: ["*.example.com"] } }));
  client = await connectServe(["--no-check", "--config", config], dir);
});

afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("a scope's pattern of 20 `*`s is matched against an 80-character host without holding the server", async () => {
  const other = await createSession(client);
  const flood = await createSession(client);
  const flooding = runInSession(
    client,
    flood,
    `const stars = Array.from({ length: 20 }, () => "*").join("-");
requestNetwork([stars + "-x.example.com"], (net) => net.httpGet("https://" + "a-".repeat(40) + "a.example.com/"))`,
    40_000,
  );
  // Answered whatever the flood's state: a server held by it would answer neither.
  expect(await runInSession(client, other, `1 + 1`, 40_000)).toMatchObject({ exitCode: 0, stdout: "2\n" });
  const flooded = await flooding;
  expect(flooded.exitCode).toBe(1);
  expect(flooded.error).toContain("a.example.com is not among the hosts this requestNetwork scope asked for");
  // The same pattern still matches a host it names (refused then by where it leads, not by the scope).
  const named = await runInSession(
    client,
    flood,
    `const stars = Array.from({ length: 20 }, () => "*").join("-");
requestNetwork([stars + "-x.invalid"], (net) => net.httpGet("https://" + "a-".repeat(40) + "x.invalid/"))`,
    40_000,
  );
  expect(named.error).toContain("is not permitted by --network-permissions");
}, 60_000);
