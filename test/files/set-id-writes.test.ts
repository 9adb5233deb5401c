// A file whose mode has the set-user-ID or set-group-ID bit is not written. The kernel clears
// those bits when a process without CAP_FSETID writes such a file, but tacit run as root (a
// container's usual user) kept them: a script's rewrite of a set-user-ID root program stayed
// set-user-ID root, for any user of the machine to run. Refused before anything changes, whoever
// runs tacit; deleting the file and writing a new one (made without those bits) stays possible.

import { chmodSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ATTEMPT_PRELUDE, attemptOf, attempts, expectRefused, realTempDir, tacit, writeTree } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const PROGRAM = "#!/bin/sh\necho original\n";
const mode = (name: string): number => statSync(path.join(root, name)).mode & 0o7777;

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-files-set-id-"));
  writeTree(root, { "setuid-program": PROGRAM, "setgid-program": PROGRAM, ".env.setuid": PROGRAM, "replaced-program": PROGRAM });
  chmodSync(path.join(root, "setuid-program"), 0o4755);
  chmodSync(path.join(root, "setgid-program"), 0o2755);
  chmodSync(path.join(root, ".env.setuid"), 0o4700);
  chmodSync(path.join(root, "replaced-program"), 0o4755);
});
afterAll(() => cleanup());

describe("writing a set-user-ID or set-group-ID file", () => {
  it("is refused for write, append and writeClassified, and the file keeps its content and mode", async () => {
    const script = `${ATTEMPT_PRELUDE}
requestFileSystem(".", (fs) => {
  attempt("write setuid", () => fs.access("setuid-program").write("#!/bin/sh\\nid\\n"));
  attempt("append setuid", () => fs.access("setuid-program").append("id\\n"));
  attempt("write setgid", () => fs.access("setgid-program").write("#!/bin/sh\\nid\\n"));
  attempt("append setgid", () => fs.access("setgid-program").append("id\\n"));
  attempt("writeClassified setuid", () => fs.writeClassified(".env.setuid", classify("id")));
  attempt("delete", () => fs.access("replaced-program").delete());
  attempt("write anew", () => fs.access("replaced-program").write("#!/bin/sh\\nid\\n"));
});
`;
    const r = await tacit(root, script);
    expect(r.code, r.stderr).toBe(0);
    const found = attempts(r.stdout);
    expectRefused(found, ["write setuid", "append setuid"], /set-user-ID \(mode 4755\).*nothing was written\. Delete it first/);
    expectRefused(found, ["write setgid", "append setgid"], /set-group-ID \(mode 2755\).*nothing was written/);
    // A classified write's refusal comes when it is asked for, as any of its checks' does.
    expectRefused(found, ["writeClassified setuid"], /set-user-ID/);
    for (const name of ["setuid-program", "setgid-program", ".env.setuid"]) expect(readFileSync(path.join(root, name), "utf8"), name).toBe(PROGRAM);
    expect(mode("setuid-program").toString(8)).toBe("4755");
    expect(mode("setgid-program").toString(8)).toBe("2755");
    expect(mode(".env.setuid").toString(8)).toBe("4700");
    // The way the refusal points to: a new file, which has neither bit nor any execute bit.
    expect(attemptOf(found, "delete").status).toBe("ok");
    expect(attemptOf(found, "write anew").status).toBe("ok");
    expect(readFileSync(path.join(root, "replaced-program"), "utf8")).toBe("#!/bin/sh\nid\n");
    expect(mode("replaced-program") & 0o7111).toBe(0);
  }, 30_000);
});
