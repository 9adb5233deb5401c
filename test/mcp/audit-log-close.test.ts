// The audit log's close said nothing of a failure it had not met itself: with nothing unsigned
// left to write, closing checked nothing, and a failure a timer's write or signing had met was
// skipped over. So a tacit serve whose log was cut (or written to) after its last call exited 0,
// with a log missing its end, and nobody was told. Now closing checks that the file still ends
// where tacit's own lines end and reports a failure it holds: tacit serve says so on stderr and
// exits 2, the exit for an audit log that failed.

import { appendFileSync, readFileSync, statSync, truncateSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { EXIT_2_SAID, serveWithAuditLog } from "../audit/fixtures.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** Serves with an audit log, runs one call that writes a file (logged and signed before it answers), changes the log with `tamper`, then ends the client's input. */
async function serveThenTamper(tamper: (log: string) => void): Promise<{ code: number | null; stderr: string; log: string }> {
  // The log outside the allowed roots (the work directory), as it should be.
  const { client, log, stderr, exited } = await serveWithAuditLog("tacit-audit-close-", cleanups);
  client.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "execute_typescript", arguments: { code: 'requestFileSystem(".", (fs) => fs.access("done.txt").write("1"));' } } });
  expect((await client.answer(2)).result?.structuredContent?.exitCode, stderr()).toBe(0);
  // The call's events and their signed head are in the file by its answer.
  expect(readFileSync(log, "utf8").trimEnd().split("\n").at(-1)).toContain('"type":"head"');
  tamper(log);
  client.child.stdin.end();
  const code = await exited;
  return { code, stderr: stderr(), log };
}

describe("tacit serve: an audit log changed after its last call", () => {
  it("cut (its last signed head gone): tacit says so on stderr and exits 2", async () => {
    const { code, stderr, log } = await serveThenTamper((file) => {
      const lines = readFileSync(file, "utf8").trimEnd().split("\n");
      truncateSync(file, statSync(file).size - Buffer.byteLength(`${lines.at(-1)!}\n`));
    });
    // The bad thing: exit 0, as if the log were whole.
    expect(code, stderr).toBe(2);
    const said = stderr.split("\n").filter((line) => line.includes("shrank by"));
    expect(said, stderr).toHaveLength(1);
    expect(said[0]).toContain(`tacit: the audit log ${log} shrank by`);
    expect(said[0]).toContain("tacit audit verify");
    // Said as tacit ends: it told of actions "refused from now on", when none were to come.
    expect(said[0]).not.toContain("refused from now on");
    expect(said[0]).toMatch(new RegExp(`${EXIT_2_SAID}$`));
  }, 60_000);

  it("written to by another process: tacit says so on stderr and exits 2", async () => {
    const { code, stderr, log } = await serveThenTamper((file) => appendFileSync(file, '{"written by":"another process"}\n'));
    expect(code, stderr).toBe(2);
    const said = stderr.split("\n").filter((line) => line.includes("grew by"));
    expect(said, stderr).toHaveLength(1);
    expect(said[0]).toContain(`tacit: the audit log ${log} grew by`);
    expect(said[0]).toMatch(new RegExp(`${EXIT_2_SAID}$`));
  }, 60_000);

  it("left as tacit wrote it: exit 0, nothing said", async () => {
    const { code, stderr } = await serveThenTamper(() => undefined);
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/shrank by|grew by|tacit exits 2/);
  }, 60_000);
});
