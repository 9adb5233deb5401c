// An anchor's time is checked as a line's is: only the form tacit writes (Date#toISOString). The
// anchor's schema shares line.ts's parts (built once for both); it took any ISO 8601 date-time
// before (z.string().datetime()), a form tacit never writes. Through the real CLI, with a log and
// its anchor written by a real `tacit run`.

import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, unchecked } from "../helpers.js";
import { auditedWork, type auditHome } from "./fixtures.js";

describe("an audit anchor's time", () => {
  let ctx: ReturnType<typeof auditHome>;
  let work: string;
  let log: string;
  const run = () => runCli(unchecked(["run", "--audit-log", log, "script.ts"]), { cwd: work, env: ctx.env });

  beforeAll(async () => {
    ({ work, log, ...ctx } = auditedWork());
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
  });
  afterAll(() => ctx.cleanup());

  it("is refused in a form tacit does not write, and the log is left as it was", async () => {
    const anchors = path.join(ctx.home, "audit-anchors");
    const [name] = readdirSync(anchors);
    const file = path.join(anchors, name!);
    const record = JSON.parse(readFileSync(file, "utf8")) as { time: string };
    // The writer's own form: to the millisecond, in UTC.
    expect(record.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // An ISO 8601 date-time all the same (no milliseconds), which the record's schema took before.
    writeFileSync(file, JSON.stringify({ ...record, time: record.time.replace(/\.\d{3}Z$/, "Z") }, null, 2) + "\n");
    chmodSync(file, 0o600);
    const before = readFileSync(log);
    const next = await run();
    expect(next.code, next.stderr).toBe(2);
    expect(next.stderr).toMatch(/the audit anchor .* is not a tacit audit anchor \(time: a time as tacit writes it/);
    expect(next.stdout).not.toContain("audited");
    expect(readFileSync(log).equals(before)).toBe(true);
  });
});
