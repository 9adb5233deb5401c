// The secure output sink: created owner-only (0600) with its parents, appended to, and an
// existing file keeps its own permissions and content.

import { chmodSync, chownSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runScript } from "../helpers.js";
import { makeCanary, realTempDir, tacit, writeTree } from "./fixtures.js";

let base: string;
let root: string;
let cleanup: () => void;
const canary = makeCanary();

const SCRIPT = `
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  println("plain line");
  println("secret:", secret);
});
`;

beforeAll(() => {
  ({ dir: base, cleanup } = realTempDir("tacit-files-sink-"));
  root = path.join(base, "tree");
  writeTree(root, { ".env": canary });
});
afterAll(() => cleanup());

describe("the secure sink", () => {
  it("is created 0600, with its missing parents, and receives plain and classified output", async () => {
    const sink = path.join(base, "new", "nested", "secure.log");
    const r = await tacit(root, SCRIPT, ["--secure-output", sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain line\nsecret: Classified(***)\n");
    expect(statSync(sink).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(sink)).isDirectory()).toBe(true);
    expect(readFileSync(sink, "utf8")).toBe(`plain line\nsecret: ${canary}\n`);

  });

  it("a sink that cannot be written is reported once on stderr, without the plaintext", async () => {
    // A failed append left the sink's chain rejected, so every later one was skipped without a
    // word: the plaintext meant for a person was lost and nobody was told.
    writeFileSync(path.join(base, "a-file"), "not a directory\n");
    const sink = path.join(base, "a-file", "secure.log");
    const r = await tacit(root, SCRIPT + SCRIPT, ["--secure-output", sink, "--quiet"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain line\nsecret: Classified(***)\n".repeat(2));
    expect(r.stderr.match(/cannot write to the secure output/g)).toHaveLength(1);
    expect(r.stderr).toContain(sink);
    expect(r.stderr).not.toContain(canary);
  });

  it("keeps an existing file's mode (0644) and content, and appends; warns once that others may read it, naming the fix", async () => {
    const sink = path.join(base, "existing.log");
    writeFileSync(sink, "previous content\n");
    chmodSync(sink, 0o644);
    // Relative to the working directory.
    const r = await tacit(root, SCRIPT + SCRIPT, ["--secure-output", "../existing.log"]);
    expect(r.stderr).toBe(
      `tacit: warning: the secure output ${sink} may be read or written by others than you (mode 0644), and the plaintext tacit appends there with it; ` +
        `run \`chmod 600 ${sink}\` (tacit leaves an existing file's permissions as they are)\n`,
    );
    expect(r.code).toBe(0);
    expect(statSync(sink).mode & 0o777).toBe(0o644);
    expect(readFileSync(sink, "utf8")).toBe(`previous content\n${`plain line\nsecret: ${canary}\n`.repeat(2)}`);
  });

  it("an existing owner-only file is appended to without a word", async () => {
    const sink = path.join(base, "private.log");
    writeFileSync(sink, "previous content\n", { mode: 0o600 });
    const r = await tacit(root, SCRIPT, ["--secure-output", sink]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(readFileSync(sink, "utf8")).toBe(`previous content\nplain line\nsecret: ${canary}\n`);
  });

  it("a sink file a script created in an earlier run (0644 by the umask) is warned about in the run that writes plaintext to it", async () => {
    // The first run has no --secure-output: the file is an ordinary one to its script.
    const first = await tacit(root, 'requestFileSystem(".", (fs) => fs.access("secure.log").write(""));');
    expect(first.code, first.stderr).toBe(0);
    const sink = path.join(root, "secure.log");
    expect(statSync(sink).mode & 0o077).not.toBe(0);
    const r = await tacit(root, SCRIPT, ["--secure-output", "secure.log"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`tacit: warning: the secure output ${sink} may be read or written by others than you`);
    expect(r.stderr).toContain(`chmod 600 ${sink}`);
    expect(r.stderr).not.toContain(canary);
    expect(readFileSync(sink, "utf8")).toBe(`plain line\nsecret: ${canary}\n`);
  });

  it.skipIf(process.getuid?.() !== 0)("an existing file another user owns is refused, and no plaintext is written to it", async () => {
    const sink = path.join(base, "someone-elses.log");
    writeFileSync(sink, "theirs\n", { mode: 0o600 });
    chownSync(sink, 65534, 65534);
    const r = await tacit(root, SCRIPT, ["--secure-output", sink]);
    expect(readFileSync(sink, "utf8"), "plaintext was written to another user's file").toBe("theirs\n");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain line\nsecret: Classified(***)\n");
    expect(r.stderr.match(/is owned by another user/g)).toHaveLength(1);
    expect(r.stderr).toContain(`the secure output ${sink} is owned by another user (uid 65534, you are uid 0)`);
    expect(r.stderr).not.toContain(canary);
    expect(readFileSync(sink, "utf8")).toBe("theirs\n");
  });

  it("takes at most what the script may print from one evaluation, even behind a slow value", async () => {
    // Printed behind a value still being computed, each append waited, text and all: a
    // security review's script printed 1.8 GB into the sink in a 30 s run while the host grew
    // to 1.9 GB resident. Here a map of about 2 s (waiting, not spinning: as slow, without a
    // core), then 16 MiB of plain text: past the 10 MiB share, which is all the cut needs (60 MiB,
    // as before, only had the host read and drop 44 MiB more).
    const sink = path.join(base, "flood.log");
    const script = `
requestFileSystem(".", (fs) => {
  const slow = fs.readClassified(".env").map((v) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000); return v; });
  println("first:", slow);
  const chunk = "y".repeat(512 * 1024);
  for (let i = 0; i < 32; i++) print(chunk);
});
`;
    const r = await tacit(root, script, ["--secure-output", sink]);
    expect(r.code, r.stderr).toBe(0);
    const written = readFileSync(sink, "utf8");
    expect(written.startsWith(`first: ${canary}\n`)).toBe(true);
    expect(written).toContain("[tacit: secure output cut:");
    expect(Buffer.byteLength(written)).toBeLessThan(11 * 1024 * 1024);
  }, 60_000);

  it("reads a printed line's classified values one at a time, never the whole line at once", async () => {
    // Joined as soon as computed, a line of 150 copies of a 3 MB classified value was a 450 MB
    // string in the host, and lines queued behind a slow value were all held: a security
    // review's script took the host to 1.4 GB resident, and out of memory under a 300 MB heap.
    // Counted as nothing, such lines also queued without limit. Under a 300 MB heap here.
    const sink = path.join(base, "parts.log");
    const config = path.join(base, "small-store.json");
    writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: 16 * 1024 * 1024 }));
    const script = `
requestFileSystem(".", (fs) => {
  const slow = fs.readClassified(".env").map((v) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000); return v; });
  println("first:", slow);
  const big = classify("z".repeat(3_000_000));
  const parts: unknown[] = new Array(150).fill(big);
  for (let i = 0; i < 4; i++) print(...parts);
  println("printed");
});
`;
    const r = await runScript(script, ["--config", config, "--secure-output", sink], {
      cwd: root,
      env: { NODE_OPTIONS: "--max-old-space-size=300" },
    });
    expect(r.code, r.stderr.slice(0, 2000)).toBe(0);
    expect(r.stdout.endsWith("printed\n")).toBe(true);
    const written = readFileSync(sink, "utf8");
    expect(written.startsWith(`first: ${canary}\nzzz`)).toBe(true);
    expect(written).toContain("[tacit: secure output cut:");
    // 10 MiB of what the script printed plus the 16 MiB store, and the marker.
    expect(Buffer.byteLength(written)).toBeLessThan(27 * 1024 * 1024);
  }, 60_000);

  it("counts the notes on values that could not be computed against the evaluation's share", async () => {
    // Written straight to the sink, the store's notes had no cap: mapping a value with a
    // function that throws a 3,000-character message, in a loop, wrote 162 MB in 10 s.
    const sink = path.join(base, "notes.log");
    const config = path.join(base, "small-store-notes.json");
    // The notes count as printed text against the evaluation's share: what the script may print,
    // outputLimitBytes, here 16 KiB (the store, and with it the share's other part, 1 MiB). Only the
    // maps answered before the evaluation ends keep their long reason (its store is given back
    // then; those answered later note a short one of some 150 bytes), and how many are depends on
    // how far the loop runs ahead of the evaluator: with the default 10 MiB of printing, which the
    // long notes had to pass, 15,000 maps passed it in only 5 runs of 7 on a quiet machine. Here
    // 1,000 notes pass 16 KiB whichever they are.
    writeFileSync(config, JSON.stringify({ classifiedStoreLimitBytes: 1024 * 1024, outputLimitBytes: 16 * 1024 }));
    const script = `
const value = classify("a");
for (let i = 0; i < 1000; i++) value.map((v) => { throw new Error("€".repeat(3000)); });
println("done");
`;
    const r = await runScript(script, ["--config", config, "--secure-output", sink, "--exec-timeout-ms", "120000"], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const written = readFileSync(sink, "utf8");
    expect(written.startsWith("[tacit] map failed: Error: €€€")).toBe(true);
    expect(written).toContain("[tacit: secure output cut:");
    // The notes up to 16 KiB (the one that passes it is not written), and the marker.
    expect(Buffer.byteLength(written)).toBeLessThan(16 * 1024 + 1024);
  }, 150_000);
});
