// `tacit run examples/hello.ts` against a floor measured in the same run: `node -e 0`
// followed by `deno run` of the same program (its `import … from "tacit"` replaced by a
// two-line shim, since plain Deno cannot resolve "tacit").
// With type-checking it is measured twice: cold (the verdict cache off, so the checker runs
// every time: a script run for the first time) and with the script's passing verdict
// remembered from an earlier run (the same script run again). The plain `deno run` floor does
// not type-check at all.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { denoExecutable, packageRoot } from "../runner/paths.js";
import { measureInterleaved, report } from "./measure.js";

export function benchStartup(runs: number): boolean {
  const hello = path.join(packageRoot, "examples", "hello.ts");
  const dir = mkdtempSync(path.join(tmpdir(), "tacit-bench-"));
  try {
    const floorScript = path.join(dir, "hello.ts");
    const shim =
      "const println = (...v: unknown[]) => console.log(...v); " +
      "const printf = (f: string, ...a: unknown[]) => console.log(f, ...a);";
    writeFileSync(floorScript, readFileSync(hello, "utf8").replace(/^import .* from "tacit";$/m, shim));
    const node = process.execPath;
    const tacit = path.join(packageRoot, "bin", "tacit.js");
    const floor = "floor: node -e 0; deno run hello.ts";
    const checked = "tacit run hello.ts (checked, cold)";
    const remembered = "tacit run hello.ts (check remembered)";
    const unchecked = "tacit run --no-check hello.ts";
    // A tacit home of the bench's own: the verdict cache starts empty and the warm-up rounds fill it.
    const home = path.join(dir, "home");
    const samples = measureInterleaved(
      [
        { label: floor, steps: [{ file: node, args: ["-e", "0"] }, { file: denoExecutable(), args: ["run", "--no-config", floorScript], cwd: dir }] },
        { label: checked, steps: [{ file: node, args: [tacit, "run", hello], cwd: packageRoot, env: { TACIT_HOME: home, TACIT_TYPECHECK_CACHE: "off" } }] },
        { label: remembered, steps: [{ file: node, args: [tacit, "run", hello], cwd: packageRoot, env: { TACIT_HOME: home } }] },
        { label: unchecked, steps: [{ file: node, args: [tacit, "run", "--no-check", hello], cwd: packageRoot, env: { TACIT_HOME: home } }] },
      ],
      runs,
    );
    return report(`startup (${runs} runs each, interleaved)`, floor, samples, { [checked]: 2.0, [remembered]: 2.0, [unchecked]: 1.5 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
