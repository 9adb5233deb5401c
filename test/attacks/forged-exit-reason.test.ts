// A script past the validator cannot make its own end read as tacit's memory limit. The host
// told a run that ran out of memory by V8's crash text on the sandbox's stderr, and a script
// that writes that text and ends itself was reported as "resource-limit" (exit 125): the person
// was told to raise --memory-limit-mb for a script that had simply stopped. V8's fatal
// out-of-memory ends the process by a trap (SIGTRAP) or abort; only that says so now.

import { expect, it } from "vitest";
import { runBypassed } from "../helpers.js";

const crashText = "\n<--- Last few GCs --->\n\n#\n# Fatal JavaScript out of memory: Reached heap limit\n# JavaScript heap out of memory\n#\n";

it.each([
  ["an uncaught error thrown from a timer", `setTimeout(() => { throw new Error(${JSON.stringify(crashText)}); }, 0); await new Promise(() => setInterval(() => undefined, 1000));`],
  ["V8's crash text written to stderr, then an exit", `Deno.stderr.writeSync(new TextEncoder().encode(${JSON.stringify(crashText)})); Deno.exit(1);`],
])("%s that says 'out of memory' is not reported as the memory limit", async (_name, code) => {
  const result = await runBypassed(code, { keepRuntime: true, config: { memoryLimitMb: 128, executionTimeoutMs: 10_000 } });
  expect(result.outcome, result.error ?? "").not.toBe("resource-limit");
  expect(result.exitCode).not.toBe(125);
  expect(result.error ?? "").not.toMatch(/memory-limit-mb/);
});
