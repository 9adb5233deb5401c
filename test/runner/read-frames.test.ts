// A read's request taken from its text (runner/frames.ts plainReadRequestOf) must be what
// JSON.parse and flatRequestOf make of the same line, or nothing (the line is then parsed as before).

import { describe, expect, it } from "vitest";
import { ACTION_LIMITS } from "../../library/protocol.js";
import { flatRequestOf, parseSandboxFrame, plainReadRequestOf } from "../../runner/frames.js";

const canonical = (id: unknown, scope: unknown, path: unknown, as: unknown = "text"): string => JSON.stringify({ type: "request", id, action: { kind: "FsRead", scope, path, as } });

/** What the schemas' way makes of `line`: flatRequestOf of its JSON, or null where it is no JSON. */
function theLongWay(line: string): unknown {
  try {
    return flatRequestOf(JSON.parse(line));
  } catch {
    return null;
  }
}

const LINES = [
  canonical(1, "s", "/a"),
  canonical(7, "fs_0123456789abcdef", "/tmp/data/f1.txt", "bytes"),
  canonical(Number.MAX_SAFE_INTEGER, "s", "/a"),
  canonical(Number.MAX_SAFE_INTEGER + 1, "s", "/a"),
  canonical(2 ** 60, "s", "/a"),
  canonical(0, "s", "/a"),
  canonical(-1, "s", "/a"),
  canonical(1.5, "s", "/a"),
  canonical("1", "s", "/a"),
  canonical(1, "", ""),
  canonical(1, "s", "/a", "TEXT"),
  canonical(1, "s", "/a", "texts"),
  canonical(1, "s", "/a", null),
  canonical(1, "s", 'quote"d'),
  canonical(1, "s", "back\\slash"),
  canonical(1, "s", "line\nbreak"),
  canonical(1, "s\u0001", "/a"),
  canonical(1, "s", "/a\u007f\u2028\u2029 é 漢 🙂"),
  canonical(1, "s", "/" + "p".repeat(ACTION_LIMITS.pathChars - 1)),
  canonical(1, "s", "/" + "p".repeat(ACTION_LIMITS.pathChars)),
  canonical(1, "s".repeat(ACTION_LIMITS.scopeChars), "/a"),
  canonical(1, "s".repeat(ACTION_LIMITS.scopeChars + 1), "/a"),
  canonical(1, 5, "/a"),
  canonical(1, "s", ["/a"]),
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}} ',
  ' {"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}\n',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text","x":1}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"},"x":1}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","path":"/b","as":"text"}}',
  '{"type":"request","id":1,"id":2,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}',
  '{"type":"request","id":1,"action":{"scope":"s","kind":"FsRead","path":"/a","as":"text"}}',
  '{"type":"request","id":01,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}',
  '{"type":"request","id":1e3,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}',
  '{"type":"request","id":1.0,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a\\u0062","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a", "as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsReadChunk","scope":"s","path":"/a","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a\t","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a\u0000","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s\\"","path":"/a","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}{"type":"request","id":2,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}',
  '{"type":"request","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"},"action":{"kind":"FsWrite","scope":"s","path":"/a","content":"x","append":false}}',
  '{"type":"post","id":1,"action":{"kind":"FsRead","scope":"s","path":"/a","as":"text"}}',
];

describe("plainReadRequestOf", () => {
  it("takes a read's request written as the stub writes it", () => {
    expect(plainReadRequestOf(canonical(7, "fs_1", "/tmp/x/f1.txt", "bytes"))).toEqual({ type: "request", id: 7, action: { kind: "FsRead", scope: "fs_1", path: "/tmp/x/f1.txt", as: "bytes" } });
  });

  it("makes of each line what JSON.parse and flatRequestOf make of it, key order included, or leaves it to them", () => {
    let taken = 0;
    for (const line of LINES) {
      const plain = plainReadRequestOf(line);
      if (plain === null) continue;
      taken++;
      const long = theLongWay(line);
      expect(plain, line.slice(0, 120)).toStrictEqual(long);
      expect(JSON.stringify(plain)).toBe(JSON.stringify(long));
    }
    // The canonical lines within the limits, with no escape: ids 1, 7 (bytes) and MAX_SAFE_INTEGER, empty strings, raw characters, both limits.
    expect(taken).toBe(7);
  });

  it("leaves parseSandboxFrame's answers as they were, refusals included", () => {
    for (const line of LINES) {
      const long = theLongWay(line);
      if (long !== null) expect(parseSandboxFrame(line)).toStrictEqual(long);
      else if (plainReadRequestOf(line) === null) continue;
      else throw new Error(`taken from its text, refused the long way: ${line.slice(0, 120)}`);
    }
  });
});
