// A glob with "/" matches the path below the directory searched. For the file system's root
// ("/", a scope opened with --allowed-roots /) that path was cut one character too far:
// find("/", "tmp/g/src/*.ts") tried "mp/g/src/a.ts" and answered [], while "mp/g/src/*.ts"
// found the file (shown through the real CLI in a mount namespace with /tmp a fresh tmpfs: a
// test through the CLI would walk the whole file system of the machine it runs on, so this one
// calls the matchers the search worker uses, on real paths, directly).

import { describe, expect, it } from "vitest";
import { directoryMayHoldMatch, globMatcher } from "../../runner/fs/grep-core.js";

describe("a glob with \"/\" under the file system's root", () => {
  it("is tried on the whole path below \"/\", as under any other directory", () => {
    expect(globMatcher("tmp/g/src/*.ts", "/")("/tmp/g/src/a.ts")).toBe(true);
    expect(globMatcher("mp/g/src/*.ts", "/")("/tmp/g/src/a.ts")).toBe(false);
    expect(globMatcher("!tmp/**", "/")("/tmp/g/src/a.ts")).toBe(false);
    expect(globMatcher("!tmp/**", "/")("/usr/lib/x.so")).toBe(true);
    // The same under a directory that is not the root, for comparison.
    expect(globMatcher("g/src/*.ts", "/tmp")("/tmp/g/src/a.ts")).toBe(true);
  });

  it("counts an unreadable directory below \"/\" where the glob could match in it", () => {
    const mayHold = directoryMayHoldMatch("tmp/g/src/*.ts", "/");
    expect(mayHold("/tmp")).toBe(true);
    expect(mayHold("/tmp/g/src")).toBe(true);
    expect(mayHold("/usr")).toBe(false);
    expect(directoryMayHoldMatch("!tmp/**", "/")("/tmp/g")).toBe(false);
    expect(directoryMayHoldMatch("!tmp/**", "/")("/usr")).toBe(true);
  });
});
