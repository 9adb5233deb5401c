// What the person behind an MCP client is shown when tacit asks (elicitation): the question is
// built from strings the script chose, and must say what will really happen. Driven by the real
// SDK Client against `tacit serve`.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { realTempDir } from "../files/fixtures.js";
import { joinedRows, makeWorld, serveWorld, type World } from "./fixtures.js";

let world: World;
let cleanup: () => void;
let client: Client;
let asked: ElicitRequest[] = [];

beforeAll(async () => {
  const temp = realTempDir("tacit-question-");
  cleanup = temp.cleanup;
  world = makeWorld(temp.dir);
  const config = world.config(
    [
      { action: "net", tier: "always-ask" },
      { action: "exec", command: "git", tier: "always-ask" },
    ],
    { libraryConfig: { networkPermissions: ["*.pages.example"], commandPermissions: ["git"] } },
  );
  client = await serveWorld(world, ["--config", config, "--exec-timeout-ms", "10000"], {
    onElicit: (request) => {
      asked.push(request);
      return { action: "decline" };
    },
  });
});

afterAll(async () => {
  await client?.close();
  cleanup?.();
});

beforeEach(() => {
  asked = [];
});

async function questionFor(url: string): Promise<string> {
  return askedAbout(`requestNetwork(["*.pages.example"], (net) => net.httpPost(${JSON.stringify(url)}, "report"));\n`);
}

/** Runs `code`, whose one action a person is asked about (and declines): the message they were shown. */
async function askedAbout(code: string): Promise<string> {
  const response = await client.callTool({ name: "execute_typescript", arguments: { code } });
  expect(response.isError).toBe(true);
  expect(asked, JSON.stringify(response.content)).toHaveLength(1);
  return (asked[0]!.params as { message: string }).message;
}

/** The question's lines inside its fence, a line broken into rows joined again. */
function questionLines(message: string): string[] {
  return joinedRows(message).split("\n").slice(2, -1);
}

/** What the question shows after the URL: the headers and body httpPost sends (see content-shown.test.ts). */
const SENT = `, headers {"content-type":"text/plain; charset=utf-8"}, with a body (6 characters): "report"`;

describe("a URL in an approval question", () => {
  // The operator allows a multi-tenant domain (anyone can have a name under it: pages, buckets,
  // tunnels) and asks a person about every request; the script spells the URL so that the
  // question reads as the team's own site while the request goes to another name.
  it("a host in another script (a homoglyph) is shown in the form the request uses", async () => {
    // Cyrillic "а" (U+0430) in place of the Latin "a": the request goes to xn--mytem-7ve.pages.example.
    const message = await questionFor("https://myte\u0430m.pages.example/upload");
    expect(questionLines(message).find((line) => line.startsWith("  POST "))).toBe(`  POST https://xn--mytem-7ve.pages.example/upload${SENT}`);
    expect(message).not.toContain("\u0430");
  });

  it("a division slash cannot make part of the host read as the path", async () => {
    // "∕" (U+2215) reads as "/": the script's spelling reads as a POST to a host "docs"; the URL
    // parser keeps it in the host, which becomes xn--docsevil-1f7d.pages.example.
    const message = await questionFor("https://docs\u2215evil.pages.example/upload");
    expect(questionLines(message).find((line) => line.startsWith("  POST "))).toBe(`  POST https://xn--docsevil-1f7d.pages.example/upload${SENT}`);
    expect(message).not.toContain("\u2215");
  });
});

describe("an elicitation message", () => {
  // Clients may render the message as Markdown, HTML included: what the script chose must show as written.
  it("shows what the script chose in a fenced code block that nothing in it can end", async () => {
    const args = ["push", "<!--", "--force", "-->", "```", "````x"];
    const message = await askedAbout(`requestExecPermission(["git"], (proc) => proc.exec("git", ${JSON.stringify(args)}));\n`);
    const lines = message.split("\n");
    // The heading is tacit's own; then a fence longer than any run of backticks inside, the question's lines, the same fence.
    expect(lines[0]).toMatch(/^tacit: a script asks to do something the policy says a person must approve/);
    expect(lines[1]).toBe("`````");
    expect(lines.at(-1)).toBe("`````");
    const inside = lines.slice(2, -1);
    expect(inside).toContain('  run: git push "<!--" --force "-->" "```" "````x"');
    expect(inside).toContain("  pattern: exec git push *");
    for (const line of inside) expect(line).not.toMatch(/^ {0,3}`{5}/);
  });

  // A code block is shown as written, unwrapped: a client shows the beginning of a long line and
  // puts the rest beyond a horizontal scroll, where `--force` after 1,500 spaces was out of sight.
  it("breaks a long line into rows no wider than 72 columns, each continued row marked, so its end is in sight", async () => {
    const args = ["push", "origin", "main", " ".repeat(1_500), "--force", "ŵ".repeat(40)];
    const message = await askedAbout(`requestExecPermission(["git"], (proc) => proc.exec("git", ${JSON.stringify(args)}));\n`);
    const inside = message.split("\n").slice(2, -1);
    // Anything past ASCII counts as two columns (it may be shown wide).
    const columns = (row: string): number => [...row].reduce((sum, c) => sum + (c.charCodeAt(0) < 0x80 ? 1 : 2), 0);
    for (const row of inside) expect(columns(row), row).toBeLessThanOrEqual(72);
    const forced = inside.find((row) => row.includes("--force"));
    expect(forced, message).toBeDefined();
    expect(forced!.startsWith("\u21aa "), forced).toBe(true);
    // Joined again, the rows are the question's lines as they were.
    const lines = questionLines(message);
    expect(lines[0]).toBe(`  run: git push origin main ${JSON.stringify(args[3])} --force ${JSON.stringify(args[5])}`);
    expect(lines[1]).toBe("  pattern: exec git push *");
  });
});

describe("a question too long to read whole", () => {
  // A client may cut a long message short: the end of a long action (a -delete after a path of
  // thousands of characters) would not be seen, and the pattern line says nothing of it.
  it("is not asked: the action is refused, saying why and what to do instead", async () => {
    const args = ["push", `origin/${"a".repeat(4_000)}`, "--force"];
    const response = await client.callTool({
      name: "execute_typescript",
      arguments: { code: `requestExecPermission(["git"], (proc) => proc.exec("git", ${JSON.stringify(args)}));\n` },
    });
    expect(response.isError).toBe(true);
    expect(asked, "the person was asked").toHaveLength(0);
    const text = (response.content as Array<{ type: string; text: string }>).map((part) => part.text).join("\n");
    expect(text).toMatch(/refused: the policy requires a person's approval \(always-ask\), and no one could be asked: the action is \d+ characters long/);
    expect(text).toContain("more than a person can be asked to read whole (2000");
    expect(text).toContain("put long data in a file, or split the work into smaller actions");
  });
});
