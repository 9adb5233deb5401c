// A project with its own copy of tacit in node_modules while another tacit (a global one, here
// this checkout) runs: `npx tacit` in the project runs the copy, with the person's full authority,
// so its code is tacit's code as much as the running one's. Only node_modules/.bin/tacit was kept
// from scripts: a script with nothing but requestFileSystem(".") rewrote the copy's
// dist/main.js (and bin/tacit.js, and package.json), and the next `npx --offline tacit` there ran
// it. Through the real CLI, a real Deno and a real npx.

import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runScript, tempDirWithHome } from "../helpers.js";
import { ATTEMPT_PRELUDE, attemptOf, attempts, lit, writeTree } from "./fixtures.js";

describe("the tacit `npx tacit` runs in the project, when it is not the tacit running", () => {
  let dir: string;
  let env: Record<string, string>;
  let cleanup: () => void;
  const proof = () => path.join(dir, "ran-outside-the-sandbox");
  beforeEach(() => {
    ({ dir, env, cleanup } = tempDirWithHome("tacit-npx-copy-"));
    // A copy as npm installs it: the package, a dependency it loads (hoisted), and the .bin link.
    writeTree(dir, {
      "package.json": JSON.stringify({ name: "project", devDependencies: { tacit: "0.0.9" } }),
      "src/app.ts": "export const a = 1;\n",
      "node_modules/tacit/package.json": JSON.stringify({ name: "tacit", version: "0.0.9", type: "module", bin: { tacit: "bin/tacit.js" }, dependencies: { "tacit-dep": "1.0.0" } }),
      "node_modules/tacit/bin/tacit.js": '#!/usr/bin/env node\nimport "../dist/main.js";\n',
      "node_modules/tacit/dist/main.js": 'import { hello } from "tacit-dep";\nconsole.log(hello);\n',
      "node_modules/tacit-dep/package.json": JSON.stringify({ name: "tacit-dep", version: "1.0.0", type: "module", main: "index.js" }),
      "node_modules/tacit-dep/index.js": 'export const hello = "the local tacit";\n',
      "node_modules/left-pad/index.js": "module.exports = 1;\n",
      "node_modules/.bin/tacit": { symlink: "../tacit/bin/tacit.js" },
    });
    chmodSync(path.join(dir, "node_modules/tacit/bin/tacit.js"), 0o755);
  });
  afterEach(() => cleanup());

  it("can be read but not changed by a script of the tacit running, and the next `npx tacit` runs it as it was", async () => {
    const payload = `import { writeFileSync } from "node:fs"; writeFileSync(${lit(proof())}, "x");\n`;
    const before = readFileSync(path.join(dir, "node_modules/tacit/dist/main.js"), "utf8");
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("read", () => fs.access("node_modules/tacit/dist/main.js").read().includes("tacit-dep"));
  attempt("main", () => fs.access("node_modules/tacit/dist/main.js").write(${lit(payload)}));
  attempt("bin", () => fs.access("node_modules/tacit/bin/tacit.js").append(${lit(payload)}));
  attempt("manifest", () => fs.access("node_modules/tacit/package.json").write('{"name":"tacit","type":"module","bin":{"tacit":"x.js"}}'));
  attempt("new file", () => fs.access("node_modules/tacit/x.js").write(${lit(payload)}));
  attempt("dependency", () => fs.access("node_modules/tacit-dep/index.js").write(${lit(payload)} + 'export const hello = "";\\n'));
  attempt("delete the package", () => fs.access("node_modules/tacit").delete());
  attempt("other package", () => fs.access("node_modules/left-pad/index.js").write("module.exports = 2;\\n"));
  attempt("project", () => fs.access("src/app.ts").write("export const a = 2;\\n"));
});
`;
    const r = await runScript(script, [], { cwd: dir, env });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expect(attemptOf(found, "read")).toEqual({ status: "ok", value: true });
    for (const label of ["main", "bin", "manifest", "new file", "dependency", "delete the package"]) {
      const attempt = attemptOf(found, label);
      expect(attempt.status, label).toBe("SecurityError");
      expect(String(attempt.value), label).toContain("the code of the tacit that `npx tacit` runs here");
      expect(String(attempt.value), label).toContain("Work with other files");
    }
    // The rest of the project is the script's to change, as before.
    expect(attemptOf(found, "other package").status).toBe("ok");
    expect(attemptOf(found, "project").status).toBe("ok");
    expect(readFileSync(path.join(dir, "node_modules/tacit/dist/main.js"), "utf8")).toBe(before);
    expect(existsSync(path.join(dir, "node_modules/tacit/x.js"))).toBe(false);

    const npx = spawnSync("npx", ["--offline", "tacit"], { cwd: dir, encoding: "utf8", timeout: 60_000, env: { ...process.env, npm_config_update_notifier: "false" } });
    expect(npx.status, npx.stderr).toBe(0);
    expect(npx.stdout).toBe("the local tacit\n");
    expect(existsSync(proof())).toBe(false);
  }, 90_000);
});
