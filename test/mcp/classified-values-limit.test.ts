// A session's classified store lives as long as the session and never forgets a value. Its
// plaintext is capped (classifiedStoreLimitBytes), but each value also costs the host about
// 300 bytes of its own (handle, entry, result), which that cap does not see: a seventh
// security review called classify("") in a loop in each snippet of a session, 160,000 values
// per 8 s snippet, and tacit serve grew by about 55 MB a snippet without end. A store keeps a
// bounded number of values; the count is the agent's own (one per call), so the refusal is
// visible, and the values already made stay usable.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLASSIFIED_VALUES_LIMIT } from "../../runner/limits.js";
import { resolveConfig } from "../../runner/config.js";
import { connectServe, createSession, runInSession } from "../helpers.js";

let dir: string;
let client: Client;
/** The time limit of each flooding snippet, and how long the client waits for its answer. */
const FLOOD_LIMIT_MS = 240_000;
/**
 * The bound the server is given (config classifiedValuesLimit): a tenth of the default, which
 * bounds the same way; each value is a round trip to the host (~250 µs of its CPU in a session),
 * and 100,000 of them cost the suite 25 s of CPU.
 */
const CLASSIFIED_VALUES_KEPT = 10_000;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tacit-classified-values-"));
  writeFileSync(path.join(dir, ".env"), "TOKEN=t\n");
  // Each value is a round trip to the host: the 150,000 here took 14 s alone, but the first 50,000
  // ran past tacit's default 30 s limit in a run of the tests beside others on a loaded 2-core
  // machine. The bound tested is on a count, not on time, so the snippets get ample time.
  writeFileSync(path.join(dir, "tacit.config.json"), JSON.stringify({ classifiedValuesLimit: CLASSIFIED_VALUES_KEPT }));
  client = await connectServe(["--no-check", "--exec-timeout-ms", String(FLOOD_LIMIT_MS), "--config", "tacit.config.json"], dir);
});

afterAll(async () => {
  await client.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Makes empty classified values until one is refused (or `most` are made): how many, and the refusal. */
const flood = (most: number) => `
let made = 0;
let refusal = "";
try {
  while (made < ${most}) { classify(""); made++; }
} catch (e) {
  refusal = String(e);
}
[made, refusal]`;

describe("the classified values a session keeps", () => {
  it("are bounded in number across its snippets; past the bound every way of making one is refused; the rest still work", async () => {
    const session = await createSession(client);
    const keep = await runInSession(client, session, 'const first = classify("kept"); const upper = first.map((s) => s.toUpperCase()); 1');
    expect(keep.error).toBeNull();
    const half = Math.floor(CLASSIFIED_VALUES_KEPT / 2);
    const one = await runInSession(client, session, flood(half), FLOOD_LIMIT_MS);
    expect(one.error).toBeNull();
    expect(one.stdout).toContain(`${half}`);
    const two = await runInSession(client, session, flood(CLASSIFIED_VALUES_KEPT), FLOOD_LIMIT_MS);
    expect(two.error).toBeNull();
    // Two were made by the first snippet: the bound counts the session's values, not a snippet's.
    expect(two.stdout).toContain(`${CLASSIFIED_VALUES_KEPT - half - 2}`);
    expect(two.stdout).toContain(
      `classify(): refused: this evaluation (or session) already holds ${CLASSIFIED_VALUES_KEPT} Classified values, the most the host keeps (config "classifiedValuesLimit"`,
    );
    const others = await runInSession(
      client,
      session,
      `const tries: string[] = [];
for (const attempt of [() => first.map((s) => s + "!"), () => first.flatMap((s) => [s]), () => requestFileSystem(".", (fs) => fs.readClassified(".env"))]) {
  try { attempt(); tries.push("made"); } catch (e) { tries.push(String(e).split(": refused")[0] + ": refused"); }
}
tries.join("|")`,
    );
    expect(others.error).toBeNull();
    expect(others.stdout).toMatch(/Error: map: refused\|Error: flatMap: refused\|Error: readClassified\([^)]*\.env\): refused/);
    // What was made before still works: written to a classified file, it lands.
    const write = await runInSession(client, session, 'requestFileSystem(".", (fs) => fs.writeClassified(".env.upper", upper)); "written"');
    expect(write.error).toBeNull();
    expect(readFileSync(path.join(dir, ".env.upper"), "utf8")).toBe("KEPT");
  }, 2 * FLOOD_LIMIT_MS + 60_000);
});

it("a run keeps at most 100,000 Classified values unless its configuration says otherwise", () => {
  expect(DEFAULT_CLASSIFIED_VALUES_LIMIT).toBe(100_000);
  expect(resolveConfig({}, {}).classifiedValuesLimit).toBe(DEFAULT_CLASSIFIED_VALUES_LIMIT);
});
