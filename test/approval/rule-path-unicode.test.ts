// A rule's path glob matches a name whatever Unicode normalization either is written in: a rule
// typed as "café/**" (é one character, NFC, as keyboards give it) named nothing in a directory
// whose name holds e and a combining accent (NFD, as macOS writes names and archives made there
// keep them), and a script wrote café/prod.conf there with no question under an always-ask rule.

import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { unattended, worlds } from "./fixtures.js";

const world = worlds("tacit-rule-path-unicode-");

it.each([
  ["an NFC rule, an NFD directory", "caf\u00e9", "cafe\u0301"],
  ["an NFD rule, an NFC directory", "cafe\u0301", "caf\u00e9"],
])("%s: the write is asked about", async (_name, ruleName, diskName) => {
  const w = world();
  w.file(`${diskName}/prod.conf`, "safe\n");
  const config = w.config([{ action: "fs.write", tier: "always-ask", path: `${ruleName}/**` }]);
  const script = w.script(
    `requestFileSystem(".", (fs) => {\n` +
      `  const dir = fs.access(".").children().find((c) => c.isDirectory && c.name.startsWith("caf"))!.name;\n` +
      `  try { fs.access(dir + "/prod.conf").write("evil\\n"); println("wrote"); } catch (e) { println("refused:", String(e)); }\n` +
      `});\n`,
  );
  const run = await unattended(w, ["run", "--config", config, script]);
  // The bad thing: the file under the rule changed with no one asked.
  expect(readFileSync(w.at(`${diskName}/prod.conf`), "utf8"), run.all).toBe("safe\n");
  expect(run.stdout, run.all).toContain(`refused: SecurityError: fs.write ${w.at(`${diskName}/prod.conf`)}: refused: the policy requires a person's approval (always-ask)`);
  expect(run.stdout).not.toContain("wrote");
});
