// A classified write past the descriptors tacit holds open (HELD_DESCRIPTORS_LIMIT, 256 pending
// at once) is filled, once its value is computed, through the file opened again by its path. The
// script deleted that file meanwhile and a confined command (--confine-commands, cp) put a new
// one, not UTF-8, at its name: the value was written into the new file, a file the command made
// (0644, not tacit's 0600), and whether it had been by the time of a readClassified there decided,
// visibly, whether that read was refused as "not UTF-8". So the time the secret's map took (slow
// or fast, by the secret) showed in the script's output. The value now goes only to the file the
// write created or emptied when asked: a file put in its place is left as it is, the write failing
// out of sight (its reason in the secure output).

import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { HELD_DESCRIPTORS_LIMIT } from "../../runner/fs/file-system.js";
import { skipWithoutMountNamespace } from "../exec/fixtures.js";
import { makeCanary, realTempDir, tacit } from "./fixtures.js";

let root: string;
let cleanup: () => void;
const canary = makeCanary();
const binary = Buffer.from([0xff, 0xfe, 0x80, 0x00]);

beforeAll(() => {
  ({ dir: root, cleanup } = realTempDir("tacit-classified-write-replaced-"));
});
afterAll(() => cleanup());

const SCRIPT = `const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
requestFileSystem(".", (fs) => {
  const secret = fs.readClassified(".env");
  // Holds every descriptor tacit keeps for pending writes, for 1.2 s.
  const pad = classify("pad").map((v) => { Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200); return v; });
  for (let i = 0; i < ${HELD_DESCRIPTORS_LIMIT}; i++) fs.writeClassified(".env.pad", pad);
  // Lands after the pad (fast, before the command) or 2 s later (slow, after it), by the secret.
  fs.writeClassified(".env.out", secret.map((s) => { if (s.includes("slow")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000); return s; }));
  fs.access(".env.out").delete();
  sleep(1800);
  requestExecPermission(["cp"], (p) => println("cp:", p.exec("cp", ["image.bin", ".env.out"]).exitCode));
  sleep(1600);
  try {
    fs.readClassified(".env.out");
    println("read");
  } catch (e) {
    println("refused:", (e as Error).message);
  }
});
`;

async function runWith(secret: string): Promise<{ stdout: string; replaced: Buffer; mode: number; sink: string }> {
  const work = path.join(root, secret);
  mkdirSync(work);
  writeFileSync(path.join(work, ".env"), `${secret}-${canary}`);
  writeFileSync(path.join(work, "image.bin"), binary);
  chmodSync(path.join(work, "image.bin"), 0o644);
  const sink = path.join(root, `${secret}.sink`);
  const r = await tacit(work, SCRIPT, ["--command-permissions", "cp", "--confine-commands", "--secure-output", sink], { TACIT_HOME: path.join(root, "home") });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout + r.stderr).not.toContain(canary);
  return {
    stdout: r.stdout.replaceAll(work, "<work>"),
    replaced: readFileSync(path.join(work, ".env.out")),
    mode: statSync(path.join(work, ".env.out")).mode & 0o777,
    sink: readFileSync(sink, "utf8").replaceAll(work, "<work>"),
  };
}

it("the value of a write past the held descriptors never lands in a file put at its name meanwhile: the script's output is the same for a slow and a fast secret", async (ctx) => {
  skipWithoutMountNamespace(ctx);
  const fast = await runWith("fast");
  const slow = await runWith("slow");
  for (const run of [fast, slow]) {
    // The command's file keeps what the command put there, and no secret lands in it (0644).
    expect(run.replaced.equals(binary), `the replacement holds ${JSON.stringify(run.replaced.toString("utf8"))}`).toBe(true);
    expect(run.mode).toBe(0o644);
  }
  // The write that found another file in its place says so in the secure output.
  expect(slow.sink).toContain("<work>/.env.out: writeClassified() wrote nothing: the file it created or emptied when asked was replaced");
  expect(slow.stdout).toBe(fast.stdout);
  expect(fast.stdout).toContain("refused: <work>/.env.out: is not UTF-8 text");
}, 60_000);
