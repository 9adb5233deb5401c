// A one-shot run is a success only once its sandbox has finished writing its report. The host
// ends a one-shot's sandbox as soon as it has the report; it used to, before the rest of the
// report's write came (see ../report-with-tail.ts), and `tacit run` exited 0 while its sandbox was
// breaking the protocol.

import { expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { REPORT_WITH_TAIL } from "../report-with-tail.js";

it("a run whose sandbox goes on writing after its report fails as a protocol violation, not a success", async () => {
  const result = await runScript(REPORT_WITH_TAIL, ["--no-check"]);
  expect(result.code, result.stderr.slice(0, 400)).not.toBe(0);
  expect(result.stderr).toMatch(/protocol violation: the sandbox wrote to the protocol channel after reporting its result/);
  expect(result.stderr).toMatch(/leave its writing of frames alone/);
}, 60_000);
