// NODE_OPTIONS as Node reads it: words split at spaces only, and a double quote anywhere in a
// word only groups (it is dropped), so '"--heapsnapshot-near-heap-limit=1"' and
// '--heapsnapshot"-near-heap-limit=1"' are that flag to Node (tried: `node -e` under either
// spelling wrote a .heapsnapshot at its heap limit). bin/tacit.js split NODE_OPTIONS at white
// space and matched each word as it was, so either spelling passed its refusal of
// --heapsnapshot-near-heap-limit, and tacit ran with Node set to write all of its memory (the LLM
// key, classified plaintext) into the working directory once a script brought its heap near the
// limit. It now reads NODE_OPTIONS as Node's ParseNodeOptionsEnvVar does (nodeOptionsWords).

import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-node-options-quoted-");
afterAll(cleanup);

describe.concurrent("--heapsnapshot-near-heap-limit in NODE_OPTIONS, spelled with double quotes", () => {
  for (const [name, spelling] of [
    ["the word quoted", '"--heapsnapshot-near-heap-limit=1"'],
    ["a quote inside the word", '--heapsnapshot"-near-heap-limit=1"'],
  ] as const) {
    it(`${name} (${spelling}) is refused (exit 2) before anything runs`, async () => {
      const project = path.join(dir, name.replace(/\W+/g, "-"));
      mkdirSync(project);
      writeFileSync(path.join(project, "s.ts"), `println("ran");\n`);
      const r = await runCli(["run", "--no-check", "s.ts"], { cwd: project, env: { ...env, NODE_OPTIONS: spelling } });
      expect(r.stdout).not.toContain("ran");
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("tacit: NODE_OPTIONS (or node's command line) holds --heapsnapshot-near-heap-limit");
    });
  }
});
