// What a person states on the command line is what tacit runs under, or tacit refuses: a flag
// given twice kept only its last value in silence (commander's way), so a classified pattern or a
// whole config file given first was dropped, and the script read what the person had classified.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, tempDirWithHome } from "../helpers.js";

const { dir, env, cleanup } = tempDirWithHome("tacit-stated-policy-");
afterAll(cleanup);

const CANARY = "CANARY-stated-policy-7f3a";
writeFileSync(path.join(dir, ".secret"), `${CANARY}\n`);
writeFileSync(path.join(dir, "strict.json"), JSON.stringify({ libraryConfig: { classifiedPaths: [".secret", ".env"] } }));
writeFileSync(path.join(dir, "loose.json"), JSON.stringify({}));
const readSecret = path.join(dir, "read-secret.ts");
writeFileSync(readSecret, `requestFileSystem(".", (fs) => { println(fs.access(".secret").read()); });\n`);

describe.concurrent("a value flag given twice is refused, not half-read", () => {
  it("--classified-paths twice: the first list is not dropped (the script does not read what it classified)", async () => {
    const r = await runCli(["run", "--no-check", "--classified-paths", ".secret", "--classified-paths", ".env", readSecret], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--classified-paths is given twice");
    expect(r.stderr).toContain("one comma-separated list (--classified-paths a,b)");
  });

  it("--config twice, the second with = : the first file's policy is not dropped", async () => {
    const r = await runCli(["run", "--no-check", "--config", "strict.json", "--config=loose.json", readSecret], { cwd: dir, env });
    expect(r.stdout + r.stderr).not.toContain(CANARY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--config is given twice");
  });

  it("--llm-api-key twice: refused with --json too, and neither key is repeated in the error", async () => {
    const r = await runCli(["run", "--json", "--llm-api-key", "sk-first-4b1d", "--llm-api-key", "sk-second-9c2e", readSecret], { cwd: dir, env });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: 2, outcome: "usage" });
    expect(r.stdout + r.stderr).toContain("--llm-api-key is given twice");
    expect(r.stdout + r.stderr).not.toMatch(/sk-first|sk-second/);
  });

  it("each value flag once (one list, one file) runs as stated", async () => {
    const r = await runCli(["run", "--no-check", "--quiet", "--config", "strict.json", readSecret], { cwd: dir, env });
    expect(r.stdout).not.toContain(CANARY);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("read refused: the path is classified");
  });
});
