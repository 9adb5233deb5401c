// The interpreter a PATH program names through env in its "#!" line (runner/fs/path-programs.ts):
// "#!/usr/bin/env -S <dir>/tools/interp" (or "#!/usr/bin/env <dir>/tools/interp") makes the kernel
// run env, which runs tools/interp with the program, whenever the user types its name. Only the
// interpreter the line names first (env) was kept from scripts: a script rewrote tools/interp (its
// mode kept), and the user's next `deploy` ran the script's code. Through the real CLI, a real
// Deno, a real bash and the system's env.

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, lit, makeExecutable, realTempDir, tacit, writeTree } from "./fixtures.js";

describe("the interpreter a PATH program's '#!' line names through env", () => {
  it("may be read but not rewritten by a script", async (ctx) => {
    const { dir, cleanup } = realTempDir("tacit-exec-path-env-interpreter-");
    ctx.onTestFinished(cleanup);
    const interpreter = '#!/bin/sh\nexec /bin/sh "$@"\n';
    writeTree(dir, {
      "bin/deploy": `#!/usr/bin/env -S ${dir}/tools/interp -e\necho deploying\n`,
      "bin/release": `#!/usr/bin/env ${dir}/tools/interp2\necho releasing\n`,
      // Options in one word with -S, its string joined to it.
      "bin/ship": `#!/usr/bin/env -iS${dir}/tools/interp3\necho shipping\n`,
      // A program named from the directory env changes into first.
      "bin/land": `#!/usr/bin/env -S -C ${dir}/tools ./interp4\necho landing\n`,
      "tools/interp": interpreter,
      "tools/interp4": interpreter,
      "tools/interp3": interpreter,
      "tools/interp2": interpreter,
      "tools/other": "#!/bin/sh\necho other\n",
      "home/.keep": "",
    });
    for (const file of ["bin/deploy", "bin/release", "bin/ship", "bin/land", "tools/interp", "tools/interp2", "tools/interp3", "tools/interp4", "tools/other"]) makeExecutable(path.join(dir, file));
    const marker = path.join(dir, "PWNED");
    const evil = `#!/bin/sh\ntouch ${marker}\n`;
    const PATH = [path.join(dir, "bin"), process.env.PATH ?? ""].join(path.delimiter);
    const r = await tacit(dir, `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("rewrite other", () => fs.access("tools/other").write("#!/bin/sh\\necho changed\\n"));
  attempt("rewrite interp", () => fs.access("tools/interp").write(${lit(evil)}));
  attempt("rewrite interp2", () => fs.access("tools/interp2").write(${lit(evil)}));
  attempt("rewrite interp3", () => fs.access("tools/interp3").write(${lit(evil)}));
  attempt("rewrite interp4", () => fs.access("tools/interp4").write(${lit(evil)}));
  attempt("read interp", () => fs.access("tools/interp").read().length > 0);
});
`, [], { PATH, HOME: path.join(dir, "home") });
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["rewrite interp", "rewrite interp2", "rewrite interp3", "rewrite interp4"], /#!.*(deploy|release|ship|land).*a directory on the user's PATH.*Ask the user to change it/);
    expect(attemptOf(found, "read interp")).toEqual({ status: "ok", value: true });
    expect(attemptOf(found, "rewrite other").status).toBe("ok");
    // The user types the names.
    execFileSync("bash", ["-c", "deploy; release; ship; land"], { cwd: dir, env: { ...process.env, PATH }, stdio: "ignore" });
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(path.join(dir, "tools/interp"), "utf8")).toBe(interpreter);
  });
});
