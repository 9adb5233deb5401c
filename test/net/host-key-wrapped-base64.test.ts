// The operator's LLM key in base64 wrapped across lines, through the real CLI: as GNU `base64`
// writes a file (76 characters a line), as PEM and MIME do (64 and 76, CRLF), indented in YAML,
// and in a JSON answer whose string holds the breaks as "\n" escapes. Replies were scrubbed of
// the key's base64 forms whole only: read as text (or line by line, or as bytes, or from a server),
// a script joined the lines, decoded them, and printed the key. Asserted: no piece of the key of 8
// characters reaches the script however it joins and decodes what it got; and base64 of anything
// else, wrapped the same way, reaches it unchanged.

import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";
import { startServer } from "./fixtures.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-host-key-wrapped-");
afterAll(cleanup);

const random = randomBytes(36).toString("base64").replace(/[+/=]/g, "x");
const apiKey = `sk-proj-${random}`;

/** `text` in base64 (its bytes as UTF-8), in lines of `width` joined by `lineBreak`, each but the first after `indent`. */
function wrapped(text: string, width: number, lineBreak = "\n", indent = ""): string {
  const base64 = Buffer.from(text).toString("base64");
  const lines: string[] = [];
  for (let at = 0; at < base64.length; at += width) lines.push(base64.slice(at, at + width));
  return lines.join(lineBreak + indent) + lineBreak;
}

/** Wrapped texts of the key, its place in a base64 group shifted by the text before it. */
const files: Record<string, string> = {
  "gnu.b64": wrapped(`OPENAI_API_KEY=${apiKey}\n`, 76),
  "pem.txt": `-----BEGIN DATA-----\r\n${wrapped(`k=${apiKey}`, 64, "\r\n")}-----END DATA-----\r\n`,
  "values.yaml": `secret: |\n  ${wrapped(`{"key":"${apiKey}"}`, 20, "\n", "  ")}`,
  "narrow.b64": wrapped(apiKey, 8),
};
/** Base64 of other text, wrapped as the key's is: no form of the key, so unchanged. */
const ordinary = wrapped(`OPENAI_API_KEY=${apiKey.slice(0, 20)}-not-the-key-${"z".repeat(40)}\n`, 76);

/** What a script could make of `seen`: every run of base64 characters, its breaks and escapes taken out, decoded at each of the 4 places a group can start. */
function decodings(seen: string): string[] {
  const joined = seen.replace(/\\r|\\n|\\t|\r|\n|\t| /g, "");
  const runs = joined.match(/[A-Za-z0-9+/=_-]+/g) ?? [];
  return runs.flatMap((run) => [0, 1, 2, 3].map((skip) => Buffer.from(run.slice(skip), "base64").toString("latin1")));
}

function expectNoPieceOfKey(seen: string): void {
  for (const text of [seen, ...decodings(seen)]) {
    for (let at = 0; at + 8 <= random.length; at++) expect(text, `holds ${random.slice(at, at + 8)} of the key`).not.toContain(random.slice(at, at + 8));
  }
}

describe("the operator's key in base64 wrapped across lines", () => {
  it("is masked in a file read whole, line by line or as bytes, and in an HTTP answer; other wrapped base64 is unchanged", async () => {
    const root = path.join(dir, "work");
    mkdirSync(root, { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(root, name), text);
    writeFileSync(path.join(root, "ordinary.b64"), ordinary);
    const server = await startServer((request, response) => {
      response.setHeader("content-type", "application/json");
      response.end(request.url === "/ordinary" ? JSON.stringify({ data: ordinary }) : JSON.stringify({ data: files["gnu.b64"] }));
    });
    try {
      const at = `127.0.0.1:${server.port}`;
      const script = path.join(dir, "read.ts");
      writeFileSync(
        script,
        `requestFileSystem(${JSON.stringify(root)}, (fs) => {
  for (const name of ${JSON.stringify([...Object.keys(files), "ordinary.b64"])}) {
    const lines: string[] = [];
    fs.access(name).forEachLine((line) => { lines.push(line); });
    println("text", name, JSON.stringify(fs.access(name).read()));
    println("lines", name, JSON.stringify(lines.join("\\n")));
    println("bytes", name, JSON.stringify(new TextDecoder().decode(fs.access(name).readBytes())));
  }
});
requestNetwork([${JSON.stringify(at)}], (net) => {
  println("http", "key", JSON.stringify(net.httpGet(${JSON.stringify(`${server.origin}/key`)})));
  println("http", "ordinary", JSON.stringify(JSON.parse(net.httpGet(${JSON.stringify(`${server.origin}/ordinary`)})).data));
});
`,
      );
      const r = await runCli(
        unchecked(["run", "--network-permissions", at, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", script]),
        { cwd: root, env },
      );
      expect(r.code, r.stderr).toBe(0);
      const printed = new Map(
        r.stdout
          .trim()
          .split("\n")
          .map((line) => {
            const [how, name, ...json] = line.split(" ");
            return [`${how} ${name}`, JSON.parse(json.join(" ")) as string] as const;
          }),
      );
      // Every file was read each way, and the server answered both requests.
      expect(printed.size, r.stdout).toBe(3 * (Object.keys(files).length + 1) + 2);
      for (const [label, seen] of printed) {
        if (label.endsWith("ordinary.b64") || label === "http ordinary") continue;
        expect(seen, label).toMatch(/\[redacted\]|\*{8}/);
        expectNoPieceOfKey(seen);
      }
      for (const how of ["text", "bytes"]) expect(printed.get(`${how} ordinary.b64`)).toBe(ordinary);
      expect(printed.get("lines ordinary.b64")).toBe(ordinary.slice(0, -1));
      expect(printed.get("http ordinary")).toBe(ordinary);
      expectNoPieceOfKey(r.stderr);
    } finally {
      await server.close();
    }
  });
});
