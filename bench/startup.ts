// `tacit run examples/hello.ts` against a floor measured in the same run: `node -e 0`
// followed by `deno run` of the same program (its `import … from "tacit"` replaced by a
// two-line shim, since plain Deno cannot resolve "tacit").

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
    const checked = "tacit run examples/hello.ts";
    const unchecked = "tacit run --no-check examples/hello.ts";
    const samples = measureInterleaved(
      [
        { label: floor, steps: [{ file: node, args: ["-e", "0"] }, { file: denoExecutable(), args: ["run", "--no-config", floorScript], cwd: dir }] },
        { label: checked, steps: [{ file: node, args: [tacit, "run", hello], cwd: packageRoot }] },
        { label: unchecked, steps: [{ file: node, args: [tacit, "run", "--no-check", hello], cwd: packageRoot }] },
      ],
      runs,
    );
    return report(`startup (${runs} runs each, interleaved)`, floor, samples, { [checked]: 2.0, [unchecked]: 1.5 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
