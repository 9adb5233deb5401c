// Frames a script rewrites on their way out, through the real CLI. The stub writes every
// request with JSON.stringify, which agent code can replace: so a script can send the host any
// line in place of a read's frame. The host checks the frames a loop over files sends most by
// hand (runner/frames.ts, flatRequestOf) and everything else with the zod schemas; a frame that
// either would refuse must end the evaluation, and never be carried out.

import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runScript, tempDirWithHome } from "../helpers.js";
import { makeCanary } from "../files/fixtures.js";

/** A script whose reads of canary.txt go out as `rewrite` (a function of the frame's JSON text) makes them. */
function scriptRewritingReads(rewrite: string): string {
  return `
const original = JSON.stringify;
const rewrite = ${rewrite};
(JSON as any).stringify = function (value: any, ...rest: any[]) {
  const text = original.call(JSON, value, ...rest);
  return value && value.type === "request" && value.action && value.action.kind === "FsRead" ? rewrite(text) : text;
};
requestFileSystem(".", (fs) => println("read: " + fs.access("canary.txt").read()));
`;
}

/** Rewrites of a read's frame that its schema refuses; each, if carried out, would read canary.txt. */
const HOSTILE_REWRITES: Record<string, string> = {
  "an action key the schema lacks": `(t: string) => t.replace(/}}$/, ',"extra":1}}')`,
  "__proto__ as an own key of the action": `(t: string) => t.replace(/}}$/, ',"__proto__":{"kind":"Print"}}}')`,
  "__proto__ as an own key of the frame": `(t: string) => t.replace(/}}$/, '},"__proto__":{}}')`,
  "a missing field": `(t: string) => t.replace(',"as":"text"', "")`,
  "a read of a third kind": `(t: string) => t.replace('"as":"text"', '"as":"json"')`,
  "a field of the wrong type": `(t: string) => t.replace('"as":"text"', '"as":["text"]')`,
  // Normalized, the path is canary.txt's; it is longer than the protocol allows.
  "a path longer than the protocol allows": `(t: string) => t.replace(/"path":"([^"]*)\\/canary\\.txt"/, (_m: string, dir: string) => '"path":"' + dir + "/.".repeat(2100) + '/canary.txt"')`,
  "a request id of 0": `(t: string) => t.replace(/"id":\\d+/, '"id":0')`,
  "a request id past the safe integers": `(t: string) => t.replace(/"id":\\d+/, '"id":9007199254740993')`,
  "a request id as a string": `(t: string) => t.replace(/"id":(\\d+)/, '"id":"$1"')`,
  "a post in place of a request": `(t: string) => t.replace('"type":"request"', '"type":"post"')`,
};

describe("a read's frame rewritten by the script (JSON.stringify replaced)", () => {
  it("is carried out as sent when it is what the schema accepts (the harness works)", async () => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-rewritten-frames-");
    try {
      const canary = makeCanary();
      writeFileSync(path.join(dir, "canary.txt"), canary);
      // Keys reordered: the same frame to the schema.
      const r = await runScript(scriptRewritingReads(`(t: string) => t.replace('"type":"request",', "").replace(/}$/, ',"type":"request"}')`), ["--no-check"], { cwd: dir, env });
      expect(r.stderr).toBe("");
      expect(r.stdout).toBe(`read: ${canary}\n`);
    } finally {
      cleanup();
    }
  });

  it.each(Object.entries(HOSTILE_REWRITES))("ends the evaluation for %s, and nothing is read", async (_what, rewrite) => {
    const { dir, env, cleanup } = tempDirWithHome("tacit-rewritten-frames-");
    try {
      const canary = makeCanary();
      writeFileSync(path.join(dir, "canary.txt"), canary);
      const r = await runScript(scriptRewritingReads(rewrite), ["--no-check"], { cwd: dir, env });
      expect(r.stdout + r.stderr, "the read was carried out").not.toContain(canary);
      expect(r.stdout).not.toContain("read: ");
      expect(r.stderr).toMatch(/protocol violation: the sandbox sent a malformed frame/);
      expect(r.code).not.toBe(0);
    } finally {
      cleanup();
    }
  });
});
