// Delays Node's timers do not take as given (negative, not a number, past 2^31 - 1 ms) are 1 ms,
// as in Node; but Node's warning of them reads the runtime's global, which the sandbox removes,
// and a script that type-checks, setTimeout(f, -5), failed with "ReferenceError: Deno is not
// defined", an error that blamed it for a name it never used. Through the real CLI.

import { expect, it } from "vitest";
import { runScript } from "../helpers.js";

it("a negative, an overlong or an undefined delay runs the callback after 1 ms, as in Node, and the script succeeds", async () => {
  const r = await runScript(
    [
      'setTimeout(() => println("negative"), -5);',
      'setTimeout(() => println("past 2^31 - 1 ms"), 2 ** 40);',
      'setTimeout(() => println("no delay"));',
      'const every = setInterval((word: string) => { clearInterval(every); println(word); }, Number.NaN, "interval");',
    ].join("\n"),
  );
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(r.stdout.trim().split("\n").sort()).toEqual(["interval", "negative", "no delay", "past 2^31 - 1 ms"]);
});
