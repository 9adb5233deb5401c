// `npm run bench`: every benchmark, each printing medians and ratios against a floor
// measured in the same run. BENCH_RUNS sets the number of samples (default 15; the heavy
// file benchmarks take a third of it, at least 3). BENCH_ONLY picks some by name, comma
// separated (startup, reads, writes, print, grep, map, exec, net, redaction, server-text, serve, audit, validator); by default all run.

import { benchAudit } from "./audit.js";
import { benchMap } from "./classified.js";
import { benchExec } from "./exec.js";
import { benchNet } from "./net.js";
import { benchPrint } from "./print.js";
import { benchRedaction, benchServerText } from "./redaction.js";
import { benchServe } from "./serve.js";
import { benchGrepRecursive, benchReads } from "./files.js";
import { benchStartup } from "./startup.js";
import { benchValidator } from "./validator.js";
import { benchWrites } from "./writes.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const runs = Number(process.env.BENCH_RUNS ?? 15);
const benchmarks: Record<string, (runs: number) => boolean | Promise<boolean>> = {
  startup: benchStartup,
  reads: benchReads,
  writes: benchWrites,
  print: benchPrint,
  grep: benchGrepRecursive,
  map: benchMap,
  exec: benchExec,
  net: benchNet,
  redaction: benchRedaction,
  "server-text": benchServerText,
  serve: benchServe,
  audit: benchAudit,
  validator: benchValidator,
};
const only = (process.env.BENCH_ONLY ?? "")
  .split(",")
  .map((name) => name.trim())
  .filter((name) => name !== "");
const unknown = only.filter((name) => !(name in benchmarks));
if (unknown.length > 0) {
  console.error(`BENCH_ONLY: no benchmark named ${unknown.join(", ")} (there are: ${Object.keys(benchmarks).join(", ")})`);
  process.exit(2);
}
// The benchmarks start tacit and Deno hundreds of times: with a tacit home and a Deno cache of
// their own, removed at the end, not the user's. In ~/.config/tacit each run would leave what
// later runs of the user act on (own-files.json: the sinks and configs runs were given, refused
// and covered from then on); ~/.cache/deno would keep the floors' compiled scripts.
const scratch = mkdtempSync(path.join(tmpdir(), "tacit-bench-home-"));
process.env.TACIT_HOME ??= path.join(scratch, "tacit");
process.env.DENO_DIR ??= path.join(scratch, "deno");
const results: boolean[] = [];
try {
  for (const [name, bench] of Object.entries(benchmarks)) {
    if (only.length === 0 || only.includes(name)) results.push(await bench(runs));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
console.log(results.every(Boolean) ? "\nall targets met" : "\nsome targets missed (see above)");
