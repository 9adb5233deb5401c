// A classified write past the descriptors tacit holds open (HELD_DESCRIPTORS_LIMIT) is filled, once
// its value is computed, through the file opened again by its path, and only if that is the file
// the write created (88fd02c): the same device and inode number. But a file system gives a freed
// inode number to the next file made (ext4 does, at once): the script deleted the files its
// writes had made, a confined command (--confine-commands, sh) made files at their names, which got
// the same numbers, and the secret landed in the command's files (0644), which the command, still
// running, printed to the script. The command first fills the directory's free inode numbers below
// those the writes will get, so that the numbers freed are the ones its files get. Through the real
// CLI, a real Deno, real confined processes, on /var/tmp (ext4 here; a file system that never reuses
// a number, as tmpfs, cannot show the attack, and the test passes there trivially).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { HELD_DESCRIPTORS_LIMIT } from "../../runner/fs/file-system.js";
import { skipWithoutMountNamespace } from "../exec/fixtures.js";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-inode-reused-", "/var/tmp"));
});
afterAll(() => cleanup());

const FILES = 30;
const SCRIPT = `requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  // Holds every descriptor tacit keeps for pending writes, for 3 s.
  const pad = classify("pad").map((v) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3000); return v; });
  for (let i = 0; i < ${HELD_DESCRIPTORS_LIMIT}; i++) fs.writeClassified(".env.pad", pad);
  requestExecPermission(["sh"], (p) => {
    // Fills the free numbers below, then frees the top ${FILES} for the writes.
    p.exec("sh", ["-c", "for i in $(seq 0 199); do : > f$i; done; for i in $(seq ${200 - FILES} 199); do rm f$i; done"]);
    for (let i = 0; i < ${FILES}; i++) fs.writeClassified(".env.o" + i, secret);
    for (let i = 0; i < ${FILES}; i++) fs.access(".env.o" + i).delete();
    const read = p.exec("sh", ["-c", "for i in $(seq 0 ${FILES - 1}); do : > .env.o$i; done; sleep 3.5; cat .env.o*"]);
    println("command:", read.stdout, read.stderr);
  });
});
`;

it("the value of a write past the held descriptors never lands in a file made at its name that got its inode number", async (ctx) => {
  skipWithoutMountNamespace(ctx);
  const canary = makeCanary();
  const work = path.join(root, "work");
  mkdirSync(work);
  writeFileSync(path.join(work, ".env"), `TOKEN=${canary}\n`);
  const sink = path.join(root, "sink");
  const r = await tacit(work, SCRIPT, ["--command-permissions", "sh", "--confine-commands", "--secure-output", sink], { TACIT_HOME: path.join(root, "home") });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain("command:");
  expect(r.stdout + r.stderr).not.toContain(canary);
  // Each write found another file at its name, and says so in the secure output.
  expect(readFileSync(sink, "utf8")).toContain("was replaced (deleted, and another put at its name)");
}, 60_000);
