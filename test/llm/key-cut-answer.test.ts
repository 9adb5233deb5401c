// The LLM key in an HTTP answer that the size limit (networkResponseLimitBytes) cuts inside it,
// through the real CLI: the whole key in an answer is masked, but one cut n characters into it
// showed those n characters (n up to all of it but the last), a server's padding choosing n.
// A command's output cut at its limit is covered in chat.test.ts.

import { once } from "node:events";
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { runCli, tempDirWithHome, unchecked } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-key-cut-answer-");
afterAll(cleanup);

const apiKey = `sk-test-${randomUUID()}`;
const limit = 4096;

it("an answer cut at its size limit inside the key shows no piece of it, wherever the cut falls", async () => {
  // A server that holds the key (a proxy's debug page, a file it serves), padded so the cut falls n characters into it.
  const server = createServer((request, response) => {
    const n = Number(new URL(request.url ?? "/", "http://x").searchParams.get("n"));
    response.end("f".repeat(limit - n) + apiKey + "\nafter\n");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  try {
    const cuts = [0, 1, 4, 9, 20, apiKey.length - 1, apiKey.length];
    const config = path.join(dir, "config.json");
    writeFileSync(config, JSON.stringify({ libraryConfig: { networkPermissions: [`127.0.0.1:${port}`], networkResponseLimitBytes: limit } }));
    const script = path.join(dir, "cut.ts");
    writeFileSync(
      script,
      `requestNetwork(["127.0.0.1:${port}"], (net) => {\n` +
        `  for (const n of ${JSON.stringify(cuts)}) println("cut", n, JSON.stringify(net.httpGet("http://127.0.0.1:${port}/?n=" + n).replace(/^f+/, "")));\n` +
        `});\n`,
    );
    const r = await runCli(unchecked(["run", "--config", config, "--llm-base-url", "http://127.0.0.1:9", "--llm-api-key", apiKey, "--llm-model", "m", script]), {
      cwd: dir,
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    // Each answer came, cut (the script ran to its end).
    for (const n of cuts) expect(r.stdout).toContain(`cut ${n} "`);
    expect(r.stdout.split("response truncated at 4096 bytes").length - 1, r.stdout).toBe(cuts.length);
    // The bad thing: a piece of the key the cut left at the answer's end.
    const random = apiKey.slice("sk-test-".length);
    for (let at = 0; at + 8 <= random.length; at++) expect(r.stdout, `holds ${random.slice(at, at + 8)} of the key`).not.toContain(random.slice(at, at + 8));
    // Its first characters, as a cut a few characters in leaves them.
    expect(r.stdout).not.toContain('"sk-t');
  } finally {
    server.close();
  }
});
